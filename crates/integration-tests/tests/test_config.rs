//! Malformed INFRA is SANDLOOM-B010 with a location, every problem at once, never a panic;
//! environment variables override the file.

use std::time::Duration;

use sandloom::{Environment, InfraConfig, Kernel, Problem, codes};

/// The problems reading `text` kept (INFRA that is TOML is read, problems and all).
fn problems(text: &str) -> Vec<String> {
    let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    assert!(
        config.problems().iter().all(|p| p.code() == codes::CONFIG),
        "{:#?}",
        config.problems()
    );
    config.problems().iter().map(Problem::description).collect()
}

#[test]
fn bad_toml_names_the_line_and_column() {
    let err = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\nx = 1", "infra.toml")
        .unwrap_err();
    let found: Vec<String> = err.problems().iter().map(Problem::description).collect();
    assert_eq!(found.len(), 1);
    assert!(found[0].starts_with("INFRA is not valid TOML"), "{found:?}");
    assert!(found[0].contains("(at infra.toml:2:"), "{found:?}");
}

#[test]
fn wrong_types_unknown_keys_and_missing_drivers_are_all_reported() {
    let found = problems(
        "environment = 3\nenviroment = \"test\"\naccepted_risks = [\"experimental_capabilty\"]\nstart_timeout_ms = -1\n\
         [cache]\ndriver = \"memory\"\n[notifier.default]\nlevel = \"info\"\n[objectstore.default]\ndriver = 7\n",
    );
    let expected = [
        "unknown accepted risk `experimental_capabilty` (did you mean `experimental_capability`?) (at infra.toml:3:1)",
        "`cache.driver` is not an instance table",
        "`environment` must be a string, found integer (at infra.toml:1:1)",
        "unknown top-level key `enviroment` (did you mean `environment`?) (at infra.toml:2:1)",
        "`[notifier.default]` has no `driver`",
        "`driver` must be a string, found integer (at infra.toml:10:1)",
        "`start_timeout_ms` must be a positive integer of milliseconds, found `-1`",
    ];
    assert_eq!(found.len(), expected.len(), "{found:#?}");
    for needle in expected {
        assert!(
            found.iter().any(|p| p.contains(needle)),
            "missing {needle:?} in {found:#?}"
        );
    }
    assert!(
        found
            .iter()
            .any(|p| p.contains("did you mean `experimental_capability`?")),
        "{found:#?}"
    );
}

#[test]
fn instance_names_are_checked() {
    let found = problems("[cache.Default]\ndriver = \"memory\"");
    assert!(
        found[0].contains("instance name `Default` must be"),
        "{found:?}"
    );
}

#[test]
fn garbage_never_panics() {
    let inputs = [
        "",
        "\0",
        "[",
        "]]",
        "a=",
        "[cache.default]\ndriver=\"\"",
        "[[cache]]\ndriver=1",
        "[cache.default]\n[cache.default]",
        "x = [1, \"a\"]",
        "\u{feff}[cache.x]\ndriver=\"m\"",
        "[a.b.c.d]\ne=1",
        "environment = {a = 1}",
        "accepted_risks = \"x\"",
    ];
    for input in inputs {
        let _ = InfraConfig::from_toml_str(input, "fuzz");
    }
    for len in 0..64 {
        let bytes: Vec<u8> = (0..len).map(|i: u8| i.wrapping_mul(37) % 251).collect();
        let _ = InfraConfig::from_toml_str(&String::from_utf8_lossy(&bytes), "fuzz");
    }
}

#[test]
fn environment_variables_override_the_file() {
    #[derive(serde::Deserialize)]
    struct Capacity {
        capacity: u64,
    }
    let config = InfraConfig::from_toml_str(
        "[cache.default]\ndriver = \"memory\"\ncapacity = 10",
        "infra.toml",
    )
    .unwrap()
    .with_overrides(
        [
            ("SANDLOOM__ENVIRONMENT", "production"),
            ("SANDLOOM__ACCEPTED_RISKS", "experimental_capability"),
            ("SANDLOOM__START_TIMEOUT_MS", "2500"),
            ("SANDLOOM__CACHE__DEFAULT__CAPACITY", "500"),
            ("SANDLOOM__CACHE__SESSIONS__TTL", "true"),
            ("SANDLOOM__CACHE__SESSIONS__DRIVER", "memory"),
            ("UNRELATED", "ignored"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned())),
    )
    .unwrap();
    assert_eq!(config.environment(), Environment::Production);
    assert!(config.accepts("experimental_capability"));
    assert_eq!(config.start_timeout(), Duration::from_millis(2500));
    let sessions = config.instance("cache", "sessions").unwrap();
    assert_eq!(sessions.driver, "memory");
    assert_eq!(
        sessions.option_location("ttl").to_string(),
        "environment variable SANDLOOM__CACHE__SESSIONS__TTL"
    );
    let default = config.instance("cache", "default").unwrap();
    assert_eq!(
        default.options.deserialize::<Capacity>().unwrap().capacity,
        500
    );
}

