//! Liveness and readiness over plain HTTP, the way a Kubernetes probe reads them.
//!
//! ```text
//! cargo run --example health_http                          # embedded defaults, port 8080
//! cargo run --example health_http -- --port 0 --once        # a free port (printed); one request
//! cargo run --example health_http -- --infra examples/infra.backends.toml
//! curl -i http://127.0.0.1:8080/readyz
//! ```
//!
//! - `GET /livez`: 200 while the process runs. It checks no backend: a backend that is down is
//!   no reason for Kubernetes to restart this process, which would not bring the backend back.
//! - `GET /readyz`: 200 when the infrastructure is ready or degraded (a degraded instance still
//!   works, so the pod keeps its traffic and the body says what is wrong), 503 when it is not
//!   ready (an instance is unhealthy) or still starting. The body is text: the readiness, then
//!   one line per instance with its state.
//! - Anything else: 404; a method other than GET or HEAD: 405.
//!
//! The port is bound before the infrastructure starts, so while startup waits for backends
//! (`start_wait_ms`) `/livez` answers 200 and `/readyz` 503. Health is probed in the background
//! (`health_interval_ms` in `INFRA`; 5 s when it does not say) and `/readyz` answers from the last
//! probe at once; each check is bounded by `health_timeout_ms`.
//!
//! With `--once` the server starts the infrastructure first, answers one request (connections
//! wait in the listen queue meanwhile), shuts down and exits: CI runs it in the background, reads
//! the port from the first line of stdout (`listening on http://127.0.0.1:PORT`) and curls it.
//!
//! ```yaml
//! livenessProbe:  { httpGet: { path: /livez,  port: 8080 }, periodSeconds: 10 }
//! readinessProbe: { httpGet: { path: /readyz, port: 8080 }, periodSeconds: 5, failureThreshold: 2 }
//! ```

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use sandloom::{HealthReport, InfraConfig, Kernel, LinkedDrivers, Running};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// How often health is probed when `INFRA` does not say (`health_interval_ms`).
const DEFAULT_PROBE_INTERVAL: Duration = Duration::from_secs(5);
/// The longest request head read; probes send a few dozen bytes.
const MAX_HEAD: usize = 8 * 1024;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::FAILURE;
        }
    };
    let config = match &args.infra {
        Some(path) => InfraConfig::from_file(path).and_then(InfraConfig::with_env_overrides),
        None => InfraConfig::from_env(),
    };
    let config = match config {
        Ok(config) if config.health_interval().is_none() => {
            config.with_health_interval(Some(DEFAULT_PROBE_INTERVAL))
        }
        Ok(config) => config,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::FAILURE;
        }
    };
    match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(run(config, &args)),
        Err(err) => {
            eprintln!("cannot start the async runtime: {err}");
            ExitCode::FAILURE
        }
    }
}

struct Args {
    port: u16,
    once: bool,
    infra: Option<String>,
}

impl Args {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Self, String> {
        let usage = "usage: health_http [--port PORT] [--once] [--infra FILE]";
        let mut parsed = Args {
            port: 8080,
            once: false,
            infra: None,
        };
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--once" => parsed.once = true,
                "--port" => {
                    parsed.port = args
                        .next()
                        .and_then(|port| port.parse().ok())
                        .ok_or_else(|| format!("--port needs a port number (0: any)\n{usage}"))?;
                }
                "--infra" => {
                    parsed.infra = Some(
                        args.next()
                            .ok_or_else(|| format!("--infra needs a file\n{usage}"))?,
                    );
                }
                other => return Err(format!("unknown argument `{other}`\n{usage}")),
            }
        }
        Ok(parsed)
    }
}

fn linked() -> LinkedDrivers {
    sandloom::link_drivers!(
        sandloom_embedded,
        sandloom_driver_redis,
        sandloom_driver_postgres,
        sandloom_driver_amqp,
        sandloom_driver_s3,
        sandloom_driver_webhook,
        sandloom_driver_smtp,
        sandloom_driver_vault
    )
}

