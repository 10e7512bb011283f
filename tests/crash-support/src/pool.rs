//! Workers, their orders, the points where they die, and the two ways to run them: processes
//! re-executing the test binary ([`ProcessPool`], killed with `SIGKILL`) and Tokio tasks of the
//! test's own process (`TaskPool` of [`crate::taskqueue`], aborted). Processes can also be
//! paused (`SIGSTOP`) and continued (`SIGCONT`): the fence campaign freezes lock holders.
//!
//! A worker talks to the campaign over its standard streams: it prints `crash:<event>` lines
//! (everything else on its stdout, libtest's own lines, is ignored) and reads `arm <point>`,
//! `go` and `stop` lines. When its stdin closes (the campaign is gone, a failed test included)
//! it exits.

use std::collections::HashMap;
use std::fmt;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::WORKER_TEST;

/// The environment variable that carries a worker process's [`Orders`].
pub const ORDERS_ENV: &str = "SANDLOOM_CRASH_ORDERS";

/// Where an armed worker dies (or, for [`Point::Pause`], is frozen).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Point {
    /// During its next backend call (`reserve`, `enqueue`, `acquire_wait`): it announces the
    /// call and is killed as soon as the campaign reads that, while the call is in flight (or
    /// just after).
    Call,
    /// Mid-task: it holds a reservation and has not done the work (a lock holder: it holds a
    /// lease and has not written).
    Work,
    /// Between the work and its ack: the work is recorded done, the ack not sent (a lock
    /// holder: it has written, not released).
    Unacked,
    /// A lock holder, before its write: frozen with `SIGSTOP` for longer than its lease, then
    /// continued with `SIGCONT` and told `go`. Not a kill: the worker lives on.
    Pause,
    /// At a random moment 0–30 ms after it was armed, wherever it is.
    Anywhere,
    /// At the end of the run, armed but never reached its point (the work ran out).
    Idle,
}

impl Point {
    /// The points a campaign arms, in turn.
    pub const ARMED: [Point; 4] = [Point::Call, Point::Work, Point::Unacked, Point::Anywhere];

    fn name(self) -> &'static str {
        match self {
            Point::Call => "call",
            Point::Work => "work",
            Point::Unacked => "unacked",
            Point::Anywhere => "anywhere",
            Point::Pause => "pause",
            Point::Idle => "idle",
        }
    }

    fn parse(name: &str) -> Option<Point> {
        Point::ARMED
            .into_iter()
            .chain([Point::Pause])
            .find(|point| point.name() == name)
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a worker tells the campaign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Connected and working.
    Ready,
    /// Armed with [`Point::Call`]: about to call the backend.
    Calling,
    /// At its armed point, waiting to be killed.
    Parked,
    /// Armed with [`Point::Anywhere`]: kill it soon.
    Armed,
    /// The work of this task is recorded done (before its ack).
    Done(String),
    /// The enqueue of key number `n` is recorded.
    Enqueued(u64),
    /// A writer began to put this version.
    Begin(u64),
    /// A lock worker was granted a lease with this fence (recorded in its ledger).
    Granted(u64),
    /// Armed with [`Point::Pause`]: it holds a lease, has not written, and waits for `go`.
    Holding,
    /// A lock worker's write with this fence was accepted (`true`) or refused as stale.
    Wrote(u64, bool),
    /// The worker ended (its stdout closed, or its task returned or was aborted).
    Exited,
    /// Sent by the campaign to itself: kill this worker now.
    KillNow,
}

impl Event {
    fn line(&self) -> String {
        match self {
            Event::Ready => "crash:ready".to_owned(),
            Event::Calling => "crash:calling".to_owned(),
            Event::Parked => "crash:parked".to_owned(),
            Event::Armed => "crash:armed".to_owned(),
            Event::Done(id) => format!("crash:done {id}"),
            Event::Enqueued(n) => format!("crash:enqueued {n}"),
            Event::Begin(version) => format!("crash:begin {version}"),
            Event::Granted(fence) => format!("crash:granted {fence}"),
            Event::Holding => "crash:holding".to_owned(),
            Event::Wrote(fence, accepted) => format!("crash:wrote {fence} {accepted}"),
            Event::Exited => "crash:exited".to_owned(),
            Event::KillNow => "crash:kill".to_owned(),
        }
    }

