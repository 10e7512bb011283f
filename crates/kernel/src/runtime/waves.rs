//! Startup with secret references: the `secrets` instances start first, in waves ordered by
//! the references between them, then the values are read into the options of the instances
//! that refer to them, which start last. The whole configuration is checked first, without
//! reading a value, so every problem that needs no value is reported at once, as without
//! references.

use std::collections::BTreeMap;

use sandloom_sdk_infra::{Infra, InfraBuilder, Requirement};

use super::{Kernel, Wave};
use crate::config::order_by_location;
use crate::error::{Problem, StartupError};
use crate::lifecycle::Attempts;
use crate::references::{self, Site, Stores, read_wave};
use crate::registry;
use crate::reload::Slot;
use crate::report::{Line, StartupReport};
use crate::resolve::{Inputs, resolve};

/// What becomes of the last wave, the instances that are not stores.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Last {
    /// Start it (`start`).
    Start,
    /// Read its values and resolve it with them, starting nothing (`check_reading_secrets`).
    ResolveOnly,
}

impl Kernel {
    /// Start the stores wave by wave, reading each wave's references from the stores before
    /// it, then the other instances (or only resolve them, for a check). On failure every
    /// driver attempted is stopped, in reverse order.
    pub(super) async fn start_in_waves(
        &self,
        lines: &mut Vec<Line>,
        attempts: &mut Attempts,
        slots: &mut Vec<Slot>,
        last: Last,
    ) -> Result<InfraBuilder, StartupError> {
        // Every problem that needs no value, at once, before anything starts.
        if let Err(problems) = self.resolve() {
            return Err(StartupError::new(problems));
        }
        let waves = references::instance_waves(&self.config);
        let count = waves.len();
        let mut stores = Stores::new();
        let mut infra = Infra::builder();
        for (index, keys) in waves.into_iter().enumerate() {
            let (wave, mut problems) = read_wave(
                &self.config,
                &keys,
                &stores,
                &BTreeMap::new(),
                self.config.start_timeout(),
            )
            .await;
            // The requirements of this wave's instances; one whose value could not be read is
            // reported as such, not as missing.
            let requirements: Vec<Requirement> = self
                .requirements
                .iter()
                .filter(|r| {
                    keys.iter()
                        .any(|(c, i)| c == r.capability() && i == r.instance())
                        && wave.config.instance(r.capability(), r.instance()).is_some()
                })
                .copied()
                .collect();
            let resolved = resolve(&Inputs {
                config: &wave.config,
                drivers: registry::drivers(),
                specs: registry::capabilities(),
                requirements: &requirements,
                linked: &self.linked,
            });
            let planned = match resolved {
                Ok(planned) if problems.is_empty() => planned,
                Ok(_) => return Err(self.fail(problems, attempts).await),
                Err(found) => {
                    problems.extend(found);
                    return Err(self.fail(problems, attempts).await);
                }
            };
            if index + 1 == count && last == Last::ResolveOnly {
                // Nothing is built: the lines get the features declared for the options here.
                lines.extend(
                    Self::lines_of(&planned)
                        .zip(&planned)
                        .map(|(mut line, plan)| {
                            line.features.clone_from(&plan.options.features);
                            line
                        }),
                );
                break;
            }
            lines.extend(Self::lines_of(&planned));
            let wave = Wave {
                lines,
                attempts,
                stores: Some(&mut stores),
                slots,
            };
            infra = match self.start_wave(planned, wave, infra).await {
                Ok(infra) => infra,
                Err(mut problems) => {
                    problems.extend(self.unread(&problems));
                    order_by_location(&mut problems, &self.config);
                    return Err(StartupError::new(problems));
                }
            };
        }
        Ok(infra)
    }

    /// Stop every driver attempted, and refuse with `problems` and the stops' own.
    async fn fail(&self, mut problems: Vec<Problem>, attempts: &mut Attempts) -> StartupError {
        problems.extend(attempts.stop_all().await);
        order_by_location(&mut problems, &self.config);
        StartupError::new(problems)
    }

    /// SANDLOOM-B025 for each reference to a store among `problems` that could not start.
    fn unread(&self, problems: &[Problem]) -> Vec<Problem> {
        let failed: BTreeMap<&str, &'static str> = problems
            .iter()
            .filter_map(|problem| match problem {
                Problem::Unusable {
                    capability,
                    instance,
                    ..
                } if capability == references::SECRETS => Some((instance.as_str(), problem.code())),
                _ => None,
            })
            .collect();
        let mut unread = Vec::new();
        for instance in self.config.instances() {
            for (option, reference) in instance.references() {
                let store = reference
                    .store
                    .rsplit('.')
                    .next()
                    .unwrap_or(&reference.store);
                if let Some(code) = failed.get(store) {
                    unread.push(references::problem(
                        Site {
                            capability: &instance.capability,
                            instance: &instance.instance,
                            option,
                        },
                        (reference.store.clone(), reference.secret.clone()),
                        reference.location.clone(),
                        references::ReferenceReason::StoreFailed { code },
                    ));
                }
            }
        }
        unread
    }

    /// [`check`](Self::check), then also start the `secrets` stores `INFRA` refers to, read
    /// each referenced secret (proving that it exists and that the option accepts it) and stop
    /// them again. No other driver is constructed or started, and no value is shown.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // This example links no driver crate, so the store is refused (SANDLOOM-B020).
    /// let text = "[secrets.default]\ndriver = \"env\"\nprefix = \"APP_\"\n";
    /// let config = InfraConfig::from_toml_str(text, "infra.toml").unwrap();
    /// let err = Kernel::new(config, sandloom_kernel::link_drivers!()).check_reading_secrets().await.unwrap_err();
    /// assert_eq!(err.codes(), ["SANDLOOM-B020"]);
    /// # }
    /// ```
    ///
    /// # Errors
    /// What [`check`](Self::check) reports; then each reference that cannot be read
    /// (SANDLOOM-B025), with the problems of stores that could not start, and of options that
    /// refuse the values read.
    pub async fn check_reading_secrets(&self) -> Result<StartupReport, StartupError> {
        if tokio::runtime::Handle::try_current().is_err() || !crate::lifecycle::timers_enabled() {
            return Err(StartupError::new(vec![Problem::NoRuntime]));
        }
        let mut report = self.lines();
        let mut attempts = Attempts {
            drivers: Vec::new(),
            stop_timeout: self.config.stop_timeout(),
        };
        let started = self
            .start_in_waves(
                &mut report.lines,
                &mut attempts,
                &mut Vec::new(),
                Last::ResolveOnly,
            )
            .await;
        let stopped = attempts.stop_all().await;
        match started {
            Err(err) => Err(StartupError::check(err.problems().to_vec())),
            Ok(_) if !stopped.is_empty() => Err(StartupError::check(stopped)),
            Ok(_) => Ok(report.report()),
        }
    }
}
