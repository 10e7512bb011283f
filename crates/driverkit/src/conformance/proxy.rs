//! A TCP proxy a driver's tests put between the driver and its real server, to make the server
//! "go away" and come back without touching the server: what every backend driver must survive.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A TCP proxy on a free loopback port forwarding to `upstream`, which a test can
/// [`cut`](TcpProxy::cut) (every open connection is dropped, new ones are closed as soon as they
/// are accepted, as when a server goes away) and [`restore`](TcpProxy::restore).
///
/// Point the driver at [`address`](TcpProxy::address) instead of the server. Dropping the proxy
/// cuts it and stops listening. Needs a Tokio runtime with I/O enabled.
///
/// ```
/// use sandloom_driverkit::conformance::TcpProxy;
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
/// client.write_all(b"pong").await?;
/// client.read_exact(&mut answer).await?;
/// assert_eq!(&answer, b"pong");
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct TcpProxy {
    address: SocketAddr,
    cut: Arc<AtomicBool>,
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
        let cut = Arc::new(AtomicBool::new(false));
        let links: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = tokio::spawn({
            let (cut, links) = (Arc::clone(&cut), Arc::clone(&links));
            async move {
                while let Ok((mut client, _)) = listener.accept().await {
                    // Accepted then dropped at once: the client sees its connection end, as it
                    // would if the server had gone; a closed port would be indistinguishable
                    // from a proxy that is not there at all.
                    if cut.load(Ordering::Acquire) {
                        drop(client);
                        continue;
                    }
                    let link = tokio::spawn(async move {
                        if let Ok(mut server) = TcpStream::connect(upstream).await {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                    });
                    let mut links = links.lock().unwrap_or_else(PoisonError::into_inner);
                    links.retain(|link| !link.is_finished());
                    links.push(link);
                }
            }
        });
        Ok(TcpProxy {
            address,
            cut,
            links,
            accept,
        })
    }

    /// Where the driver under test connects.
    ///
    /// ```no_run
    /// # async fn f(proxy: sandloom_driverkit::conformance::TcpProxy) {
    /// let url = format!("redis://{}", proxy.address());
    /// # }
    /// ```
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The server goes away: every open connection is dropped, new ones are closed at once.
    ///
    /// ```no_run
    /// # async fn f(proxy: sandloom_driverkit::conformance::TcpProxy) {
    /// proxy.cut();
    /// # }
    /// ```
    pub fn cut(&self) {
        self.cut.store(true, Ordering::Release);
        let mut links = self.links.lock().unwrap_or_else(PoisonError::into_inner);
        for link in links.drain(..) {
            link.abort();
        }
    }

    /// The server is back: new connections go through again.
    ///
    /// ```no_run
    /// # async fn f(proxy: sandloom_driverkit::conformance::TcpProxy) {
    /// proxy.restore();
    /// # }
    /// ```
    pub fn restore(&self) {
        self.cut.store(false, Ordering::Release);
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.cut();
        self.accept.abort();
    }
}
