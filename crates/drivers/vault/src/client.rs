//! The HTTP side: requests to the Vault API with the token, answers read within a size bound,
//! and failures as the contract's error kinds.

use std::time::{Duration, Instant};

use reqwest::header::HeaderValue;
use reqwest::{Method, StatusCode};
use sandloom_driverkit::sdk::{InfraError, InfraResult};
use sandloom_driverkit::{DriverError, Secret, SecretUrl};
use serde::Deserialize;
use tokio::sync::Mutex;
use zeroize::Zeroizing;

use crate::errors::{self, backend};
use crate::options::{Auth, Checked};

/// The token header. Its value is marked sensitive, so that the HTTP stack never prints it.
const TOKEN_HEADER: &str = "x-vault-token";
/// The namespace header (Vault Enterprise, `OpenBao` namespaces).
const NAMESPACE_HEADER: &str = "x-vault-namespace";

/// An answer: its status and its body, cleared from memory when dropped.
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) body: Zeroizing<Vec<u8>>,
}

/// Why a body was not read whole.
pub(crate) enum Read {
    /// It was above the bound.
    Oversized,
    Failed(InfraError),
}

impl From<InfraError> for Read {
    fn from(err: InfraError) -> Self {
        Self::Failed(err)
    }
}

/// A token obtained by `AppRole` login, and when to log in again.
struct Lease {
    token: HeaderValue,
    renew_at: Instant,
}

/// How requests are authenticated.
enum Login {
    Token(HeaderValue),
    AppRole {
        role_id: Secret<String>,
        secret_id: Secret<String>,
        mount: String,
        lease: Mutex<Option<Lease>>,
    },
}

/// The Vault API of one server, namespace and credentials.
pub(crate) struct Client {
    http: reqwest::Client,
    /// `<address>/v1/`.
    base: String,
    /// The address as configured, shown redacted in messages.
    address: SecretUrl,
    namespace: Option<HeaderValue>,
    login: Login,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

/// A header value that the HTTP stack never shows.
fn sensitive(value: &str) -> Result<HeaderValue, DriverError> {
    let mut header = HeaderValue::from_str(value)
        .map_err(|_| DriverError::new("a credential is not a valid header value"))?;
    header.set_sensitive(true);
    Ok(header)
}

impl Client {
    pub(crate) fn new(checked: &Checked, address: SecretUrl) -> Result<Self, DriverError> {
        let http = reqwest::Client::builder()
            .connect_timeout(checked.connect_timeout)
            .timeout(checked.request_timeout)
            // A redirect could carry the token to another host: Vault does not redirect reads.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("sandloom-driver-vault/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| DriverError::new(format!("cannot build the HTTP client: {e}")))?;
        let namespace = checked
            .namespace
            .as_deref()
            .map(HeaderValue::from_str)
            .transpose()
            .map_err(|_| DriverError::new("is not a valid header value").at_option("namespace"))?;
        let login = match &checked.auth {
            Auth::Token(token) => Login::Token(sensitive(token.expose())?),
            Auth::AppRole {
                role_id,
                secret_id,
                mount,
            } => Login::AppRole {
                role_id: role_id.clone(),
                secret_id: secret_id.clone(),
                mount: mount.clone(),
                lease: Mutex::new(None),
            },
        };
        Ok(Self {
            http,
            base: checked.base.clone(),
            address,
            namespace,
            login,
        })
    }

    /// The token for the next request: the configured one, or the `AppRole` login's, logging in
    /// again once two thirds of its time to live have passed.
    async fn token(&self) -> InfraResult<HeaderValue> {
        match &self.login {
            Login::Token(token) => Ok(token.clone()),
            Login::AppRole {
                role_id,
                secret_id,
                mount,
                lease,
            } => {
                let mut lease = lease.lock().await;
                if let Some(current) = lease.as_ref().filter(|l| Instant::now() < l.renew_at) {
                    return Ok(current.token.clone());
                }
                let renewed = self.approle_login(role_id, secret_id, mount).await?;
                // Neither id nor the token: when it logged in, and when it will again.
                tracing::debug!(
                    target: "sandloom_driver_vault",
                    auth_mount = %mount,
                    relogin_in_s = renewed.renew_at.saturating_duration_since(Instant::now()).as_secs(),
                    "secrets.vault logged in with AppRole"
                );
                let token = renewed.token.clone();
                *lease = Some(renewed);
                Ok(token)
            }
        }
    }

