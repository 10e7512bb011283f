//! What the server tests share: where the `OpenBao` server is, its root token, a small blocking
//! HTTP client that writes into it (the kit's seeder runs on a blocking thread), and proxies
//! between instances and the server that a test can cut.

#![allow(dead_code)] // each test binary uses a part of it

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sandloom_driver_vault::VaultSecretsOptions;
use sandloom_test_support::TcpProxy;

/// The server's address, read at run time (falling back to the value at build time).
pub(crate) fn address() -> String {
    std::env::var("SANDLOOM_TEST_VAULT_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_VAULT_URL").map(str::to_owned))
        .unwrap_or_else(|| "http://127.0.0.1:8200".to_owned())
}

/// The dev server's root token (`scripts/test-services` starts it with a fixed one).
pub(crate) fn root_token() -> String {
    std::env::var("SANDLOOM_TEST_VAULT_TOKEN")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_VAULT_TOKEN").map(str::to_owned))
        .unwrap_or_else(|| "sandloom-test-root".to_owned())
}

/// The server's socket address.
pub(crate) fn socket() -> SocketAddr {
    let address = address();
    let authority = address
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    authority
        .parse()
        .unwrap_or_else(|e| panic!("SANDLOOM_TEST_VAULT_URL {address}: not http://ip:port ({e})"))
}

/// A name no earlier run used: the dev server outlives test runs.
pub(crate) fn unique(name: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!("{name}-{}-{nanos}", std::process::id())
}

/// Options for the test server, with the root token, reading under `prefix` of `secret/`.
pub(crate) fn options(prefix: &str) -> VaultSecretsOptions {
    VaultSecretsOptions {
        token: Some(root_token().into()),
        prefix: Some(prefix.to_owned()),
        poll_interval_ms: 50,
        ..VaultSecretsOptions::new(address())
    }
}

/// One HTTP/1.0 request to the server with the root token: its status and body. (HTTP/1.0: the
/// server answers with the whole body and closes, no chunks to decode.)
pub(crate) fn call(method: &str, path: &str, body: Option<&str>) -> Result<(u16, String), String> {
    call_in("", method, path, body)
}

/// `call` in the namespace `namespace` (none when empty).
pub(crate) fn call_in(
    namespace: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<(u16, String), String> {
    let mut stream = TcpStream::connect(socket()).map_err(|e| format!("connect: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    let body = body.unwrap_or("");
    let namespace = if namespace.is_empty() {
        String::new()
    } else {
        format!("X-Vault-Namespace: {namespace}\r\n")
    };
    let request = format!(
        "{method} /v1/{path} HTTP/1.0\r\nHost: vault\r\nX-Vault-Token: {}\r\n{namespace}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        root_token(),
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("write: {e}"))?;
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .map_err(|e| format!("read: {e}"))?;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("no status line in {:?}", &answer[..answer.len().min(200)]))?;
    let body = answer
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, body)| body.to_owned());
    Ok((status, body))
}

/// `call`, failing unless the answer is a success.
pub(crate) fn must(method: &str, path: &str, body: Option<&str>) -> Result<String, String> {
    let (status, answer) = call(method, path, body)?;
    if (200..300).contains(&status) {
        Ok(answer)
    } else {
        Err(format!("{method} {path} answered {status}: {answer}"))
    }
}

/// Standard base64 with padding (the tests need no crate for it).
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0_u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                text.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                text.push('=');
            }
        }
    }
    text
}

/// JSON text of a string.
fn json(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Write `value` as the new version of the entry `path` under `secret/`: as text when it is
/// UTF-8, else base64 with `encoding = "base64"`, as the driver's README says to.
pub(crate) fn put(path: &str, value: &[u8]) -> Result<(), String> {
    let entry = match std::str::from_utf8(value) {
        Ok(text) => format!("{{\"value\":{}}}", json(text)),
        Err(_) => format!(
            "{{\"value\":\"{}\",\"encoding\":\"base64\"}}",
            base64(value)
        ),
    };
    must(
        "POST",
        &format!("secret/data/{path}"),
        Some(&format!("{{\"data\":{entry}}}")),
    )
    .map(drop)
}

/// Remove the entry `path` under `secret/`, every version of it.
pub(crate) fn remove(path: &str) -> Result<(), String> {
    must("DELETE", &format!("secret/metadata/{path}"), None).map(drop)
}

/// A runtime of its own for the proxies, so that they outlive any one test's runtime.
fn proxy_runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("the proxies' runtime")
    })
}

/// The proxies of the kit's instances, by scratch directory.
fn proxies() -> &'static Mutex<HashMap<PathBuf, TcpProxy>> {
    static PROXIES: OnceLock<Mutex<HashMap<PathBuf, TcpProxy>>> = OnceLock::new();
    PROXIES.get_or_init(Mutex::default)
}

/// A proxy to the server for the instance of `key`, started on first use: its address.
pub(crate) fn proxy_for(key: &PathBuf) -> String {
    let mut proxies = proxies().lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(proxy) = proxies.get(key) {
        return format!("http://{}", proxy.address());
    }
    // Started from a thread of its own: the caller may be inside another runtime.
    let upstream = socket();
    let proxy = std::thread::spawn(move || proxy_runtime().block_on(TcpProxy::start(upstream)))
        .join()
        .expect("the proxy's start")
        .expect("a loopback port for the proxy");
    let address = format!("http://{}", proxy.address());
    proxies.insert(key.clone(), proxy);
    address
}

/// Cut the proxy of the instance of `key`: the server "goes away" for it.
pub(crate) fn cut(key: &PathBuf) -> Result<(), String> {
    let proxies = proxies().lock().unwrap_or_else(PoisonError::into_inner);
    let proxy = proxies
        .get(key)
        .ok_or_else(|| format!("no proxy for {}", key.display()))?;
    proxy.cut();
    Ok(())
}
