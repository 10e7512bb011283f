//! The server to talk to: the `endpoint` option split into scheme, authority and base path.

use sandloom_driverkit::SecretUrl;

/// An endpoint split into what the client needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// `http` or `https`.
    pub(crate) scheme: String,
    /// `host[:port]`.
    pub(crate) authority: String,
    /// What follows the authority, without a trailing `/` (usually empty).
    pub(crate) path: String,
}

impl Endpoint {
    /// Split `endpoint`; a refusal names it redacted ([`SecretUrl::redacted`]).
    pub(crate) fn parse(endpoint: &SecretUrl) -> Result<Self, String> {
        let shown = endpoint.redacted();
        let endpoint = endpoint.expose();
        let Some((scheme, rest)) = endpoint.split_once("://") else {
            return Err(format!(
                "`endpoint` {shown:?} is not a URL: write it as `https://host[:port]`"
            ));
        };
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(format!(
                "`endpoint` {shown:?} has the scheme `{scheme}`: only `http` and `https` are \
                 supported"
            ));
        }
        if rest.contains(['?', '#']) {
            return Err(format!(
                "`endpoint` {shown:?} has a query or a fragment: give the base URL only"
            ));
        }
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if authority.contains('@') {
            return Err(format!(
                "`endpoint` {shown:?} holds user-info: put credentials in `access_key_id` and \
                 `secret_access_key`, not in the URL"
            ));
        }
        if authority.is_empty() || authority.contains(char::is_whitespace) {
            return Err(format!("`endpoint` {shown:?} has no valid host"));
        }
        Ok(Self {
            scheme,
            authority: authority.to_owned(),
            path: path.trim_end_matches('/').to_owned(),
        })
    }

    pub(crate) fn base(&self) -> String {
        format!("{}://{}{}", self.scheme, self.authority, self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_keeps_scheme_host_and_path_without_a_trailing_slash() {
        let endpoint = Endpoint::parse(&"HTTP://minio.internal:9000/s3/".into()).unwrap();
        assert_eq!(endpoint.scheme, "http");
        assert_eq!(endpoint.authority, "minio.internal:9000");
        assert_eq!(endpoint.base(), "http://minio.internal:9000/s3");
    }

    #[test]
    fn refusals_name_the_endpoint_redacted() {
        for (endpoint, expected) in [
            ("localhost:9000", "is not a URL"),
            ("ftp://h", "only `http` and `https`"),
            ("http://h/?token=hunter2", "a query or a fragment"),
            ("http://user:hunter2@host:9000", "http://***@host:9000"),
            ("http:// /", "no valid host"),
        ] {
            let err = Endpoint::parse(&endpoint.into()).unwrap_err();
            assert!(err.contains(expected), "{endpoint}: {err}");
            assert!(!err.contains("hunter2"), "{endpoint}: {err}");
        }
    }
}
