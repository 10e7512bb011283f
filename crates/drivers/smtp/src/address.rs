//! The server to connect to: `host` checked, and `host:port` as messages name it.

use std::net::Ipv6Addr;

use sandloom_driverkit::DriverError;

/// `host:port`, with brackets around an IPv6 address.
pub(crate) fn server_name(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

pub(crate) fn check_host(host: &str) -> Result<(), DriverError> {
    if host.trim().is_empty() {
        return Err(DriverError::new(
            "`host` must name the SMTP server (e.g. `smtp.example.com`)",
        ));
    }
    // The value is not repeated here: it may hold a password (`smtp://user:pass@host`).
    if host.contains('@') {
        return Err(DriverError::new(
            "`host` must not contain user-info (`user@`): set `username` and `password` instead",
        ));
    }
    if host.contains("://") || host.contains('/') {
        return Err(DriverError::new(
            "`host` must be a host name or address only, without scheme or path \
             (e.g. `smtp.example.com`); the port goes in `port`",
        ));
    }
    if host.contains(':') && host.parse::<Ipv6Addr>().is_err() {
        return Err(DriverError::new(format!(
            "`host` {host:?} is not a host name or address: put the port in `port`"
        )));
    }
    if !host.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(DriverError::new(format!(
            "`host` {host:?} must be printable ASCII without spaces (write international \
             domain names in their `xn--` form)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_addresses_are_bracketed() {
        assert_eq!(server_name("::1", 25), "[::1]:25");
        assert_eq!(server_name("smtp.example.com", 587), "smtp.example.com:587");
    }

    #[test]
    fn hosts_with_more_than_a_host_are_refused_without_echoing_user_info() {
        for (host, expected) in [
            ("", "must name the SMTP server"),
            (
                "orders:hunter2@smtp.example.com",
                "must not contain user-info",
            ),
            ("smtp://smtp.example.com", "without scheme or path"),
            ("smtp.example.com:587", "put the port in `port`"),
            ("smtp example", "printable ASCII"),
        ] {
            let err = check_host(host).unwrap_err();
            assert!(err.message().contains(expected), "{host:?}: {err}");
            assert!(!err.message().contains("hunter2"), "{err}");
        }
        assert!(check_host("::1").is_ok());
    }
}
