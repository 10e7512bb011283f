//! Roles: declared in `[package.metadata.sandloom] role = "…"`, inferred when absent, and
//! overridden for a crate that registers drivers (it is a driver whatever it says).

use serde::{Deserialize, Serialize};

use crate::config::{APPLICATION_DOOR, DRIVERKIT, FRAMEWORK_CRATES, KERNEL, SDK_INFRA};
use crate::report::{Code, CrateRole, Violation};
use crate::rules::Sink;
use crate::source::Facts;
use crate::workspace::Member;

/// What a crate is, which decides the rules it must follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// Business code: uses capabilities through `sandloom-sdk-infra` only (C004, E001, E002).
    Module,
    /// Registers drivers (O001, E001, E002, and the layering rules for drivers).
    Driver,
    /// Defines capabilities (`define_capability!`) that modules and drivers share.
    Contract,
    /// Builds the binary: links drivers, reads `INFRA`, starts the kernel.
    Application,
    /// Sandloom's own crates (`sandloom`, `sandloom-sdk-infra`, `sandloom-kernel`,
    /// `sandloom-driverkit`); never declared, only inferred from the name.
    Framework,
}

impl Role {
    /// The role as written in `Cargo.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Module => "module",
            Role::Driver => "driver",
            Role::Contract => "contract",
            Role::Application => "application",
            Role::Framework => "framework",
        }
    }

    fn declarable(name: &str) -> Option<Role> {
        match name {
            "module" => Some(Role::Module),
            "driver" => Some(Role::Driver),
            "contract" => Some(Role::Contract),
            "application" => Some(Role::Application),
            _ => None,
        }
    }
}

/// Where a crate's role came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum RoleOrigin {
    /// `[package.metadata.sandloom] role`.
    Declared,
    /// Inferred from what the crate does or depends on.
    Inferred,
    /// Declared as something else, but the crate registers drivers: it is a driver.
    Overridden,
    /// Neither declared nor inferred: only layering rules that name the crate apply.
    None,
}

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
