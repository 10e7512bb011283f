//! A kit's self-test against its deliberately broken drivers, written once for every kit.

use std::fmt;

use sandloom_driverkit::Driver;

use super::kit::Kit;

impl<T: Driver, S: Send + Sync + 'static> Kit<T, S> {
    /// The self-test of a kit against deliberately broken drivers, in one call: `cases` pairs
    /// each flaw with the obligation that must catch it, and `kit(flaw)` makes the kit for the
    /// driver that has that flaw.
    ///
    /// Every case runs on a thread of its own, all at once (most wait out timeouts). Then the
    /// call panics listing every flaw that passed the obligation that should have caught it,
    /// and every obligation of the kit that no case proves can fail (an obligation that cannot
    /// fail proves nothing).
    ///
    /// # Panics
    /// When a flaw is not caught, an obligation is caught by no case, or `cases` is empty.
    ///
    /// ```
    /// # use sandloom_conformance::{Kit, Obligation};
    /// # use sandloom_driverkit::{Driver, DriverError, Version};
    /// # use sandloom_driverkit::cache::{CacheOps, CacheCapability, CacheProvider};
    /// # use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
    /// /// A cache that forgets everything, or (`Flaw::RefusesAll`) refuses everything.
    /// pub struct D(Flaw);
    /// #[derive(Debug, Clone, Copy, serde::Deserialize)]
    /// pub enum Flaw { Forgets, RefusesAll }
    /// # impl CacheOps for D {
    /// #     async fn get(&self, _: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
    /// #     async fn set(&self, _: &str, _: Bytes) -> InfraResult<()> {
    /// #         match self.0 {
    /// #             Flaw::Forgets => Ok(()),
    /// #             Flaw::RefusesAll => Err(sandloom_driverkit::sdk::InfraError::unavailable("cache", "no")),
    /// #         }
    /// #     }
    /// #     async fn delete(&self, _: &str) -> InfraResult<bool> { Ok(false) }
    /// # }
    /// # impl Driver for D {
    /// #     type Options = Flaw;
    /// #     fn supported_features() -> &'static [&'static str] { &[] }
    /// #     fn from_options(flaw: Flaw) -> Result<Self, DriverError> { Ok(D(flaw)) }
    /// # }
    /// # impl CacheProvider for D { const CONTRACT_VERSION: Version = Version::new(1, 0, 0); }
    /// async fn set_is_accepted(i: &sandloom_conformance::Instance<D>, _: &()) -> Result<(), String> {
    ///     i.driver().set("k", "v".into()).await.map_err(|e| format!("set failed: {e}"))
    /// }
    /// fn kit(flaw: Flaw) -> Kit<D, ()> {
    ///     let obligations = vec![Obligation::new("set_is_accepted", |i, s| Box::pin(set_is_accepted(i, s)))];
    ///     Kit::build::<CacheCapability>(obligations, move |_| flaw, ())
    /// }
    ///
    /// Kit::assert_catches_all(&[(Flaw::RefusesAll, "set_is_accepted")], kit);
    /// // A flaw the obligation does not catch fails the self-test:
    /// let missed = std::panic::catch_unwind(|| {
    ///     Kit::assert_catches_all(&[(Flaw::Forgets, "set_is_accepted")], kit)
    /// });
    /// assert!(missed.is_err());
    /// ```
    pub fn assert_catches_all<F>(cases: &[(F, &str)], kit: impl Fn(F) -> Self + Sync)
    where
        F: fmt::Debug + Copy + Send + Sync,
    {
        let Some(&(first, _)) = cases.first() else {
            panic!("a kit's self-test needs at least one broken driver");
        };
        let kit = &kit;
        let passed: Vec<String> = std::thread::scope(|scope| {
            let runs: Vec<_> = cases
                .iter()
                .map(|&(flaw, obligation)| {
                    scope.spawn(move || (flaw, obligation, kit(flaw).check(obligation)))
                })
                .collect();
            runs.into_iter()
                .map(|run| {
                    run.join()
                        .expect("a kit's check catches the driver's panics")
                })
                .filter(|(_, _, outcome)| outcome.is_ok())
                .map(|(flaw, obligation, _)| {
                    format!("{flaw:?} must fail `{obligation}`, and passed it")
                })
                .collect()
        });
        let reference = kit(first);
        let unproven: Vec<&str> = reference
            .obligations()
            .into_iter()
            .filter(|obligation| !cases.iter().any(|(_, caught)| caught == obligation))
            .collect();
        assert!(
            passed.is_empty() && unproven.is_empty(),
            "the {} kit's self-test failed.\nflaws not caught: {passed:#?}\nobligations no \
             broken driver proves can fail: {unproven:?}",
            reference.name()
        );
    }
}
