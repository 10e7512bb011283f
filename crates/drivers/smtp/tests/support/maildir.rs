//! The maildir the test SMTP server (aiosmtpd's `Mailbox` handler) writes every message it
//! accepts to: `SANDLOOM_TEST_SMTP_MAILDIR`, shared by every test and every run.

use std::path::PathBuf;
use std::time::SystemTime;

/// The maildir, with `new/`, `cur/` and `tmp/` present: aiosmtpd writes into `tmp/` and
/// moves to `new/`, and fails every message when they are missing.
pub(crate) fn maildir() -> PathBuf {
    let dir = std::env::var("SANDLOOM_TEST_SMTP_MAILDIR")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_SMTP_MAILDIR").map(str::to_owned))
        .map(PathBuf::from)
        .expect("SANDLOOM_TEST_SMTP_MAILDIR is not set: eval \"$(scripts/test-services up)\"");
    for sub in ["new", "cur", "tmp"] {
        std::fs::create_dir_all(dir.join(sub)).expect("cannot create the maildir folders");
    }
    dir
}

/// Every stored mail, oldest first (by the time the server wrote it, then by file name).
pub(crate) fn stored_mails() -> Vec<Vec<u8>> {
    let dir = maildir();
    let mut files: Vec<(SystemTime, String, PathBuf)> = Vec::new();
    for sub in ["new", "cur"] {
        for entry in std::fs::read_dir(dir.join(sub)).expect("cannot list the maildir") {
            let entry = entry.expect("cannot read a maildir entry");
            let modified = entry
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            let name = entry.file_name().to_string_lossy().into_owned();
            files.push((modified, name, entry.path()));
        }
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|(_, _, path)| std::fs::read(path).ok())
        .collect()
}
