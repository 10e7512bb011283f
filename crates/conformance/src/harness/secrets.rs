//! The secrets obligation, shared by every kit: the secrets the kit plants itself in every
//! `writeOnly` option of the driver's schema (see `plant.rs`), and the values a driver author
//! declares with [`Kit::secrets`](crate::Kit::secrets), never show in the options' or the
//! driver's `Debug`, nor in the `Display` or `Debug` of an error the kit provokes.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use sandloom_sdk_infra::InfraError;

use sandloom_driverkit::Driver;

use super::build::{NotMade, make};
use super::instance::Instance;
use super::plant::Plan;
use super::request::{KitRequest, OptionsFn};
use super::secret_rules::{Built, Planted, SecretRules};
use super::shared::ServeFn;

/// How long the start of an instance pointed at an unreachable address may take to fail.
const UNREACHABLE_START_LIMIT: Duration = Duration::from_secs(20);

/// The kit's secrets and the means to check them.
pub(crate) struct KitSecrets<T: Driver> {
    /// Declared with `Kit::secrets`.
    pub(crate) values: Vec<String>,
    pub(crate) debug_driver: Option<fn(&T) -> String>,
    pub(crate) debug_options: Option<fn(&T::Options) -> String>,
    pub(crate) options: Arc<OptionsFn<T>>,
    pub(crate) serve: ServeFn<T>,
    /// The contract's name, to make instances as the kernel does.
    pub(crate) contract: &'static str,
    /// The secrets the kit plants, from the options' schema (`None`: nothing `writeOnly`).
    pub(crate) plan: Option<Plan>,
}

impl<T: Driver> Clone for KitSecrets<T> {
    fn clone(&self) -> Self {
        Self {
            values: self.values.clone(),
            debug_driver: self.debug_driver,
            debug_options: self.debug_options,
            options: Arc::clone(&self.options),
            serve: self.serve,
            contract: self.contract,
            plan: self.plan.clone(),
        }
    }
}

impl<T: Driver> KitSecrets<T> {
    /// Nothing declared, nothing planted.
    pub(crate) fn none(
        options: Arc<OptionsFn<T>>,
        serve: ServeFn<T>,
        contract: &'static str,
    ) -> Self {
        Self {
            values: Vec::new(),
            debug_driver: None,
            debug_options: None,
            options,
            serve,
            contract,
            plan: None,
        }
    }

    /// Make and start an instance from `options`: what it showed on the way, and itself if it
    /// started.
    async fn build(&self, options: T::Options) -> Built<T> {
        let mut shown = Vec::new();
        if let Some(show) = self.debug_options {
            shown.push(("the Debug of the options".to_owned(), show(&options)));
        }
        let driver = match make(self.contract, self.serve, options) {
            Ok(made) => made.driver,
            Err(not_made) => {
                match &not_made {
                    NotMade::Invalid(error) => {
                        shown.extend(error_texts("the error of `validate`", error));
                    }
                    NotMade::Construction(error) => {
                        shown.extend(error_texts("the error of `from_options`", error));
                    }
                    NotMade::Refused(_) => {}
                }
                return Built {
                    shown,
                    started: None,
                };
            }
        };
        match tokio::time::timeout(UNREACHABLE_START_LIMIT, driver.start()).await {
            Ok(Ok(())) => {
                return Built {
                    shown,
                    started: Some(driver),
                };
            }
            Ok(Err(error)) => shown.extend(error_texts("the error of `start`", &error)),
            // Still trying: nothing shown yet, and nothing to probe.
            Err(_) => {}
        }
        // `stop` after a failed or timed-out start releases what `start` acquired (a reconnect
        // loop, say), and what its error shows is checked too.
        if let Ok(Err(error)) = tokio::time::timeout(UNREACHABLE_START_LIMIT, driver.stop()).await {
            shown.extend(error_texts("the error of `stop`", &error));
        }
        Built {
            shown,
            started: None,
        }
    }
}

impl<T: Driver> SecretRules<T> for KitSecrets<T> {
    fn values(&self) -> &[String] {
        &self.values
    }

    fn show_driver(&self, driver: &T) -> Option<String> {
        self.debug_driver.map(|show| show(driver))
    }

