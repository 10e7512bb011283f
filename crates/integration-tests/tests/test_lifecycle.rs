//! Startup is all-or-nothing, shutdown runs in reverse, and every driver failure is B022 with
//! the driver, the reason and the fix. Fixtures: `sandloom-fixture-good`, `-faulty`.

mod common;

use std::time::Duration;

use common::{config, only, refused, start};
use sandloom::sdk::CACHE;
use sandloom::{Kernel, Problem, UnusableReason, codes};
use sandloom_fixture_support::events;

fn linked() -> sandloom::LinkedDrivers {
    // `fulltext.memory`: a driver of an experimental capability (a package's own; every
    // built-in capability with an operation trait is stable).
    sandloom::link_drivers!(
        sandloom_fixture_good,
        sandloom_fixture_faulty,
        sandloom_example_fulltext_memory
    )
}

#[tokio::test]
async fn starts_selected_drivers_and_stops_them_in_reverse_order() {
    let running = start(
        r#"
        [cache.a]
        driver = "fixture"
        label = "order-a"
        [cache.b]
        driver = "fixture"
        label = "order-b"
        "#,
        linked(),
    )
    .await
    .unwrap();
    let cache = running.infra().capability(&CACHE, "a").unwrap();
    cache.set("k", "v".into()).await.unwrap();
    assert_eq!(cache.get("k").await.unwrap().as_deref(), Some(&b"v"[..]));
    assert!(running.infra().capability(&CACHE, "b").is_ok());
    running.shutdown().await.unwrap();
    assert_eq!(
        events("order-"),
        [
            "order-a:build",
            "order-b:build",
            "order-a:start",
            "order-b:start",
            "order-b:stop",
            "order-a:stop"
        ]
    );
}

