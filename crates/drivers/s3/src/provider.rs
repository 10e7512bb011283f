//! The `objectstore.s3` driver: [`S3ObjectStore`].

use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::SystemTime;

use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::list::{PaginatedListOptions, PaginatedListStore as _};
use object_store::{
    BackoffConfig, ClientOptions, ObjectStore as _, ObjectStoreExt as _, PutMode, PutOptions,
    PutPayload, RetryConfig, UpdateVersion,
};
use sandloom_driverkit::objectstore::{
    CONDITIONAL_PUT, DEFAULT_PAGE_SIZE, ETAG, ListOptions, ListPage, NAME, ObjectMeta,
    ObjectStoreOps, ObjectStoreProvider, PutCondition,
};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult};
use sandloom_driverkit::{Driver, DriverError, Health, Version};

use crate::errors::{
    Context, infra_error, server_answered_unavailable, why_the_bucket_is_unusable,
};
use crate::keys::KeySpace;
use crate::options::{S3ObjectStoreOptions, Settings};

/// How many empty pages announcing more a listing follows before it gives up.
const EMPTY_PAGES_FOLLOWED: usize = 100;

/// Where the driver is in its life.
enum State {
    /// Built, not started: no client yet (building one is left to `start`).
    Idle,
    Running(Arc<AmazonS3>),
    Stopped,
}

/// An [`ObjectStore`](sandloom_driverkit::objectstore::ObjectStore) on an S3 bucket of AWS or of any S3-compatible server, through the
/// `object_store` crate.
///
/// Keys are stored as `{prefix}/{key}` in the bucket (see [`S3ObjectStoreOptions::prefix`]).
/// A key that [`validate_key`](sandloom_driverkit::objectstore::validate_key) refuses, that
/// holds a control character, or that exceeds S3's 1024 bytes with the prefix answers
/// `InvalidInput`; every other key is stored exactly as given. Listings are in ascending byte
/// order (S3's order), paged with S3's `start-after` and `max-keys`.
///
/// Features: `etag` (S3's entity tag, quoted, as S3 sends it), always; `conditional_put` when
/// [`S3ObjectStoreOptions::conditional_put`] is on: `If-None-Match: *` for
/// [`PutCondition::IfAbsent`] and `If-Match` for [`PutCondition::IfMatch`], a failed condition
/// answering `Conflict`. The server must honour both atomically (AWS S3 does; moto checks them
/// but not atomically, so it is off by default).
///
/// `start` builds the HTTP client and lists at most one key to check that the bucket answers
/// within `connect_timeout_ms` (an error names the endpoint and the bucket, never a secret);
/// before `start` operations answer `Unavailable`. `stop` drops the client, and operations then
/// answer `Stopped`. Errors map as: missing object `NotFound`, failed condition `Conflict`,
/// connection refused or lost and 5xx/429 answers `Unavailable` (after the configured retries),
/// HTTP timeouts `Timeout`, other refusals `Backend`.
///
/// ```no_run
/// use sandloom_driver_s3::{S3ObjectStore, S3ObjectStoreOptions};
/// use sandloom_driverkit::Driver;
/// use sandloom_driverkit::objectstore::ObjectStore;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = S3ObjectStore::from_options(S3ObjectStoreOptions {
///     endpoint: Some("http://127.0.0.1:5077".into()),
///     bucket: "sandloom-test".into(),
///     access_key_id: Some("test".into()),
///     secret_access_key: Some("test".into()),
///     ..Default::default()
/// })?;
/// store.start().await?;
/// store.put("reports/1.csv", "a,b\n".into()).await?;
/// assert_eq!(store.get("reports/1.csv").await?, "a,b\n");
/// store.stop().await?;
/// # Ok(())
/// # }
/// ```
pub struct S3ObjectStore {
    settings: Settings,
    keys: KeySpace,
    state: RwLock<State>,
}