    fn show_options(&self, request: &KitRequest) -> Option<String> {
        let show = self.debug_options?;
        Some(show(&(self.options)(request)))
    }

    fn build_unreachable(&self, request: KitRequest) -> BoxFuture<'_, Built<T>> {
        Box::pin(async move { self.build((self.options)(&request)).await })
    }

    fn build_planted(&self) -> Option<BoxFuture<'_, Planted<T>>> {
        let plan = self.plan.as_ref()?;
        Some(Box::pin(async move {
            let secrets: Vec<(String, String)> = plan
                .secrets
                .iter()
                .map(|(option, value)| {
                    (
                        format!("the secret the kit planted in {option}"),
                        value.clone(),
                    )
                })
                .collect();
            let built = match serde_json::from_value::<T::Options>(plan.document.clone()) {
                Ok(options) => Ok(self.build(options).await),
                Err(error) => Err(redacted(&secrets, &error.to_string())),
            };
            Planted { secrets, built }
        }))
    }
}

/// The `Display` and `Debug` of `error` and of every error in its chain, each named.
fn error_texts(what: &str, error: &(dyn std::error::Error + 'static)) -> Vec<(String, String)> {
    let mut texts = vec![
        (format!("the Display of {what}"), error.to_string()),
        (format!("the Debug of {what}"), format!("{error:?}")),
    ];
    let mut source = error.source();
    while let Some(cause) = source {
        texts.push((
            format!("the Display of a cause of {what}"),
            cause.to_string(),
        ));
        source = cause.source();
    }
    texts
}

/// `text` with every secret of `secrets` replaced by `<secret>`.
fn redacted(secrets: &[(String, String)], text: &str) -> String {
    secrets.iter().fold(text.to_owned(), |shown, (_, secret)| {
        shown.replace(secret, "<secret>")
    })
}

/// The first of `secrets` (each named) that `text` shows, by its name (the secret itself is not
/// repeated).
fn leak(secrets: &[(String, String)], what: &str, text: &str) -> Result<(), String> {
    match secrets
        .iter()
        .find(|(_, secret)| text.contains(secret.as_str()))
    {
        None => Ok(()),
        Some((name, _)) => Err(format!(
            "{name} shows in {what}: {}",
            redacted(secrets, text)
        )),
    }
}

/// Check every error `probe` provokes from `driver`.
async fn probe_errors<T, P>(
    secrets: &[(String, String)],
    driver: &T,
    probe: &P,
    when: &str,
) -> Result<(), String>
where
    P: for<'a> Fn(&'a T) -> BoxFuture<'a, Vec<Option<InfraError>>>,
{
    for error in probe(driver).await.into_iter().flatten() {
        for (what, text) in error_texts(&format!("an error {when} ({})", error.kind()), &error) {
            leak(secrets, &what, &text)?;
        }
    }
    Ok(())
}

/// What `built` showed, and, when it started, its `Debug`, the errors `probe` provokes from it
/// and those of its `stop`, checked for `secrets`. `which` names the instance and `driver` the
/// driver in failures ("an instance pointed at …", "a driver pointed at …").
async fn check_built<T, P>(
    rules: &dyn SecretRules<T>,
    secrets: &[(String, String)],
    built: Built<T>,
    probe: &P,
    (which, driver_name): (&str, &str),
) -> Result<(), String>
where
    T: Driver,
    P: for<'a> Fn(&'a T) -> BoxFuture<'a, Vec<Option<InfraError>>>,
{
    for (what, text) in &built.shown {
        leak(secrets, &format!("{what} ({which})"), text)?;
    }
    if let Some(driver) = built.started {
        if let Some(text) = rules.show_driver(&driver) {
            leak(secrets, &format!("the Debug of {driver_name}"), &text)?;
        }
        let probed = probe_errors(secrets, &*driver, probe, &format!("of {driver_name}")).await;
        let stopped = driver.stop().await;
        probed?;
        if let Err(error) = stopped {
            for (what, text) in error_texts("the error of `stop`", &error) {
                leak(secrets, &format!("{what} ({which})"), &text)?;
            }
        }
    }
    Ok(())
}

