//! `infra diff OLD NEW`: what a reload from OLD to NEW would do, per instance (the kernel's
//! `ReloadPlan`, the same one `Running::reload` acts on).

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

use super::{Failure, Format, Loaded, Status, json as doc};
use sandloom_kernel::reload::{Change, ReloadPlan};
use sandloom_kernel::{InfraConfig, Kernel, LinkedDrivers, StartupError};

/// One side of the comparison: its name in the output (`OLD`, `NEW`), its path, and what
/// reading and checking it gave.
struct Side<'a> {
    name: &'static str,
    path: &'a Path,
    config: Option<InfraConfig>,
    problems: Option<StartupError>,
}

impl<'a> Side<'a> {
    /// Read as `infra check` reads `--infra FILE` (overrides applied: see the module docs of the
    /// crate), then checked as `infra check` checks it.
    fn check(name: &'static str, path: &'a Path, linked: LinkedDrivers) -> Result<Self, Failure> {
        let loaded = super::load(path, &format!("`infra diff`'s {name}"))?;
        let (config, problems) = match loaded {
            Loaded::Config(config) => {
                let problems = Kernel::new(config.clone(), linked).check().err();
                (Some(config), problems)
            }
            Loaded::Unreadable(error) => (None, Some(error)),
        };
        Ok(Self {
            name,
            path,
            config,
            problems,
        })
    }

    fn json(&self) -> Value {
        let problems: Vec<Value> = self.problems.as_ref().map_or_else(Vec::new, |error| {
            error
                .problems()
                .iter()
                .map(|problem| doc::problem(problem, self.config.as_ref()))
                .collect()
        });
        json!({
            "origin": self.path.display().to_string(),
            "ok": self.problems.is_none(),
            "problems": problems,
        })
    }
}

pub(super) fn run(
    (old, new): (&Path, &Path),
    linked: LinkedDrivers,
    format: Format,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let old = Side::check("OLD", old, linked)?;
    let new = Side::check("NEW", new, linked)?;
    let plan = match (&old, &new) {
        (
            Side {
                config: Some(before),
                problems: None,
                ..
            },
            Side {
                config: Some(after),
                problems: None,
                ..
            },
        ) => Some(ReloadPlan::between(before, after)),
        // A configuration with problems cannot be reloaded from or to: its problems are the
        // answer, as `infra check` gives them.
        _ => None,
    };
    match format {
        Format::Text => match &plan {
            Some(plan) => text(plan, (&old, &new), out)?,
            None => {
                for side in [&old, &new] {
                    if let Some(error) = &side.problems {
                        writeln!(out, "{} `{}`:", side.name, side.path.display())?;
                        write!(out, "{error}")?;
                    }
                }
            }
        },
        Format::Json => doc::write(out, &document(plan.as_ref(), (&old, &new)))?,
    }
    Ok(if plan.is_some() {
        Status::Ok
    } else {
        Status::Problems
    })
}

fn text(
    plan: &ReloadPlan,
    (old, new): (&Side<'_>, &Side<'_>),
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "Sandloom diff (a dry run; nothing was started): OLD `{}`, NEW `{}`.",
        old.path.display(),
        new.path.display()
    )?;
    let count = |word: &str| {
        plan.instances
            .iter()
            .filter(|i| i.change.as_str() == word)
            .count()
    };
    if plan.has_changes() {
        writeln!(
            out,
            "A reload would keep {}, replace {}, add {} and remove {} instance(s).",
            count("kept"),
            count("replaced"),
            count("added"),
            count("removed")
        )?;
    } else {
        writeln!(
            out,
            "No change: a reload would keep every instance ({}).",
            plan.instances.len()
        )?;
    }
    if !plan.instances.is_empty() {
        writeln!(out)?;
    }
    for instance in &plan.instances {
        writeln!(
            out,
            "  {:<9} {}",
            instance.change.as_str(),
            instance.qualified_name()
        )?;
        if let Change::Replaced { reasons } = &instance.change {
            for reason in reasons {
                writeln!(out, "            {reason}")?;
            }
        }
    }
    if !plan.settings.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "Settings of the whole process (they replace no instance):"
        )?;
        for setting in &plan.settings {
            writeln!(out, "  {setting}")?;
        }
    }
    Ok(())
}

fn document(plan: Option<&ReloadPlan>, (old, new): (&Side<'_>, &Side<'_>)) -> Value {
    let instances: Vec<Value> = plan.map_or_else(Vec::new, |plan| {
        plan.instances
            .iter()
            .map(|instance| {
                let reasons = match &instance.change {
                    Change::Replaced { reasons } => reasons.clone(),
                    _ => Vec::new(),
                };
                json!({
                    "capability": instance.capability,
                    "instance": instance.instance,
                    "change": instance.change.as_str(),
                    "reasons": reasons,
                })
            })
            .collect()
    });
    doc::document(
        "diff",
        json!({
            "ok": plan.is_some(),
            "changed": plan.map(ReloadPlan::has_changes),
            "old": old.json(),
            "new": new.json(),
            "instances": instances,
            "settings": plan.map_or_else(Vec::new, |plan| plan.settings.clone()),
        }),
    )
}
