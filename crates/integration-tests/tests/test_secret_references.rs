//! Secret references in INFRA (issue 25): an option written `{ secret = "…", store = "…" }`, or
//! as `…__SECRET`/`…__STORE` overrides, takes its value from a `secrets` instance at startup.
//! Each refusal is SANDLOOM-B025, located at the reference, with an action; a value is never
//! shown. The stores are `secrets.memory` (values put in from the test), `secrets.env` and
//! `secrets.file`; the driver that receives a value is `cache.redis`.
//!
//! Needs Redis: `SANDLOOM_TEST_REDIS_URL` (`eval "$(scripts/test-services up)"`).

mod common;

use common::{config, refused, start};
use sandloom::sdk::bytes::Bytes;
use sandloom::{Kernel, LinkedDrivers, Problem, StartupError, codes};
use sandloom_embedded::MemorySecretStore;

fn linked() -> LinkedDrivers {
    sandloom::link_drivers!(sandloom_embedded, sandloom_driver_redis)
}

fn redis_url() -> String {
    std::env::var("SANDLOOM_TEST_REDIS_URL").expect(
        "these tests need Redis: run `eval \"$(scripts/test-services up)\"` (or set SANDLOOM_TEST_REDIS_URL)",
    )
}

/// A memory store of its own for one test, holding `secrets`, and its `[secrets.default]`
/// table. The store lives as long as the handle: keep it until the test ends.
fn memory_store(name: &str, secrets: &[(&str, &str)]) -> (MemorySecretStore, String) {
    let store = MemorySecretStore::named(name);
    for (secret, value) in secrets {
        store.set(secret, *value).unwrap();
    }
    (
        store,
        format!("[secrets.default]\ndriver = \"memory\"\nstore = \"{name}\"\n"),
    )
}

/// The B025 problems of `err`, each as (location, description, action).
fn references(err: &StartupError) -> Vec<&Problem> {
    err.problems()
        .iter()
        .filter(|p| p.code() == codes::REFERENCE)
        .collect()
}

fn located(problem: &Problem) -> String {
    problem
        .location()
        .map(ToString::to_string)
        .unwrap_or_default()
}

