//! A `redis-server` of the test's own, on a free loopback port, that the test can kill, freeze
//! and restart. Tests that use it need the `redis-server` binary and fail loudly without it.

#![allow(dead_code, unreachable_pub)] // each test binary uses its own part of the helpers

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

/// Ports handed out by this process so far, so that two tests never get the same one.
static HANDED_OUT: AtomicU16 = AtomicU16::new(0);

/// A port nothing listens on right now, below Linux's ephemeral range (32768 and up).
///
/// Not an ephemeral port (binding port 0): between this call and `redis-server` binding the
/// port, another test binding port 0 could be given the same one, and the server's test would
/// then talk to that test's listener (seen as "connection reset by peer" at start).
pub fn free_port() -> u16 {
    const FIRST: u16 = 20_000;
    const SPAN: u16 = 12_000;
    loop {
        let turn = HANDED_OUT.fetch_add(1, Ordering::Relaxed);
        assert!(
            turn < SPAN,
            "no free port left between {FIRST} and {}",
            FIRST + SPAN
        );
        // A per-process start, then a stride coprime with SPAN: every port once, in u32 so
        // that nothing overflows.
        let step = (std::process::id() + u32::from(turn) * 7) % u32::from(SPAN);
        let port = FIRST + u16::try_from(step).expect("below SPAN");
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// A `redis-server` child process; killed when dropped.
pub struct OwnRedis {
    pub port: u16,
    args: Vec<String>,
    child: Option<Child>,
}

impl OwnRedis {
    /// A plain server on a free port.
    pub fn start() -> Self {
        Self::start_with(free_port(), &[])
    }

    /// A server on `port` with extra `redis-server` arguments (`--requirepass x`, TLS, …).
    pub fn start_with(port: u16, extra: &[&str]) -> Self {
        let mut server = Self {
            port,
            args: extra.iter().map(|&arg| arg.to_owned()).collect(),
            child: None,
        };
        server.restart();
        server
    }

    /// Kill the server (if running) and wait until it is gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start the server again on the same port and wait until it answers.
    pub fn restart(&mut self) {
        self.kill();
        let mut command = Command::new("redis-server");
        command
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--loglevel", "warning"])
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        if !self.args.iter().any(|arg| arg == "--port") {
            command.args(["--port", &self.port.to_string()]);
        }
        let child = command.spawn().unwrap_or_else(|err| {
            panic!(
                "cannot run `redis-server` ({err}): these tests need the Redis server binary on \
                 PATH (Debian: `apt-get install redis-server`)"
            )
        });
        self.child = Some(child);
        self.wait_until_listening();
    }

    /// Freeze (`SIGSTOP`) or thaw (`SIGCONT`) the server process: it keeps its connections but
    /// answers nothing while frozen.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("server is running").id();
        let status = Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .expect("run `kill`");
        assert!(status.success(), "kill {signal} {pid} failed");
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn wait_until_listening(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!(
                    "redis-server on port {} exited at start: {status}",
                    self.port
                );
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "redis-server did not listen on port {} within 10 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        self.kill();
    }
}
