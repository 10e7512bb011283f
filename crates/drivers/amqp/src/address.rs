//! The broker's address: parsed for the client, shown to people without its user-info.

use std::fmt;

use lapin::uri::AMQPUri;
use sandloom_driverkit::redact_url;

/// A parsed `url` option. Its `Debug` and [`Address::shown`] never contain the user-info.
#[derive(Clone)]
pub(crate) struct Address {
    uri: AMQPUri,
    shown: String,
    /// Texts that must never reach a message: the password as written and as decoded.
    secrets: Vec<String>,
}

impl Address {
    /// Parse `url`; the error says what is wrong without repeating the user-info.
    pub(crate) fn parse(url: &str) -> Result<Self, String> {
        let shown = redact_url(url);
        let parsed = url::Url::parse(url)
            .map_err(|err| format!("`url` {shown} is not a valid URL: {err}"))?;
        if !matches!(parsed.scheme(), "amqp" | "amqps") {
            return Err(format!(
                "`url` {shown} must start with `amqp://` or `amqps://`"
            ));
        }
        // The AMQP parser takes only domain names as hosts (an IP address silently becomes
        // `localhost`), so the host comes from the URL parser.
        let host = match parsed.host() {
            Some(url::Host::Domain(domain)) => domain.to_owned(),
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            None => return Err(format!("`url` {shown} names no host")),
        };
        let mut secrets = Vec::new();
        if let Some(password) = parsed.password().filter(|p| !p.is_empty()) {
            secrets.push(password.to_owned());
        }
        let mut address = Self {
            uri: AMQPUri::default(),
            shown,
            secrets,
        };
        let mut uri: AMQPUri = url.parse().map_err(|err: String| {
            format!(
                "`url` {} is not a valid AMQP URL: {}",
                address.shown,
                address.scrub(&err)
            )
        })?;
        uri.authority.host = host;
        if !uri.authority.userinfo.password.is_empty() {
            address
                .secrets
                .push(uri.authority.userinfo.password.clone());
        }
        address.uri = uri;
        Ok(address)
    }

    /// The address for people: `amqp://***@host:port/vhost` ([`redact_url`]).
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// The parsed URI the client connects to.
    pub(crate) fn uri(&self) -> &AMQPUri {
        &self.uri
    }

    /// `text` with every secret of this address replaced by `***`.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), "***");
            }
        }
        text
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

#[cfg(test)]
mod tests {
    use super::Address;

    #[test]
    fn parses_ip_hosts_and_vhosts() {
        let address = Address::parse("amqp://guest:s3cret@127.0.0.1:5673/%2f?heartbeat=5").unwrap();
        assert_eq!(address.uri().authority.host, "127.0.0.1");
        assert_eq!(address.uri().authority.port, 5673);
        assert_eq!(address.uri().vhost, "/");
        assert_eq!(address.uri().query.heartbeat, Some(5));
        assert_eq!(address.shown(), "amqp://***@127.0.0.1:5673/%2f?***");
        assert_eq!(address.scrub("auth s3cret failed"), "auth *** failed");
        assert!(!format!("{address:?}").contains("s3cret"));
        let v6 = Address::parse("amqps://[::1]/prod").unwrap();
        assert_eq!(v6.uri().authority.host, "::1");
        assert_eq!(v6.uri().authority.port, 5671);
        assert_eq!(v6.uri().vhost, "prod");
    }

    #[test]
    fn refuses_other_schemes_without_showing_the_password() {
        for url in [
            "http://user:topsecret@host/",
            "amqp://user:topsecret@:5672/",
            "not a url topsecret@",
        ] {
            let err = Address::parse(url).unwrap_err();
            assert!(!err.contains("topsecret"), "{err}");
        }
    }
}