async fn run(config: InfraConfig, args: &Args) -> ExitCode {
    let listener = match TcpListener::bind(("127.0.0.1", args.port)).await {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("cannot listen on 127.0.0.1:{}: {err}", args.port);
            return ExitCode::FAILURE;
        }
    };
    if let Ok(address) = listener.local_addr() {
        println!("listening on http://{address}");
        let _ = std::io::stdout().flush();
    }
    let probes = Arc::new(Probes::new(config.health_interval().is_some()));
    // Serving from the start: while startup waits for backends, /readyz answers 503. With
    // `--once`, the listener is kept until the infrastructure has started.
    let (server, held) = if args.once {
        (None, Some(listener))
    } else {
        (
            Some(tokio::spawn(serve(listener, Arc::clone(&probes)))),
            None,
        )
    };
    let running = match Kernel::new(config, linked()).start().await {
        Ok(running) => running,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::FAILURE;
        }
    };
    let _ = probes.running.set(running);
    if let Some(listener) = held {
        if let Err(err) = serve_one(&listener, &probes).await {
            eprintln!("serving the request failed: {err}");
        }
    } else if let Some(server) = server {
        // Runs until the process is stopped.
        let _ = server.await;
    }
    let Some(running) = Arc::into_inner(probes).and_then(|p| p.running.into_inner()) else {
        return ExitCode::SUCCESS;
    };
    match running.shutdown().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{err}");
            ExitCode::FAILURE
        }
    }
}

/// What the endpoints read: the infrastructure, once started.
pub(crate) struct Probes {
    pub(crate) running: OnceLock<Running>,
    /// Whether health is probed in the background: then `/readyz` answers from the last probe.
    probing: bool,
}

impl Probes {
    pub(crate) fn new(probing: bool) -> Self {
        Self {
            running: OnceLock::new(),
            probing,
        }
    }

    /// The readiness to answer with; `None` while the infrastructure is starting.
    async fn report(&self) -> Option<HealthReport> {
        let running = self.running.get()?;
        match running.last_health() {
            Some(report) if self.probing => Some(report),
            _ => Some(running.readiness().await),
        }
    }
}

/// An HTTP answer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: String,
}

/// The answer to `method path`; `report` is `None` while the infrastructure is starting.
pub(crate) fn answer(method: &str, path: &str, report: Option<&HealthReport>) -> Answer {
    let path = path.split('?').next().unwrap_or_default();
    let (status, body) = match (method, path) {
        ("GET" | "HEAD", "/livez") => (200, "ok\n".to_owned()),
        ("GET" | "HEAD", "/readyz") => match report {
            None => (
                503,
                "starting: the infrastructure is not started yet\n".to_owned(),
            ),
            Some(report) if report.readiness.is_ready() => (200, report.to_string()),
            Some(report) => (503, report.to_string()),
        },
        ("GET" | "HEAD", _) => (404, "not found: try /livez or /readyz\n".to_owned()),
        _ => (405, "method not allowed: GET or HEAD\n".to_owned()),
    };
    Answer { status, body }
}

/// Accept and answer connections until the listener fails.
pub(crate) async fn serve(listener: TcpListener, probes: Arc<Probes>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let probes = Arc::clone(&probes);
        tokio::spawn(async move {
            let _ = respond(stream, &probes).await;
        });
    }
}

/// Accept and answer one connection.
pub(crate) async fn serve_one(listener: &TcpListener, probes: &Probes) -> std::io::Result<()> {
    let (stream, _) = listener.accept().await?;
    respond(stream, probes).await
}

/// Read one request head, answer it, close: a minimal HTTP/1.1 server (no keep-alive).
async fn respond(stream: TcpStream, probes: &Probes) -> std::io::Result<()> {
    let mut stream = BufReader::new(stream);
    let mut request_line = String::new();
    let mut read = stream.read_line(&mut request_line).await?;
    // The headers are not needed; read them to the blank line, so the client is not reset.
    let mut header = String::new();
    while read < MAX_HEAD {
        header.clear();
        let n = stream.read_line(&mut header).await?;
        if n == 0 || header == "\r\n" || header == "\n" {
            break;
        }
        read += n;
    }
    let mut parts = request_line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let report = if path.starts_with("/readyz") {
        probes.report().await
    } else {
        None
    };
    let Answer { status, body } = answer(method, path, report.as_ref());
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Service Unavailable",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let stream = stream.get_mut();
    stream.write_all(head.as_bytes()).await?;
    if method != "HEAD" {
        stream.write_all(body.as_bytes()).await?;
    }
    stream.shutdown().await
}
