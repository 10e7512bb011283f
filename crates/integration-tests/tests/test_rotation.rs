//! Rotated secrets detected and reported (issue 25, item 6) through the application door, on
//! the built-in drivers: `secrets.file` (a rewritten file, through its change signal),
//! `secrets.memory` (a new version, through its change signal) and `secrets.env` (no change
//! signal, no versions: polled by keyed digest). Each rotation is logged (INFO, target
//! `sandloom::secrets`, without its value), kept by `Running::secret_rotations` and sent to
//! `Running::rotation_events`; only secrets in use are reported; shutdown cancels the watchers
//! at once, before the drain, and leaves none running.
//!
//! The secrets watched are given with the interim `Kernel::watch_secret` until references in
//! `INFRA` land; the reporting is the same either way.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use sandloom::{InfraConfig, Kernel, Running, SecretRotation};
use sandloom_embedded::MemorySecretStore;
use tokio::sync::broadcast::{self, error::RecvError};

/// A value no output may show.
const VALUE: &str = "r0tated-V4LUE-never-printed";

/// Every event of every test of this binary, as `LEVEL target: message field=value…` lines
/// (a global subscriber: the watchers run on the runtime's worker threads). Each test reads
/// only the lines of its own stores.
fn logs() -> &'static Arc<Mutex<Vec<String>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<String>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        tracing::subscriber::set_global_default(Capture(Arc::clone(&logs))).unwrap();
        logs
    })
}

fn lines_of(store: &str) -> Vec<String> {
    let needle = format!("store={store} ");
    logs()
        .lock()
        .unwrap()
        .iter()
        .filter(|line| line.contains(&needle) || line.ends_with(&format!("store={store}")))
        .cloned()
        .collect()
}

fn all_logs() -> String {
    logs().lock().unwrap().join("\n")
}

struct Capture(Arc<Mutex<Vec<String>>>);

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, " {value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        let _ = write!(self.0, " {}={value}", field.name());
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut fields = Fields(format!("SPAN {}:", span.metadata().name()));
        span.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let mut fields = Fields("RECORD:".to_owned());
        values.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let meta = event.metadata();
        let mut fields = Fields(format!("{} {}:", meta.level(), meta.target()));
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

/// An option that refers to a secret: `(capability, instance, option)`.
type UsedBy<'a> = (&'a str, &'a str, &'a str);

