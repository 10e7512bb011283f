//! The kernel's operating keys of `INFRA`: `start_wait_ms`, `health_timeout_ms`,
//! `health_interval_ms` at the top level, and `start_wait_ms`, `health_timeout_ms`, `telemetry`
//! per instance and `rotation_poll_ms` per `secrets` instance (never passed to the driver), from
//! the file and from overrides.

use std::time::Duration;

use sandloom_kernel::config::{
    DEFAULT_HEALTH_TIMEOUT, DEFAULT_ROTATION_POLL, RESERVED_INSTANCE_KEYS,
};
use sandloom_kernel::{InfraConfig, Problem};

fn parse(text: &str) -> InfraConfig {
    InfraConfig::from_toml_str(text, "infra.toml").unwrap()
}

fn overridden(vars: &[(&str, &str)]) -> InfraConfig {
    InfraConfig::embedded_defaults()
        .with_overrides(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())))
        .unwrap()
}

fn descriptions(config: &InfraConfig) -> Vec<String> {
    config.problems().iter().map(Problem::description).collect()
}

#[test]
fn defaults_wait_for_nothing_bound_health_at_two_seconds_and_probe_nothing() {
    for config in [InfraConfig::embedded_defaults(), parse("")] {
        assert_eq!(config.start_wait(), Duration::ZERO);
        assert_eq!(config.health_timeout(), DEFAULT_HEALTH_TIMEOUT);
        assert_eq!(config.health_timeout(), Duration::from_secs(2));
        assert_eq!(config.health_interval(), None);
    }
    let config = InfraConfig::embedded_defaults();
    for instance in config.instances() {
        assert_eq!(instance.start_wait(&config), Duration::ZERO);
        assert_eq!(instance.health_timeout(&config), DEFAULT_HEALTH_TIMEOUT);
        assert!(instance.telemetry());
    }
}

#[test]
fn top_level_keys_are_read_and_zero_start_wait_is_valid() {
    let config =
        parse("start_wait_ms = 45000\nhealth_timeout_ms = 750\nhealth_interval_ms = 5000\n");
    assert!(config.problems().is_empty(), "{:?}", descriptions(&config));
    assert_eq!(config.start_wait(), Duration::from_secs(45));
    assert_eq!(config.health_timeout(), Duration::from_millis(750));
    assert_eq!(config.health_interval(), Some(Duration::from_secs(5)));

    let config = parse("start_wait_ms = 0");
    assert!(config.problems().is_empty(), "{:?}", descriptions(&config));
    assert_eq!(config.start_wait(), Duration::ZERO);
}

#[test]
fn instance_keys_are_the_kernels_override_the_top_level_and_never_reach_the_driver() {
    let config = parse(
        r#"
        start_wait_ms = 30000
        health_timeout_ms = 1000

        [cache.default]
        driver = "memory"
        capacity = 10
        start_wait_ms = 0
        health_timeout_ms = 250
        telemetry = false

        [cache.sessions]
        driver = "memory"
        "#,
    );
    assert!(config.problems().is_empty(), "{:?}", descriptions(&config));
    let own = config.instance("cache", "default").unwrap();
    assert_eq!(own.options.keys().collect::<Vec<_>>(), ["capacity"]);
    for key in RESERVED_INSTANCE_KEYS {
        assert!(
            own.options.keys().all(|k| k != *key),
            "`{key}` reached the driver"
        );
    }
    assert_eq!(own.start_wait(&config), Duration::ZERO);
    assert_eq!(own.health_timeout(&config), Duration::from_millis(250));
    assert!(!own.telemetry());

    let inherited = config.instance("cache", "sessions").unwrap();
    assert!(inherited.options.is_empty());
    assert_eq!(inherited.start_wait(&config), Duration::from_secs(30));
    assert_eq!(inherited.health_timeout(&config), Duration::from_secs(1));
    assert!(inherited.telemetry());
}

