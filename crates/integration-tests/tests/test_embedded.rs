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
fn check_catches_option_values_a_driver_refuses() {
    // The example module linked into this binary requires all four default instances.
    let text = "[cache.default]\ndriver = \"memory\"\ncapacity = 0\n\
                [notifier.default]\ndriver = \"memory\"\n\
                [objectstore.default]\ndriver = \"memory\"\n\
                [taskqueue.default]\ndriver = \"memory\"\nmax_attempts = 0";
    let err = Kernel::new(config(text), linked()).check().unwrap_err();
    assert_eq!(err.codes(), ["SANDLOOM-B022", "SANDLOOM-B022"], "{err}");
    let Problem::Unusable {
        reason: UnusableReason::Options {
            error, location, ..
        },
        ..
    } = &err.problems()[0]
    else {
        panic!("{err}")
    };
    assert_eq!(error.message(), "`capacity` must be at least 1");
    assert_eq!(location.to_string(), "infra.toml:1:8");
    assert!(
        err.problems()[1]
            .description()
            .contains("`max_attempts` must be at least 1"),
        "{err}"
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