    /// `POST auth/<mount>/login` with the role id and secret id.
    async fn approle_login(
        &self,
        role_id: &Secret<String>,
        secret_id: &Secret<String>,
        mount: &str,
    ) -> InfraResult<Lease> {
        #[derive(Deserialize)]
        struct Login {
            auth: Option<LoginAuth>,
        }
        #[derive(Deserialize)]
        struct LoginAuth {
            client_token: Secret<String>,
            #[serde(default)]
            lease_duration: u64,
        }
        let body = Zeroizing::new(
            serde_json::to_vec(&serde_json::json!({
                "role_id": role_id.expose(),
                "secret_id": secret_id.expose(),
            }))
            .unwrap_or_default(),
        );
        let path = format!("auth/{mount}/login");
        let started = Instant::now();
        let mut request = self
            .http
            .post(format!("{}{path}", self.base))
            .body(body.to_vec());
        if let Some(namespace) = &self.namespace {
            request = request.header(NAMESPACE_HEADER, namespace.clone());
        }
        let answer = self
            .finish(&path, request, 64 * 1024)
            .await
            .map_err(|read| match read {
                Read::Oversized => backend(&path, "the login answer is too large"),
                Read::Failed(err) => err,
            })?;
        if !answer.status.is_success() {
            return Err(self.refused(&path, &answer));
        }
        let login: Login = serde_json::from_slice(&answer.body).map_err(|e| {
            backend(
                &path,
                &format!("the login answer is not what AppRole answers: {e}"),
            )
        })?;
        let auth = login
            .auth
            .ok_or_else(|| backend(&path, "the login answer carries no token"))?;
        let token = sensitive(auth.client_token.expose()).map_err(|_| {
            backend(
                &path,
                "the login answer's token is not a valid header value",
            )
        })?;
        // A token without a time to live (root-like) is kept; else log in again at 2/3 of it.
        let ttl = if auth.lease_duration == 0 {
            Duration::from_hours(365 * 24)
        } else {
            Duration::from_secs(auth.lease_duration) * 2 / 3
        };
        Ok(Lease {
            token,
            renew_at: started + ttl,
        })
    }

    /// Send `method` to `path` (relative to `/v1/`), with the token, and read the answer's body
    /// up to `limit` bytes.
    ///
    /// With `AppRole`, a 403 may mean the token ended before its time (revoked, or its time to
    /// live cut short by the server): the call logs in again and is sent once more, once. A
    /// second 403 is the answer (the policy refuses the path).
    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        limit: usize,
    ) -> Result<Answer, Read> {
        let token = self.token().await?;
        let answer = self.send(method.clone(), path, &token, limit).await?;
        if answer.status != StatusCode::FORBIDDEN || !self.forget(&token).await {
            return Ok(answer);
        }
        tracing::debug!(
            target: "sandloom_driver_vault",
            path,
            "secrets.vault's AppRole token was refused: logging in again, then trying once more"
        );
        let token = self.token().await?;
        self.send(method, path, &token, limit).await
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        token: &HeaderValue,
        limit: usize,
    ) -> Result<Answer, Read> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header(TOKEN_HEADER, token.clone());
        if let Some(namespace) = &self.namespace {
            request = request.header(NAMESPACE_HEADER, namespace.clone());
        }
        self.finish(path, request, limit).await
    }

    /// After `refused` was refused: with `AppRole`, drop the lease if it still holds that token
    /// (a concurrent call may have logged in again already), so that the next call logs in.
    /// Whether the login is `AppRole` (a configured token is never replaced).
    async fn forget(&self, refused: &HeaderValue) -> bool {
        let Login::AppRole { lease, .. } = &self.login else {
            return false;
        };
        let mut lease = lease.lock().await;
        if lease
            .as_ref()
            .is_some_and(|current| current.token == *refused)
        {
            *lease = None;
        }
        true
    }

    async fn finish(
        &self,
        path: &str,
        request: reqwest::RequestBuilder,
        limit: usize,
    ) -> Result<Answer, Read> {
        let mut response = request.send().await.map_err(|e| self.transport(path, &e))?;
        let status = response.status();
        if response
            .content_length()
            .is_some_and(|length| length > limit as u64)
        {
            return Err(Read::Oversized);
        }
        let mut body = Zeroizing::new(Vec::new());
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport(path, &e))?
        {
            if body.len() + chunk.len() > limit {
                return Err(Read::Oversized);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Answer { status, body })
    }

    /// A request that got no answer: `Timeout` when out of time, else `Unavailable`.
    fn transport(&self, path: &str, err: &reqwest::Error) -> InfraError {
        errors::transport(&self.address, path, err)
    }

    /// An answer that is not a success, as an error of the kind its status says. `NotFound`
    /// is left to the caller, who knows which secret it is about.
    pub(crate) fn refused(&self, path: &str, answer: &Answer) -> InfraError {
        errors::refused(&self.address, path, answer)
    }

    /// The address, redacted.
    pub(crate) fn address(&self) -> &SecretUrl {
        &self.address
    }
}
