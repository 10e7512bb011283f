use super::{Change, ReloadPlan};
use crate::InfraConfig;

fn config(text: &str) -> InfraConfig {
    let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    assert!(config.problems().is_empty(), "{:?}", config.problems());
    config
}

fn with(config: InfraConfig, vars: &[(&str, &str)]) -> InfraConfig {
    let vars = vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
    let config = config.with_overrides(vars).unwrap();
    assert!(config.problems().is_empty(), "{:?}", config.problems());
    config
}

/// `(capability.instance, change)` for every instance.
fn changes(old: &InfraConfig, new: &InfraConfig) -> Vec<(String, Change)> {
    ReloadPlan::between(old, new)
        .instances
        .into_iter()
        .map(|i| (i.qualified_name(), i.change))
        .collect()
}

fn only(old: &str, new: &str) -> Change {
    let found = changes(&config(old), &config(new));
    assert_eq!(found.len(), 1, "{found:?}");
    found.into_iter().next().unwrap().1
}

fn replaced(reasons: &[&str]) -> Change {
    Change::Replaced {
        reasons: reasons.iter().map(|r| (*r).to_owned()).collect(),
    }
}

#[test]
fn the_same_configuration_keeps_everything() {
    let defaults = InfraConfig::embedded_defaults();
    let plan = ReloadPlan::between(&defaults, &defaults.clone());
    assert!(plan.instances.iter().all(|i| i.change == Change::Kept));
    assert!(plan.settings.is_empty());
    assert!(!plan.has_changes());
}

#[test]
fn locations_formatting_comments_and_table_order_do_not_count() {
    let old = "[cache.default]\ndriver = \"memory\"\ncapacity = 10\n[cache.default.tls]\nverify = true\nca = \"x\"\n";
    let new = "# a comment\n\n\n[cache]\ndefault = { capacity = 10, tls = { ca = \"x\", verify = true }, driver = \"memory\" }\n";
    assert_eq!(only(old, new), Change::Kept);
}

#[test]
fn a_driver_change_names_both_drivers() {
    let change = only(
        "[cache.default]\ndriver = \"redis\"\n",
        "[cache.default]\ndriver = \"memory\"\n",
    );
    assert_eq!(change, replaced(&["driver `redis` → `memory`"]));
}

#[test]
fn an_option_changed_added_or_removed_is_named_and_its_value_never_shown() {
    let change = only(
        "[cache.default]\ndriver = \"redis\"\nurl = \"redis://:hunter2@a\"\npool = 4\n",
        "[cache.default]\ndriver = \"redis\"\nurl = \"redis://:swordfish@b\"\ncapacity = 7\n",
    );
    assert_eq!(
        change,
        replaced(&[
            "option `capacity` added",
            "option `pool` removed",
            "option `url` changed",
        ])
    );
    let text = format!("{change:?}");
    for value in ["hunter2", "swordfish", "redis://", "4", "7"] {
        assert!(!text.contains(value), "{value} shown in {text}");
    }
}

#[test]
fn a_value_of_another_type_is_a_change_even_when_it_looks_the_same() {
    let old = "[cache.default]\ndriver = \"memory\"\ncapacity = 1\n";
    for new in ["capacity = \"1\"", "capacity = 1.0", "capacity = [1]"] {
        let new = format!("[cache.default]\ndriver = \"memory\"\n{new}\n");
        assert_eq!(
            only(old, &new),
            replaced(&["option `capacity` changed"]),
            "{new}"
        );
    }
}

#[test]
fn a_nested_option_changes_as_a_whole_and_shows_no_value() {
    let change = only(
        "[cache.default]\ndriver = \"redis\"\n[cache.default.tls]\nverify = true\n",
        "[cache.default]\ndriver = \"redis\"\n[cache.default.tls]\nverify = false\n",
    );
    assert_eq!(change, replaced(&["option `tls` changed"]));
}

#[test]
fn the_same_value_from_an_override_or_the_file_is_kept() {
    let file = config("[cache.default]\ndriver = \"memory\"\ncapacity = 500\nname = \"eu\"\n");
    let bare = config("[cache.default]\ndriver = \"memory\"\n");
    let overridden = with(
        bare.clone(),
        &[
            ("SANDLOOM__CACHE__DEFAULT__CAPACITY", "500"),
            ("SANDLOOM__CACHE__DEFAULT__NAME", "eu"),
        ],
    );
    assert_eq!(changes(&file, &overridden)[0].1, Change::Kept);
    assert_eq!(changes(&overridden, &file)[0].1, Change::Kept);
    // The whole instance from overrides, against the same from the file.
    let from_variables = with(
        config(""),
        &[
            ("SANDLOOM__CACHE__DEFAULT__DRIVER", "memory"),
            ("SANDLOOM__CACHE__DEFAULT__CAPACITY", "500"),
            ("SANDLOOM__CACHE__DEFAULT__NAME", "eu"),
        ],
    );
    assert_eq!(changes(&file, &from_variables)[0].1, Change::Kept);
}