impl fmt::Debug for S3ObjectStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &*self.state.read().unwrap_or_else(PoisonError::into_inner) {
            State::Idle => "idle",
            State::Running(_) => "running",
            State::Stopped => "stopped",
        };
        f.debug_struct("S3ObjectStore")
            .field("settings", &self.settings)
            .field("keys", &self.keys)
            .field("state", &state)
            .finish()
    }
}

/// The `object_store` client for `settings`, with `retry` as its retry policy and `timeout`
/// for each request. Builds an HTTP client: no network I/O.
fn client(
    settings: &Settings,
    retry: RetryConfig,
    timeout: std::time::Duration,
) -> Result<AmazonS3, object_store::Error> {
    let options = ClientOptions::new()
        .with_allow_http(settings.allow_http)
        .with_connect_timeout(settings.connect_timeout)
        .with_timeout(timeout);
    let mut builder = AmazonS3Builder::new()
        .with_bucket_name(&settings.bucket)
        .with_region(&settings.region)
        .with_virtual_hosted_style_request(settings.virtual_hosted)
        .with_client_options(options)
        .with_retry(retry);
    if let Some(endpoint) = &settings.client_endpoint {
        builder = builder.with_endpoint(endpoint);
    }
    builder = match &settings.credentials {
        Some(credentials) => {
            let builder = builder
                .with_access_key_id(&credentials.access_key_id)
                .with_secret_access_key(credentials.secret_access_key.expose());
            match &credentials.session_token {
                Some(token) => builder.with_token(token.expose()),
                None => builder,
            }
        }
        // Unsigned: no ambient credential lookup (which would call instance metadata services).
        None => builder.with_skip_signature(true),
    };
    builder.build()
}

fn retry_config(settings: &Settings) -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: settings.initial_backoff,
            max_backoff: settings.max_backoff,
            base: 2.0,
        },
        max_retries: settings.max_retries,
        retry_timeout: settings.retry_timeout,
    }
}

fn meta_of(key: &str, meta: &object_store::ObjectMeta) -> ObjectMeta {
    let mut out =
        ObjectMeta::new(key, meta.size).with_last_modified(SystemTime::from(meta.last_modified));
    if let Some(etag) = &meta.e_tag {
        out = out.with_etag(etag.clone());
    }
    out
}

impl S3ObjectStore {
    /// The client while running; `Stopped` after `stop`, `Unavailable` before `start`.
    fn client(&self) -> InfraResult<Arc<AmazonS3>> {
        match &*self.state.read().unwrap_or_else(PoisonError::into_inner) {
            State::Running(client) => Ok(Arc::clone(client)),
            State::Stopped => Err(InfraError::stopped(NAME)),
            State::Idle => Err(InfraError::unavailable(
                NAME,
                "the driver has not been started: call `start` first",
            )),
        }
    }

    fn error(&self, err: object_store::Error, operation: &str, key: &str) -> InfraError {
        infra_error(
            err,
            &Context { operation, key },
            &self.settings.shown_endpoint,
            &self.settings.bucket,
        )
    }

    /// Where the bucket is, for messages: `bucket `b` at http://…`.
    fn place(&self) -> String {
        format!(
            "S3 bucket `{}` at {}",
            self.settings.bucket, self.settings.shown_endpoint
        )
    }

    async fn write(&self, key: &str, data: Bytes, mode: PutMode) -> InfraResult<ObjectMeta> {
        let client = self.client()?;
        let path = self.keys.path(key)?;
        let size = data.len() as u64;
        let operation = if mode == PutMode::Overwrite {
            "put"
        } else {
            "put_if"
        };
        let result = client
            .put_opts(&path, PutPayload::from(data), PutOptions::from(mode))
            .await
            .map_err(|err| self.error(err, operation, key))?;
        let mut meta = ObjectMeta::new(key, size);
        if let Some(etag) = result.e_tag {
            meta = meta.with_etag(etag);
        }
        Ok(meta)
    }

    /// One listing request; `(objects, continuation token)`.
    async fn list_request(
        &self,
        client: &AmazonS3,
        prefix: &str,
        options: PaginatedListOptions,
        shown_prefix: &str,
    ) -> InfraResult<(Vec<object_store::ObjectMeta>, Option<String>)> {
        let page = client
            .list_paginated(Some(prefix), options)
            .await
            .map_err(|err| self.error(err, "list", shown_prefix))?;
        Ok((page.result.objects, page.page_token))
    }