impl<T: Driver> Instance<T> {
    /// The secrets obligation, for a kit to list among its obligations with the errors its
    /// contract can provoke. Two sets of secrets must not show in the options' `Debug`, the
    /// driver's `Debug`, nor in the `Display` or `Debug` (or a cause's `Display`) of an error of
    /// `validate`, `from_options`, `start`, `stop` or one `probe` provokes:
    ///
    /// - **the kit's own**, with no declaration: when the kit was made by a test macro
    ///   (`cache_conformance!`, …), it reads the driver's options JSON Schema, plants a value of
    ///   its own in every `writeOnly` option (what `Secret` and `SecretUrl` are, nested ones
    ///   and map values included; an option whose description names an address, `redis://…`,
    ///   gets one with the value as its password and port 1 of `127.0.0.1`), builds an instance
    ///   from those options alone (a required option without a default gets a filler of its
    ///   type) and checks everything it shows. Options without a `writeOnly` option, or without
    ///   a schema, add nothing;
    /// - **the declared ones** ([`Kit::secrets`](crate::Kit::secrets)), on this instance, after
    ///   its `stop`, and on a second instance the kit builds with [`KitRequest::unreachable`]
    ///   set: for the secrets the kit cannot plant in a working shape.
    ///
    /// # Errors
    /// Where a secret showed (the secret itself replaced by `<secret>`).
    ///
    /// ```
    /// use sandloom_conformance::Instance;
    /// use sandloom_driverkit::cache::CacheProvider;
    ///
    /// // An obligation of a kit: the errors the contract can provoke, checked for secrets.
    /// async fn secrets_never_show<T: CacheProvider>(i: &Instance<T>, _: &()) -> Result<(), String> {
    ///     i.secrets_never_show(|cache| Box::pin(async move {
    ///         vec![cache.get("").await.err(), cache.delete("").await.err()]
    ///     }))
    ///     .await
    /// }
    /// ```
    pub async fn secrets_never_show<P>(&self, probe: P) -> Result<(), String>
    where
        P: for<'a> Fn(&'a T) -> BoxFuture<'a, Vec<Option<InfraError>>> + Send + Sync,
    {
        let rules = Arc::clone(&self.secrets);
        let declared: Vec<(String, String)> = rules
            .values()
            .iter()
            .enumerate()
            .map(|(n, value)| (format!("declared secret #{}", n + 1), value.clone()))
            .collect();
        if !declared.is_empty() {
            self.declared_never_show(&*rules, &declared, &probe).await?;
        }
        if let Some(planted) = rules.build_planted() {
            let Planted { secrets, built } = planted.await;
            let built = built.map_err(|error| {
                format!(
                    "the kit could not build options with its planted secrets from the options' \
                     JSON Schema: {error}"
                )
            })?;
            let names = (
                "the instance the kit built with its planted secrets",
                "the driver the kit built with its planted secrets",
            );
            check_built(&*rules, &secrets, built, &probe, names).await?;
        }
        Ok(())
    }

    /// The declared values, on this instance, after its `stop`, and on an instance pointed at
    /// an unreachable address.
    async fn declared_never_show<P>(
        &self,
        rules: &dyn SecretRules<T>,
        declared: &[(String, String)],
        probe: &P,
    ) -> Result<(), String>
    where
        P: for<'a> Fn(&'a T) -> BoxFuture<'a, Vec<Option<InfraError>>> + Send + Sync,
    {
        if let Some(text) = rules.show_options(&self.request) {
            leak(declared, "the Debug of the options", &text)?;
        }
        if let Some(text) = rules.show_driver(&self.driver) {
            leak(declared, "the Debug of the started driver", &text)?;
        }
        probe_errors(declared, &*self.driver, probe, "of the started driver").await?;
        if let Err(error) = self.driver.stop().await {
            for (what, text) in error_texts("the error of `stop`", &error) {
                leak(declared, &what, &text)?;
            }
        }
        probe_errors(declared, &*self.driver, probe, "after stop").await?;
        let mut request = self.request.clone();
        request.namespace.push_str("-unreachable");
        request.unreachable = true;
        let built = rules.build_unreachable(request).await;
        let names = (
            "an instance pointed at an unreachable address",
            "a driver pointed at an unreachable address",
        );
        check_built(rules, declared, built, probe, names).await
    }
}
