//! A TCP proxy on a free loopback port that forwards to the real server until it is cut: then
//! every open connection is dropped and new ones are closed as soon as they are accepted, as
//! when a server goes away. `restore` lets connections through again.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

pub(crate) struct Proxy {
    addr: SocketAddr,
    cut: Arc<AtomicBool>,
    links: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// Listen on 127.0.0.1 (a free port) and forward to `upstream`.
    pub(crate) async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let cut = Arc::new(AtomicBool::new(false));
        let links: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = tokio::spawn({
            let (cut, links) = (Arc::clone(&cut), Arc::clone(&links));
            async move {
                while let Ok((mut client, _)) = listener.accept().await {
                    if cut.load(Ordering::Acquire) {
                        drop(client);
                        continue;
                    }
                    let link = tokio::spawn(async move {
                        if let Ok(mut server) = TcpStream::connect(upstream).await {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                    });
                    links
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(link);
                }
            }
        });
        Proxy {
            addr,
            cut,
            links,
            accept,
        }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server "goes away": open connections drop, new ones are closed at once.
    pub(crate) fn cut(&self) {
        self.cut.store(true, Ordering::Release);
        for link in self
            .links
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            link.abort();
        }
    }

    /// The server is back.
    pub(crate) fn restore(&self) {
        self.cut.store(false, Ordering::Release);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.cut();
        self.accept.abort();
    }
}