    /// Check the bucket answers a one-key listing within the connect timeout, on a client that
    /// does not retry connection errors (a refused connection fails at once); a 5xx or 429
    /// answer is retried, up to `max_retries` times, within the same time.
    async fn probe(&self) -> Result<(), DriverError> {
        let deadline = self.settings.connect_timeout;
        let no_retries = RetryConfig {
            max_retries: 0,
            ..retry_config(&self.settings)
        };
        let probe = client(&self.settings, no_retries, deadline).map_err(|err| {
            DriverError::new(format!(
                "cannot configure a client for {}: {err}",
                self.place()
            ))
            .with_source(err)
        })?;
        let listing = async {
            let mut backoff = self.settings.initial_backoff;
            let mut attempts = 0;
            loop {
                let options = PaginatedListOptions {
                    max_keys: Some(1),
                    ..Default::default()
                };
                match probe
                    .list_paginated(Some(self.keys.prefix()), options)
                    .await
                {
                    // A server that answers 5xx is there: it may be busy for a moment.
                    Err(err)
                        if attempts < self.settings.max_retries
                            && server_answered_unavailable(&err) =>
                    {
                        attempts += 1;
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(self.settings.max_backoff);
                    }
                    outcome => return outcome,
                }
            }
        };
        match tokio::time::timeout(deadline, listing).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(err)) => {
                let why = why_the_bucket_is_unusable(&err, deadline.as_millis());
                Err(
                    DriverError::new(format!("cannot use {}: {why}: {err}", self.place()))
                        .with_source(err),
                )
            }
            Err(_) => Err(DriverError::new(format!(
                "cannot use {}: no answer within the connect timeout ({} ms)",
                self.place(),
                deadline.as_millis()
            ))),
        }
    }
}

impl ObjectStoreOps for S3ObjectStore {
    async fn put(&self, key: &str, data: Bytes) -> InfraResult<ObjectMeta> {
        self.write(key, data, PutMode::Overwrite).await
    }

    async fn get(&self, key: &str) -> InfraResult<Bytes> {
        let client = self.client()?;
        let path = self.keys.path(key)?;
        let result = client
            .get(&path)
            .await
            .map_err(|err| self.error(err, "get", key))?;
        result
            .bytes()
            .await
            .map_err(|err| self.error(err, "get", key))
    }

    async fn head(&self, key: &str) -> InfraResult<ObjectMeta> {
        let client = self.client()?;
        let path = self.keys.path(key)?;
        let meta = client
            .head(&path)
            .await
            .map_err(|err| self.error(err, "head", key))?;
        Ok(meta_of(key, &meta))
    }

    async fn delete(&self, key: &str) -> InfraResult<()> {
        let client = self.client()?;
        let path = self.keys.path(key)?;
        match client.delete(&path).await {
            // S3 answers 204 for a missing key; a compatible server may say 404: same outcome.
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(err) => Err(self.error(err, "delete", key)),
        }
    }

    async fn list(&self, prefix: &str, options: ListOptions) -> InfraResult<ListPage> {
        let client = self.client()?;
        let full_prefix = self.keys.list_prefix(prefix)?;
        let limit = match options.limit {
            None => DEFAULT_PAGE_SIZE,
            Some(0) => {
                return Err(InfraError::invalid_input(
                    NAME,
                    "the list limit must be at least 1",
                ));
            }
            Some(limit) => limit,
        };
        let mut request = PaginatedListOptions {
            offset: options
                .start_after
                .as_deref()
                .map(|after| self.keys.start_after(after)),
            max_keys: Some(limit),
            ..Default::default()
        };
        // A server may end a page early, even with no objects, and still announce more:
        // follow its token until a page has objects or nothing follows (within reason).
        for _ in 0..EMPTY_PAGES_FOLLOWED {
            let (objects, token) = self
                .list_request(&client, &full_prefix, request.clone(), prefix)
                .await?;
            let page: Vec<ObjectMeta> = objects
                .iter()
                .filter_map(|meta| Some(meta_of(self.keys.key_of(&meta.location)?, meta)))
                .take(limit)
                .collect();
            match token {
                Some(token) if page.is_empty() => request.page_token = Some(token),
                Some(_) => {
                    let next = page.last().map(|meta| meta.key.clone());
                    return Ok(ListPage::new(page, next));
                }
                None => return Ok(ListPage::new(page, None)),
            }
        }
        Err(InfraError::new(
            ErrorKind::Backend,
            NAME,
            format!(
                "list {prefix:?}: {} answered {EMPTY_PAGES_FOLLOWED} empty pages in a row, each \
                 announcing more",
                self.place()
            ),
        ))
    }