async fn start(text: &str, watched: &[(&str, &str, &[UsedBy<'_>])]) -> Running {
    logs();
    let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    let mut kernel = Kernel::new(config, sandloom::link_drivers!(sandloom_embedded));
    for (store, secret, used_by) in watched {
        kernel = kernel.watch_secret(store, secret, used_by);
    }
    kernel.start().await.unwrap_or_else(|err| panic!("{err}"))
}

async fn next(
    events: &mut broadcast::Receiver<SecretRotation>,
    wait: Duration,
) -> Option<SecretRotation> {
    match tokio::time::timeout(wait, events.recv()).await {
        Ok(Ok(rotation)) => Some(rotation),
        Ok(Err(err)) => panic!("the rotation channel failed: {err}"),
        Err(_) => None,
    }
}

/// Change the value with `change(attempt)` until a rotation is reported (a change made before
/// the watcher's first call is, by design, not one: the instances started with that value).
async fn rotate_until_reported(
    events: &mut broadcast::Receiver<SecretRotation>,
    mut change: impl FnMut(usize),
) -> SecretRotation {
    for attempt in 0..50 {
        change(attempt);
        if let Some(rotation) = next(events, Duration::from_millis(200)).await {
            return rotation;
        }
    }
    panic!(
        "no rotation reported after 50 changes; logs:\n{}",
        all_logs()
    )
}

fn assert_reported(rotation: &SecretRotation, store: &str, secret: &str, dependents: &[&str]) {
    assert_eq!(rotation.store, store);
    assert_eq!(rotation.secret, secret);
    assert_eq!(rotation.dependents, dependents);
    assert!(!format!("{rotation:?}").contains(VALUE));
}

/// The one INFO line of a rotation of `secret` in `store`, showing no value.
fn assert_logged(store: &str, secret: &str, dependents: &str) {
    let lines: Vec<String> = lines_of(store)
        .into_iter()
        .filter(|line| line.contains("secret rotated"))
        .collect();
    assert!(
        !lines.is_empty(),
        "no rotation line for {store}:\n{}",
        all_logs()
    );
    for line in &lines {
        assert!(line.starts_with("INFO sandloom::secrets:"), "{line}");
        assert!(
            line.contains(&format!(
                "store={store} secret={secret} dependents={dependents}"
            )),
            "{line}"
        );
    }
    assert!(
        !all_logs().contains(VALUE),
        "a value was logged:\n{}",
        all_logs()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewritten_file_is_reported_once_with_its_dependents_and_unused_files_are_not() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("db")).unwrap();
    std::fs::write(dir.path().join("db/password"), "first").unwrap();
    std::fs::write(dir.path().join("unused"), "first").unwrap();
    let text = format!(
        "[secrets.rot_file]\ndriver = \"file\"\nroot = {:?}\npoll_interval_ms = 10\n\
         [cache.default]\ndriver = \"memory\"\n[lock.default]\ndriver = \"memory\"\n",
        dir.path().display().to_string()
    );
    let used_by: &[UsedBy<'_>] = &[
        ("lock", "default", "password"),
        ("cache", "default", "password"),
    ];
    let running = start(&text, &[("rot_file", "db/password", used_by)]).await;
    let mut events = running.rotation_events();

    // Another file of the same store changes: it is used by nothing, so nothing is reported.
    std::fs::write(dir.path().join("unused"), "second").unwrap();
    assert_eq!(next(&mut events, Duration::from_millis(300)).await, None);

    let rotation = rotate_until_reported(&mut events, |attempt| {
        std::fs::write(dir.path().join("db/password"), format!("{VALUE}{attempt}")).unwrap();
    })
    .await;
    assert_reported(
        &rotation,
        "rot_file",
        "db/password",
        &["cache.default", "lock.default"],
    );
    assert!(running.secret_rotations().contains(&rotation));
    // The watcher is surely following the store now: an unused file is still not reported.
    std::fs::write(dir.path().join("unused"), "third").unwrap();
    while let Some(late) = next(&mut events, Duration::from_millis(300)).await {
        assert_eq!(late.secret, "db/password", "{late:?}"); // a late report of an earlier rewrite
    }
    assert!(
        running
            .secret_rotations()
            .iter()
            .all(|r| r.secret == "db/password")
    );
    assert_logged("rot_file", "db/password", "cache.default,lock.default");
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_memory_version_is_reported_and_shutdown_cancels_the_waiting_watcher_at_once() {
    let store = MemorySecretStore::named("test-rotation-memory");
    store.set("api/token", "first").unwrap();
    let text = "stop_timeout_ms = 5000\n\
                [secrets.rot_mem]\ndriver = \"memory\"\nstore = \"test-rotation-memory\"\n\
                [notifier.default]\ndriver = \"log\"\n";
    let running = start(
        text,
        &[("rot_mem", "api/token", &[("notifier", "default", "token")])],
    )
    .await;
    let mut events = running.rotation_events();

    store.set("other", "x").unwrap();
    assert_eq!(next(&mut events, Duration::from_millis(200)).await, None);
    let rotation = rotate_until_reported(&mut events, |attempt| {
        store.set("api/token", format!("{VALUE}{attempt}")).unwrap();
    })
    .await;
    assert_reported(&rotation, "rot_mem", "api/token", &["notifier.default"]);
    assert_logged("rot_mem", "api/token", "notifier.default");
    store.set("other", "y").unwrap();
    while let Some(late) = next(&mut events, Duration::from_millis(200)).await {
        assert_eq!(late.secret, "api/token", "{late:?}");
    }

    // The watcher now waits in `changes` (up to 30 s). Shutdown cancels it before the drain:
    // it neither waits for that call nor counts it as an operation in flight.
    let began = Instant::now();
    running.shutdown().await.unwrap();
    assert!(
        began.elapsed() < Duration::from_secs(2),
        "shutdown took {:?}",
        began.elapsed()
    );
    assert!(
        !all_logs().contains("operations still in flight"),
        "the watcher's call was drained:\n{}",
        all_logs()
    );
    // Nothing left running: the watcher held the sending side of the channel; it is closed
    // only once every watcher task has ended (and the `Running` is gone).
    store.set("api/token", "after shutdown").unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(1), async {
        loop {
            match events.recv().await {
                Ok(rotation) => assert_eq!(rotation.secret, "api/token"), // sent before shutdown
                Err(err) => break err,
            }
        }
    })
    .await;
    assert_eq!(closed, Ok(RecvError::Closed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_env_store_is_polled_by_digest_at_its_interval_and_zero_turns_it_off() {
    let variable = "TEST_ROTATION_ENV_db__password";
    // SAFETY: this test binary reads its environment only through `std::env`, whose functions
    // take the same lock as `set_var`.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var(variable, "first");
    }
    let text = "[secrets.rot_env]\ndriver = \"env\"\nprefix = \"TEST_ROTATION_ENV_\"\nrotation_poll_ms = 20\n\
                [secrets.rot_off]\ndriver = \"env\"\nprefix = \"TEST_ROTATION_ENV_\"\nrotation_poll_ms = 0\n\
                [cache.default]\ndriver = \"memory\"\n";
    let used_by: &[UsedBy<'_>] = &[("cache", "default", "password")];
    let running = start(
        text,
        &[
            ("rot_env", "db/password", used_by),
            ("rot_off", "db/password", used_by),
        ],
    )
    .await;
    let mut events = running.rotation_events();

    let rotation = rotate_until_reported(&mut events, |attempt| {
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var(variable, format!("{VALUE}{attempt}"));
        }
    })
    .await;
    assert_reported(&rotation, "rot_env", "db/password", &["cache.default"]);
    assert_logged("rot_env", "db/password", "cache.default");
    // The store with `rotation_poll_ms = 0` is not watched, and says so once.
    assert!(
        running
            .secret_rotations()
            .iter()
            .all(|r| r.store == "rot_env")
    );
    let off = lines_of("rot_off");
    assert_eq!(off.len(), 1, "{off:?}");
    assert!(
        off[0].contains("rotation detection is off for this store"),
        "{}",
        off[0]
    );
    running.shutdown().await.unwrap();
}
