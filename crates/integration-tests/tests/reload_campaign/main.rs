//! The reload campaign (issue 26, "Proven"): workers run every operation of every capability —
//! cache, notifier, objectstore, taskqueue, lock, secrets, the optional ones included — without
//! pause, while the configuration is swapped back and forth between drivers (`cache.memory` ↔
//! `cache.redis`, `taskqueue.memory` ↔ `taskqueue.postgres`, `lock.memory` ↔ `lock.redis` ↔
//! `lock.postgres`, `objectstore.memory` ↔ `objectstore.fs`, `notifier.memory` ↔ `notifier.log`,
//! `secrets.memory` ↔ `secrets.file`) and between options, on the machine's Redis and
//! Postgres. Every third reload is made to fail: the new `cache.default` fails to start,
//! panics in `start`, answers unhealthy or hangs in `start`; it must be refused, and every old
//! instance keep serving.
//!
//! After each reload the campaign checks the report, `last_reload()`, `versions()` and, through
//! the handles held since startup and the accessors, which instance serves each capability
//! ([`identity`]): a reload that left an instance neither the old nor the new one is counted.
//! What each operation's answer counts as is [`tally`]'s documentation.
//!
//! Size: `SANDLOOM_RELOAD_CAMPAIGN=large` (RELIABILITY.md, "Reload campaign"), else the CI
//! size; `SANDLOOM_RELOAD_CAMPAIGN_RELOADS=<n>` sets the number of reloads.
//!
//! Needs Redis and Postgres: `SANDLOOM_TEST_REDIS_URL` / `SANDLOOM_TEST_POSTGRES_URL`, else
//! the machine's (`redis://127.0.0.1:6379`, `postgres://postgres@127.0.0.1:5432/test`). Without
//! them the campaign fails: it never passes silently.

mod identity;
mod tally;
mod variants;
mod workers;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sandloom::reload::Outcome;
use sandloom::{InfraConfig, Kernel, Running};

use crate::identity::Handles;
use crate::tally::Tally;
use crate::variants::{CAPABILITIES, Failure, Variant, Variants};
use crate::workers::Crew;

/// How big a run is.
#[derive(Debug, Clone, Copy)]
struct Scale {
    /// Reloads asked for, failing ones included.
    reloads: usize,
    /// Workers per capability.
    workers: usize,
    /// Pause after each reload, so that the workers run on the new instances.
    pause: Duration,
    /// `stop_timeout_ms` of every configuration.
    stop_timeout_ms: u64,
}

impl Scale {
    fn from_env() -> Self {
        let large = std::env::var("SANDLOOM_RELOAD_CAMPAIGN").is_ok_and(|size| size == "large");
        let mut scale = if large {
            Self {
                reloads: 400,
                workers: 3,
                pause: Duration::from_millis(50),
                stop_timeout_ms: 300,
            }
        } else {
            Self {
                reloads: 12,
                workers: 1,
                pause: Duration::from_millis(20),
                stop_timeout_ms: 300,
            }
        };
        if let Ok(reloads) = std::env::var("SANDLOOM_RELOAD_CAMPAIGN_RELOADS") {
            scale.reloads = reloads
                .parse()
                .expect("SANDLOOM_RELOAD_CAMPAIGN_RELOADS: a number");
        }
        scale
    }

    /// Reload `n` fails, and how: every third, from the third, in [`Failure::ALL`] order.
    fn failure(n: usize) -> Option<Failure> {
        (n % 3 == 2).then(|| Failure::ALL[(n / 3) % Failure::ALL.len()])
    }
}

/// What the reloads did.
#[derive(Debug, Default)]
struct Reloads {
    applied: usize,
    refused: usize,
    /// Refused by kind of failure, in [`Failure::ALL`] order.
    refused_by: [usize; 4],
    /// Outcomes other than the expected one (applied when it should be refused, a problem
    /// other than the fixture's, …).
    unexpected: Vec<String>,
    /// Instances neither old nor new, or not answering, after a reload.
    neither: Vec<String>,
    /// Operations left in flight on old instances at their stop timeout (the idle waiters).
    left_in_flight: usize,
    /// The longest reload.
    longest: Duration,
}