#[test]
fn a_wrong_top_level_value_is_b010_with_its_location_and_the_value_found() {
    for (text, message) in [
        (
            "start_wait_ms = -1",
            "`start_wait_ms` must be an integer of milliseconds, 0 or more, found `-1`",
        ),
        (
            "start_wait_ms = \"soon\"",
            "`start_wait_ms` must be an integer of milliseconds, 0 or more, found string `\"soon\"`",
        ),
        (
            "health_timeout_ms = 0",
            "`health_timeout_ms` must be a positive integer of milliseconds, found `0`",
        ),
        (
            "health_interval_ms = 1.5",
            "`health_interval_ms` must be a positive integer of milliseconds, found float `1.5`",
        ),
        (
            "health_interval_ms = true",
            "`health_interval_ms` must be a positive integer of milliseconds, found boolean `true`",
        ),
    ] {
        let config = parse(text);
        let [problem] = config.problems() else {
            panic!("{text}: {:?}", descriptions(&config))
        };
        assert_eq!(problem.code(), "SANDLOOM-B010");
        assert_eq!(
            problem.description(),
            format!("{message} (at infra.toml:1:1)")
        );
        let key = text.split(' ').next().unwrap();
        assert!(
            problem.action().contains(&format!("`{key} = ")),
            "{}",
            problem.action()
        );
    }
    // The defaults stay.
    let config = parse("start_wait_ms = -1\nhealth_timeout_ms = 0\n");
    assert_eq!(config.start_wait(), Duration::ZERO);
    assert_eq!(config.health_timeout(), DEFAULT_HEALTH_TIMEOUT);
}

#[test]
fn a_wrong_instance_value_is_b010_at_its_key_and_leaves_the_instance_out() {
    let config = parse(
        "[cache.default]\ndriver = \"memory\"\ntelemetry = \"no\"\n\
         [cache.b]\ndriver = \"memory\"\nstart_wait_ms = -5\n\
         [cache.c]\ndriver = \"memory\"\nhealth_timeout_ms = 0\n\
         [cache.d]\ndriver = \"memory\"\n",
    );
    assert_eq!(
        descriptions(&config),
        [
            "`telemetry` of `[cache.default]` must be a boolean, found string `\"no\"` (at infra.toml:3:1)",
            "`start_wait_ms` of `[cache.b]` must be an integer of milliseconds, 0 or more, found `-5` (at infra.toml:6:1)",
            "`health_timeout_ms` of `[cache.c]` must be a positive integer of milliseconds, found `0` (at infra.toml:9:1)",
        ]
    );
    assert!(
        config
            .problems()
            .iter()
            .all(|p| p.code() == "SANDLOOM-B010")
    );
    assert_eq!(
        config.problems()[0].action(),
        "write `telemetry = false` in `[cache.default]` (telemetry is on by default)"
    );
    let left: Vec<&str> = config.instances().map(|i| i.instance.as_str()).collect();
    assert_eq!(left, ["d"]);
}

#[test]
fn a_misspelt_top_level_key_gets_a_suggestion() {
    let config = parse("start_wait = 1000");
    assert_eq!(
        descriptions(&config),
        ["unknown top-level key `start_wait` (did you mean `start_wait_ms`?) (at infra.toml:1:1)"]
    );
    assert!(
        config.problems()[0].action().contains("health_interval_ms"),
        "{}",
        config.problems()[0].action()
    );
}

#[test]
fn overrides_set_every_key_at_both_levels() {
    let config = overridden(&[
        ("SANDLOOM__START_WAIT_MS", "20000"),
        ("SANDLOOM__HEALTH_TIMEOUT_MS", "900"),
        ("SANDLOOM__HEALTH_INTERVAL_MS", "15000"),
        ("SANDLOOM__CACHE__DEFAULT__TELEMETRY", "false"),
        ("SANDLOOM__CACHE__DEFAULT__START_WAIT_MS", "0"),
        ("SANDLOOM__CACHE__DEFAULT__HEALTH_TIMEOUT_MS", "100"),
    ]);
    assert!(config.problems().is_empty(), "{:?}", descriptions(&config));
    assert_eq!(config.start_wait(), Duration::from_secs(20));
    assert_eq!(config.health_timeout(), Duration::from_millis(900));
    assert_eq!(config.health_interval(), Some(Duration::from_secs(15)));
    let cache = config.instance("cache", "default").unwrap();
    assert!(!cache.telemetry());
    assert_eq!(cache.start_wait(&config), Duration::ZERO);
    assert_eq!(cache.health_timeout(&config), Duration::from_millis(100));
    assert!(
        cache.options.is_empty(),
        "reached the driver: {:?}",
        cache.options
    );
    let notifier = config.instance("notifier", "default").unwrap();
    assert!(notifier.telemetry());
    assert_eq!(notifier.start_wait(&config), Duration::from_secs(20));
    assert_eq!(notifier.health_timeout(&config), Duration::from_millis(900));

    // An override wins over the file.
    let config =
        parse("start_wait_ms = 1000\n[cache.default]\ndriver = \"memory\"\ntelemetry = true\n")
            .with_overrides([
                ("SANDLOOM__START_WAIT_MS".to_owned(), "0".to_owned()),
                (
                    "SANDLOOM__CACHE__DEFAULT__TELEMETRY".to_owned(),
                    "false".to_owned(),
                ),
            ])
            .unwrap();
    assert!(config.problems().is_empty(), "{:?}", descriptions(&config));
    assert_eq!(config.start_wait(), Duration::ZERO);
    assert!(!config.instance("cache", "default").unwrap().telemetry());
}

