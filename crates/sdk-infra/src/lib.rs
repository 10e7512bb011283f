//! # sandloom-sdk-infra — the module door
//!
//! Application modules ask for infrastructure by **capability** and get an **operation trait**:
//! [`Cache`], [`Notifier`], [`ObjectStore`], [`TaskQueue`], [`Lock`] (and the experimental
//! [`Secrets`]).
//! Which driver serves each capability instance is the application's choice, made in its `INFRA`
//! configuration; a module never names a driver, and never depends on `sandloom-driverkit`,
//! a driver crate or a backend SDK (rule C004).
//!
//! ## For modules
//!
//! 1. Declare what you need with [`requires!`]; the kernel checks it at startup, so an instance
//!    you declared, with the features you declared, is there when your code runs.
//! 2. Take an [`Infra`] handle from the application, resolve each capability once, and call it:
//!    [`Infra::cache`] and its siblings return the `default` instance, [`Infra::capability`] a
//!    named one, [`Infra::capability_arc`] an owned handle for spawned tasks.
//! 3. In unit tests, build an [`Infra`] around fakes with [`Infra::builder`]; no kernel, driver
//!    or runtime is needed.
//!
//! ```
//! use sandloom_sdk_infra::{cache, requires, Infra, InfraResult, CACHE};
//! use std::time::Duration;
//!
//! requires!(CACHE, "sessions", features = [cache::TTL]);
//!
//! pub async fn login(infra: &Infra, user: &str) -> InfraResult<()> {
//!     let sessions = infra.capability(&CACHE, "sessions").expect("checked at startup");
//!     sessions
//!         .set_with_ttl(&format!("session:{user}"), "token".into(), Duration::from_secs(3600))
//!         .await
//! }
//! # fn main() {}
//! ```
//!
//! Optional operations (a feature such as [`cache::TTL`]) answer an error of kind
//! [`ErrorKind::Unsupported`] when the driver does not declare the feature; they never panic.
//!
//! ## For applications
//!
//! Applications use the `sandloom` crate (or `sandloom-kernel`), which reads `INFRA`, starts the
//! selected drivers and hands out the [`Infra`] built here (`running.infra()`, an
//! `Arc<Infra>`); pass it to each module. The `sandloom` crate re-exports this one as
//! `sandloom::sdk`.
//!
//! ## For driver authors
//!
//! Implement the operation trait through its provider trait in `sandloom-driverkit`, which
//! re-exports this crate as `sandloom_driverkit::sdk`. What you use from here: the operation
//! traits, the values they exchange (built with constructors such as
//! [`notifier::Receipt::new`] or [`taskqueue::Reservation::new`]), [`InfraError`] with its
//! [`ErrorKind`]s, and rules every driver applies alike, such as [`objectstore::validate_key`].
//! [`Infra`] and [`requires!`] are not for drivers.
//!
//! This crate has no async runtime in its API: each operation trait (`Notifier`) is called
//! through `&dyn` and returns an [`OpFuture`], the future held inline (no allocation when it
//! fits); its native twin (`NotifierOps`) is what drivers and test fakes implement with plain
//! `async fn`, and every implementor is a `Notifier` through a blanket impl. They run on
//! whatever executor the application uses.
//!
//! ```
//! use sandloom_sdk_infra::notifier::{Message, Notifier, NotifierOps, Receipt};
//! use sandloom_sdk_infra::InfraResult;
//!
//! /// A fake for a module's unit tests: plain `async fn`, no attribute.
//! struct Quiet;
//!
//! impl NotifierOps for Quiet {
//!     async fn send(&self, _message: &Message) -> InfraResult<Receipt> {
//!         Ok(Receipt::new("0"))
//!     }
//! }
//!
//! let module_sees: &dyn Notifier = &Quiet;
//! # let _ = module_sees;
//! ```
//!
//! The one exception
//! is [`lock::KeepAlive`], which renews a lease on a task of the application's Tokio runtime.

pub mod cache;
mod capability;
mod declare;
mod error;
mod future;
mod infra;
pub mod lock;
mod names;
pub mod notifier;
pub mod objectstore;
mod requirement;
mod secret;
pub mod secrets;
pub mod taskqueue;

/// The `bytes` crate, whose [`Bytes`](bytes::Bytes) carries cache values, objects and task
/// payloads.
///
/// ```
/// use sandloom_sdk_infra::bytes::Bytes;
///
/// let value = Bytes::from_static(b"hello"); // cheap to clone: clones share the buffer
/// assert_eq!(value.clone(), Bytes::from("hello"));
/// ```
pub use bytes;