    async fn put_if(
        &self,
        key: &str,
        data: Bytes,
        condition: PutCondition,
    ) -> InfraResult<ObjectMeta> {
        if !self.settings.conditional_put {
            // Stopped first, as every operation; then the feature gate, before any key check.
            self.client()?;
            return Err(InfraError::unsupported(NAME, "put_if", CONDITIONAL_PUT));
        }
        let mode = match condition {
            PutCondition::IfAbsent => PutMode::Create,
            PutCondition::IfMatch(etag) => PutMode::Update(UpdateVersion {
                e_tag: Some(etag),
                version: None,
            }),
            other => {
                return Err(InfraError::new(
                    ErrorKind::Unsupported,
                    NAME,
                    format!("the put condition {other:?} is not supported"),
                ));
            }
        };
        self.write(key, data, mode).await
    }
}

impl Driver for S3ObjectStore {
    type Options = S3ObjectStoreOptions;

    fn supported_features() -> &'static [&'static str] {
        &[ETAG, CONDITIONAL_PUT]
    }

    fn features_for(options: &S3ObjectStoreOptions) -> Vec<&'static str> {
        if options.conditional_put {
            vec![ETAG, CONDITIONAL_PUT]
        } else {
            vec![ETAG]
        }
    }

    fn validate(options: &S3ObjectStoreOptions) -> Result<(), DriverError> {
        options
            .settings()
            .map(drop)
            .map_err(DriverError::about_option_it_names)
    }

    fn from_options(options: S3ObjectStoreOptions) -> Result<Self, DriverError> {
        let settings = options.settings()?;
        Ok(Self {
            keys: KeySpace::new(settings.key_prefix.clone()),
            settings,
            state: RwLock::new(State::Idle),
        })
    }

    async fn start(&self) -> Result<(), DriverError> {
        self.probe().await?;
        let client = client(
            &self.settings,
            retry_config(&self.settings),
            self.settings.request_timeout,
        )
        .map_err(|err| {
            DriverError::new(format!(
                "cannot configure a client for {}: {err}",
                self.place()
            ))
            .with_source(err)
        })?;
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        if matches!(*state, State::Stopped) {
            return Err(DriverError::new(format!(
                "{} was stopped: a stopped driver does not start again",
                self.place()
            )));
        }
        *state = State::Running(Arc::new(client));
        tracing::debug!(endpoint = %self.settings.shown_endpoint, bucket = %self.settings.bucket,
            "objectstore.s3 started");
        Ok(())
    }

    async fn stop(&self) -> Result<(), DriverError> {
        // Dropping the last handle closes the client's pooled connections.
        *self.state.write().unwrap_or_else(PoisonError::into_inner) = State::Stopped;
        Ok(())
    }

    async fn health(&self) -> Health {
        let client = match self.client() {
            Ok(client) => client,
            Err(err) => return Health::Unhealthy(err.to_string()),
        };
        let options = PaginatedListOptions {
            max_keys: Some(1),
            ..Default::default()
        };
        match self
            .list_request(&client, self.keys.prefix(), options, "")
            .await
        {
            Ok(_) => Health::Healthy,
            Err(err) => Health::Unhealthy(err.to_string()),
        }
    }
}

impl ObjectStoreProvider for S3ObjectStore {
    const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
}
