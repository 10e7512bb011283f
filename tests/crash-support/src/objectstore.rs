//! A crash campaign on an `ObjectStore`: a writer process puts 1–8 MiB objects over a few
//! keys, and is killed with `SIGKILL` in the middle of a put, again and again. After every
//! kill, and at the end, the campaign reads the whole store:
//!
//! - **torn**: an object that is not exactly one version as its writer made it. Every object
//!   describes itself (a header with its version, its length and a hash of its body, and a
//!   body derived from the version), so any mix of two versions, a short file or a stray byte
//!   is caught: must be 0;
//! - **stale**: an object older than the last put of its key that answered `Ok`, or of a
//!   version nobody began: must be 0;
//! - **missing**: a key whose put answered `Ok` and that `list` or `get` does not show: 0;
//! - **staging in list**: a listed key no writer ever wrote (a staging file showing through):
//!   must be 0.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sandloom_driverkit::objectstore::{ListOptions, ObjectStore};
use sandloom_driverkit::sdk::bytes::Bytes;

use crate::ledger::{self, Ledger, Record};
use crate::pool::{Control, Event, Orders, Point, Pool};
use crate::{Rng, Scale};

/// How many keys the writer cycles through.
pub const KEYS: u64 = 8;
const MAGIC: &[u8; 8] = b"SLCRASH1";
const HEADER: usize = 32;
const MIB: u64 = 1024 * 1024;

/// The key version `version` is written to.
pub fn key_of(version: u64) -> String {
    format!("crash/object-{}", version % KEYS)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn body_rng(version: u64) -> (Rng, u64) {
    let mut rng = Rng::new(version.wrapping_mul(0x2545_F491_4F6C_DD1D));
    let len = MIB + rng.below(7 * MIB + 1);
    (rng, len)
}

fn body(version: u64) -> Vec<u8> {
    let (mut rng, len) = body_rng(version);
    let mut body = Vec::with_capacity(len as usize);
    while body.len() < len as usize {
        body.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    body.truncate(len as usize);
    body
}

/// The object of `version`: 1 to 8 MiB of body behind a header naming the version, the body's
/// length and its FNV-1a hash.
pub fn object(version: u64) -> Vec<u8> {
    let body = body(version);
    let mut object = Vec::with_capacity(HEADER + body.len());
    object.extend_from_slice(MAGIC);
    object.extend_from_slice(&version.to_le_bytes());
    object.extend_from_slice(&(body.len() as u64).to_le_bytes());
    object.extend_from_slice(&fnv1a(&body).to_le_bytes());
    object.extend_from_slice(&body);
    object
}

/// The version `bytes` are, when they are exactly that version's object; else what is wrong.
///
/// # Errors
/// A description of the damage.
///
/// # Panics
/// Never: the header's words are 8 bytes by construction.
pub fn verify(bytes: &[u8]) -> Result<u64, String> {
    let word = |at: usize| {
        bytes
            .get(at..at + 8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
    };
    if bytes.get(..8) != Some(MAGIC.as_slice()) {
        return Err(format!("{} bytes without the header", bytes.len()));
    }
    let (Some(version), Some(len), Some(hash)) = (word(8), word(16), word(24)) else {
        return Err(format!("a header cut at {} bytes", bytes.len()));
    };
    let found = &bytes[HEADER..];
    if found.len() as u64 != len {
        return Err(format!(
            "version {version}: {} body bytes of {len}",
            found.len()
        ));
    }
    if fnv1a(found) != hash || found != body(version).as_slice() {
        return Err(format!("version {version}: the body is not the version's"));
    }
    Ok(version)
}

/// Run this test process as the writer when the campaign started it so (the body of the test
/// named [`WORKER_TEST`](crate::WORKER_TEST)); alone it says so and returns.
///
/// # Panics
/// When the store cannot be opened, or a put fails.
pub fn writer_main<F, Fut>(open: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Result<Arc<dyn ObjectStore>, String>>,
{
    let Some(orders) = Orders::from_env() else {
        eprintln!("the writer of this file's crash campaign, started by it; nothing to do alone");
        return;
    };
    let control = Control::for_process();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    runtime.block_on(async {
        let store = open(orders.target.clone()).await.expect("open the store");
        let mut ledger = Ledger::create(&orders.ledger).expect("create the ledger");
        control.signal(Event::Ready);
        let mut version = orders.from;
        while !control.stopped() {
            let data = Bytes::from(object(version));
            ledger.write(&Record::Begin(version));
            control.signal(Event::Begin(version));
            if control.reached(Point::Anywhere) {
                control.signal(Event::Armed);
            }
            store
                .put(&key_of(version), data)
                .await
                .unwrap_or_else(|err| panic!("put version {version}: {err}"));
            ledger.write(&Record::End(version));
            version += 1;
        }
    });
}

/// What a writer campaign runs against.
pub struct WriteSetup<'a> {
    /// The driver, for the report (`objectstore.fs`).
    pub driver: &'static str,
    /// The campaign's own instance on the same store, which reads and checks.
    pub store: Arc<dyn ObjectStore>,
    /// The writer's target (the store's root), passed to its `open`.
    pub target: String,
    /// Where the ledgers go.
    pub dir: &'a Path,
    /// How big: `kills` kills (the other figures are not used).
    pub scale: Scale,
}

impl fmt::Debug for WriteSetup<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteSetup")
            .field("driver", &self.driver)
            .field("scale", &self.scale)
            .finish_non_exhaustive()
    }
}

/// The figures of a writer campaign.
#[derive(Debug, Clone, Default)]
pub struct WriteReport {
    /// The driver.
    pub driver: &'static str,
    /// Puts begun.
    pub puts: usize,
    /// Puts that answered `Ok`.
    pub completed: usize,
    /// Bytes of the puts begun.
    pub bytes: u64,
    /// Writers killed mid-put.
    pub kills: usize,
    /// Times the whole store was read and checked.
    pub checks: usize,
    /// Objects read in those checks.
    pub reads: usize,
    /// Torn objects read.
    pub torn: usize,
    /// Objects older than their key's last completed put, or of a version nobody began.
    pub stale: usize,
    /// Keys whose completed put `list` or `get` did not show.
    pub missing: usize,
    /// Listed keys no writer wrote.
    pub staging_in_list: usize,
    /// The seed.
    pub seed: u64,
}

impl fmt::Display for WriteReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} writer: puts {} ({} completed, {} MiB begun), kills mid-put {}, checks {} \
             ({} objects read), torn {}, stale {}, missing {}, staging files in list {}, seed {}",
            self.driver,
            self.puts,
            self.completed,
            self.bytes / MIB,
            self.kills,
            self.checks,
            self.reads,
            self.torn,
            self.stale,
            self.missing,
            self.staging_in_list,
            self.seed
        )
    }
}

