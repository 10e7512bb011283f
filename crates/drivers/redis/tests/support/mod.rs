//! A `redis-server` of the test's own, on a free loopback port, that the test can kill, freeze
//! and restart. Tests that use it need the `redis-server` binary and fail loudly without it.

#![allow(dead_code, unreachable_pub)] // each test binary uses its own part of the helpers

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    listener.local_addr().expect("local address").port()
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