#[test]
fn an_override_whose_text_a_string_option_would_see_differently_is_a_change() {
    // `+500` reads as the integer 500, and a string option gets the text `+500`.
    let file = config("[cache.default]\ndriver = \"memory\"\ncapacity = 500\n");
    let bare = config("[cache.default]\ndriver = \"memory\"\n");
    let plus = with(bare, &[("SANDLOOM__CACHE__DEFAULT__CAPACITY", "+500")]);
    assert_eq!(
        changes(&file, &plus)[0].1,
        replaced(&["option `capacity` changed"])
    );
}

#[test]
fn a_secret_reference_is_an_option_value_like_any_other() {
    let old = "[taskqueue.default]\ndriver = \"postgres\"\npassword = { secret = \"db/password\", store = \"vault\" }\n";
    let same = "[taskqueue.default]\ndriver = \"postgres\"\n[taskqueue.default.password]\nstore = \"vault\"\nsecret = \"db/password\"\n";
    assert_eq!(only(old, same), Change::Kept);
    let moved = "[taskqueue.default]\ndriver = \"postgres\"\npassword = { secret = \"db/password\", store = \"files\" }\n";
    let change = only(old, moved);
    assert_eq!(change, replaced(&["option `password` changed"]));
    assert!(!format!("{change:?}").contains("vault"));
    let literal = "[taskqueue.default]\ndriver = \"postgres\"\npassword = \"db/password\"\n";
    assert_eq!(only(old, literal), replaced(&["option `password` changed"]));
}

#[test]
fn a_float_nan_is_kept() {
    let text = "[cache.default]\ndriver = \"memory\"\nratio = nan\n";
    assert_eq!(only(text, text), Change::Kept);
}

#[test]
fn the_kernels_instance_keys_replace_the_instance_and_show_their_numbers() {
    let old = "[cache.default]\ndriver = \"memory\"\n";
    let new = "[cache.default]\ndriver = \"memory\"\nhealth_timeout_ms = 500\nstart_wait_ms = 3000\ntelemetry = false\n";
    assert_eq!(
        only(old, new),
        replaced(&[
            "start_wait_ms 0 → 3000",
            "health_timeout_ms 2000 → 500",
            "telemetry true → false",
        ])
    );
}

#[test]
fn the_kernels_keys_compare_as_they_apply_to_the_instance() {
    // Inherited from the top level or written in the table: the same 500 ms.
    let top = "health_timeout_ms = 500\n[cache.default]\ndriver = \"memory\"\n";
    let own = "[cache.default]\ndriver = \"memory\"\nhealth_timeout_ms = 500\ntelemetry = true\n";
    assert_eq!(only(top, own), Change::Kept);
    // A top-level change reaches the instances that inherit it, not one with its own.
    let old = config(
        "start_wait_ms = 1000\n[cache.default]\ndriver = \"memory\"\n[cache.local]\ndriver = \"memory\"\nstart_wait_ms = 0\n",
    );
    let new = config(
        "start_wait_ms = 5000\n[cache.default]\ndriver = \"memory\"\n[cache.local]\ndriver = \"memory\"\nstart_wait_ms = 0\n",
    );
    assert_eq!(
        changes(&old, &new),
        [
            (
                "cache.default".to_owned(),
                replaced(&["start_wait_ms 1000 → 5000"])
            ),
            ("cache.local".to_owned(), Change::Kept),
        ]
    );
}

#[test]
fn added_and_removed_instances_come_in_start_order() {
    let old = config(
        "[lock.default]\ndriver = \"memory\"\n[cache.old]\ndriver = \"memory\"\n[taskqueue.default]\ndriver = \"memory\"\n",
    );
    let new = config(
        "[taskqueue.default]\ndriver = \"memory\"\n[cache.new]\ndriver = \"memory\"\n[notifier.default]\ndriver = \"log\"\n",
    );
    assert_eq!(
        changes(&old, &new),
        [
            ("cache.new".to_owned(), Change::Added),
            ("cache.old".to_owned(), Change::Removed),
            ("lock.default".to_owned(), Change::Removed),
            ("notifier.default".to_owned(), Change::Added),
            ("taskqueue.default".to_owned(), Change::Kept),
        ]
    );
    assert!(ReloadPlan::between(&old, &new).has_changes());
}