fn url(var: &str, default: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| default.to_owned())
}

async fn start(config: InfraConfig) -> Running {
    Kernel::new(
        config,
        sandloom::link_drivers!(
            sandloom_embedded,
            sandloom_driver_redis,
            sandloom_driver_postgres,
            sandloom_fixture_faulty
        ),
    )
    .start()
    .await
    .unwrap()
}

/// The campaign at the size the environment asks for: see the file's documentation.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reload_campaign() {
    let scale = Scale::from_env();
    let began = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let run = format!(
        "sandloom-test-reload-campaign-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );
    let variants = Variants::new(
        &run,
        dir.path(),
        &url("SANDLOOM_TEST_REDIS_URL", "redis://127.0.0.1:6379"),
        &url(
            "SANDLOOM_TEST_POSTGRES_URL",
            "postgres://postgres@127.0.0.1:5432/test",
        ),
        scale.stop_timeout_ms,
    );
    let running = Arc::new(start(variants.config(0, None)).await);
    let crew = Crew {
        running: Arc::clone(&running),
        handles: Handles::of(&running),
        tally: Arc::new(Tally::new(Duration::from_millis(scale.stop_timeout_ms))),
        stop: Arc::new(AtomicBool::new(false)),
        idle_wait: Duration::from_millis(scale.stop_timeout_ms * 5),
    };
    let tasks = spawn_workers(&crew, scale.workers);

    let reloads = run_reloads(&running, &crew, &variants, scale).await;

    crew.stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.unwrap();
    }
    let figures = crew.tally.figures();
    let elapsed = began.elapsed();
    println!(
        "reload campaign: {} reloads asked, applied {}, refused {} (start error, start panic, unhealthy, start hang: {:?}); unexpected outcomes: {}; neither old nor new: {}; left in flight at the stop timeout: {}; longest reload: {} ms; {} workers per capability; {:.1} s",
        scale.reloads,
        reloads.applied,
        reloads.refused,
        reloads.refused_by,
        reloads.unexpected.len(),
        reloads.neither.len(),
        reloads.left_in_flight,
        reloads.longest.as_millis(),
        scale.workers,
        elapsed.as_secs_f64()
    );
    print!("{}", figures.render());
    drop(crew);
    Arc::into_inner(running)
        .expect("every worker is done")
        .shutdown()
        .await
        .unwrap();

    assert!(reloads.unexpected.is_empty(), "{:#?}", reloads.unexpected);
    assert!(reloads.neither.is_empty(), "{:#?}", reloads.neither);
    assert_eq!(reloads.applied + reloads.refused, scale.reloads);
    assert_eq!(
        reloads.refused_by.iter().sum::<usize>(),
        reloads.refused,
        "only the fixtures refuse"
    );
    assert_eq!(figures.mismatches, 0, "{}", figures.render());
    assert!(figures.other.is_empty(), "{}", figures.render());
    // 0 failed by a swap: the busy workers, and the waiting operations and idle waiters, which
    // the route runs again on the new instance when the drain cuts them (counted apart, so that
    // a failure says which of the two broke).
    assert!(figures.by_swap.is_empty(), "{}", figures.render());
    assert!(figures.gap.is_empty(), "{}", figures.render());
    assert!(
        figures.ok > 1000,
        "the workers barely ran: {}",
        figures.render()
    );
}

fn spawn_workers(crew: &Crew, per_capability: usize) -> Vec<tokio::task::JoinHandle<()>> {
    let mut tasks = Vec::new();
    for worker in 0..per_capability {
        tasks.push(tokio::spawn(workers::cache(crew.clone(), worker)));
        tasks.push(tokio::spawn(workers::notifier(crew.clone(), worker)));
        tasks.push(tokio::spawn(workers::objectstore(crew.clone(), worker)));
        tasks.push(tokio::spawn(workers::taskqueue(crew.clone(), worker)));
        tasks.push(tokio::spawn(workers::lock(crew.clone(), worker)));
        tasks.push(tokio::spawn(workers::secrets(crew.clone(), worker)));
    }
    for which in 0..3 {
        tasks.push(tokio::spawn(workers::idle(crew.clone(), which)));
    }
    tasks
}

