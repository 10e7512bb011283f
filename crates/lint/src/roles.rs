//! Roles: declared in `[package.metadata.sandloom] role = "…"`, inferred when absent, and
//! overridden for a crate that registers drivers (it is a driver whatever it says).

use crate::config::{APPLICATION_DOOR, DRIVERKIT, FRAMEWORK_CRATES, KERNEL, SDK_INFRA};
use crate::report::{Code, CrateRole, Role, RoleOrigin, Violation};
use crate::sink::Sink;
use crate::source::Facts;
use crate::workspace::Member;

/// A member's roles: the one it declared and the one the rules use.
#[derive(Debug, Clone)]
pub(crate) struct Assigned {
    pub(crate) declared: Option<Role>,
    pub(crate) effective: Option<Role>,
    pub(crate) summary: CrateRole,
}

impl Assigned {
    /// Module rules apply to effective modules and to crates that declare themselves modules
    /// (a declared module that registers drivers is a driver, and breaks C004 too).
    pub(crate) fn is_module(&self) -> bool {
        self.effective == Some(Role::Module) || self.declared == Some(Role::Module)
    }

    pub(crate) fn is(&self, role: Role) -> bool {
        self.effective == Some(role)
    }
}

/// Give `member` its role, reporting an invalid `[package.metadata.sandloom]` as R001.
pub(crate) fn assign(member: &Member, facts: &Facts, sink: &mut Sink<'_>) -> Assigned {
    let declared = declared_role(member, sink);
    let invalid = if declared.is_none()
        && member
            .sandloom_metadata
            .as_ref()
            .is_some_and(|m| m.get("role").is_some())
    {
        "declared role invalid (R001); "
    } else {
        ""
    };
    let registers = !facts.registrations.is_empty();
    let (effective, origin, note) = match declared {
        Some(role) if registers && role != Role::Driver => (
            Some(Role::Driver),
            RoleOrigin::Overridden,
            format!(
                "declared {}, but registers drivers: a crate that registers drivers is a driver",
                role.as_str()
            ),
        ),
        Some(role) => (Some(role), RoleOrigin::Declared, "declared".to_owned()),
        None => match infer(member, facts) {
            Some((role, why)) => (
                Some(role),
                RoleOrigin::Inferred,
                format!("{invalid}role inferred: {} ({why})", role.as_str()),
            ),
            None => (
                None,
                RoleOrigin::None,
                "no role declared or inferred: only layering rules naming it apply".to_owned(),
            ),
        },
    };
    Assigned {
        declared,
        effective,
        summary: CrateRole {
            name: member.name.clone(),
            role: effective,
            origin,
            note,
        },
    }
}

fn infer(member: &Member, facts: &Facts) -> Option<(Role, &'static str)> {
    let depends = |name: &str| {
        member
            .deps
            .iter()
            .any(|d| d.package == name && d.kind.ships())
    };
    if !facts.registrations.is_empty() {
        Some((Role::Driver, "registers drivers"))
    } else if FRAMEWORK_CRATES.contains(&member.name.as_str()) {
        Some((Role::Framework, "Sandloom's own framework crate"))
    } else if !facts.capability_definitions.is_empty() {
        Some((Role::Contract, "defines capabilities"))
    } else if depends(KERNEL) || depends(APPLICATION_DOOR) {
        Some((Role::Application, "depends on the kernel"))
    } else if depends(SDK_INFRA) && !depends(DRIVERKIT) {
        Some((Role::Module, "depends on sandloom-sdk-infra"))
    } else {
        None
    }
}

fn declared_role(member: &Member, sink: &mut Sink<'_>) -> Option<Role> {
    let value = member.sandloom_metadata.as_ref()?;
    let Some(table) = value.as_object() else {
        let message = "`[package.metadata.sandloom]` is not a table";
        report(member, "sandloom", message, HELP_ROLE, sink);
        return None;
    };
    for key in table.keys().filter(|k| k.as_str() != "role") {
        let message =
            format!("unknown key `{key}` in [package.metadata.sandloom], which takes only `role`");
        report(member, key, &message, HELP_KEY, sink);
    }
    if let serde_json::Value::String(name) = table.get("role")? {
        let role = Role::declarable(name);
        if role.is_none() {
            let message = format!(
                "unknown role `{name}`: the role decides which rules apply, so it is refused rather than guessed"
            );
            report(member, "role", &message, HELP_ROLE, sink);
        }
        role
    } else {
        report(member, "role", "`role` is not a string", HELP_ROLE, sink);
        None
    }
}

const HELP_ROLE: &str = "write `role = \"module\"`, `\"driver\"`, `\"contract\"` or \
     `\"application\"`, or remove it to let the lint infer the role";
const HELP_KEY: &str = "remove the key (a typo of `role`?)";

fn report(member: &Member, key: &str, message: &str, help: &str, sink: &mut Sink<'_>) {
    let position = sink.manifest(member).sandloom_key(key);
    let entry = format!("[package.metadata.sandloom] {key}");
    let location = sink.manifest_location(member, position, entry);
    sink.push(Violation {
        code: Code::R001,
        krate: member.name.clone(),
        location,
        message: message.to_owned(),
        help: help.to_owned(),
    });
}