impl WriteReport {
    /// Fail unless nothing was torn, stale, missing or a staging file, after `kills` kills.
    ///
    /// # Panics
    /// When one of those does not hold.
    pub fn assert_holds(&self, kills: usize) {
        assert_eq!(self.torn, 0, "torn objects: {self}");
        assert_eq!(self.stale, 0, "stale objects: {self}");
        assert_eq!(self.missing, 0, "missing objects: {self}");
        assert_eq!(self.staging_in_list, 0, "staging files in list: {self}");
        assert_eq!(self.kills, kills, "kills: {self}");
    }
}

/// Read every ledger: versions begun, and the last completed version of each key.
fn history(dir: &Path, writers: usize) -> (HashSet<u64>, BTreeMap<String, u64>) {
    let (mut begun, mut last) = (HashSet::new(), BTreeMap::new());
    for no in 0..writers {
        for record in ledger::read(&dir.join(format!("writer-{no}.ledger"))) {
            match record {
                Record::Begin(version) => {
                    begun.insert(version);
                }
                Record::End(version) => {
                    let at = last.entry(key_of(version)).or_insert(version);
                    *at = (*at).max(version);
                }
                _ => {}
            }
        }
    }
    (begun, last)
}

/// Read the whole store and check it against the ledgers.
async fn check(setup: &WriteSetup<'_>, writers: usize, report: &mut WriteReport) {
    let (begun, last) = history(setup.dir, writers);
    let keys: HashSet<String> = (0..KEYS).map(key_of).collect();
    let mut listed = HashSet::new();
    let mut page = ListOptions::default();
    loop {
        let found = setup.store.list("", page.clone()).await.expect("list");
        for meta in &found.objects {
            if keys.contains(&meta.key) {
                listed.insert(meta.key.clone());
            } else {
                report.staging_in_list += 1;
                eprintln!("listed, and no writer wrote it: {}", meta.key);
            }
        }
        match found.next {
            Some(next) => page = page.after(next),
            None => break,
        }
    }
    for key in &keys {
        let bytes = match setup.store.get(key).await {
            Ok(bytes) => bytes,
            Err(err) => {
                if last.contains_key(key) {
                    report.missing += 1;
                    eprintln!("{key}: completed put, and get answers {err}");
                }
                continue;
            }
        };
        report.reads += 1;
        if last.contains_key(key) && !listed.contains(key) {
            report.missing += 1;
            eprintln!("{key}: completed put, not listed");
        }
        match verify(&bytes) {
            Err(damage) => {
                report.torn += 1;
                eprintln!("{key}: torn: {damage}");
            }
            Ok(version) => {
                let older = last.get(key).is_some_and(|done| version < *done);
                if older || !begun.contains(&version) || key_of(version) != *key {
                    report.stale += 1;
                    eprintln!(
                        "{key}: version {version}, last completed {:?}",
                        last.get(key)
                    );
                }
            }
        }
    }
    report.checks += 1;
}

