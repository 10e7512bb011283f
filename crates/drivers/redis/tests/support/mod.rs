//! A `redis-server` of the test's own, on a free loopback port, that the test can kill, freeze
//! and restart. Tests that use it need the `redis-server` binary and fail loudly without it.

#![allow(dead_code, unreachable_pub)] // each test binary uses its own part of the helpers

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use sandloom_test_support::free_port;

/// A `redis-server` child process; killed when dropped.
pub struct OwnRedis {
    pub port: u16,
    args: Vec<String>,
    child: Option<Child>,
    /// The server's log (it logs to standard output), kept so that a server that dies or
    /// never listens says why in the test's failure.
    log: Arc<Mutex<String>>,
    /// The thread that reads the log; it ends when the server does.
    drain: Option<std::thread::JoinHandle<()>>,
}

/// How many times `restart` starts a server whose port was taken (`Address already in use`)
/// before it fails the test: something that held the port a moment (another process's
/// probe, a socket closing) is gone by then.
const BIND_ATTEMPTS: u32 = 5;

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
            log: Arc::default(),
            drain: None,
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
        for attempt in 1..=BIND_ATTEMPTS {
            self.spawn();
            match self.wait_until_answering() {
                Ok(()) => return,
                Err(exited)
                    if attempt < BIND_ATTEMPTS && self.log().contains("Address already in use") =>
                {
                    eprintln!(
                        "redis-server on port {} found its port taken ({exited}), attempt {attempt} of {BIND_ATTEMPTS}",
                        self.port
                    );
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(exited) => panic!(
                    "redis-server on port {} exited at start ({exited}); its log:\n{}",
                    self.port,
                    self.log()
                ),
            }
        }
    }

    fn spawn(&mut self) {
        let mut command = Command::new("redis-server");
        command
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--loglevel", "warning"])
            .args(&self.args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if !self.args.iter().any(|arg| arg == "--port") {
            command.args(["--port", &self.port.to_string()]);
        }
        let mut child = command.spawn().unwrap_or_else(|err| {
            panic!(
                "cannot run `redis-server` ({err}): these tests need the Redis server binary on \
                 PATH (Debian: `apt-get install redis-server`)"
            )
        });
        let output = child.stdout.take().expect("stdout is piped");
        let log = Arc::new(Mutex::new(String::new()));
        self.log = Arc::clone(&log);
        // Drained on a thread of its own: a full pipe would block the server.
        self.drain = Some(std::thread::spawn(move || {
            for line in BufReader::new(output).lines().map_while(Result::ok) {
                log.lock().unwrap().push_str(&(line + "\n"));
            }
        }));
        self.child = Some(child);
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Whether the server process is still running, for a failing test's message.
    pub fn status(&mut self) -> String {
        match self.child.as_mut().map(Child::try_wait) {
            None => "not started (killed by the test)".to_owned(),
            Some(Ok(None)) => "still running".to_owned(),
            Some(Ok(Some(status))) => format!("exited: {status}"),
            Some(Err(err)) => format!("unknown ({err})"),
        }
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

    /// Wait until the server this process started answers on its port; `Err` with its exit
    /// status if it exited first.
    ///
    /// A TCP connection alone is not enough: something else holding the port a moment would
    /// pass for the server (a clean-clone CI run once saw the probe connect and the driver's
    /// connection refused right after). So the probe sends `PING` and waits for a Redis reply
    /// (`+PONG`, or `-NOAUTH` from a server with a password), and the server must still be
    /// running after it. A TLS-only server cannot read a plain `PING`: for it, the connection
    /// and the running process have to do.
    fn wait_until_answering(&mut self) -> Result<(), String> {
        let tls_only = self.args.iter().any(|arg| arg == "--tls-port");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                // The server is gone, so its log is complete once the reader has finished.
                if let Some(drain) = self.drain.take() {
                    let _ = drain.join();
                }
                return Err(status.to_string());
            }
            if let Ok(stream) = TcpStream::connect(("127.0.0.1", self.port))
                && (tls_only || answers_ping(stream))
                && let Some(child) = self.child.as_mut()
                && let Ok(None) = child.try_wait()
            {
                return Ok(());
            }
            assert!(
                Instant::now() < deadline,
                "redis-server did not answer on port {} within 10 s; its log:\n{}",
                self.port,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Whether what listens on `stream` answers a Redis `PING` (any RESP status or error reply).
fn answers_ping(mut stream: TcpStream) -> bool {
    let timeout = Some(Duration::from_secs(2));
    let mut reply = [0_u8; 1];
    stream.set_read_timeout(timeout).is_ok()
        && stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut reply).is_ok()
        && matches!(reply[0], b'+' | b'-')
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        self.kill();
    }
}