    fn parse(line: &str) -> Option<Event> {
        let rest = line.strip_prefix("crash:")?;
        let (tag, arg) = rest.split_once(' ').unwrap_or((rest, ""));
        Some(match tag {
            "ready" => Event::Ready,
            "calling" => Event::Calling,
            "parked" => Event::Parked,
            "armed" => Event::Armed,
            "done" => Event::Done(arg.to_owned()),
            "enqueued" => Event::Enqueued(arg.parse().ok()?),
            "begin" => Event::Begin(arg.parse().ok()?),
            "granted" => Event::Granted(arg.parse().ok()?),
            "holding" => Event::Holding,
            "wrote" => {
                let (fence, accepted) = arg.split_once(' ')?;
                Event::Wrote(fence.parse().ok()?, accepted.parse().ok()?)
            }
            _ => return None,
        })
    }
}

/// What one worker is to do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Orders {
    /// `consume`, `produce`, `write` or `fence`.
    pub role: String,
    /// Its ledger.
    pub ledger: PathBuf,
    /// How to reach the backend, for the test's `open` function (a URL through the proxy, a
    /// directory…).
    pub target: String,
    /// The task queue's name (the lock's name, for fence workers).
    pub queue: String,
    /// First key number (producers) or version (writers); the worker's number (fence workers).
    pub from: u64,
    /// One past the last key number (producers).
    pub to: u64,
    /// What only one role needs, on one line (fence workers: the lease ttl and the protected
    /// resource, see [`crate::fence`]); empty otherwise.
    pub params: String,
}

impl Orders {
    fn encode(&self) -> String {
        format!(
            "{}\n{}\n{}\n{}\n{}\n{}\n{}",
            self.role,
            self.ledger.display(),
            self.target,
            self.queue,
            self.from,
            self.to,
            self.params
        )
    }

    fn decode(text: &str) -> Option<Orders> {
        let mut lines = text.split('\n');
        Some(Orders {
            role: lines.next()?.to_owned(),
            ledger: PathBuf::from(lines.next()?),
            target: lines.next()?.to_owned(),
            queue: lines.next()?.to_owned(),
            from: lines.next()?.parse().ok()?,
            to: lines.next()?.parse().ok()?,
            params: lines.next().unwrap_or_default().to_owned(),
        })
    }

    /// The orders of this process, when the campaign started it as a worker.
    ///
    /// # Panics
    /// When the variable is set but unreadable.
    pub fn from_env() -> Option<Orders> {
        let text = std::env::var(ORDERS_ENV).ok()?;
        Some(Orders::decode(&text).unwrap_or_else(|| panic!("{ORDERS_ENV} unreadable: {text:?}")))
    }
}

/// A worker's side of the conversation: its armed point, whether to stop, how to signal.
pub struct Control {
    armed: Mutex<Option<Point>>,
    stop: AtomicBool,
    /// A `go` line arrived (a paused worker may write); `Notify` keeps one permit, so a `go`
    /// that arrives before the worker waits is not lost.
    go: Notify,
    signal: Box<dyn Fn(Event) + Send + Sync>,
}

impl fmt::Debug for Control {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Control")
            .field("armed", &self.armed)
            .field("stop", &self.stop)
            .finish_non_exhaustive()
    }
}

impl Control {
    /// A control that signals through `signal`.
    pub fn new(signal: impl Fn(Event) + Send + Sync + 'static) -> Control {
        Control {
            armed: Mutex::new(None),
            stop: AtomicBool::new(false),
            go: Notify::new(),
            signal: Box::new(signal),
        }
    }

