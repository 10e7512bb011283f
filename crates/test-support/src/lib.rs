//! # sandloom-test-support — helpers for server tests
//!
//! A TCP proxy a driver's tests put between the driver and its real server, to make the server
//! "go away" or hang, and come back, without touching the server: what every backend driver
//! must survive. And [`LogCapture`], the log lines a test asserts on, and [`waits`], what the
//! tests of waiting operations across a reload check; [`free_port`], a port for a server process
//! the test starts itself.

mod logs;
mod ports;
pub mod waits;

pub use logs::LogCapture;
pub use ports::free_port;

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the proxy does with connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Bytes flow both ways.
    Forward,
    /// Open connections were dropped; new ones are closed as soon as they are accepted.
    Cut,
    /// Connections stay open, old and new, and no byte moves either way.
    Stalled,
}

/// A TCP proxy on a free loopback port forwarding to `upstream`, which a test can
/// [`cut`](TcpProxy::cut) (every open connection is dropped, new ones are closed as soon as they
/// are accepted, as when a server goes away), [`stall`](TcpProxy::stall) (connections are
/// accepted and kept, and nothing is forwarded, as when a server hangs or packets are dropped)
/// and [`restore`](TcpProxy::restore).
///
/// Point the driver at [`address`](TcpProxy::address) instead of the server. Dropping the proxy
/// cuts it and stops listening. Needs a Tokio runtime with I/O enabled.
///
/// ```
/// use sandloom_test_support::TcpProxy;
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// // A one-shot echo server stands in for Redis, PostgreSQL, RabbitMQ…
/// let server = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let upstream = server.local_addr()?;
/// tokio::spawn(async move {
///     while let Ok((mut socket, _)) = server.accept().await {
///         tokio::spawn(async move {
///             let (mut reader, mut writer) = socket.split();
///             let _ = tokio::io::copy(&mut reader, &mut writer).await;
///         });
///     }
/// });
///
/// let proxy = TcpProxy::start(upstream).await?;
/// let mut client = tokio::net::TcpStream::connect(proxy.address()).await?;
/// client.write_all(b"ping").await?;
/// let mut answer = [0; 4];
/// client.read_exact(&mut answer).await?;
/// assert_eq!(&answer, b"ping");
///
/// proxy.cut(); // the server "goes away": the open connection ends
/// assert_eq!(client.read(&mut answer).await.unwrap_or(0), 0);
///
/// proxy.restore(); // and comes back
/// let mut client = tokio::net::TcpStream::connect(proxy.address()).await?;
/// proxy.stall(); // the server hangs: what the client sends gets no answer…
/// client.write_all(b"late").await?;
/// let silent = tokio::time::timeout(std::time::Duration::from_millis(50), client.read(&mut answer));
/// assert!(silent.await.is_err());
/// proxy.restore(); // … until it wakes up: the held bytes move on
/// client.read_exact(&mut answer).await?;
/// assert_eq!(&answer, b"late");
///
/// let mut client = tokio::net::TcpStream::connect(proxy.address()).await?;
/// client.write_all(b"pong").await?;
/// client.read_exact(&mut answer).await?;
/// assert_eq!(&answer, b"pong");
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct TcpProxy {
    address: SocketAddr,
    mode: watch::Sender<Mode>,
    links: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl TcpProxy {
    /// Listen on a free port of 127.0.0.1 and forward every connection to `upstream`.
    ///
    /// # Errors
    /// When no loopback port can be bound.
    pub async fn start(upstream: SocketAddr) -> io::Result<TcpProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let (mode, _) = watch::channel(Mode::Forward);
        let links: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = tokio::spawn({
            let (mode, links) = (mode.clone(), Arc::clone(&links));
            async move {
                while let Ok((client, _)) = listener.accept().await {
                    // Accepted then dropped at once: the client sees its connection end, as it
                    // would if the server had gone; a closed port would be indistinguishable
                    // from a proxy that is not there at all.
                    if *mode.borrow() == Mode::Cut {
                        drop(client);
                        continue;
                    }
                    let link = tokio::spawn(link(client, upstream, mode.subscribe()));
                    let mut links = links.lock().unwrap_or_else(PoisonError::into_inner);
                    links.retain(|link| !link.is_finished());
                    links.push(link);
                }
            }
        });
        Ok(TcpProxy {
            address,
            mode,
            links,
            accept,
        })
    }

    /// Where the driver under test connects.
    ///
    /// ```no_run
    /// # async fn f(proxy: sandloom_test_support::TcpProxy) {
    /// let url = format!("redis://{}", proxy.address());
    /// # }
    /// ```
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The server goes away: every open connection is dropped, new ones are closed at once.
    ///
    /// ```no_run
    /// # async fn f(proxy: sandloom_test_support::TcpProxy) {
    /// proxy.cut();
    /// # }
    /// ```
    pub fn cut(&self) {
        self.mode.send_replace(Mode::Cut);
        let mut links = self.links.lock().unwrap_or_else(PoisonError::into_inner);
        for link in links.drain(..) {
            link.abort();
        }
    }

    /// The server hangs: open connections stay open and new ones are accepted, but no byte is
    /// forwarded either way (a connection accepted now reaches `upstream` only once the proxy
    /// forwards again). Calls wait for answers that do not come, until their own timeouts.
    /// [`restore`](TcpProxy::restore) lets the held bytes move on; [`cut`](TcpProxy::cut)
    /// drops the connections.
    ///
    /// ```no_run
    /// # async fn f(proxy: sandloom_test_support::TcpProxy) {
    /// proxy.stall();
    /// # }
    /// ```
    pub fn stall(&self) {
        self.mode.send_replace(Mode::Stalled);
    }

    /// The server is back: new connections go through again, stalled ones move on.
    ///
    /// ```no_run
    /// # async fn f(proxy: sandloom_test_support::TcpProxy) {
    /// proxy.restore();
    /// # }
    /// ```
    pub fn restore(&self) {
        self.mode.send_replace(Mode::Forward);
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.cut();
        self.accept.abort();
    }
}