#[test]
fn bad_overrides_are_b010_naming_the_variable() {
    let config = InfraConfig::embedded_defaults()
        .with_overrides(
            [
                ("SANDLOOM__ENVIRONMNT", "test"),
                ("SANDLOOM__CACHE__X__CAPACITY", "1"),
                ("SANDLOOM__A__B", "1"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned())),
        )
        .unwrap();
    let err = Kernel::new(config, sandloom::link_drivers!(sandloom_embedded))
        .check()
        .unwrap_err();
    let text = err.to_string();
    assert_eq!(err.problems().len(), 3, "{text}");
    assert_eq!(err.codes(), [codes::CONFIG; 3], "{text}");
    assert!(
        text.contains("environment variable SANDLOOM__ENVIRONMNT"),
        "{text}"
    );
    assert!(
        text.contains("`cache.x` is set by overrides but has no `driver`"),
        "{text}"
    );
    assert!(text.contains("SANDLOOM__CACHE__X__DRIVER"), "{text}");
    assert!(
        text.contains("`SANDLOOM__A__B` is not a valid override"),
        "{text}"
    );
}

#[test]
fn an_unreadable_file_is_b010_naming_the_path() {
    let err = InfraConfig::from_file("/nonexistent/infra.toml").unwrap_err();
    let Problem::Config {
        message, action, ..
    } = &err.problems()[0]
    else {
        panic!("{err}")
    };
    assert!(message.contains("cannot read the INFRA file"), "{message}");
    assert!(action.contains("/nonexistent/infra.toml"), "{action}");
}

#[test]
fn errors_print_code_description_and_action() {
    let config = InfraConfig::from_toml_str("enviroment = \"test\"", "infra.toml").unwrap();
    let err = Kernel::new(config, sandloom::link_drivers!())
        .check()
        .unwrap_err();
    let text = err.to_string();
    assert_eq!(
        text,
        "Sandloom check (a dry run; nothing was started): 1 problem found.\n\n1. [SANDLOOM-B010]\n    Description: unknown top-level key `enviroment` (did you mean `environment`?) (at infra.toml:1:1)\n    Action: top-level keys are environment, accepted_risks, start_timeout_ms, stop_timeout_ms, start_wait_ms, health_timeout_ms, health_interval_ms; capabilities are tables such as `[cache.default]`\n"
    );
}

#[test]
fn a_capability_that_is_not_a_table_and_an_empty_driver_are_explained() {
    let found = problems("cache = 3\n[notifier.default]\ndriver = \"\"");
    assert!(
        found.iter().any(|p| p.contains(
            "`cache` is not a top-level key, and as a capability it must be a table of instances"
        )),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|p| p.contains("`[notifier.default]` has an empty `driver`")),
        "{found:#?}"
    );
}

#[test]
fn a_table_infra_cannot_read_hides_nothing_of_the_others() {
    let config = InfraConfig::from_toml_str(
        "[cache.default]\ndriver = \"memory\"\ncapacity = 18446744073709551616\n\
         [notifier.default]\ndriver = \"smtp\"\n[objectstore.default]\ndriver = \"fs\"\nroot = 7\n",
        "infra.toml",
    )
    .unwrap();
    let err = Kernel::new(config, sandloom::link_drivers!(sandloom_embedded))
        .check()
        .unwrap_err();
    assert_eq!(
        err.codes(),
        [codes::CONFIG, codes::NO_DRIVER, codes::UNUSABLE],
        "{err}"
    );
    assert!(
        err.problems()[0]
            .description()
            .ends_with("is out of range (TOML integers are 64-bit: -9223372036854775808 to 9223372036854775807) (at infra.toml:3:12)"),
        "{err}"
    );
}

#[test]
fn two_bad_overrides_of_one_instance_are_both_reported_at_their_variables() {
    let config = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\"", "infra.toml")
        .unwrap()
        .with_overrides(
            [
                ("SANDLOOM__CACHE__DEFAULT__CAPACITY", "lots"),
                ("SANDLOOM__CACHE__DEFAULT__DEFAULT_TTL_MS", "-1"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned())),
        )
        .unwrap();
    let err = Kernel::new(config, sandloom::link_drivers!(sandloom_embedded))
        .check()
        .unwrap_err();
    let text = err.to_string();
    let found: Vec<(&str, String)> = err
        .problems()
        .iter()
        .map(|p| (p.code(), p.location().unwrap().to_string()))
        .collect();
    assert_eq!(
        found,
        [
            (
                codes::UNUSABLE,
                "environment variable SANDLOOM__CACHE__DEFAULT__CAPACITY".to_owned()
            ),
            (
                codes::UNUSABLE,
                "environment variable SANDLOOM__CACHE__DEFAULT__DEFAULT_TTL_MS".to_owned()
            ),
        ],
        "{text}"
    );
    // Values may be secrets: neither appears.
    assert!(!text.contains("lots") && !text.contains("-1"), "{text}");
}

#[test]
fn a_backend_driver_s_option_check_is_placed_at_the_option() {
    let text =
        "[cache.default]\ndriver = \"redis\"\nurl = \"redis://127.0.0.1:6379\"\nprefix = \"\"\n";
    let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    let err = Kernel::new(config, sandloom::link_drivers!(sandloom_driver_redis))
        .check()
        .unwrap_err();
    let [problem] = err.problems() else {
        panic!("{err}")
    };
    assert_eq!(
        problem.location().map(ToString::to_string).as_deref(),
        Some("infra.toml:4:1"),
        "{err}"
    );
    assert!(
        problem
            .description()
            .ends_with("invalid options at infra.toml:4:1: option `prefix`: must not be empty when set (leave it out to store keys as given)"),
        "{err}"
    );
}