    /// The control of a worker process: signals on stdout, orders from stdin (on a thread of
    /// its own); the process exits when stdin closes.
    pub fn for_process() -> Arc<Control> {
        let control = Arc::new(Control::new(|event| {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", event.line());
            let _ = out.flush();
        }));
        let listener = Arc::clone(&control);
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if line == "stop" {
                    listener.stop();
                } else if line == "go" {
                    listener.go();
                } else if let Some(point) = line.strip_prefix("arm ").and_then(Point::parse) {
                    listener.arm(point);
                }
            }
            // The campaign is gone.
            std::process::exit(0);
        });
        control
    }

    /// Die at `point` next.
    pub fn arm(&self, point: Point) {
        *self.armed.lock().unwrap_or_else(PoisonError::into_inner) = Some(point);
    }

    /// Finish the current step and return.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// A paused worker may go on (see [`Control::hold`]).
    pub fn go(&self) {
        self.go.notify_one();
    }

    /// Say [`Event::Holding`] and wait for `go` (the campaign freezes the process meanwhile
    /// and continues it); after `limit` without it, go on anyway: the campaign, which fails
    /// the run when a pause does not end, is gone or hung.
    pub async fn hold(&self, limit: Duration) {
        self.signal(Event::Holding);
        let _ = tokio::time::timeout(limit, self.go.notified()).await;
    }

    /// Whether the worker is to stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Whether the worker is armed at `point` (disarming it).
    pub fn reached(&self, point: Point) -> bool {
        let mut armed = self.armed.lock().unwrap_or_else(PoisonError::into_inner);
        if *armed == Some(point) {
            *armed = None;
            true
        } else {
            false
        }
    }

    /// Tell the campaign.
    pub fn signal(&self, event: Event) {
        (self.signal)(event);
    }

    /// Say so and wait to be killed.
    pub async fn park(&self) {
        self.signal(Event::Parked);
        std::future::pending::<()>().await;
    }
}

/// A set of workers a campaign starts, arms, stops and kills, numbered by the campaign.
pub trait Pool {
    /// `process` or `task`: what a worker is, for the report.
    fn kind(&self) -> &'static str;
    /// Start worker `no`.
    fn spawn(&mut self, no: usize, orders: &Orders);
    /// Arm worker `no` at `point`.
    fn arm(&mut self, no: usize, point: Point);
    /// Ask worker `no` to finish its step and end.
    fn stop(&mut self, no: usize);
    /// Kill worker `no` (`SIGKILL`, or abort for tasks); its `Exited` follows.
    fn kill(&mut self, no: usize);
    /// After worker `no`'s `Exited`: whether it ended well (not a failure or a panic).
    fn reap(&mut self, no: usize) -> bool;
    /// Where the workers' events arrive.
    fn events(&mut self) -> &mut UnboundedReceiver<(usize, Event)>;
    /// A sender into [`Pool::events`].
    fn sender(&self) -> UnboundedSender<(usize, Event)>;
}

/// Workers that are processes: the test binary itself, run as its [`WORKER_TEST`].
#[derive(Debug)]
pub struct ProcessPool {
    exe: PathBuf,
    children: HashMap<usize, (Child, ChildStdin)>,
    tx: UnboundedSender<(usize, Event)>,
    rx: UnboundedReceiver<(usize, Event)>,
}

impl ProcessPool {
    /// A pool of processes running this test binary.
    ///
    /// # Panics
    /// When the path of the running test binary is unknown.
    pub fn new() -> ProcessPool {
        let (tx, rx) = unbounded_channel();
        ProcessPool {
            exe: std::env::current_exe().expect("the test binary's path"),
            children: HashMap::new(),
            tx,
            rx,
        }
    }

    fn tell(&mut self, no: usize, line: &str) {
        if let Some((_, stdin)) = self.children.get_mut(&no) {
            // A worker that just died cannot read it; its `Exited` is on its way.
            let _ = writeln!(stdin, "{line}").and_then(|()| stdin.flush());
        }
    }
}

impl Default for ProcessPool {
    fn default() -> Self {
        ProcessPool::new()
    }
}

impl ProcessPool {
    /// Freeze worker `no` (`SIGSTOP`): it keeps its connections and answers nothing.
    ///
    /// # Panics
    /// When the signal cannot be sent (the worker is not running).
    pub fn pause(&mut self, no: usize) {
        self.signal(no, "-STOP");
    }

    /// Continue worker `no` (`SIGCONT`) and tell it `go`.
    ///
    /// # Panics
    /// When the signal cannot be sent (the worker is not running).
    pub fn resume(&mut self, no: usize) {
        self.signal(no, "-CONT");
        self.tell(no, "go");
    }

    /// Send `signal` with `kill(1)`, as the Redis tests freeze their server: no `libc` for
    /// one system call.
    fn signal(&self, no: usize, signal: &str) {
        let (child, _) = self
            .children
            .get(&no)
            .unwrap_or_else(|| panic!("worker {no} is not running: cannot send it {signal}"));
        let pid = child.id().to_string();
        let status = Command::new("kill")
            .args([signal, &pid])
            .status()
            .unwrap_or_else(|err| panic!("run `kill {signal} {pid}`: {err}"));
        assert!(status.success(), "`kill {signal} {pid}` failed: {status}");
    }
}

