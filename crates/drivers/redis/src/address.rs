//! The server to connect to: `url` parsed into the client's connection info, with the checks
//! that only the parsed form can make.

use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo as _};
use sandloom_driverkit::{DriverError, SecretUrl};

/// The connection info of `url`, refused when it does not parse or asks to skip the
/// certificate check.
pub(crate) fn connection_info(url: &SecretUrl) -> Result<ConnectionInfo, DriverError> {
    // The client's parse errors never echo the URL, and neither does this message: a URL
    // that does not parse cannot be named safely beyond its redacted form.
    let info = url.expose().into_connection_info().map_err(|err| {
        DriverError::new(format!(
            "`url` is not a Redis URL ({err}); expected \
             redis://[user][:password@]host[:port][/db], rediss://… or redis+unix:///path"
        ))
    })?;
    if let ConnectionAddr::TcpTls { insecure: true, .. } = info.addr() {
        return Err(DriverError::new(
            "`url`: the `#insecure` fragment (no certificate check) is not supported; \
             trust a private certificate authority with `tls_ca_file` instead",
        ));
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_tls_and_unix_addresses_parse() {
        let info = connection_info(&"redis://:pw@127.0.0.1:6380/2".into()).unwrap();
        assert_eq!(info.addr().to_string(), "127.0.0.1:6380");
        let info = connection_info(&"rediss://cache.internal".into()).unwrap();
        assert!(matches!(info.addr(), ConnectionAddr::TcpTls { .. }));
        let info = connection_info(&"redis+unix:///run/redis.sock".into()).unwrap();
        assert!(matches!(info.addr(), ConnectionAddr::Unix(_)));
    }

    #[test]
    fn refusals_never_echo_the_password() {
        for url in [
            "http://:hunter2@127.0.0.1",
            "redis://:hunter2@127.0.0.1/notadb",
            "rediss://:hunter2@127.0.0.1/#insecure",
        ] {
            let err = connection_info(&url.into()).unwrap_err();
            assert!(err.message().contains("`url`"), "{err}");
            assert!(!err.message().contains("hunter2"), "{err}");
        }
    }
}
