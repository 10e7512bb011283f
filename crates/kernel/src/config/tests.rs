//! The reading of `INFRA` files and overrides, end to end.

use std::path::Path;

use super::{INFRA_FILE_VAR, InfraConfig};
use crate::error::Problem;

fn only(config: &InfraConfig) -> &Problem {
    let [problem] = config.problems() else {
        panic!("expected one problem: {:#?}", config.problems())
    };
    problem
}

#[test]
fn a_non_utf8_file_names_the_file_and_says_to_save_it_as_utf8() {
    let path = std::env::temp_dir().join(format!("sandloom-latin1-{}.toml", std::process::id()));
    std::fs::write(&path, b"[cache.default]\ndriver = \"m\xe9moire\"\n").unwrap();
    let origin = path.display().to_string();

    let err = InfraConfig::from_file(&path).unwrap_err();
    let [problem] = err.problems() else {
        panic!("{err}")
    };
    assert_eq!(problem.code(), "SANDLOOM-B010");
    assert_eq!(
        problem.description(),
        format!("the INFRA file `{origin}` is not UTF-8 text (at {origin})")
    );
    assert_eq!(
        problem.action(),
        format!("save `{origin}` as UTF-8: TOML files must be UTF-8")
    );
    assert!(!err.to_string().contains(INFRA_FILE_VAR), "{err}");
    assert!(
        err.to_string()
            .starts_with("Sandloom cannot read INFRA: 1 problem found."),
        "{err}"
    );

    // Named by SANDLOOM_INFRA, the file is still what to fix; the variable is named too.
    let err = InfraConfig::read_file(&path, Some(INFRA_FILE_VAR)).unwrap_err();
    let [problem] = err.problems() else {
        panic!("{err}")
    };
    assert!(
        problem.description().contains(&format!(
            "`{origin}`, named by {INFRA_FILE_VAR}, is not UTF-8"
        )),
        "{problem}"
    );
    assert_eq!(
        problem.action(),
        format!("save `{origin}` as UTF-8: TOML files must be UTF-8")
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn only_a_file_named_by_the_variable_mentions_it() {
    let path = Path::new("/nonexistent/sandloom/infra.toml");
    let err = InfraConfig::from_file(path).unwrap_err();
    assert_eq!(
        err.problems()[0].action(),
        "check that `/nonexistent/sandloom/infra.toml` exists and is readable"
    );
    let err = InfraConfig::read_file(path, Some(INFRA_FILE_VAR)).unwrap_err();
    assert_eq!(
        err.problems()[0].action(),
        "check that `/nonexistent/sandloom/infra.toml` exists and is readable, or unset SANDLOOM_INFRA to run on the embedded defaults"
    );
}

#[test]
fn a_timeout_that_is_not_positive_names_the_value_found() {
    for (text, found) in [
        ("start_timeout_ms = 0", "`0`"),
        ("stop_timeout_ms = -5", "`-5`"),
        ("start_timeout_ms = \"soon\"", "string `\"soon\"`"),
        ("stop_timeout_ms = 1.5", "float `1.5`"),
    ] {
        let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
        let key = text.split(' ').next().unwrap();
        let problem = only(&config);
        assert_eq!(
            problem.description(),
            format!(
                "`{key}` must be a positive integer of milliseconds, found {found} (at infra.toml:1:1)"
            )
        );
        assert_eq!(
            problem.action(),
            format!(
                "write a whole number of milliseconds greater than 0, such as `{key} = 30000` in INFRA"
            )
        );
    }
    for key in ["START_TIMEOUT_MS", "STOP_TIMEOUT_MS"] {
        let variable = format!("SANDLOOM__{key}");
        let config = InfraConfig::embedded_defaults()
            .with_overrides([(variable.clone(), "0".to_owned())])
            .unwrap();
        let problem = only(&config);
        assert_eq!(
            problem.description(),
            format!(
                "`{}` must be a positive integer of milliseconds, found `0` (at environment variable {variable})",
                key.to_ascii_lowercase()
            )
        );
        assert_eq!(
            problem.action(),
            format!(
                "write a whole number of milliseconds greater than 0, such as `{variable}=30000`"
            )
        );
    }
}

#[test]
fn an_integer_out_of_range_is_located_and_leaves_the_other_tables_alone() {
    let text = "[cache.default]\ndriver = \"memory\"\ncapacity = 18446744073709551616\n\
                [cache.sessions]\ndriver = \"memory\"\nsizes = [1, 99999999999999999999]\n\
                [notifier.default]\ndriver = \"log\"\n";
    let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    let found: Vec<String> = config.problems().iter().map(Problem::description).collect();
    assert_eq!(
        found,
        [
            "`capacity` of `[cache.default]` cannot be read: its integer is out of range (TOML integers are 64-bit: -9223372036854775808 to 9223372036854775807) (at infra.toml:3:12)",
            "`sizes` of `[cache.sessions]` cannot be read: its integer is out of range (TOML integers are 64-bit: -9223372036854775808 to 9223372036854775807) (at infra.toml:6:13)",
        ]
    );
    assert!(config.instance("cache", "default").is_none());
    assert!(config.is_left_out("cache", Some("default")));
    assert_eq!(
        config.instance("notifier", "default").unwrap().driver,
        "log"
    );
}

#[test]
fn bad_overrides_leave_out_what_they_set_and_keep_the_rest() {
    let config = InfraConfig::embedded_defaults()
        .with_overrides(
            [
                ("SANDLOOM__ENVIRONMNT", "test"),
                ("SANDLOOM__CACHE__X__CAPACITY", "1"),
                ("SANDLOOM__CACHE__DEFAULT__DRIVER", "7"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned())),
        )
        .unwrap();
    assert_eq!(config.problems().len(), 3, "{:#?}", config.problems());
    assert!(config.instance("cache", "x").is_none());
    assert!(config.instance("cache", "default").is_none());
    assert!(config.instance("notifier", "default").is_some());
}

#[test]
fn an_override_does_not_bring_back_a_table_the_file_could_not_read() {
    let config =
        InfraConfig::from_toml_str("[cache.default]\ndriver = 7\ncapacity = 10\n", "infra.toml")
            .unwrap()
            .with_overrides([(
                "SANDLOOM__CACHE__DEFAULT__DRIVER".to_owned(),
                "memory".to_owned(),
            )])
            .unwrap();
    assert!(config.instance("cache", "default").is_none());
    assert_eq!(config.problems().len(), 1, "{:#?}", config.problems());
}

#[test]
fn an_abbreviated_environment_gets_a_did_you_mean() {
    let config = InfraConfig::from_toml_str("environment = \"prod\"\n", "INFRA").unwrap();
    let problem = only(&config);
    assert_eq!(
        problem.description(),
        "unknown environment `prod` (did you mean `production`?); expected one of development, test, production (at INFRA:1:1)"
    );
    assert_eq!(
        problem.action(),
        "set `environment` to \"development\", \"test\" or \"production\""
    );
    // A stranger gets no guess.
    let config = InfraConfig::from_toml_str("environment = \"qa\"\n", "INFRA").unwrap();
    let problem = only(&config);
    assert!(!problem.description().contains("did you mean"), "{problem}");
}

#[test]
fn an_instance_name_no_override_could_reach_is_refused_saying_why() {
    for name in ["sessions_", "eu__west"] {
        let text = format!("[cache.{name}]\ndriver = \"memory\"\n");
        let config = InfraConfig::from_toml_str(&text, "INFRA").unwrap();
        let problem = only(&config);
        assert_eq!(problem.code(), "SANDLOOM-B010");
        assert_eq!(
            problem.description(),
            format!(
                "instance name `{name}` cannot end in `_` or contain `__`: `__` separates the levels of a `SANDLOOM__…` override, so no override could name it (at INFRA:1:8)"
            )
        );
        assert_eq!(problem.action(), "rename the instance");
    }
    // A leading `_` splits cleanly (`SANDLOOM__CACHE___EU__URL`), and a single `_` inside too.
    let text = "[cache._eu_west]\ndriver = \"memory\"\n";
    let config = InfraConfig::from_toml_str(text, "INFRA").unwrap();
    assert!(config.problems().is_empty(), "{:#?}", config.problems());
}

#[test]
fn an_overridden_password_never_shows_in_debug() {
    // Issue 25: `SANDLOOM__TASKQUEUE__DEFAULT__PASSWORD=918273645` (the variable the postgres
    // driver's docs recommend) is read as an integer; its raw text was kept, and shown by the
    // derived `Debug` of the configuration and of the kernel.
    let config =
        InfraConfig::from_toml_str("[taskqueue.default]\ndriver = \"postgres\"\n", "INFRA")
            .unwrap()
            .with_overrides([
                (
                    "SANDLOOM__TASKQUEUE__DEFAULT__PASSWORD".to_owned(),
                    "918273645".to_owned(),
                ),
                (
                    "SANDLOOM__TASKQUEUE__DEFAULT__TOKEN".to_owned(),
                    "s3cr3t-string".to_owned(),
                ),
            ])
            .unwrap();
    let shown = format!("{config:?} {config:#?}");
    assert!(!shown.contains("918273645"), "{shown}");
    assert!(!shown.contains("s3cr3t-string"), "{shown}");
    // The keys still show: what was set, not to what.
    assert!(shown.contains("\"password\""), "{shown}");
    let kernel = crate::Kernel::new(config, crate::link_drivers!());
    let shown = format!("{kernel:?}");
    assert!(!shown.contains("918273645"), "{shown}");
}
