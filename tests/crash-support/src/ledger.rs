//! A worker's durable ledger: one file per worker, one line per fact, appended with a single
//! `write` each and synced where a fact must outlive the machine, not only the process.
//!
//! `SIGKILL` cannot lose a completed `write`: the data is in the kernel's page cache, which the
//! killed process no longer owns. The `done` and `enqueued` facts are synced anyway
//! (`fdatasync`), so the ledger's word stands even against a power loss of the test machine.
//! A line cut short (a write interrupted by the kill, which a single small `write` to a regular
//! file does not do in practice) has no newline and is ignored by [`read`].

use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

/// One fact a worker wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// The task's work is done (written before its ack is sent).
    Done(String),
    /// The ack of the task answered `Ok`, at this many microseconds after the Unix epoch.
    Acked(String, u64),
    /// The ack of the task answered an error of this kind.
    AckFailed(String, String),
    /// `enqueue` of this idempotency key answered `Ok` with this task id.
    Enqueued(String, String),
    /// An operation failed with an error of this kind (and was retried).
    Error(String, String),
    /// A writer began to put this version of an object.
    Begin(u64),
    /// The put of this version answered `Ok`.
    End(u64),
}

impl Record {
    fn line(&self) -> String {
        match self {
            Record::Done(id) => format!("done {id}\n"),
            Record::Acked(id, at) => format!("acked {id} {at}\n"),
            Record::AckFailed(id, kind) => format!("ackfail {id} {kind}\n"),
            Record::Enqueued(key, id) => format!("enqueued {key} {id}\n"),
            Record::Error(op, kind) => format!("error {op} {kind}\n"),
            Record::Begin(version) => format!("begin {version}\n"),
            Record::End(version) => format!("end {version}\n"),
        }
    }

    fn parse(line: &str) -> Option<Record> {
        let mut words = line.split(' ');
        let (tag, a, b) = (words.next()?, words.next(), words.next());
        let text = |word: Option<&str>| word.map(str::to_owned);
        Some(match tag {
            "done" => Record::Done(text(a)?),
            "acked" => Record::Acked(text(a)?, b?.parse().ok()?),
            "ackfail" => Record::AckFailed(text(a)?, text(b)?),
            "enqueued" => Record::Enqueued(text(a)?, text(b)?),
            "error" => Record::Error(text(a)?, text(b)?),
            "begin" => Record::Begin(a?.parse().ok()?),
            "end" => Record::End(a?.parse().ok()?),
            _ => return None,
        })
    }

    /// Whether the record must be synced before the worker goes on.
    fn durable(&self) -> bool {
        matches!(self, Record::Done(_) | Record::Enqueued(..))
    }
}

/// The writing end of a ledger.
#[derive(Debug)]
pub struct Ledger {
    file: File,
    path: PathBuf,
}

impl Ledger {
    /// Create (or append to) the ledger at `path`.
    ///
    /// # Errors
    /// When the file cannot be opened.
    pub fn create(path: &Path) -> io::Result<Ledger> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Ledger {
            file,
            path: path.to_owned(),
        })
    }

    /// Append `record`, in one `write`; synced when it is `Done` or `Enqueued`.
    ///
    /// # Panics
    /// When the file cannot be written: the campaign cannot account for anything then.
    pub fn write(&mut self, record: &Record) {
        let line = record.line();
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| {
                if record.durable() {
                    self.file.sync_data()
                } else {
                    Ok(())
                }
            })
            .unwrap_or_else(|err| panic!("write the ledger {}: {err}", self.path.display()));
    }
}

/// Every complete record of the ledger at `path` (none when it does not exist).
///
/// # Panics
/// When the file exists but cannot be read.
pub fn read(path: &Path) -> Vec<Record> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Vec::new(),
        Err(err) => panic!("read the ledger {}: {err}", path.display()),
    };
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete.lines().filter_map(Record::parse).collect()
}

/// Microseconds since the Unix epoch: the clock ledgers and campaigns share on one machine.
pub fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}