pub use cache::{Cache, CacheOps};
pub use capability::{CapabilityRef, DEFAULT_INSTANCE};
pub use error::{ErrorKind, InfraError, InfraResult};
pub use future::{Boxed, DEFAULT_FUTURE_BYTES, OpFuture};
pub use infra::{AccessError, Infra, InfraBuilder};
pub use lock::{Lock, LockOps};
pub use names::{InstanceNameError, check_instance_name};
pub use notifier::{Notifier, NotifierOps};
pub use objectstore::{ObjectStore, ObjectStoreOps};
pub use requirement::Requirement;
pub use secret::Secret;
pub use secrets::{Secrets, SecretsOps};
pub use taskqueue::{TaskQueue, TaskQueueOps};

/// The key of the `cache` capability: pass it to [`Infra::capability`] or [`requires!`] to get
/// a `&dyn` [`Cache`].
///
/// ```
/// use sandloom_sdk_infra::{requires, Cache, Infra, CACHE};
///
/// requires!(CACHE, "sessions");
///
/// fn sessions(infra: &Infra) -> &dyn Cache {
///     infra.capability(&CACHE, "sessions").expect("checked at startup")
/// }
/// # fn main() {
/// assert_eq!(CACHE.name(), "cache");
/// # }
/// ```
pub const CACHE: CapabilityRef<dyn Cache> = CapabilityRef::new(cache::NAME);
/// The key of the `notifier` capability: a `&dyn` [`Notifier`].
///
/// ```
/// use sandloom_sdk_infra::{Infra, NOTIFIER};
///
/// let infra = Infra::builder().build().unwrap();
/// assert_eq!(NOTIFIER.name(), "notifier");
/// assert!(infra.capability(&NOTIFIER, "alerts").is_err()); // nothing configured here
/// ```
pub const NOTIFIER: CapabilityRef<dyn Notifier> = CapabilityRef::new(notifier::NAME);
/// The key of the `objectstore` capability: a `&dyn` [`ObjectStore`].
///
/// ```
/// use sandloom_sdk_infra::{Infra, OBJECT_STORE};
///
/// let infra = Infra::builder().build().unwrap();
/// assert_eq!(OBJECT_STORE.name(), "objectstore");
/// assert!(infra.capability_arc(&OBJECT_STORE, "uploads").is_err()); // nothing configured here
/// ```
pub const OBJECT_STORE: CapabilityRef<dyn ObjectStore> = CapabilityRef::new(objectstore::NAME);
/// The key of the `taskqueue` capability: a `&dyn` [`TaskQueue`].
///
/// ```
/// use sandloom_sdk_infra::{taskqueue, requires, TASK_QUEUE};
///
/// requires!(TASK_QUEUE, features = [taskqueue::DELAY]);
/// # fn main() {
/// assert_eq!(TASK_QUEUE.name(), "taskqueue");
/// # }
/// ```
pub const TASK_QUEUE: CapabilityRef<dyn TaskQueue> = CapabilityRef::new(taskqueue::NAME);
/// The key of the `lock` capability: a `&dyn` [`Lock`] (the `default` one is also
/// [`Infra::lock`]); [`Infra::capability_arc`] gives the `Arc` a [`lock::KeepAlive`] takes.
///
/// ```
/// use sandloom_sdk_infra::{Infra, LOCK};
///
/// let infra = Infra::builder().build().unwrap();
/// assert_eq!(LOCK.name(), "lock");
/// assert!(infra.default_instance(&LOCK).is_err()); // nothing configured here
/// ```
pub const LOCK: CapabilityRef<dyn Lock> = CapabilityRef::new(lock::NAME);
/// The key of the `secrets` capability: a `&dyn` [`Secrets`].
///
/// ```
/// use sandloom_sdk_infra::{Infra, SECRETS};
///
/// let infra = Infra::builder().build().unwrap();
/// assert_eq!(SECRETS.name(), "secrets");
/// assert!(infra.default_instance(&SECRETS).is_err()); // nothing configured here
/// ```
pub const SECRETS: CapabilityRef<dyn Secrets> = CapabilityRef::new(secrets::NAME);

/// Requirements every linked module declared with [`requires!`], in no defined order.
///
/// ```
/// for requirement in sandloom_sdk_infra::linked_requirements() {
///     println!("{} needs {}.{}", requirement.module(), requirement.capability(), requirement.instance());
/// }
/// ```
pub fn linked_requirements() -> &'static [Requirement] {
    &__private::REQUIREMENTS
}

// Not public API: what `requires!` expands to. Versioned with this crate, never semver-stable.
#[doc(hidden)]
pub mod __private {
    pub use linkme;
    pub use linkme::distributed_slice;

    // The slice of module requirements lives here, not in the kernel, because modules may only
    // depend on this crate; the kernel reads it through `linked_requirements`.
    #[distributed_slice]
    pub static REQUIREMENTS: [crate::Requirement];

    /// Lowercase ASCII letters, digits, `_`, `-`; not empty (instance and driver names).
    #[must_use]
    pub const fn valid_name(name: &str) -> bool {
        let bytes = name.as_bytes();
        if bytes.is_empty() {
            return false;
        }
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if !(b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-') {
                return false;
            }
            i += 1;
        }
        true
    }
}
