//! What the server tests share: the broker's address and a TCP proxy that can cut or stall the
//! driver's connections to it.

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::AbortHandle;

/// The broker the server tests use: `SANDLOOM_TEST_AMQP_URL`, read at run time first.
pub fn server_url() -> String {
    std::env::var("SANDLOOM_TEST_AMQP_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_AMQP_URL").map(str::to_owned))
        .unwrap_or_else(|| "amqp://guest:guest@127.0.0.1:5672/%2f".to_owned())
}

/// `host:port` of [`server_url`].
pub fn server_addr() -> String {
    let url = server_url();
    let rest = url.split_once("://").map_or(url.as_str(), |(_, rest)| rest);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:5672")
    }
}

/// [`server_url`] with its host and port replaced by `addr`.
pub fn url_via(addr: SocketAddr) -> String {
    let url = server_url();
    url.replacen(&server_addr(), &addr.to_string(), 1)
}

/// A prefix no other test run uses.
pub fn unique_prefix(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("sandloom-test.{test}-{}-{nanos}.", std::process::id())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Forward everything.
    Open,
    /// Accept and immediately drop new connections; existing ones were dropped.
    Cut,
    /// Keep the connections but move no bytes until resumed.
    Stalled,
}

/// A loopback TCP proxy to `upstream` that a test can cut, stall and restore.
pub struct Proxy {
    addr: SocketAddr,
    mode: watch::Sender<Mode>,
    connections: Arc<Mutex<Vec<AbortHandle>>>,
    acceptor: AbortHandle,
}

impl Proxy {
    pub async fn start(upstream: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the proxy");
        let addr = listener.local_addr().expect("proxy address");
        let (mode, _) = watch::channel(Mode::Open);
        let connections = Arc::new(Mutex::new(Vec::new()));
        let acceptor = {
            let mode = mode.clone();
            let connections = Arc::clone(&connections);
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    if *mode.borrow() == Mode::Cut {
                        drop(client);
                        continue;
                    }
                    let Ok(server) = TcpStream::connect(&upstream).await else {
                        continue;
                    };
                    let pipe = tokio::spawn(pipe(client, server, mode.subscribe()));
                    connections
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(pipe.abort_handle());
                }
            })
            .abort_handle()
        };
        Self {
            addr,
            mode,
            connections,
            acceptor,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Drop every connection and refuse new ones, as a broker that went away.
    pub fn cut(&self) {
        self.mode.send_replace(Mode::Cut);
        for connection in self
            .connections
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain(..)
        {
            connection.abort();
        }
    }

    /// Keep the connections open but forward nothing, as a broker that hangs.
    pub fn stall(&self) {
        self.mode.send_replace(Mode::Stalled);
    }

    /// Forward again (after `cut`: accept new connections; after `stall`: move the bytes on).
    pub fn restore(&self) {
        self.mode.send_replace(Mode::Open);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.acceptor.abort();
        self.cut();
    }
}

async fn pipe(client: TcpStream, server: TcpStream, mode: watch::Receiver<Mode>) {
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    tokio::select! {
        () = pump(client_read, server_write, mode.clone()) => {}
        () = pump(server_read, client_write, mode) => {}
    }
}

async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, mut mode: watch::Receiver<Mode>) {
    let mut buffer = vec![0_u8; 16 * 1024];
    loop {
        while *mode.borrow_and_update() != Mode::Open {
            if mode.changed().await.is_err() {
                return;
            }
        }
        let read = tokio::select! {
            read = from.read(&mut buffer) => read,
            changed = mode.changed() => {
                if changed.is_err() {
                    return;
                }
                continue;
            }
        };
        match read {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if to.write_all(&buffer[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}
