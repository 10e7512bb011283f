/// Options of `notifier.console`.
///
/// ```
/// let options = sandloom_example_driver_console::ConsoleOptions::default();
/// assert_eq!(options.prefix, "");
/// ```
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConsoleOptions {
    /// Written before every line.
    pub prefix: String,
}