impl Pool for ProcessPool {
    fn kind(&self) -> &'static str {
        "processes"
    }

    fn spawn(&mut self, no: usize, orders: &Orders) {
        let mut child = Command::new(&self.exe)
            .args(["--exact", WORKER_TEST, "--ignored", "--nocapture"])
            .args(["--test-threads=1", "--quiet"])
            .env(ORDERS_ENV, orders.encode())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|err| panic!("start worker {no} ({}): {err}", self.exe.display()));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let tx = self.tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(event) = Event::parse(&line) {
                    let _ = tx.send((no, event));
                }
            }
            let _ = tx.send((no, Event::Exited));
        });
        self.children.insert(no, (child, stdin));
    }

    fn arm(&mut self, no: usize, point: Point) {
        self.tell(no, &format!("arm {point}"));
    }

    fn stop(&mut self, no: usize) {
        self.tell(no, "stop");
    }

    fn kill(&mut self, no: usize) {
        if let Some((child, _)) = self.children.get_mut(&no) {
            // `Child::kill` is SIGKILL on Unix.
            let _ = child.kill();
        }
    }

    fn reap(&mut self, no: usize) -> bool {
        let Some((mut child, stdin)) = self.children.remove(&no) else {
            return false;
        };
        drop(stdin);
        child.wait().is_ok_and(|status| status.success())
    }

    fn events(&mut self) -> &mut UnboundedReceiver<(usize, Event)> {
        &mut self.rx
    }

    fn sender(&self) -> UnboundedSender<(usize, Event)> {
        self.tx.clone()
    }
}

impl Drop for ProcessPool {
    fn drop(&mut self) {
        for (child, _) in self.children.values_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// An error kind as the ledgers write it (`Unavailable`).
pub(crate) fn kind_name(kind: sandloom_driverkit::sdk::ErrorKind) -> String {
    format!("{kind:?}")
}

/// Run a worker process's body on the runtime every worker uses, once `open(target)` has
/// opened its backend: retried every 100 ms for up to 30 s while it fails (the proxy may be
/// cut, the server restarting), then a panic naming `what`.
pub(crate) fn run_opened<T, F, Fut, Body, BodyFut>(open: F, target: &str, what: &str, body: Body)
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
    Body: FnOnce(T) -> BodyFut,
    BodyFut: std::future::Future<Output = ()>,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    runtime.block_on(async {
        let mut tries = 0;
        let opened = loop {
            match open(target.to_owned()).await {
                Ok(opened) => break opened,
                Err(_) if tries < 300 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(err) => panic!("{what}: {err}"),
            }
        };
        body(opened).await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_and_points_read_back_as_sent() {
        let events = [
            Event::Ready,
            Event::Calling,
            Event::Parked,
            Event::Armed,
            Event::Done("t-1".into()),
            Event::Enqueued(4),
            Event::Begin(2),
            Event::Granted(1_796_210_213_483_581),
            Event::Holding,
            Event::Wrote(9, true),
            Event::Wrote(8, false),
        ];
        for event in events {
            assert_eq!(
                Event::parse(&event.line()),
                Some(event.clone()),
                "{event:?}"
            );
        }
        assert_eq!(Event::parse("crash:wrote 9"), None);
        assert_eq!(Event::parse("test foo ... ok"), None);
        for point in Point::ARMED.into_iter().chain([Point::Pause]) {
            assert_eq!(Point::parse(point.name()), Some(point));
        }
        assert_eq!(Point::parse("idle"), None, "never armed");
    }

    #[test]
    fn orders_round_trip_with_and_without_params() {
        let orders = Orders {
            role: "fence".into(),
            ledger: PathBuf::from("/tmp/worker-3.ledger"),
            target: "redis://127.0.0.1:1 prefix".into(),
            queue: "fenced".into(),
            from: 3,
            to: 0,
            params: "400 postgres://postgres@127.0.0.1:5432/test ns".into(),
        };
        assert_eq!(Orders::decode(&orders.encode()), Some(orders.clone()));
        let plain = Orders {
            params: String::new(),
            ..orders
        };
        assert_eq!(Orders::decode(&plain.encode()), Some(plain));
    }
}
