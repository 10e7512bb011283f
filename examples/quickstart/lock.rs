//! The quickstart's lock step: take the `default` lock through `infra.lock()`, hand its fence
//! to the resource it protects, release it. On the embedded defaults the lock is `lock.memory`;
//! with `[lock.default] driver = "redis"` (examples/infra.backends.toml) it is Redis, and the
//! same code runs. Included by `crates/integration-tests/tests/test_quickstart_lock.rs`, which
//! runs it on a real Redis.

use std::time::Duration;

use sandloom::sdk::Infra;

/// A report only the newest holder of the lock may write: it keeps the last fence it accepted
/// and refuses an older one, as `UPDATE report SET … WHERE fence < $fence` does in SQL.
#[derive(Debug, Default)]
pub(crate) struct Report {
    /// The last fence a write was accepted with.
    pub(crate) fence: u64,
    /// The last text written.
    pub(crate) body: String,
}

impl Report {
    /// Write `body` with `fence`; `false` (nothing written) for a stale fence.
    pub(crate) fn write(&mut self, fence: u64, body: &str) -> bool {
        if fence <= self.fence {
            return false;
        }
        self.fence = fence;
        body.clone_into(&mut self.body);
        true
    }
}

/// Take the lock `nightly-report` (waiting up to 5 s), write the report with its fence, release
/// it; the fence the write was accepted with.
pub(crate) async fn write_the_report(infra: &Infra, report: &mut Report) -> Result<u64, String> {
    let lock = infra.lock().map_err(|err| err.to_string())?;
    let lease = lock
        .acquire_wait(
            "nightly-report",
            Duration::from_secs(30),
            Duration::from_secs(5),
        )
        .await
        .map_err(|err| err.to_string())?
        .ok_or("the lock `nightly-report` stayed held for 5 s")?;
    println!("took the lock `{}` with fence {}", lease.name, lease.fence);
    let written = report.write(lease.fence, "nightly figures");
    let released = lock.release(&lease).await.map_err(|err| err.to_string())?;
    if !written {
        return Err(format!("the report refused fence {}", lease.fence));
    }
    if !released {
        return Err("the lease had ended before it was released".to_owned());
    }
    println!(
        "wrote the report with fence {} and released the lock",
        lease.fence
    );
    Ok(lease.fence)
}