async fn run_reloads(running: &Running, crew: &Crew, variants: &Variants, scale: Scale) -> Reloads {
    let mut reloads = Reloads::default();
    let mut step = 0;
    let mut version = 1;
    for n in 0..scale.reloads {
        let failure = Scale::failure(n);
        let old: Vec<&Variant> = (0..CAPABILITIES.len())
            .map(|c| variants.at(c, step))
            .collect();
        let new: Vec<&Variant> = (0..CAPABILITIES.len())
            .map(|c| variants.at(c, step + 1))
            .collect();
        identity::mark(running, n).await;

        crew.tally.window.open();
        let asked = Instant::now();
        let result = running.reload(variants.config(step + 1, failure)).await;
        reloads.longest = reloads.longest.max(asked.elapsed());
        crew.tally.window.close();

        let report = match (&result, failure) {
            (Ok(report), None) => {
                reloads.applied += 1;
                version += 1;
                step += 1;
                crew.tally.step.store(step, Ordering::SeqCst);
                report.clone()
            }
            (Err(error), Some(failure)) => {
                reloads.refused += 1;
                let index = Failure::ALL.iter().position(|f| *f == failure).unwrap();
                if error.codes() == ["SANDLOOM-B022"]
                    && error.to_string().contains(failure.driver())
                {
                    reloads.refused_by[index] += 1;
                } else {
                    reloads.unexpected.push(format!(
                        "reload {n} ({failure:?}) refused otherwise: {error}"
                    ));
                }
                error.report().clone()
            }
            (Ok(report), Some(failure)) => {
                reloads
                    .unexpected
                    .push(format!("reload {n} ({failure:?}) was applied: {report}"));
                return reloads;
            }
            (Err(error), None) => {
                reloads
                    .unexpected
                    .push(format!("reload {n} was refused: {error}"));
                return reloads;
            }
        };
        reloads.left_in_flight += report.left_in_flight;
        check_report(
            n,
            running,
            &report,
            failure.is_none(),
            version,
            &mut reloads,
        );
        let expect_new = failure.is_none();
        let seen = identity::serving(running, &crew.handles, n, &old, &new, expect_new).await;
        reloads.neither.extend(seen);
        tokio::time::sleep(scale.pause).await;
    }
    reloads
}

/// The report, `last_reload()` and `versions()` agree with what reload `n` should have done.
fn check_report(
    n: usize,
    running: &Running,
    report: &sandloom::reload::ReloadReport,
    applied: bool,
    version: u64,
    reloads: &mut Reloads,
) {
    let mut wrong = Vec::new();
    if report.applied != applied {
        wrong.push(format!("applied is {}", report.applied));
    }
    if running.last_reload().as_ref() != Some(report) {
        wrong.push("last_reload() is not the reload's report".to_owned());
    }
    for capability in CAPABILITIES {
        match report.instance(capability, "default") {
            Some(line) => {
                let outcome_ok = if applied {
                    matches!(line.outcome, Outcome::Replaced { .. })
                } else {
                    matches!(line.outcome, Outcome::Refused { .. })
                };
                if !outcome_ok || line.version != version {
                    wrong.push(format!("{line}"));
                }
            }
            None => wrong.push(format!("{capability}.default is not in the report")),
        }
    }
    let versions = running.versions();
    if versions.len() != CAPABILITIES.len() || versions.iter().any(|(_, _, v)| *v != version) {
        wrong.push(format!("versions() = {versions:?}, expected all {version}"));
    }
    for problem in wrong {
        reloads.neither.push(format!("reload {n}: {problem}"));
    }
}
