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
    /// A lease with this fence was granted to a call made at `asked` that answered at
    /// `answered` (µs after the Unix epoch, as every time below).
    Granted {
        /// The lease's fence.
        fence: u64,
        /// When the acquire was called.
        asked: u64,
        /// When it answered.
        answered: u64,
    },
    /// A refresh of the lease with this fence, called at `asked`, answered `outcome`: `ok`,
    /// `lost` (`Conflict`) or another error kind.
    Refreshed {
        /// The lease's fence.
        fence: u64,
        /// When the refresh was called.
        asked: u64,
        /// How it answered.
        outcome: String,
    },
    /// A write to the protected resource with this fence, called at `asked`, answered at
    /// `answered`: the resource's log entry `id`, and whether it was accepted.
    Wrote {
        /// The fence written with.
        fence: u64,
        /// When the write was called.
        asked: u64,
        /// When it answered.
        answered: u64,
        /// Its entry in the resource's log.
        id: u64,
        /// Accepted (`true`) or refused as stale.
        accepted: bool,
    },
    /// A release of the lease with this fence is about to be called, at `asked`: written (and
    /// synced) before the call, so that a holder killed after its release took effect, but
    /// before it could record the answer, still shows when its lease may have ended.
    Releasing {
        /// The lease's fence.
        fence: u64,
        /// When the release was called.
        asked: u64,
    },
    /// A release of the lease with this fence, called at `asked`, answered `outcome`: `true`,
    /// `false` (already lost) or an error kind.
    Released {
        /// The lease's fence.
        fence: u64,
        /// When the release was called.
        asked: u64,
        /// How it answered.
        outcome: String,
    },
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
            Record::Granted {
                fence,
                asked,
                answered,
            } => format!("granted {fence} {asked} {answered}\n"),
            Record::Refreshed {
                fence,
                asked,
                outcome,
            } => format!("refreshed {fence} {asked} {outcome}\n"),
            Record::Wrote {
                fence,
                asked,
                answered,
                id,
                accepted,
            } => format!("wrote {fence} {asked} {answered} {id} {accepted}\n"),
            Record::Releasing { fence, asked } => format!("releasing {fence} {asked}\n"),
            Record::Released {
                fence,
                asked,
                outcome,
            } => format!("released {fence} {asked} {outcome}\n"),
        }
    }

    fn parse(line: &str) -> Option<Record> {
        // The tag, then the words after it, in order.
        let [tag, w1, w2, w3, w4, w5] = {
            let mut words = line.split(' ');
            [(); 6].map(|()| words.next())
        };
        let tag = tag?;
        let text = |word: Option<&str>| word.map(str::to_owned);
        let number = |word: Option<&str>| word?.parse::<u64>().ok();
        Some(match tag {
            "done" => Record::Done(text(w1)?),
            "acked" => Record::Acked(text(w1)?, w2?.parse().ok()?),
            "ackfail" => Record::AckFailed(text(w1)?, text(w2)?),
            "enqueued" => Record::Enqueued(text(w1)?, text(w2)?),
            "error" => Record::Error(text(w1)?, text(w2)?),
            "begin" => Record::Begin(w1?.parse().ok()?),
            "end" => Record::End(w1?.parse().ok()?),
            "granted" => Record::Granted {
                fence: number(w1)?,
                asked: number(w2)?,
                answered: number(w3)?,
            },
            "refreshed" => Record::Refreshed {
                fence: number(w1)?,
                asked: number(w2)?,
                outcome: text(w3)?,
            },
            "wrote" => Record::Wrote {
                fence: number(w1)?,
                asked: number(w2)?,
                answered: number(w3)?,
                id: number(w4)?,
                accepted: w5?.parse().ok()?,
            },
            "releasing" => Record::Releasing {
                fence: number(w1)?,
                asked: number(w2)?,
            },
            "released" => Record::Released {
                fence: number(w1)?,
                asked: number(w2)?,
                outcome: text(w3)?,
            },
            _ => return None,
        })
    }

    /// Whether the record must be synced before the worker goes on.
    fn durable(&self) -> bool {
        // A grant is synced before its holder writes: a holder killed after its write must
        // leave the grant that explains it.
        matches!(
            self,
            Record::Done(_)
                | Record::Enqueued(..)
                | Record::Granted { .. }
                | Record::Releasing { .. }
        )
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

    /// Append `record`, in one `write`; synced when it is `Done`, `Enqueued` or `Granted`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_reads_back_as_written() {
        let records = [
            Record::Done("t1".into()),
            Record::Acked("t1".into(), 5),
            Record::AckFailed("t1".into(), "Conflict".into()),
            Record::Enqueued("key-1".into(), "t2".into()),
            Record::Error("write".into(), "Backend".into()),
            Record::Begin(3),
            Record::End(3),
            Record::Granted {
                fence: 1_700_000_000_000_001,
                asked: 10,
                answered: 20,
            },
            Record::Refreshed {
                fence: 7,
                asked: 30,
                outcome: "lost".into(),
            },
            Record::Wrote {
                fence: 7,
                asked: 40,
                answered: 50,
                id: 9,
                accepted: false,
            },
            Record::Releasing {
                fence: 7,
                asked: 60,
            },
            Record::Released {
                fence: 7,
                asked: 60,
                outcome: "Unavailable".into(),
            },
        ];
        for record in records {
            let line = record.line();
            assert_eq!(Record::parse(line.trim_end()), Some(record), "{line}");
        }
        assert_eq!(Record::parse("wrote 7 40 50 9"), None, "a line cut short");
    }
}