#[test]
fn settings_of_the_whole_process_are_listed_and_replace_no_instance() {
    let old = config("[cache.default]\ndriver = \"memory\"\n");
    let new = config(
        "environment = \"production\"\naccepted_risks = [\"experimental_capability\"]\n\
         start_timeout_ms = 1000\nstop_timeout_ms = 2000\nhealth_interval_ms = 5000\n\
         [cache.default]\ndriver = \"memory\"\n",
    );
    let plan = ReloadPlan::between(&old, &new);
    assert_eq!(plan.instances[0].change, Change::Kept);
    assert_eq!(
        plan.settings,
        [
            "environment development → production",
            "accepted_risks [] → [experimental_capability]",
            "start_timeout_ms 30000 → 1000",
            "stop_timeout_ms 10000 → 2000",
            "health_interval_ms off → 5000",
        ]
    );
    assert!(plan.has_changes());
    let back = ReloadPlan::between(&new, &old);
    assert_eq!(back.settings[4], "health_interval_ms 5000 → off");
}

#[test]
fn a_secret_reference_is_an_option_value_and_rotation_poll_a_kernel_key() {
    let head = "[cache.default]\ndriver = \"redis\"\n";
    let reference = format!("{head}url = {{ secret = \"redis/url\" }}\n");
    // The same reference, written inline or with its default store spelled out: kept.
    assert_eq!(
        only(
            &reference,
            &format!("{head}url = {{ store = \"default\", secret = \"redis/url\" }}\n")
        ),
        Change::Kept
    );
    // Another secret, another store, or a literal in its place: the option changed.
    for new in [
        format!("{head}url = {{ secret = \"redis/other\" }}\n"),
        format!("{head}url = {{ secret = \"redis/url\", store = \"vault\" }}\n"),
        format!("{head}url = \"redis://127.0.0.1\"\n"),
    ] {
        assert_eq!(
            only(&reference, &new),
            replaced(&["option `url` changed"]),
            "{new}"
        );
    }
    assert_eq!(only(head, &reference), replaced(&["option `url` added"]));
    let store = "[secrets.default]\ndriver = \"memory\"\n";
    // `rotation_poll_ms` is how the kernel watches the store, not what it is built from:
    // the store is kept, and the change is listed with the settings (it restarts the watch).
    let polled = format!("{store}rotation_poll_ms = 5000\n");
    assert_eq!(only(store, &polled), Change::Kept);
    let plan = ReloadPlan::between(&config(store), &config(&polled));
    assert_eq!(
        plan.settings,
        ["secrets.default rotation_poll_ms 30000 → 5000"]
    );
    assert!(plan.has_changes());
}

#[test]
fn a_replaced_store_replaces_its_readers_and_the_readers_of_stores_reading_from_it() {
    let text = |root: &str| {
        format!(
            "[secrets.base]\ndriver = \"file\"\nroot = \"{root}\"\n\
             [secrets.vault]\ndriver = \"vault\"\ntoken = {{ secret = \"t\", store = \"base\" }}\n\
             [cache.default]\ndriver = \"redis\"\nurl = {{ secret = \"u\", store = \"vault\" }}\n\
             [cache.direct]\ndriver = \"redis\"\nurl = {{ secret = \"u\", store = \"base\" }}\n\
             [cache.plain]\ndriver = \"memory\"\n"
        )
    };
    let found = changes(&config(&text("/a")), &config(&text("/b")));
    let reason = |store: &str| format!("reads its secrets from secrets.{store}, which is replaced");
    assert_eq!(
        found,
        [
            ("cache.default".to_owned(), replaced(&[&reason("vault")])),
            ("cache.direct".to_owned(), replaced(&[&reason("base")])),
            ("cache.plain".to_owned(), Change::Kept),
            (
                "secrets.base".to_owned(),
                replaced(&["option `root` changed"])
            ),
            ("secrets.vault".to_owned(), replaced(&[&reason("base")])),
        ]
    );
    // Nothing replaced: nothing follows.
    assert!(
        changes(&config(&text("/a")), &config(&text("/a")))
            .iter()
            .all(|(_, change)| *change == Change::Kept)
    );
}