/// Run a writer campaign (see the [module docs](self)) with `pool`'s processes.
///
/// # Panics
/// When the run hangs, the writer ends on its own, or the store fails the campaign's reads.
pub async fn write_campaign<P: Pool>(setup: &WriteSetup<'_>, pool: &mut P) -> WriteReport {
    let scale = setup.scale;
    let mut rng = Rng::new(scale.seed);
    let mut report = WriteReport {
        driver: setup.driver,
        seed: scale.seed,
        ..WriteReport::default()
    };
    let mut version = 0;
    let mut writers = 0;
    // Each writer but the last is killed mid-put, after 0 to 3 completed puts; the last writes
    // every key once more and is stopped.
    for round in 0..=scale.kills {
        let last_round = round == scale.kills;
        let no = writers;
        writers += 1;
        pool.spawn(
            no,
            &Orders {
                role: "write".into(),
                ledger: setup.dir.join(format!("writer-{no}.ledger")),
                target: setup.target.clone(),
                queue: String::new(),
                from: version,
                to: 0,
                params: String::new(),
            },
        );
        // Armed when it begins this version, it dies in the put after it.
        let (first, arm_at) = (version, version + rng.below(3));
        let (mut killed, mut stopping) = (false, false);
        loop {
            let event = tokio::time::timeout(scale.hung_after, pool.events().recv())
                .await
                .unwrap_or_else(|_| {
                    panic!("the writer made no progress for {:?}", scale.hung_after)
                })
                .expect("the pool holds a sender");
            match event {
                (_, Event::Begin(begun)) => {
                    version = begun + 1;
                    if !last_round && begun == arm_at {
                        pool.arm(no, Point::Anywhere);
                    }
                    if last_round && begun >= first + KEYS && !stopping {
                        stopping = true;
                        pool.stop(no);
                    }
                }
                (_, Event::Armed) => {
                    // Somewhere in the put that just began: staging, syncing, renaming.
                    tokio::time::sleep(Duration::from_millis(rng.below(40))).await;
                    pool.kill(no);
                    killed = true;
                }
                (_, Event::Exited) => {
                    let well = pool.reap(no);
                    assert!(killed || (stopping && well), "writer {no} ended on its own");
                    break;
                }
                _ => {}
            }
        }
        if killed {
            report.kills += 1;
        }
        check(setup, writers, &mut report).await;
    }
    let (begun, _) = history(setup.dir, writers);
    report.puts = begun.len();
    report.bytes = begun.iter().map(|v| body_rng(*v).1).sum();
    report.completed = (0..writers)
        .flat_map(|no| ledger::read(&setup.dir.join(format!("writer-{no}.ledger"))))
        .filter(|record| matches!(record, Record::End(_)))
        .count();
    report
}
