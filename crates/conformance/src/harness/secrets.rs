//! The secrets obligation, shared by every kit: the values a driver author declares secret with
//! [`Kit::secrets`](crate::Kit::secrets) never show in the options' or the driver's `Debug`, nor
//! in the `Display` or `Debug` of an error the kit provokes.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use sandloom_sdk_infra::InfraError;

use sandloom_driverkit::Driver;

use super::build::{NotMade, make};
use super::instance::Instance;
use super::request::{KitRequest, OptionsFn};
use super::secret_rules::{Built, SecretRules};
use super::shared::ServeFn;

/// How long the start of an instance pointed at an unreachable address may take to fail.
const UNREACHABLE_START_LIMIT: Duration = Duration::from_secs(20);

/// The kit's secrets and the means to check them.
pub(crate) struct KitSecrets<T: Driver> {
    pub(crate) values: Vec<String>,
    pub(crate) debug_driver: Option<fn(&T) -> String>,
    pub(crate) debug_options: Option<fn(&T::Options) -> String>,
    pub(crate) options: Arc<OptionsFn<T>>,
    pub(crate) serve: ServeFn<T>,
    /// The contract's name, to make instances as the kernel does.
    pub(crate) contract: &'static str,
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
        Box::pin(async move {
            let mut shown = Vec::new();
            let options = (self.options)(&request);
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
                Ok(Ok(())) => Built {
                    shown,
                    started: Some(driver),
                },
                Ok(Err(error)) => {
                    shown.extend(error_texts("the error of `start`", &error));
                    Built {
                        shown,
                        started: None,
                    }
                }
                // Still trying: nothing shown yet, and nothing to probe.
                Err(_) => Built {
                    shown,
                    started: None,
                },
            }
        })
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

/// The first declared secret `text` shows, by its number (the secret itself is not repeated).
fn leak(values: &[String], what: &str, text: &str) -> Result<(), String> {
    match values
        .iter()
        .position(|secret| text.contains(secret.as_str()))
    {
        None => Ok(()),
        Some(n) => {
            let shown = values.iter().fold(text.to_owned(), |shown, secret| {
                shown.replace(secret, "<secret>")
            });
            Err(format!(
                "declared secret #{} shows in {what}: {shown}",
                n + 1
            ))
        }
    }
}

/// Check every error `probe` provokes from `driver`.
async fn probe_errors<T, P>(
    values: &[String],
    driver: &T,
    probe: &P,
    when: &str,
) -> Result<(), String>
where
    P: for<'a> Fn(&'a T) -> BoxFuture<'a, Vec<Option<InfraError>>>,
{
    for error in probe(driver).await.into_iter().flatten() {
        for (what, text) in error_texts(&format!("an error {when} ({})", error.kind()), &error) {
            leak(values, &what, &text)?;
        }
    }
    Ok(())
}

impl<T: Driver> Instance<T> {
    /// The secrets obligation, for a kit to list among its obligations with the errors its
    /// contract can provoke: the values declared with [`Kit::secrets`](crate::Kit::secrets)
    /// must not show in the options' `Debug`, the driver's `Debug`, nor in the `Display` or
    /// `Debug` (or a cause's `Display`) of an error `probe` provokes, on this instance, after
    /// its `stop`, and on a second instance the kit builds with
    /// [`KitRequest::unreachable`] set (its `validate`, `from_options` and `start` errors, then,
    /// if it starts anyway, `probe`'s). Nothing to check when no secret was declared.
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
        let values = rules.values();
        if values.is_empty() {
            return Ok(());
        }
        if let Some(text) = rules.show_options(&self.request) {
            leak(values, "the Debug of the options", &text)?;
        }
        if let Some(text) = rules.show_driver(&self.driver) {
            leak(values, "the Debug of the started driver", &text)?;
        }
        probe_errors(values, &*self.driver, &probe, "of the started driver").await?;
        if let Err(error) = self.driver.stop().await {
            for (what, text) in error_texts("the error of `stop`", &error) {
                leak(values, &what, &text)?;
            }
        }
        probe_errors(values, &*self.driver, &probe, "after stop").await?;
        let mut request = self.request.clone();
        request.namespace.push_str("-unreachable");
        request.unreachable = true;
        let built = rules.build_unreachable(request).await;
        for (what, text) in &built.shown {
            leak(
                values,
                &format!("{what} (an instance pointed at an unreachable address)"),
                text,
            )?;
        }
        if let Some(driver) = built.started {
            if let Some(text) = rules.show_driver(&driver) {
                leak(
                    values,
                    "the Debug of a driver pointed at an unreachable address",
                    &text,
                )?;
            }
            let probed = probe_errors(
                values,
                &*driver,
                &probe,
                "of a driver pointed at an unreachable address",
            )
            .await;
            let _ = driver.stop().await;
            probed?;
        }
        Ok(())
    }
}

/// No secrets declared: nothing to check.
pub(crate) struct NoSecrets;

impl<T> SecretRules<T> for NoSecrets {
    fn values(&self) -> &[String] {
        &[]
    }

    fn show_driver(&self, _: &T) -> Option<String> {
        None
    }

    fn show_options(&self, _: &KitRequest) -> Option<String> {
        None
    }

    fn build_unreachable(&self, _: KitRequest) -> BoxFuture<'_, Built<T>> {
        Box::pin(async {
            Built {
                shown: Vec::new(),
                started: None,
            }
        })
    }
}
