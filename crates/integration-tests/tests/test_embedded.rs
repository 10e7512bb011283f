//! The built-in drivers through the kernel: the embedded defaults serve the example module
//! end to end, and `check` catches option values the drivers refuse, before building anything.

mod common;

use common::config;
use sandloom::{InfraConfig, Kernel, Problem, UnusableReason};
use sandloom_example_orders::OrderDesk;

fn linked() -> sandloom::LinkedDrivers {
    sandloom::link_drivers!(sandloom_embedded)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_defaults_serve_a_module_using_all_four_capabilities() {
    let root = tempfile::tempdir().unwrap();
    let config = InfraConfig::embedded_defaults()
        .with_overrides([(
            "SANDLOOM__OBJECTSTORE__DEFAULT__ROOT".to_owned(),
            root.path().display().to_string(),
        )])
        .unwrap();
    let running = Kernel::new(config, linked()).start().await.unwrap();
    let drivers: Vec<String> = running
        .report()
        .lines
        .iter()
        .map(|l| format!("{}.{}", l.capability, l.driver))
        .collect();
    assert_eq!(
        drivers,
        [
            "cache.memory",
            "lock.memory",
            "notifier.log",
            "objectstore.fs",
            "taskqueue.memory"
        ]
    );

    let desk = OrderDesk::new(running.infra()).unwrap();
    desk.place_order("ada@example.com", "loom").await.unwrap();
    desk.place_order("grace@example.com", "shuttle")
        .await
        .unwrap();
    assert_eq!(desk.send_confirmations().await.unwrap(), 2);
    assert_eq!(
        desk.orders().await.unwrap(),
        ["orders/000001.txt", "orders/000002.txt"]
    );
    assert!(
        root.path().join("orders/000002.txt").is_file(),
        "objectstore.fs wrote under its root"
    );
    running.shutdown().await.unwrap();
}

#[test]
fn check_catches_option_values_a_driver_refuses_each_at_its_key() {
    // The example module linked into this binary requires all four default instances.
    let text = "[cache.default]\ndriver = \"memory\"\ncapacity = 0\ndefault_ttl_ms = 0\n\
                [notifier.default]\ndriver = \"memory\"\n\
                [objectstore.default]\ndriver = \"memory\"\n\
                [taskqueue.default]\ndriver = \"memory\"\nmax_attempts = 0";
    let err = Kernel::new(config(text), linked()).check().unwrap_err();
    assert_eq!(
        err.codes(),
        ["SANDLOOM-B022", "SANDLOOM-B022", "SANDLOOM-B022"],
        "{err}"
    );
    let Problem::Unusable {
        reason: UnusableReason::Options {
            error, location, ..
        },
        ..
    } = &err.problems()[0]
    else {
        panic!("{err}")
    };
    assert_eq!(error.path(), ["capacity"]);
    assert_eq!(error.message(), "must be at least 1");
    // The key the driver's `validate` names, not the table's header.
    assert_eq!(location.to_string(), "infra.toml:3:1");
    let whole: Vec<String> = err.problems().iter().map(ToString::to_string).collect();
    assert_eq!(
        whole,
        [
            "[SANDLOOM-B022] driver `cache.memory` (package `sandloom-embedded`) for `cache.default` cannot be used: invalid options at infra.toml:3:1: option `capacity`: must be at least 1\n    \
             Action: fix the option in `[cache.default]`; see the options of `cache.memory` in `sandloom-embedded`'s documentation",
            "[SANDLOOM-B022] driver `cache.memory` (package `sandloom-embedded`) for `cache.default` cannot be used: invalid options at infra.toml:4:1: option `default_ttl_ms`: must be at least 1\n    \
             Action: fix the option in `[cache.default]`; see the options of `cache.memory` in `sandloom-embedded`'s documentation",
            "[SANDLOOM-B022] driver `taskqueue.memory` (package `sandloom-embedded`) for `taskqueue.default` cannot be used: invalid options at infra.toml:11:1: option `max_attempts`: must be at least 1\n    \
             Action: fix the option in `[taskqueue.default]`; see the options of `taskqueue.memory` in `sandloom-embedded`'s documentation",
        ]
    );
}

#[test]
fn a_value_a_driver_refuses_from_an_override_names_the_variable() {
    let config = InfraConfig::from_toml_str("[cache.default]\ndriver = \"memory\"\n", "infra.toml")
        .unwrap()
        .with_overrides([(
            "SANDLOOM__CACHE__DEFAULT__CAPACITY".to_owned(),
            "0".to_owned(),
        )])
        .unwrap();
    let err = Kernel::new(config, sandloom::link_drivers!(sandloom_embedded))
        .check()
        .unwrap_err();
    let problem = err
        .problems()
        .iter()
        .find(|p| p.description().contains("cache.default"))
        .unwrap_or_else(|| panic!("{err}"));
    assert_eq!(
        problem.to_string(),
        "[SANDLOOM-B022] driver `cache.memory` (package `sandloom-embedded`) for `cache.default` cannot be used: invalid options at environment variable SANDLOOM__CACHE__DEFAULT__CAPACITY: option `capacity`: must be at least 1\n    \
         Action: fix the value of the environment variable `SANDLOOM__CACHE__DEFAULT__CAPACITY`, or unset it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_notifier_outbox_shows_what_a_module_sent_through_infra() {
    let text = "[cache.default]\ndriver = \"memory\"\n\
                [notifier.default]\ndriver = \"memory\"\noutbox = \"orders-test\"\n\
                [objectstore.default]\ndriver = \"memory\"\n\
                [taskqueue.default]\ndriver = \"memory\"";
    let running = Kernel::new(config(text), linked()).start().await.unwrap();
    let desk = OrderDesk::new(running.infra()).unwrap();
    desk.place_order("ada@example.com", "loom").await.unwrap();
    assert_eq!(desk.send_confirmations().await.unwrap(), 1);
    let sent = sandloom_embedded::MemoryNotifier::outbox("orders-test");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].recipient, "ada@example.com");
    assert_eq!(sent[0].body, "Your order orders/000001.txt is confirmed.");
    running.shutdown().await.unwrap();
}
