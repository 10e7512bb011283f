//! `Running`'s side of a reload: the call, the handle for triggers, and what ran last.

use std::sync::Arc;

use super::{ReloadError, ReloadReport, Reloader, reload};
use crate::config::InfraConfig;
use crate::runtime::Running;

impl Running {
    /// Change the running instances to `new`, the way Envoy changes a cluster: check `new` in
    /// full, build and health-check each changed instance beside the old one, switch every
    /// handle modules hold (the `&dyn` of an accessor and the `Arc` of `capability_arc` alike)
    /// to it at one instant, let the operations in flight finish on the old one, then stop it.
    /// Any failure keeps every old instance serving, untouched. One reload runs at a time; it
    /// returns once the old instances are stopped. See [`crate::reload`] for each step and for
    /// what a reload cannot change.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    ///
    /// // A configuration with a problem changes nothing, and says why.
    /// let bad = InfraConfig::from_toml_str("[cach.default]\ndriver = \"memory\"", "new.toml").unwrap();
    /// let err = running.reload(bad).await.unwrap_err();
    /// assert_eq!(err.codes(), ["SANDLOOM-B010"]);
    /// assert!(!running.last_reload().unwrap().applied);
    ///
    /// let report = running.reload(InfraConfig::from_toml_str("", "new.toml").unwrap()).await.unwrap();
    /// assert!(report.applied);
    /// running.shutdown().await.unwrap();
    /// # }
    /// ```
    ///
    /// # Errors
    /// A [`ReloadError`] listing every problem, coded and located: those `check` finds in
    /// `new`; an instance a reload cannot add (SANDLOOM-B010); a new instance that cannot be
    /// built or started, panics or hangs in `start`, or answers unhealthy (SANDLOOM-B022); a
    /// secret reference that cannot be read (SANDLOOM-B025). Its report marks each changed
    /// instance refused.
    pub async fn reload(&self, new: InfraConfig) -> Result<ReloadReport, ReloadError> {
        reload(&self.shared, new).await
    }

    /// A cloneable handle that reloads from another task (a file watch, a signal handler).
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// let reloader = running.reloader();
    /// let trigger = move |new: InfraConfig| {
    ///     let reloader = reloader.clone();
    ///     async move { reloader.reload(new).await }
    /// };
    /// assert!(trigger(InfraConfig::from_toml_str("", "infra.toml").unwrap()).await.is_ok());
    /// running.shutdown().await.unwrap();
    /// # }
    /// ```
    pub fn reloader(&self) -> Reloader {
        Reloader {
            shared: Arc::downgrade(&self.shared),
        }
    }

    /// The report of the last reload, applied or refused; `None` before the first.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// assert!(running.last_reload().is_none());
    /// running.shutdown().await.unwrap();
    /// # }
    /// ```
    pub fn last_reload(&self) -> Option<ReloadReport> {
        self.shared.live().last.clone()
    }

    /// The configuration version each instance runs, sorted: 1 at startup, one more at each
    /// reload that replaced it. A removed instance keeps its last version.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// for (capability, instance, version) in running.versions() {
    ///     println!("{capability}.{instance}: configuration version {version}");
    /// }
    /// running.shutdown().await.unwrap();
    /// # }
    /// ```
    pub fn versions(&self) -> Vec<(String, String, u64)> {
        let live = self.shared.live();
        let mut versions: Vec<_> = live
            .slots
            .iter()
            .map(|slot| {
                (
                    slot.capability.to_owned(),
                    slot.instance.to_string(),
                    slot.version,
                )
            })
            .collect();
        versions.sort();
        versions
    }

    /// The configuration running now: the one started with, or the last reload's.
    ///
    /// ```
    /// use sandloom_kernel::{InfraConfig, Kernel};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
    /// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
    /// assert_eq!(running.config().origin(), "infra.toml");
    /// running.shutdown().await.unwrap();
    /// # }
    /// ```
    pub fn config(&self) -> InfraConfig {
        self.shared.live().config.clone()
    }
}

/// As [`Running::reloader`], so that a trigger takes `&running` or a [`Reloader`].
///
/// ```
/// use sandloom_kernel::{InfraConfig, Kernel, reload::Reloader};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let config = InfraConfig::from_toml_str("", "infra.toml").unwrap();
/// let running = Kernel::new(config, sandloom_kernel::link_drivers!()).start().await.unwrap();
/// let reloader = Reloader::from(&running);
/// assert!(format!("{reloader:?}").contains("running: true"));
/// running.shutdown().await.unwrap();
/// # }
/// ```
impl From<&Running> for Reloader {
    fn from(running: &Running) -> Self {
        running.reloader()
    }
}
