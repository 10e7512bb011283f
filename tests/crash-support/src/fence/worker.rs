//! What a fence worker does, in a process of its own: take the lock, record the grant
//! (synced), refresh, write to the resource with the fence, release, record each answer, and
//! tell the campaign where it is so that it can be killed or frozen there.
//!
//! The worker writes whatever its refresh answered: a holder that misses the loss of its lease
//! (a pause, a cut) is exactly what the fence is for, and its write must be refused.

use std::sync::Arc;
use std::time::Duration;

use sandloom_driverkit::lock::Lock;
use sandloom_driverkit::sdk::ErrorKind;

use super::resource::Resource;
use crate::Rng;
use crate::ledger::{Ledger, Record, now_micros};
use crate::pool::{Control, Event, Orders, Point, kind_name, run_opened};

/// How long one `acquire_wait` waits before it tries again.
const WAIT: Duration = Duration::from_secs(2);
/// Pause after a failed operation before the next try.
const RETRY_PAUSE: Duration = Duration::from_millis(20);
/// How long a frozen worker waits for `go` after it is continued (the campaign's own bound on
/// a pause is shorter, and fails the run).
const HOLD_LIMIT: Duration = Duration::from_mins(5);

/// A fence worker's settings, carried in [`Orders::params`]: `<ttl ms> <resource url>
/// <namespace>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Params {
    pub(super) ttl: Duration,
    pub(super) resource_url: String,
    pub(super) namespace: String,
}

impl Params {
    pub(super) fn encode(&self) -> String {
        format!(
            "{} {} {}",
            self.ttl.as_millis(),
            self.resource_url,
            self.namespace
        )
    }

    fn decode(text: &str) -> Option<Params> {
        let mut parts = text.splitn(3, ' ');
        Some(Params {
            ttl: Duration::from_millis(parts.next()?.parse().ok()?),
            resource_url: parts.next()?.to_owned(),
            namespace: parts.next()?.to_owned(),
        })
    }
}

/// Run this test process as a fence worker when the campaign started it so (the body of the
/// test named [`WORKER_TEST`](crate::WORKER_TEST)); alone it says so and returns.
///
/// `open` starts the lock driver named by the orders' target (through the proxy); it is
/// retried while it fails (the proxy may be cut), for up to 30 s.
///
/// # Panics
/// When the lock or the resource cannot be opened, or the ledger written.
pub fn worker_main<F, Fut>(open: F)
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<Arc<dyn Lock>, String>>,
{
    let Some(orders) = Orders::from_env() else {
        eprintln!("a worker of this file's fence campaign, started by it; nothing to do alone");
        return;
    };
    let params = Params::decode(&orders.params)
        .unwrap_or_else(|| panic!("fence worker: unreadable params {:?}", orders.params));
    let control = Control::for_process();
    run_opened(
        open,
        &orders.target,
        "fence worker: cannot open the lock",
        |lock: Arc<dyn Lock>| {
            let (orders, params, control) = (&orders, &params, &control);
            async move {
                let resource = Resource::connect(&params.resource_url, &params.namespace)
                    .await
                    .unwrap_or_else(|err| panic!("fence worker: {err}"));
                run(&*lock, &resource, orders, params, control).await;
            }
        },
    );
}

/// Contend for the lock until stopped (or killed).
async fn run(
    lock: &dyn Lock,
    resource: &Resource,
    orders: &Orders,
    params: &Params,
    control: &Control,
) {
    let mut ledger = Ledger::create(&orders.ledger).expect("create the ledger");
    let mut rng = Rng::new(u64::from(std::process::id()) ^ now_micros());
    let (name, ttl, worker) = (orders.queue.as_str(), params.ttl, orders.from);
    control.signal(Event::Ready);
    while !control.stopped() {
        if control.reached(Point::Anywhere) {
            control.signal(Event::Armed);
        }
        if control.reached(Point::Call) {
            control.signal(Event::Calling);
        }
        let asked = now_micros();
        let lease = match lock.acquire_wait(name, ttl, WAIT).await {
            Ok(Some(lease)) => lease,
            Ok(None) => continue,
            Err(err) => {
                ledger.write(&Record::Error("acquire".into(), kind_name(err.kind())));
                tokio::time::sleep(RETRY_PAUSE).await;
                continue;
            }
        };
        let fence = lease.fence;
        ledger.write(&Record::Granted {
            fence,
            asked,
            answered: now_micros(),
        });
        control.signal(Event::Granted(fence));
        if control.reached(Point::Work) {
            control.park().await;
        }
        if control.reached(Point::Pause) {
            control.hold(HOLD_LIMIT).await;
        }
        // The work: a few ms, then a refresh, as a holder that keeps its lease would.
        tokio::time::sleep(Duration::from_millis(1 + rng.below(4))).await;
        let asked = now_micros();
        let outcome = match lock.refresh(&lease, ttl).await {
            Ok(_) => "ok".to_owned(),
            Err(err) if err.kind() == ErrorKind::Conflict => "lost".to_owned(),
            Err(err) => kind_name(err.kind()),
        };
        ledger.write(&Record::Refreshed {
            fence,
            asked,
            outcome,
        });
        let asked = now_micros();
        match resource.write(fence, worker).await {
            Ok((id, accepted)) => {
                ledger.write(&Record::Wrote {
                    fence,
                    asked,
                    answered: now_micros(),
                    id,
                    accepted,
                });
                control.signal(Event::Wrote(fence, accepted));
            }
            Err(err) => {
                eprintln!("fence worker {worker}: {err}");
                ledger.write(&Record::Error("write".into(), "Backend".into()));
            }
        }
        if control.reached(Point::Unacked) {
            control.park().await;
        }
        let asked = now_micros();
        // Recorded before the call: a kill between the release taking effect and its answer
        // being recorded must not look like a lease still held (a false "two holders").
        ledger.write(&Record::Releasing { fence, asked });
        let outcome = match lock.release(&lease).await {
            Ok(released) => released.to_string(),
            Err(err) => kind_name(err.kind()),
        };
        ledger.write(&Record::Released {
            fence,
            asked,
            outcome,
        });
        // Give the waiters, woken by the release, a moment to win the lock.
        tokio::time::sleep(Duration::from_millis(1 + rng.below(4))).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_round_trip() {
        let params = Params {
            ttl: Duration::from_millis(400),
            resource_url: "postgres://postgres@127.0.0.1:5432/test".into(),
            namespace: "fence_1 2".into(),
        };
        assert_eq!(Params::decode(&params.encode()), Some(params));
        assert_eq!(Params::decode("x y z"), None);
    }
}