#[tokio::test]
async fn a_failed_start_stops_everything_already_started_and_leaves_nothing_running() {
    let err = refused(
        r#"
        [cache.a]
        driver = "fixture"
        label = "rollback-a"
        [cache.b]
        driver = "start-error"
        label = "rollback-b"
        [cache.c]
        driver = "fixture"
        label = "rollback-c"
        "#,
        linked(),
    )
    .await;
    let Problem::Unusable {
        instance,
        driver,
        package,
        reason: UnusableReason::StartFailed { message, .. },
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!(
        (instance.as_str(), driver.as_str(), *package),
        ("b", "start-error", "sandloom-fixture-faulty")
    );
    assert!(
        message.contains("backend refused the connection"),
        "{message}"
    );
    assert!(err.to_string().contains("SANDLOOM-B022"), "{err}");
    // Every start was attempted (to find every problem); every attempted driver was stopped,
    // the failed one included, in reverse order.
    assert_eq!(
        events("rollback-"),
        [
            "rollback-a:build",
            "rollback-b:build",
            "rollback-c:build",
            "rollback-a:start",
            "rollback-b:start",
            "rollback-c:start",
            "rollback-c:stop",
            "rollback-b:stop",
            "rollback-a:stop",
        ]
    );
}

#[tokio::test]
async fn a_start_that_panics_is_caught_and_reported() {
    let err = refused(
        "[cache.p]\ndriver = \"start-panic\"\nlabel = \"panic-start\"",
        linked(),
    )
    .await;
    let Problem::Unusable {
        reason: UnusableReason::Panicked { phase, message, .. },
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!((*phase, message.as_str()), ("start", "fixture start panic"));
    assert_eq!(
        events("panic-start"),
        ["panic-start:build", "panic-start:start", "panic-start:stop"]
    );
}

#[tokio::test]
async fn a_start_that_hangs_times_out_with_the_configured_timeout() {
    let err = refused(
        "start_timeout_ms = 100\n[cache.h]\ndriver = \"start-hang\"\nlabel = \"hang\"",
        linked(),
    )
    .await;
    let Problem::Unusable {
        reason: UnusableReason::TimedOut { after, .. },
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!(*after, Duration::from_millis(100));
    assert!(only(&err).action().contains("start_timeout_ms"), "{err}");
    assert_eq!(events("hang"), ["hang:build", "hang:start", "hang:stop"]);
}

/// The two tests above run on a single-threaded runtime, where the kernel polls `start` inline
/// first; on a multi-threaded one `start` runs as a task from its first poll. Both ways, a
/// panic is caught and a hang times out, and the driver is stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_multi_threaded_runtime_a_start_that_panics_or_hangs_is_reported_too() {
    let err = refused(
        "start_timeout_ms = 100\n[cache.p]\ndriver = \"start-panic\"\nlabel = \"panic-mt\"\n\
         [cache.h]\ndriver = \"start-hang\"\nlabel = \"hang-mt\"",
        linked(),
    )
    .await;
    let reasons: Vec<&UnusableReason> = err
        .problems()
        .iter()
        .filter_map(|problem| match problem {
            Problem::Unusable { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert!(
        reasons.iter().any(|reason| matches!(
            reason,
            UnusableReason::Panicked { phase: "start", message, .. } if message == "fixture start panic"
        )),
        "{err}"
    );
    assert!(
        reasons.iter().any(|reason| matches!(
            reason,
            UnusableReason::TimedOut { after, .. } if *after == Duration::from_millis(100)
        )),
        "{err}"
    );
    assert_eq!(
        events("panic-mt"),
        ["panic-mt:build", "panic-mt:start", "panic-mt:stop"]
    );
    assert_eq!(
        events("hang-mt"),
        ["hang-mt:build", "hang-mt:start", "hang-mt:stop"]
    );
}

#[tokio::test]
async fn construction_errors_and_panics_are_all_reported_and_nothing_starts() {
    let err = refused(
        r#"
        [cache.e]
        driver = "build-error"
        label = "build-e"
        [cache.ok]
        driver = "fixture"
        label = "build-ok"
        [cache.p]
        driver = "build-panic"
        label = "build-p"
        "#,
        linked(),
    )
    .await;
    assert_eq!(err.codes(), [codes::UNUSABLE, codes::UNUSABLE], "{err}");
    assert!(
        matches!(&err.problems()[0], Problem::Unusable { reason: UnusableReason::BuildFailed { message: m, .. }, .. } if m.contains("contradictory"))
    );
    assert!(matches!(
        &err.problems()[1],
        Problem::Unusable {
            reason: UnusableReason::Panicked {
                phase: "construction",
                ..
            },
            ..
        }
    ));
    // The good driver was built but never started, so there was nothing to stop.
    assert_eq!(events("build-ok"), ["build-ok:build"]);
}

#[tokio::test]
async fn another_contract_major_is_refused_before_anything_is_built() {
    let err = refused(
        "[cache.f]\ndriver = \"future-major\"\nlabel = \"major\"",
        linked(),
    )
    .await;
    let Problem::Unusable {
        reason: UnusableReason::ContractVersion {
            driver, runtime, ..
        },
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!((driver.major, runtime.major), (2, 1));
    assert!(err.to_string().contains("contract 2.0.0"), "{err}");
    assert!(events("major").is_empty(), "nothing is constructed");
}

#[tokio::test]
async fn an_unknown_option_key_gets_a_suggestion_and_its_location() {
    let err = refused("[cache.t]\ndriver = \"fixture\"\nlabl = \"x\"", linked()).await;
    let Problem::Unusable {
        reason: UnusableReason::Options {
            error, location, ..
        },
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!(error.unknown_field(), Some("labl"));
    assert_eq!(error.suggestion(), Some("label"));
    assert_eq!(location.to_string(), "infra.toml:3:1");
    assert!(
        only(&err).action().contains("rename `labl` to `label`"),
        "{err}"
    );
}

#[tokio::test]
async fn a_wrongly_typed_option_names_its_key_and_never_echoes_the_value() {
    let err = refused(
        "[cache.t]\ndriver = \"fixture\"\nttl = \"hunter2\"",
        linked(),
    )
    .await;
    let text = err.to_string();
    assert!(
        text.contains("option `ttl`") && text.contains("infra.toml:3:1"),
        "{text}"
    );
    assert!(
        !text.contains("hunter2"),
        "option values may be secrets: {text}"
    );
}

#[tokio::test]
async fn a_required_operation_declared_as_a_feature_is_refused() {
    let err = refused("[cache.r]\ndriver = \"required-as-feature\"", linked()).await;
    let Problem::Unusable {
        reason: UnusableReason::UndeclaredFeature { feature, why, .. },
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!(*feature, "get");
    assert!(why.contains("required operation"), "{why}");
}

#[tokio::test]
async fn an_instance_reporting_an_undeclared_feature_is_refused() {
    let err = refused("[cache.u]\ndriver = \"undeclared-feature\"", linked()).await;
    assert!(
        matches!(
            only(&err),
            Problem::Unusable {
                reason: UnusableReason::UndeclaredFeature {
                    feature: "bulk",
                    ..
                },
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn requirements_are_checked_against_features_for_the_options() {
    let needs_ttl = [sandloom::sdk::Requirement::new(
        &CACHE,
        "s",
        &["ttl"],
        "billing",
    )];
    let without = Kernel::new(
        config("[cache.s]\ndriver = \"fixture\"\nlabel = \"req-no\""),
        linked(),
    )
    .require(&needs_ttl)
    .start()
    .await
    .unwrap_err();
    let Problem::Unusable {
        reason:
            UnusableReason::MissingFeature {
                feature,
                module,
                declared,
                ..
            },
        ..
    } = only(&without)
    else {
        panic!("{without}")
    };
    assert_eq!(
        (feature.as_str(), *module, declared.len()),
        ("ttl", "billing", 0)
    );
    assert!(
        events("req-no").is_empty(),
        "a requirement failure constructs nothing"
    );

    let with = Kernel::new(
        config("[cache.s]\ndriver = \"fixture\"\nttl = true\nlabel = \"req-yes\""),
        linked(),
    )
    .require(&needs_ttl)
    .start()
    .await
    .unwrap();
    assert_eq!(with.report().lines[0].features, ["ttl"]);
    with.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_required_instance_that_is_not_configured_is_b020_naming_the_module() {
    let needs = [sandloom::sdk::Requirement::new(
        &CACHE,
        "sessions",
        &[],
        "shop",
    )];
    let err = Kernel::new(config("[cache.default]\ndriver = \"fixture\""), linked())
        .require(&needs)
        .check()
        .unwrap_err();
    let Problem::NoInstance {
        instance,
        module,
        configured,
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!((instance.as_str(), *module), ("sessions", "shop"));
    assert_eq!(configured, &["default"]);
    assert_eq!(only(&err).code(), codes::NO_DRIVER);
}

#[tokio::test]
async fn experimental_capability_in_production_needs_the_accepted_risk() {
    let err = refused(
        "environment = \"production\"\n[fulltext.default]\ndriver = \"memory\"",
        linked(),
    )
    .await;
    let Problem::Experimental {
        capability,
        location,
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    assert_eq!(
        (capability.as_str(), location.to_string().as_str()),
        ("fulltext", "infra.toml:2:2")
    );
    assert!(
        only(&err)
            .action()
            .contains("accepted_risks = [\"experimental_capability\"]")
    );

    let accepted = start(
        "environment = \"production\"\naccepted_risks = [\"experimental_capability\"]\n[fulltext.default]\ndriver = \"memory\"",
        linked(),
    )
    .await
    .unwrap();
    assert!(
        accepted
            .infra()
            .default_instance(&sandloom_example_fulltext_contracts::FULLTEXT)
            .is_ok()
    );
    accepted.shutdown().await.unwrap();

    let development = start("[fulltext.default]\ndriver = \"memory\"", linked())
        .await
        .unwrap();
    development.shutdown().await.unwrap();
}

#[tokio::test]
async fn lock_is_stable_in_production_with_no_accepted_risk() {
    let running = start(
        "environment = \"production\"\n[lock.default]\ndriver = \"fixture\"",
        linked(),
    )
    .await
    .unwrap_or_else(|err| panic!("{err}"));
    assert!(running.infra().lock().is_ok());
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn every_problem_is_reported_at_once() {
    let err = refused(
        r#"
        environment = "production"
        [cache.a]
        driver = "future-major"
        [cache.b]
        driver = "nope"
        [cache.c]
        driver = "fixture"
        capacity = 3
        [fulltext.default]
        driver = "memory"
        "#,
        linked(),
    )
    .await;
    assert_eq!(
        err.codes(),
        [
            codes::UNUSABLE,
            codes::NO_DRIVER,
            codes::UNUSABLE,
            codes::EXPERIMENTAL
        ],
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("Sandloom refused to start: 4 problems found.")
    );
}

#[tokio::test]
async fn check_resolves_without_constructing_anything() {
    let kernel = Kernel::new(
        config("[cache.x]\ndriver = \"fixture\"\nlabel = \"dry\"\nttl = true"),
        linked(),
    );
    let report = kernel.check().unwrap();
    assert_eq!(report.lines.len(), 1);
    let line = &report.lines[0];
    assert_eq!(
        (line.driver.as_str(), line.package, line.features.clone()),
        ("fixture", "sandloom-fixture-good", vec!["ttl"])
    );
    assert_eq!(line.contract_version.to_string(), "1.0.0");
    assert!(
        events("dry").is_empty(),
        "check must not build or start drivers"
    );
    let err = Kernel::new(config("[cache.x]\ndriver = \"start-error\""), linked()).check();
    assert!(err.is_ok(), "start failures are only found by starting");
}

#[tokio::test]
async fn a_stop_failure_is_reported_as_b030_and_other_drivers_still_stop() {
    let running = start(
        "[cache.a]\ndriver = \"fixture\"\nlabel = \"stopfail-a\"\n[cache.b]\ndriver = \"stop-error\"\nlabel = \"stopfail-b\"",
        linked(),
    )
    .await
    .unwrap();
    let err = running.shutdown().await.unwrap_err();
    assert_eq!(err.codes(), [codes::STOP_FAILED]);
    assert!(
        err.to_string().contains("could not release its pool"),
        "{err}"
    );
    assert_eq!(
        events("stopfail-").last().map(String::as_str),
        Some("stopfail-a:stop")
    );
}

#[tokio::test]
async fn operations_after_shutdown_answer_stopped() {
    let running = start("[cache.default]\ndriver = \"fixture\"", linked())
        .await
        .unwrap();
    let cache = running.infra().capability_arc(&CACHE, "default").unwrap();
    running.shutdown().await.unwrap();
    let err = cache.get("k").await.unwrap_err();
    assert_eq!(err.kind(), sandloom::sdk::ErrorKind::Stopped);
}

#[tokio::test]
async fn health_is_reported_per_instance() {
    let running = start("[cache.default]\ndriver = \"fixture\"", linked())
        .await
        .unwrap();
    let health = running.health().await;
    assert_eq!(
        health,
        [("cache.default".to_owned(), sandloom::Health::Healthy)]
    );
    running.shutdown().await.unwrap();
}

#[test]
fn start_outside_a_runtime_is_an_error_not_a_panic() {
    let kernel = Kernel::new(config("[cache.default]\ndriver = \"fixture\""), linked());
    let err = futures_executor_block_on(kernel.start()).unwrap_err();
    assert_eq!(err.codes(), [codes::NO_RUNTIME]);
}

// A minimal executor, so this test runs the future with no Tokio runtime around it.
fn futures_executor_block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct Noop;
    impl Wake for Noop {
        fn wake(self: std::sync::Arc<Self>) {}
    }
    let waker = Waker::from(std::sync::Arc::new(Noop));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

#[tokio::test]
async fn the_startup_report_is_a_value_a_table_and_tracing_events() {
    let capture = sandloom_test_support::LogCapture::new();
    // The test runtime is single-threaded, so a thread-local subscriber sees the kernel's events.
    let _guard = capture.set_default(tracing::Level::INFO);

    let running = start(
        "[cache.default]\ndriver = \"fixture\"\nttl = true",
        linked(),
    )
    .await
    .unwrap();
    let table = running.report().to_string();
    assert!(
        table.contains("cache.default")
            && table.contains("sandloom-fixture-good")
            && table.contains("ttl"),
        "{table}"
    );
    running.shutdown().await.unwrap();

    let logged = capture.text();
    assert!(logged.contains("capability instance ready"), "{logged}");
    assert!(
        logged.contains("capability=cache") && logged.contains("driver=fixture"),
        "{logged}"
    );
    assert!(
        logged.contains("package=\"sandloom-fixture-good\"")
            && logged.contains("contract_version=1.0.0"),
        "{logged}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_that_blocks_its_thread_is_named_and_stopped_only_after_it_returns() {
    let err = refused(
        "start_timeout_ms = 100\n[cache.b]\ndriver = \"start-blocks\"\nlabel = \"blocks\"",
        linked(),
    )
    .await;
    let Problem::Unusable {
        reason: UnusableReason::BlockedThread {
            timeout, elapsed, ..
        },
        ..
    } = only(&err)
    else {
        panic!("{err}")
    };
    // The fixture blocks for 2 s: the report says how long, not only the 100 ms timeout.
    assert_eq!(*timeout, Duration::from_millis(100));
    assert!(*elapsed >= Duration::from_secs(2), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("blocked its thread past the 100 ms start timeout"),
        "{text}"
    );
    assert!(
        only(&err)
            .action()
            .contains("must never block its thread: await async I/O, or move blocking work into `tokio::task::spawn_blocking`"),
        "{text}"
    );
    // Stopped, and only once its start had given the thread back: nothing is left running.
    assert_eq!(
        events("blocks"),
        ["blocks:build", "blocks:start", "blocks:stop"]
    );
}

#[tokio::test]
async fn a_cancelled_startup_stops_what_it_started() {
    let startup = start(
        "start_timeout_ms = 60000\n[cache.a]\ndriver = \"fixture\"\nlabel = \"cancel-a\"\n[cache.b]\ndriver = \"start-hang\"\nlabel = \"cancel-b\"",
        linked(),
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(200), startup)
            .await
            .is_err(),
        "startup should still be waiting"
    );
    // The dropped startup stops its drivers from a background task.
    for _ in 0..100 {
        if events("cancel-").len() == 6 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        events("cancel-"),
        [
            "cancel-a:build",
            "cancel-b:build",
            "cancel-a:start",
            "cancel-b:start",
            "cancel-b:stop",
            "cancel-a:stop"
        ]
    );
}

#[tokio::test]
async fn running_dropped_without_shutdown_still_stops_its_drivers() {
    let running = start(
        "[cache.a]\ndriver = \"fixture\"\nlabel = \"dropped-a\"",
        linked(),
    )
    .await
    .unwrap();
    drop(running);
    for _ in 0..100 {
        if events("dropped-").contains(&"dropped-a:stop".to_owned()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("not stopped: {:?}", events("dropped-"));
}

#[test]
fn a_runtime_without_timers_is_b001_not_a_panic() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let err = runtime
        .block_on(Kernel::new(config("[cache.default]\ndriver = \"fixture\""), linked()).start())
        .unwrap_err();
    assert_eq!(err.codes(), [codes::NO_RUNTIME]);
}

#[tokio::test]
async fn a_panic_in_supported_features_is_caught() {
    let err = refused("[cache.f]\ndriver = \"features-panic\"", linked()).await;
    assert!(
        matches!(
            only(&err),
            Problem::Unusable {
                reason: UnusableReason::Panicked {
                    phase: "supported_features",
                    ..
                },
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn options_that_accept_unknown_keys_are_refused() {
    let err = refused(
        "[cache.l]\ndriver = \"lenient-options\"\ncapcity = 5",
        linked(),
    )
    .await;
    assert!(
        matches!(
            only(&err),
            Problem::Unusable {
                reason: UnusableReason::AcceptsUnknownOptions,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("deny_unknown_fields"), "{err}");
}

#[tokio::test]
async fn an_override_that_reads_as_a_number_is_a_string_where_the_driver_wants_one() {
    let config = config("[cache.default]\ndriver = \"fixture\"")
        .with_overrides([(
            "SANDLOOM__CACHE__DEFAULT__LABEL".to_owned(),
            "123456".to_owned(),
        )])
        .unwrap();
    let running = Kernel::new(config, linked()).start().await.unwrap();
    running.shutdown().await.unwrap();
    assert_eq!(
        events("123456"),
        ["123456:build", "123456:start", "123456:stop"]
    );
}

#[tokio::test]
async fn a_requirement_naming_an_unknown_feature_is_b024_with_a_suggestion() {
    let typo = [sandloom::sdk::Requirement::new(
        &CACHE,
        "default",
        &["tll"],
        "shop",
    )];
    let err = Kernel::new(config("[cache.default]\ndriver = \"fixture\""), linked())
        .require(&typo)
        .check()
        .unwrap_err();
    assert_eq!(err.codes(), [codes::INVALID_REQUIREMENT], "{err}");
    assert!(only(&err).action().contains("did you mean `ttl`?"), "{err}");
}

#[tokio::test]
async fn an_optional_operation_the_instance_did_not_declare_answers_unsupported() {
    let running = start(
        "[cache.plain]\ndriver = \"fixture\"\n[cache.timed]\ndriver = \"fixture\"\nttl = true",
        linked(),
    )
    .await
    .unwrap();
    let plain = running.infra().capability(&CACHE, "plain").unwrap();
    let err = plain
        .set_with_ttl("k", "v".into(), Duration::from_secs(1))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), sandloom::sdk::ErrorKind::Unsupported, "{err}");
    assert!(err.to_string().contains("feature `ttl`"), "{err}");
    let timed = running.infra().capability(&CACHE, "timed").unwrap();
    timed
        .set_with_ttl("k", "v".into(), Duration::from_secs(1))
        .await
        .unwrap();
    let err = timed.increment("n", 1).await.unwrap_err();
    assert_eq!(err.kind(), sandloom::sdk::ErrorKind::Unsupported, "{err}");
    running.shutdown().await.unwrap();
}
