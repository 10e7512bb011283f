//! Arbitrary `SANDLOOM__…` overrides over an `INFRA` file. The input is text: the lines before
//! a line `---` are the file (none: the embedded defaults' text), each line after it one variable
//! `NAME=VALUE` (`SANDLOOM__` is put before a name that lacks it, so every line is an override).
//! Never a panic; every problem has a code, and names its variable or its line and column; the
//! order of the variables does not matter.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sandloom_kernel::InfraConfig;
use sandloom_kernel::config::{EMBEDDED_DEFAULTS, OVERRIDE_PREFIX};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let (file, vars) = match input.split_once("\n---\n") {
        Some((file, vars)) => (file, vars),
        None => (EMBEDDED_DEFAULTS, input),
    };
    let variables: Vec<(String, String)> = vars
        .lines()
        .map(|line| {
            let (name, value) = line.split_once('=').unwrap_or((line, ""));
            let name = if name.starts_with(OVERRIDE_PREFIX) {
                name.to_owned()
            } else {
                format!("{OVERRIDE_PREFIX}{name}")
            };
            (name, value.to_owned())
        })
        .collect();
    sandloom_fuzz::parse_and_check(file, &variables);

    // The same variables in another order give the same configuration.
    if let Ok(config) = InfraConfig::from_toml_str(file, "fuzz.toml") {
        let forward = config.clone().with_overrides(variables.clone()).unwrap();
        let backward = config
            .with_overrides(variables.iter().rev().cloned())
            .unwrap();
        // Compared as written out: a `nan` option is not equal to itself.
        assert_eq!(written(&forward), written(&backward));
    }
});

/// The configuration as text, option values included (`Debug` shows only option keys).
fn written(config: &InfraConfig) -> String {
    let mut text = format!("{config:?}");
    for instance in config.instances() {
        let options = instance.options.deserialize::<toml::Table>().unwrap();
        text.push_str(&format!("\n{}: {options}", instance.qualified_name()));
    }
    text
}
