//! A TCP proxy on a free loopback port in front of a real server, which a test can cut and
//! restore: the server "goes away" and comes back without touching the real one.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinHandle};

/// What the proxy does with connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Forward both ways to the server.
    Forward,
    /// Close every open connection, and each new one as soon as it is accepted (the server
    /// crashed, or a firewall resets).
    Close,
    /// Accept connections and never answer (the server hangs, or packets are dropped).
    Hang,
}

#[derive(Default)]
struct Shared {
    mode: Mutex<Option<Mode>>,
    connections: Mutex<Vec<AbortHandle>>,
}

impl Shared {
    fn mode(&self) -> Mode {
        self.mode.lock().unwrap().unwrap_or(Mode::Forward)
    }
}

/// The proxy; stops when dropped.
pub(crate) struct Proxy {
    address: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// A proxy forwarding to `upstream`, on a free port of 127.0.0.1.
    pub(crate) async fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a free port");
        let address = listener.local_addr().expect("the proxy's address");
        let shared = Arc::new(Shared::default());
        let accept_shared = Arc::clone(&shared);
        let accept = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                let task = match accept_shared.mode() {
                    Mode::Close => {
                        drop(client);
                        continue;
                    }
                    Mode::Hang => tokio::spawn(async move {
                        let _held = client;
                        std::future::pending::<()>().await;
                    }),
                    Mode::Forward => tokio::spawn(forward(client, upstream)),
                };
                let mut connections = accept_shared.connections.lock().unwrap();
                connections.retain(|c| !c.is_finished());
                connections.push(task.abort_handle());
            }
        });
        Self {
            address,
            shared,
            accept,
        }
    }

    /// The port clients connect to.
    pub(crate) fn port(&self) -> u16 {
        self.address.port()
    }

    /// Switch mode; leaving `Forward` drops every open connection at once.
    pub(crate) fn set(&self, mode: Mode) {
        *self.shared.mode.lock().unwrap() = Some(mode);
        if mode != Mode::Forward {
            for connection in self.shared.connections.lock().unwrap().drain(..) {
                connection.abort();
            }
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        for connection in self.shared.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }
}

async fn forward(mut client: TcpStream, upstream: SocketAddr) {
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
}
