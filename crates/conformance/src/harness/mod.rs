//! The kit harness: one obligation on one fresh instance, made as the kernel makes one, with its
//! panics and hangs contained. Every kit, built-in or written by the package that defines a
//! capability, is a [`Kit`] over this.
//!
//! One file per part, each importing only the parts below it: `request` (plain values),
//! `shared` (the gated driver), `plant` (the secrets the kit plants from the options' schema),
//! `probe` (what a test macro finds out about the driver type), `secret_rules`, `instance`,
//! `build` (the kernel's steps), `secrets` (the secrets obligation), `kit`, `run` and
//! `self_test`.

mod build;
mod instance;
mod kit;
mod plant;
mod probe;
mod request;
mod run;
mod secret_rules;
mod secrets;
mod self_test;
mod shared;

pub use instance::Instance;
pub use kit::{Check, Kit, Obligation};
pub use request::{Failure, KitRequest, Tolerance};
pub use shared::Shared;

#[doc(hidden)]
pub use probe::{DebugProbe, Described, NotShown, Shown};
