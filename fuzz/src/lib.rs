//! What every fuzz target checks of a configuration, whatever the input: reading it and checking
//! it never panic, every problem has a stable code, and every problem that names a place names
//! a line and column of the source (or, for an override, its variable).

use sandloom_kernel::{InfraConfig, Kernel, Location, Problem, UnusableReason};

/// The location a problem carries, if its kind carries one.
pub fn location(problem: &Problem) -> Option<&Location> {
    match problem {
        Problem::Config { location, .. }
        | Problem::NoDriver { location, .. }
        | Problem::Experimental { location, .. }
        | Problem::Unusable {
            reason: UnusableReason::Options { location, .. },
            ..
        } => Some(location),
        _ => None,
    }
}

/// `location` is a line and column of `text` (read as `origin`), or one of `variables`.
pub fn assert_located(problem: &Problem, text: &str, origin: &str, variables: &[String]) {
    let code = problem.code();
    assert!(
        code.starts_with("SANDLOOM-B") && code.len() == "SANDLOOM-B000".len(),
        "{problem:?}"
    );
    assert!(!problem.description().is_empty(), "{problem:?}");
    assert!(!problem.action().is_empty(), "{problem:?}");
    let Some(location) = location(problem) else {
        return;
    };
    match location {
        Location::Source {
            origin: at,
            line,
            column,
        } => {
            assert_eq!(&**at, origin, "{problem:?}");
            let lines = text.split('\n').count();
            assert!(
                *line >= 1 && *line <= lines,
                "line {line} of {lines}: {problem:?}"
            );
            let width = text
                .split('\n')
                .nth(line - 1)
                .map_or(0, |l| l.chars().count());
            assert!(
                *column >= 1 && *column <= width + 1,
                "column {column}: {problem:?}"
            );
            assert!(
                problem
                    .description()
                    .contains(&format!("{origin}:{line}:{column}")),
                "{problem:?}"
            );
        }
        Location::Variable(name) => {
            assert!(
                variables.contains(name),
                "{problem:?} not from {variables:?}"
            );
        }
        other => panic!("a problem of a file without its line and column ({other:?}): {problem:?}"),
    }
}

/// Check `config` (read from `text`, then `variables` applied) against the embedded drivers.
pub fn check(config: InfraConfig, text: &str, origin: &str, variables: &[String]) {
    for problem in config.problems() {
        assert_eq!(problem.code(), "SANDLOOM-B010", "{problem:?}");
        assert_located(problem, text, origin, variables);
    }
    let kept = config.problems().len();
    match Kernel::new(config, sandloom_kernel::link_drivers!(sandloom_embedded)).check() {
        Ok(report) => assert_eq!(kept, 0, "check passed with problems kept: {report:?}"),
        Err(err) => {
            assert!(!err.problems().is_empty());
            assert!(err.problems().len() >= kept);
            for problem in err.problems() {
                assert_located(problem, text, origin, variables);
            }
            let _ = err.to_string();
        }
    }
}

/// Read `text` as `INFRA` and check it; text that is not TOML is one located SANDLOOM-B010.
pub fn parse_and_check(text: &str, variables: &[(String, String)]) {
    let origin = "fuzz.toml";
    match InfraConfig::from_toml_str(text, origin) {
        Ok(config) => {
            let names: Vec<String> = variables.iter().map(|(n, _)| n.clone()).collect();
            let config = config
                .with_overrides(variables.iter().cloned())
                .expect("overrides keep their problems");
            check(config, text, origin, &names);
        }
        Err(err) => {
            let [problem] = err.problems() else {
                panic!("text that is not TOML is one problem: {err:?}")
            };
            assert_eq!(problem.code(), "SANDLOOM-B010");
            assert_located(problem, text, origin, &[]);
        }
    }
}