/// Wait until bytes may move: `true` when forwarding, `false` once cut (or the proxy is gone).
async fn forwarding(mode: &mut watch::Receiver<Mode>) -> bool {
    loop {
        match *mode.borrow_and_update() {
            Mode::Forward => return true,
            Mode::Cut => return false,
            Mode::Stalled => {}
        }
        if mode.changed().await.is_err() {
            return false;
        }
    }
}

/// One client connection: reach `upstream` once forwarding is allowed, then pipe both ways.
async fn link(client: TcpStream, upstream: SocketAddr, mut mode: watch::Receiver<Mode>) {
    // A connection accepted while stalled dials nothing yet, so a stalled proxy in front of a
    // server that is not there still holds its connections open and silent.
    if !forwarding(&mut mode).await {
        return;
    }
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let upward = pump(client_read, server_write, mode.clone());
    let downward = pump(server_read, client_write, mode);
    tokio::pin!(upward, downward);
    // One side closing its half is passed on and the other direction keeps going, as
    // `copy_bidirectional` does; a failure (or a cut) ends both.
    let (ended, other) = tokio::select! {
        ended = &mut upward => (ended, &mut downward),
        ended = &mut downward => (ended, &mut upward),
    };
    if ended == Pumped::Closed {
        other.await;
    }
}

/// How a [`pump`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pumped {
    /// The reading side closed; the writing side was shut down in turn.
    Closed,
    /// A read or write failed, or the proxy was cut or dropped.
    Failed,
}

/// Copy `from` to `to` while the proxy forwards; hold the bytes while it is stalled.
async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    mut mode: watch::Receiver<Mode>,
) -> Pumped {
    let mut buffer = vec![0_u8; 16 * 1024];
    loop {
        if !forwarding(&mut mode).await {
            return Pumped::Failed;
        }
        // Nothing is read while stalled, so the peer's bytes wait in the socket buffers.
        let read = tokio::select! {
            read = from.read(&mut buffer) => read,
            changed = mode.changed() => {
                if changed.is_err() {
                    return Pumped::Failed;
                }
                continue;
            }
        };
        match read {
            Ok(0) => {
                let _ = to.shutdown().await;
                return Pumped::Closed;
            }
            Ok(n) => {
                if to.write_all(&buffer[..n]).await.is_err() {
                    return Pumped::Failed;
                }
            }
            Err(_) => return Pumped::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Long enough for a forwarded byte to arrive many times over on loopback: a read that
    /// waits this long got nothing because nothing was forwarded.
    const QUIET: Duration = Duration::from_millis(200);

    async fn echo_server() -> SocketAddr {
        let server = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = server.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = server.accept().await {
                tokio::spawn(async move {
                    let (mut reader, mut writer) = socket.split();
                    let _ = tokio::io::copy(&mut reader, &mut writer).await;
                });
            }
        });
        address
    }

    async fn silent(client: &mut TcpStream) -> bool {
        let mut byte = [0_u8; 1];
        tokio::time::timeout(QUIET, client.read(&mut byte))
            .await
            .is_err()
    }

    #[tokio::test]
    async fn a_stalled_connection_holds_its_bytes_until_restored() {
        let proxy = TcpProxy::start(echo_server().await).await.unwrap();
        let mut open = TcpStream::connect(proxy.address()).await.unwrap();
        open.write_all(b"a").await.unwrap();
        let mut answer = [0_u8; 1];
        open.read_exact(&mut answer).await.unwrap();

        proxy.stall();
        open.write_all(b"b").await.unwrap();
        let mut opened_while_stalled = TcpStream::connect(proxy.address()).await.unwrap();
        opened_while_stalled.write_all(b"c").await.unwrap();
        assert!(silent(&mut open).await, "a stalled connection answered");
        assert!(silent(&mut opened_while_stalled).await);

        proxy.restore();
        open.read_exact(&mut answer).await.unwrap();
        assert_eq!(&answer, b"b");
        opened_while_stalled.read_exact(&mut answer).await.unwrap();
        assert_eq!(&answer, b"c");
    }

    #[tokio::test]
    async fn a_stall_holds_connections_even_with_no_server_behind() {
        let gone = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let nowhere = gone.local_addr().unwrap();
        drop(gone);
        let proxy = TcpProxy::start(nowhere).await.unwrap();
        proxy.stall();
        let mut client = TcpStream::connect(proxy.address()).await.unwrap();
        assert!(silent(&mut client).await, "the connection was closed");

        proxy.cut();
        let mut byte = [0_u8; 1];
        assert_eq!(client.read(&mut byte).await.unwrap_or(0), 0);
    }

    #[tokio::test]
    async fn a_half_close_is_passed_on() {
        let proxy = TcpProxy::start(echo_server().await).await.unwrap();
        let mut client = TcpStream::connect(proxy.address()).await.unwrap();
        client.write_all(b"bye").await.unwrap();
        client.shutdown().await.unwrap();
        let mut answer = Vec::new();
        client.read_to_end(&mut answer).await.unwrap();
        assert_eq!(answer, b"bye");
    }
}
