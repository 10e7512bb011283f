//! What the secrets obligation needs of a kit, whatever the driver type's bounds: the values
//! declared secret, the secrets the kit plants itself, and how to show and rebuild the driver.
//! An instance carries it; the kit's `secrets` method and its test macro fill it in.

use futures_util::future::BoxFuture;

use super::request::KitRequest;
use super::shared::Shared;

/// What the secrets obligation knows of the kit, whatever the driver type's bounds: the declared
/// values, the planted ones, and how to show and rebuild the driver.
pub(crate) trait SecretRules<T>: Send + Sync {
    /// The values declared secret (none: nothing declared to check).
    fn values(&self) -> &[String];
    /// The driver's `Debug`, where the driver type has one.
    fn show_driver(&self, driver: &T) -> Option<String>;
    /// The options' `Debug` of the instance `request` describes.
    fn show_options(&self, request: &KitRequest) -> Option<String>;
    /// Build and start an instance for `request` (pointed at an unreachable address): every
    /// text it showed on the way (its options' `Debug`, its errors), and the instance if it
    /// started.
    fn build_unreachable(&self, request: KitRequest) -> BoxFuture<'_, Built<T>>;
    /// Build and start an instance from options the kit made itself with its own secrets
    /// planted in every `writeOnly` option; `None` when the options have none (or describe no
    /// schema): nothing extra to check.
    fn build_planted(&self) -> Option<BoxFuture<'_, Planted<T>>>;
}

/// An instance built by the secrets obligation: what it showed, and itself if it started.
pub(crate) struct Built<T> {
    pub(crate) shown: Vec<(String, String)>,
    pub(crate) started: Option<Shared<T>>,
}

/// The instance the kit built with its planted secrets.
pub(crate) struct Planted<T> {
    /// Each planted secret: what to call it in a failure, and its value.
    pub(crate) secrets: Vec<(String, String)>,
    /// The instance, or why the kit's options did not deserialize (planted secrets redacted).
    pub(crate) built: Result<Built<T>, String>,
}