#[test]
fn a_wrong_override_is_b010_at_its_variable_naming_the_value() {
    let config = overridden(&[
        ("SANDLOOM__HEALTH_TIMEOUT_MS", "0"),
        ("SANDLOOM__START_WAIT_MS", "later"),
        ("SANDLOOM__CACHE__DEFAULT__TELEMETRY", "no"),
    ]);
    assert_eq!(
        descriptions(&config),
        [
            "`telemetry` must be a boolean, found string `\"no\"` (at environment variable SANDLOOM__CACHE__DEFAULT__TELEMETRY)",
            "`health_timeout_ms` must be a positive integer of milliseconds, found `0` (at environment variable SANDLOOM__HEALTH_TIMEOUT_MS)",
            "`start_wait_ms` must be an integer of milliseconds, 0 or more, found string `\"later\"` (at environment variable SANDLOOM__START_WAIT_MS)",
        ]
    );
    let actions: Vec<String> = config.problems().iter().map(Problem::action).collect();
    assert_eq!(
        actions,
        [
            "write `SANDLOOM__CACHE__DEFAULT__TELEMETRY=false` (telemetry is on by default)",
            "write a whole number of milliseconds greater than 0, such as `SANDLOOM__HEALTH_TIMEOUT_MS=2000`",
            "write a whole number of milliseconds (0 for none), such as `SANDLOOM__START_WAIT_MS=30000`",
        ]
    );
    assert!(config.instance("cache", "default").is_none());
    assert!(config.instance("notifier", "default").is_some());
}

#[test]
fn rotation_poll_is_a_key_of_secrets_instances_only_from_the_file_and_overrides() {
    let config = parse(
        "[secrets.default]\ndriver = \"env\"\nprefix = \"APP_\"\nrotation_poll_ms = 0\n\
         [secrets.vault]\ndriver = \"memory\"\n\
         [secrets.bad]\ndriver = \"memory\"\nrotation_poll_ms = -1\n\
         [cache.default]\ndriver = \"memory\"\nrotation_poll_ms = 1000\n",
    );
    assert_eq!(
        descriptions(&config),
        [
            "`rotation_poll_ms` of `[secrets.bad]` must be an integer of milliseconds, 0 or more, found `-1` (at infra.toml:9:1)",
            "`rotation_poll_ms` of `[cache.default]` is a key of `secrets` instances only (how often a store is polled for rotated secrets); `cache` has no secrets to watch (at infra.toml:12:1)",
        ]
    );
    assert!(
        config
            .problems()
            .iter()
            .all(|p| p.code() == "SANDLOOM-B010")
    );
    let default = config.instance("secrets", "default").unwrap();
    assert!(default.rotation_poll().is_zero());
    assert_eq!(default.options.keys().collect::<Vec<_>>(), ["prefix"]);
    let vault = config.instance("secrets", "vault").unwrap();
    assert_eq!(vault.rotation_poll(), DEFAULT_ROTATION_POLL);

    let config = overridden(&[
        ("SANDLOOM__SECRETS__VAULT__DRIVER", "memory"),
        ("SANDLOOM__SECRETS__VAULT__ROTATION_POLL_MS", "5000"),
        ("SANDLOOM__CACHE__DEFAULT__ROTATION_POLL_MS", "5000"),
    ]);
    assert_eq!(
        descriptions(&config),
        [
            "`rotation_poll_ms` is a key of `secrets` instances only (how often a store is polled for rotated secrets); `cache` has no secrets to watch (at environment variable SANDLOOM__CACHE__DEFAULT__ROTATION_POLL_MS)"
        ]
    );
    let vault = config.instance("secrets", "vault").unwrap();
    assert_eq!(vault.rotation_poll(), Duration::from_secs(5));
    assert!(vault.options.is_empty(), "{:?}", vault.options);
}
