//! Building the `redis` client and its connection manager from the server options.

use std::path::Path;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, ConnectionAddr, ConnectionInfo, TlsCertificates};
use sandloom_driverkit::DriverError;

use crate::connection::Endpoint;

/// A client for `info`, trusting the PEM authorities of `tls_ca_file` for `rediss://` when set.
/// Reads the file: call from `start`, not from `from_options`.
pub(crate) async fn client(
    options: &Endpoint,
    info: ConnectionInfo,
) -> Result<Client, DriverError> {
    let address = options.url.redacted();
    if matches!(info.addr(), ConnectionAddr::TcpTls { .. }) {
        install_crypto_provider();
    }
    let built = match &options.tls_ca_file {
        None => Client::open(info),
        Some(path) => {
            let root_cert = read_ca_file(path).await?;
            let certificates = TlsCertificates {
                client_tls: None,
                root_cert: Some(root_cert),
            };
            Client::build_with_tls(info, certificates)
        }
    };
    built.map_err(|err| {
        DriverError::new(format!(
            "cannot configure the Redis client for {address}: {err}"
        ))
        .with_source(err)
    })
}

async fn read_ca_file(path: &Path) -> Result<Vec<u8>, DriverError> {
    tokio::fs::read(path).await.map_err(|err| {
        DriverError::new(format!(
            "cannot read `tls_ca_file` {}: {err}",
            path.display()
        ))
        .with_source(err)
    })
}

/// The `redis` crate builds its rustls configuration with the process-default crypto provider,
/// which rustls cannot pick by itself when a binary links more than one (other drivers may
/// bring `aws-lc-rs`). Install `ring` unless the application already installed a provider; a
/// concurrent install by someone else wins harmlessly.
fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// How the manager connects and reconnects.
///
/// No retries inside one (re)connection: while the server is down, each call fails at once
/// with `Unavailable` (or `Timeout` after `connect_timeout_ms`) instead of waiting through a
/// backoff, and the next call tries again. One attempt at a time is shared by every caller.
pub(crate) fn manager_config(options: &Endpoint) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(Some(options.connect_timeout()))
        .set_response_timeout(Some(options.response_timeout()))
        .set_number_of_retries(0)
}

/// Connect `client` with `config`: one attempt, bounded by the connection timeout.
pub(crate) async fn connect(
    client: Client,
    config: ConnectionManagerConfig,
) -> redis::RedisResult<ConnectionManager> {
    ConnectionManager::new_with_config(client, config).await
}