#[tokio::test]
async fn a_driver_starts_with_the_value_its_reference_reads() {
    let url = redis_url();
    let (_store, head) = memory_store("refs-start", &[("redis/url", &url)]);
    let text = head
        + "[cache.default]\ndriver = \"redis\"\nprefix = \"refs-start\"\nurl = { secret = \"redis/url\" }\n";
    let running = start(&text, linked())
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    // The driver really reached the server the secret names.
    let cache = running.infra().cache().unwrap();
    cache.set("k", Bytes::from_static(b"v")).await.unwrap();
    assert_eq!(cache.get("k").await.unwrap().as_deref(), Some(&b"v"[..]));
    let order: Vec<String> = running
        .report()
        .lines
        .iter()
        .map(|l| format!("{}.{}", l.capability, l.instance))
        .collect();
    assert_eq!(
        order,
        ["secrets.default", "cache.default"],
        "stores start first"
    );
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_wrong_value_reaches_the_driver_and_is_not_shown() {
    // The driver receives the value: a URL to a closed port fails its start, naming the
    // address (not a secret: no user-info) and never the reference's value as written.
    let (_store, head) = memory_store("refs-wrong", &[("redis/url", "redis://127.0.0.1:1/0")]);
    let text = head + "[cache.default]\ndriver = \"redis\"\nurl = { secret = \"redis/url\" }\n";
    let err = refused(&text, linked()).await;
    assert_eq!(err.codes(), [codes::UNUSABLE], "{err}");
    assert!(err.to_string().contains("127.0.0.1:1"), "{err}");
}

#[tokio::test]
async fn a_missing_store_is_refused_at_the_reference() {
    let (_store, head) = memory_store("refs-nostore", &[]);
    let text = head
        + "[cache.default]\ndriver = \"redis\"\nurl = { secret = \"redis/url\", store = \"vault\" }\n";
    for err in [
        refused(&text, linked()).await,
        Kernel::new(config(&text), linked()).check().unwrap_err(),
    ] {
        let found = references(&err);
        assert_eq!(found.len(), 1, "{err}");
        assert_eq!(located(found[0]), "infra.toml:6:7");
        assert!(found[0].description().contains("its store `secrets.vault` is not configured (configured `secrets` instances: `default`)"), "{err}");
        assert!(
            found[0].action().contains("configure `[secrets.vault]`"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn a_store_of_another_capability_is_refused() {
    let (_store, head) = memory_store("refs-notsecrets", &[]);
    let text = head
        + "[cache.default]\ndriver = \"redis\"\nurl = { secret = \"redis/url\", store = \"cache.default\" }\n";
    let err = refused(&text, linked()).await;
    let found = references(&err);
    assert_eq!(found.len(), 1, "{err}");
    assert_eq!(located(found[0]), "infra.toml:6:7");
    assert!(
        found[0]
            .description()
            .contains("`cache.default` is an instance of `cache`, not of `secrets`"),
        "{err}"
    );
    assert!(
        found[0].action().contains("name an instance of `secrets`"),
        "{err}"
    );
}

#[tokio::test]
async fn a_missing_secret_is_found_at_startup_and_by_check_reading_secrets_only() {
    let (_store, head) = memory_store("refs-missing", &[]);
    let text = head + "[cache.default]\ndriver = \"redis\"\nurl = { secret = \"redis/url\" }\n";
    // Without reading, there is nothing to find.
    Kernel::new(config(&text), linked())
        .check()
        .unwrap_or_else(|err| panic!("{err}"));
    for err in [
        refused(&text, linked()).await,
        Kernel::new(config(&text), linked())
            .check_reading_secrets()
            .await
            .unwrap_err(),
    ] {
        let found = references(&err);
        assert_eq!(found.len(), 1, "{err}");
        assert_eq!(located(found[0]), "infra.toml:6:7");
        assert!(found[0].description().contains(
            r#"the secret reference { secret = "redis/url", store = "default" } in option `url` of `cache.default` cannot be resolved: `secrets.default` has no such secret"#
        ), "{err}");
        assert!(
            found[0]
                .action()
                .contains("store the secret in `secrets.default`"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn check_reading_secrets_reads_every_reference_and_starts_nothing_else() {
    let (_store, head) = memory_store("refs-check", &[("redis/url", "redis://127.0.0.1:1/0")]);
    let text = head + "[cache.default]\ndriver = \"redis\"\nurl = { secret = \"redis/url\" }\n";
    // A closed port: starting would fail, checking does not start the cache.
    let report = Kernel::new(config(&text), linked())
        .check_reading_secrets()
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(report.lines.len(), 2);
    // A value the option refuses is found by reading it, and not shown.
    MemorySecretStore::named("refs-check")
        .set("redis/url", "http://not-redis")
        .unwrap();
    let err = Kernel::new(config(&text), linked())
        .check_reading_secrets()
        .await
        .unwrap_err();
    assert_eq!(err.codes(), [codes::UNUSABLE], "{err}");
    assert!(!err.to_string().contains("not-redis"), "{err}");
}

#[tokio::test]
async fn a_store_that_cannot_start_refuses_its_references() {
    let missing = tempfile::tempdir().unwrap().path().join("not-there");
    let text = format!(
        "[secrets.default]\ndriver = \"file\"\nroot = {:?}\n[cache.default]\ndriver = \"redis\"\nurl = {{ secret = \"redis/url\" }}\n",
        missing.display().to_string()
    );
    let err = refused(&text, linked()).await;
    assert_eq!(err.codes(), [codes::UNUSABLE, codes::REFERENCE], "{err}");
    let found = references(&err);
    assert_eq!(located(found[0]), "infra.toml:6:7");
    assert!(
        found[0].description().contains(
            "its store `secrets.default` could not start (SANDLOOM-B022, reported with it)"
        ),
        "{err}"
    );
    assert!(
        found[0]
            .action()
            .contains("fix the problem of `secrets.default`"),
        "{err}"
    );
}

#[tokio::test]
async fn a_reference_in_an_option_that_holds_no_secret_is_refused() {
    let (_store, head) = memory_store("refs-plain", &[("p", "shop")]);
    let text = head + "[cache.default]\ndriver = \"redis\"\nprefix = { secret = \"p\" }\n";
    let err = refused(&text, linked()).await;
    let found = references(&err);
    assert_eq!(found.len(), 1, "{err}");
    assert_eq!(located(found[0]), "infra.toml:6:10");
    assert!(
        found[0].description().contains(
            "`prefix` of driver `cache.redis` does not (its schema does not mark it `writeOnly`"
        ),
        "{err}"
    );
    assert!(
        found[0]
            .action()
            .contains("write `prefix` of `cache.default` as a plain value"),
        "{err}"
    );
    // An option the driver does not have at all.
    let (_store2, head) = memory_store("refs-plain", &[]);
    let text = head + "[cache.default]\ndriver = \"redis\"\nulr = { secret = \"p\" }\n";
    let err = refused(&text, linked()).await;
    assert!(
        references(&err)[0]
            .description()
            .contains("driver `cache.redis` has no option `ulr` (did you mean `url`?)"),
        "{err}"
    );
}

#[tokio::test]
async fn a_malformed_reference_is_refused_with_the_others() {
    let (_store, head) = memory_store("refs-syntax", &[]);
    let text = head
        + "[cache.default]\ndriver = \"redis\"\nurl = { secert = \"redis/url\" }\n\
           [cache.other]\ndriver = \"redis\"\nurl = { secret = \"../url\" }\n";
    let err = refused(&text, linked()).await;
    let found = references(&err);
    assert_eq!(found.len(), 2, "{err}");
    assert_eq!(located(found[0]), "infra.toml:6:7");
    assert!(
        found[0]
            .description()
            .contains("not `secert` (did you mean `secret`?)"),
        "{err}"
    );
    assert!(
        found[0].action().contains("url = { secret = \"<name>\" }"),
        "{err}"
    );
    assert_eq!(located(found[1]), "infra.toml:9:7");
    assert!(
        found[1].description().contains("invalid secret name"),
        "{err}"
    );
}

#[tokio::test]
async fn override_references_start_and_are_refused_like_file_ones() {
    let url = redis_url();
    let (_store, head) = memory_store("refs-env", &[("redis/url", &url)]);
    let text = head
        + "[cache.default]\ndriver = \"redis\"\nprefix = \"refs-env\"\nurl = \"redis://127.0.0.1:1/0\"\n";
    let overridden = config(&text)
        .with_overrides([(
            "SANDLOOM__CACHE__DEFAULT__URL__SECRET".to_owned(),
            "redis/url".to_owned(),
        )])
        .unwrap();
    // The reference replaces the file's literal (a closed port): startup reaches the server.
    let running = Kernel::new(overridden, linked())
        .start()
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    running
        .infra()
        .cache()
        .unwrap()
        .set("k", Bytes::from_static(b"v"))
        .await
        .unwrap();
    running.shutdown().await.unwrap();

    let overridden = config(&text)
        .with_overrides([(
            "SANDLOOM__CACHE__DEFAULT__URL__SECRET".to_owned(),
            "redis/nope".to_owned(),
        )])
        .unwrap();
    let err = Kernel::new(overridden, linked()).start().await.unwrap_err();
    let found = references(&err);
    assert_eq!(found.len(), 1, "{err}");
    assert_eq!(
        located(found[0]),
        "environment variable SANDLOOM__CACHE__DEFAULT__URL__SECRET"
    );
    assert!(
        found[0].description().contains("has no such secret"),
        "{err}"
    );
}

#[tokio::test]
async fn stores_refer_to_stores_in_order_and_a_circle_is_refused() {
    // `secrets.env` holds the name of nothing secret; the circle is what is refused here.
    let text = "[secrets.a]\ndriver = \"memory\"\ntoken = { secret = \"t\", store = \"b\" }\n\
                [secrets.b]\ndriver = \"memory\"\ntoken = { secret = \"t\", store = \"a\" }\n";
    let err = refused(text, linked()).await;
    let circles: Vec<&Problem> = references(&err)
        .into_iter()
        .filter(|p| p.description().contains("in a circle"))
        .collect();
    assert_eq!(circles.len(), 2, "{err}");
    assert_eq!(located(circles[0]), "infra.toml:3:9");
    assert!(
        circles[0]
            .description()
            .contains("secrets.a -> secrets.b -> secrets.a"),
        "{err}"
    );
    assert!(circles[0].action().contains("break the circle"), "{err}");
}

#[tokio::test]
async fn secret_values_never_show_in_debug_or_errors() {
    const VALUE: &str = "redis://:n3ver-Sh0wn-refs@127.0.0.1:1/0";
    let (_store, head) = memory_store("refs-shown", &[("redis/url", VALUE)]);
    let text = head + "[cache.default]\ndriver = \"redis\"\nurl = { secret = \"redis/url\" }\n";
    let kernel = Kernel::new(config(&text), linked());
    assert!(!format!("{kernel:?}").contains("n3ver"));
    let err = kernel.start().await.unwrap_err();
    assert!(!format!("{err}{err:?}").contains("n3ver"), "{err}");
}

/// `PROGRAM infra …` on `file`: the status and what it printed.
fn infra(args: &[&str], file: &std::path::Path) -> (sandloom::cli::Status, String) {
    let mut command_line = vec!["app", "infra"];
    command_line.extend_from_slice(args);
    let file = file.display().to_string();
    command_line.extend(["--infra", file.as_str()]);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = sandloom::cli::execute(linked(), command_line, &mut out, &mut err);
    (
        status,
        String::from_utf8(out).unwrap() + &String::from_utf8(err).unwrap(),
    )
}

#[test]
fn the_command_line_checks_with_and_without_reading_and_shows_references_as_written() {
    use sandloom::cli::Status;
    const VALUE: &str = "redis://127.0.0.1:1/0#n3ver-Sh0wn-cli";
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("secrets/redis")).unwrap();
    let file = dir.path().join("infra.toml");
    std::fs::write(
        &file,
        format!(
            "[secrets.default]\ndriver = \"file\"\nroot = {:?}\n\
             [cache.default]\ndriver = \"redis\"\nurl = {{ secret = \"redis/url\" }}\n",
            dir.path().join("secrets").display().to_string()
        ),
    )
    .unwrap();
    // Not stored yet: found only by reading.
    assert_eq!(infra(&["check"], &file).0, Status::Ok);
    let (status, out) = infra(&["check", "--read-secrets"], &file);
    assert_eq!(status, Status::Problems, "{out}");
    assert!(
        out.contains("[SANDLOOM-B025]") && out.contains("has no such secret"),
        "{out}"
    );
    // Stored: read, and never printed, by any command.
    std::fs::write(dir.path().join("secrets/redis/url"), VALUE).unwrap();
    let (status, out) = infra(&["check", "--read-secrets", "--format", "json"], &file);
    assert_eq!(status, Status::Ok, "{out}");
    let (_, why) = infra(&["why", "cache.default"], &file);
    assert!(
        why.contains(r#"secret reference: url = { secret = "redis/url", store = "default" }"#),
        "{why}"
    );
    let (_, json) = infra(&["why", "cache.default", "--format", "json"], &file);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["references"][0]["secret"], "redis/url");
    assert_eq!(json["references"][0]["store"], "default");
    let (_, schema) = infra(&["schema"], &file);
    let schema: serde_json::Value = serde_json::from_str(&schema).unwrap();
    let url = &schema["$defs"]["cache.redis"]["properties"]["url"]["anyOf"];
    assert_eq!(url[1]["$ref"], "#/$defs/secret_reference", "{url}");
    let prefix = &schema["$defs"]["cache.redis"]["properties"]["prefix"];
    assert!(
        prefix
            .get("anyOf")
            .is_none_or(|branches| !branches.to_string().contains("secret_reference")),
        "{prefix}"
    );
    for args in [
        &["check"][..],
        &["check", "--read-secrets"],
        &["why", "cache.default"],
        &["health"],
    ] {
        let (_, out) = infra(args, &file);
        assert!(!out.contains("n3ver"), "{args:?}: {out}");
    }
}

#[tokio::test]
async fn values_that_cannot_be_read_and_values_refused_come_together() {
    let (_store, head) = memory_store("refs-together", &[("redis/bad", "http://not-redis")]);
    let text = head
        + "[cache.default]\ndriver = \"redis\"\nurl = { secret = \"redis/url\" }\n\
           [cache.other]\ndriver = \"redis\"\nurl = { secret = \"redis/bad\" }\n";
    for err in [
        refused(&text, linked()).await,
        Kernel::new(config(&text), linked())
            .check_reading_secrets()
            .await
            .unwrap_err(),
    ] {
        assert_eq!(err.codes(), [codes::REFERENCE, codes::UNUSABLE], "{err}");
        assert!(
            err.problems()[1]
                .description()
                .contains("option `url`: is not a Redis URL"),
            "{err}"
        );
        assert!(!err.to_string().contains("not-redis"), "{err}");
    }
}

#[tokio::test]
async fn a_driver_without_a_schema_takes_no_reference_and_a_value_must_be_text() {
    let (store, head) = memory_store("refs-schemaless", &[]);
    store.set("binary", vec![0xff, 0xfe, 0x00]).unwrap();
    let text = head.clone()
        + "[notifier.default]\ndriver = \"console\"\nprefix = { secret = \"binary\" }\n";
    let console = sandloom::link_drivers!(sandloom_embedded, sandloom_example_driver_console);
    let err = refused(&text, console).await;
    let found = references(&err);
    assert_eq!(found.len(), 1, "{err}");
    assert!(
        found[0]
            .description()
            .contains("driver `notifier.console` describes no options schema"),
        "{err}"
    );
    // Where the option does hold a secret, a value that is not UTF-8 is refused, not shown.
    let text = head + "[cache.default]\ndriver = \"redis\"\nurl = { secret = \"binary\" }\n";
    let err = refused(&text, linked()).await;
    let found = references(&err);
    assert_eq!(found.len(), 1, "{err}");
    assert!(
        found[0].description().contains("is not UTF-8 text"),
        "{err}"
    );
    assert!(
        found[0]
            .action()
            .contains("store the value of the secret as UTF-8 text"),
        "{err}"
    );
}

/// The secrets a configuration refers to are the ones watched for rotation: a referenced file
/// rewritten in `secrets.file` is reported with the instance whose option refers to it, and an
/// unreferenced file of the same store is not (issue 25, item 6, fed by references).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_referenced_secret_rewritten_is_reported_with_the_instances_that_refer_to_it() {
    let url = redis_url();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("redis")).unwrap();
    std::fs::write(dir.path().join("redis/url"), &url).unwrap();
    std::fs::write(dir.path().join("unused"), "first").unwrap();
    let text = format!(
        "[secrets.default]\ndriver = \"file\"\nroot = {:?}\npoll_interval_ms = 10\n\
         [cache.default]\ndriver = \"redis\"\nprefix = \"refs-rotation\"\nurl = {{ secret = \"redis/url\" }}\n",
        dir.path().display().to_string()
    );
    let running = start(&text, linked())
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    let mut events = running.rotation_events();
    let next = |events: &mut tokio::sync::broadcast::Receiver<sandloom::SecretRotation>| {
        let mut events = events.resubscribe();
        async move {
            tokio::time::timeout(std::time::Duration::from_millis(300), events.recv())
                .await
                .ok()
                .map(Result::unwrap)
        }
    };

    let pending = next(&mut events);
    std::fs::write(dir.path().join("unused"), "second").unwrap();
    assert_eq!(pending.await, None, "an unreferenced secret");

    // A change made before the watcher's first call is not one (the instance started with it):
    // rewrite until one is reported.
    let mut reported = None;
    for attempt in 0..50 {
        let pending = next(&mut events);
        std::fs::write(
            dir.path().join("redis/url"),
            format!("{url}?attempt={attempt}"),
        )
        .unwrap();
        if let Some(rotation) = pending.await {
            reported = Some(rotation);
            break;
        }
    }
    let rotation = reported.expect("no rotation reported after 50 rewrites");
    assert_eq!(
        (rotation.store.as_str(), rotation.secret.as_str()),
        ("default", "redis/url")
    );
    assert_eq!(rotation.dependents, ["cache.default"]);
    assert!(!format!("{rotation:?}").contains("redis://"));
    assert!(
        running
            .secret_rotations()
            .iter()
            .all(|r| r.secret == "redis/url" && r.dependents == ["cache.default"])
    );
    running.shutdown().await.unwrap();
}
