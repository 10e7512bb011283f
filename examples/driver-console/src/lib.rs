//! Example third-party driver crate: `notifier.console`.
//!
//! Link it in the application with `sandloom::link_drivers!(sandloom_example_driver_console)`
//! and select it in `INFRA` with `driver = "console"`.

mod options;
mod provider;

pub use options::ConsoleOptions;
pub use provider::ConsoleNotifier;

sandloom_driverkit::register_driver!(notifier, "console", ConsoleNotifier);
