//! A real HTTP/1.1 server in the test process (hyper): it records every request and answers
//! with scripted replies. It can go away (listener closed, every connection dropped) and come
//! back on the same port.

// Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::HeaderMap;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use sandloom_driver_webhook::{
    MESSAGE_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verify_signature,
};
use sandloom_driverkit::notifier::Message;
use tokio::net::{TcpListener, TcpSocket};
use tokio::runtime::Runtime;
use tokio::task::{JoinHandle, JoinSet};

/// The HMAC key the tests configure, and the password of the URLs they use.
pub(crate) const SECRET: &str = "hunter2-secret";

/// One scripted answer.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) delay: Duration,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: &'static str,
}

impl Reply {
    pub(crate) fn status(status: u16) -> Self {
        Self {
            status,
            delay: Duration::ZERO,
            headers: Vec::new(),
            body: "",
        }
    }

    pub(crate) fn ok() -> Self {
        Self::status(200)
    }

    #[must_use]
    pub(crate) fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    #[must_use]
    pub(crate) fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    #[must_use]
    pub(crate) fn body(mut self, body: &'static str) -> Self {
        self.body = body;
        self
    }
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    pub(crate) at: Instant,
}

impl Recorded {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// Whether the signature verifies with `secret`, through the crate's helper.
    pub(crate) fn verifies_with(&self, secret: &str) -> bool {
        match (self.header(TIMESTAMP_HEADER), self.header(SIGNATURE_HEADER)) {
            (Some(timestamp), Some(signature)) => {
                verify_signature(secret, timestamp, &self.body, signature)
            }
            _ => false,
        }
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("the body is JSON")
    }

    /// The body read back as a message (the driver's documented schema).
    pub(crate) fn message(&self) -> Message {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Payload {
            id: String,
            recipient: String,
            subject: Option<String>,
            body: String,
            metadata: BTreeMap<String, String>,
        }
        let body: Payload = serde_json::from_slice(&self.body).expect("the documented schema");
        assert_eq!(Some(body.id.as_str()), self.header(MESSAGE_ID_HEADER));
        let mut message = Message::new(body.recipient, body.body);
        if let Some(subject) = body.subject {
            message = message.with_subject(subject);
        }
        for (key, value) in body.metadata {
            message = message.with_metadata(key, value);
        }
        message
    }
}

#[derive(Default)]
struct State {
    requests: Mutex<Vec<Recorded>>,
    script: Mutex<VecDeque<Reply>>,
    fallback: Mutex<Option<Reply>>,
}

impl State {
    fn next_reply(&self) -> Reply {
        if let Some(reply) = self.script.lock().unwrap().pop_front() {
            return reply;
        }
        self.fallback
            .lock()
            .unwrap()
            .clone()
            .unwrap_or_else(Reply::ok)
    }
}

/// The servers run on their own runtime, so they outlive the runtimes of the tests and of
/// the conformance kit (one per obligation).
fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("the test server runtime")
    })
}

pub(crate) struct TestServer {
    addr: SocketAddr,
    state: Arc<State>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl TestServer {
    /// A server on a free port of 127.0.0.1, answering 200 until told otherwise.
    pub(crate) fn start() -> Arc<Self> {
        let listener = listen("127.0.0.1:0".parse().unwrap()).expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let server = Arc::new(Self {
            addr,
            state: Arc::default(),
            task: Mutex::new(None),
        });
        server.serve(listener);
        server
    }

    fn serve(&self, listener: TcpListener) {
        let state = Arc::clone(&self.state);
        let task = runtime().spawn(accept(listener, state));
        *self.task.lock().unwrap() = Some(task);
    }

    /// `http://127.0.0.1:<port>`.
    pub(crate) fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Answer these, in order, before falling back.
    pub(crate) fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.state.script.lock().unwrap().extend(replies);
    }

    /// Answer this once the script is used up (default 200).
    pub(crate) fn always(&self, reply: Reply) {
        *self.state.fallback.lock().unwrap() = Some(reply);
    }

    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().unwrap().clone()
    }

    /// Close the listener and drop every connection, as a crashed server would.
    pub(crate) async fn go_away(&self) {
        let task = self.task.lock().unwrap().take();
        if let Some(task) = task {
            task.abort();
            let _ = task.await;
        }
    }

    /// Listen again on the same port.
    pub(crate) fn come_back(&self) {
        let listener = listen(self.addr).expect("bind the same port again");
        self.serve(listener);
    }
}

/// `SO_REUSEADDR`, so the port can be bound again while old connections are in `TIME_WAIT`.
fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let _context = runtime().enter();
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

async fn accept(listener: TcpListener, state: Arc<State>) {
    // Owned here: aborting this task drops the listener and aborts every connection.
    let mut connections = JoinSet::new();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let state = Arc::clone(&state);
        connections.spawn(async move {
            let service = service_fn(move |request| handle(Arc::clone(&state), request));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
        while connections.try_join_next().is_some() {}
    }
}

async fn handle(
    state: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let reply = state.next_reply();
    state.requests.lock().unwrap().push(Recorded {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        headers: parts.headers,
        body,
        at: Instant::now(),
    });
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut response = Response::new(Full::new(Bytes::from_static(reply.body.as_bytes())));
    *response.status_mut() = StatusCode::from_u16(reply.status).expect("a valid status");
    for (name, value) in reply.headers {
        response
            .headers_mut()
            .insert(name, value.parse().expect("a valid header value"));
    }
    Ok(response)
}

/// Servers by the endpoint name a driver reports (`http://127.0.0.1:<port>/***`), so the
/// conformance kit's `delivered` reader finds what its instance's server received.
pub(crate) fn registry() -> &'static Mutex<HashMap<String, Arc<TestServer>>> {
    static SERVERS: OnceLock<Mutex<HashMap<String, Arc<TestServer>>>> = OnceLock::new();
    SERVERS.get_or_init(Mutex::default)
}

/// A closed port on 127.0.0.1: bound, then released.
pub(crate) fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
