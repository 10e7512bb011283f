//! What the secrets obligation needs of a kit, whatever the driver type's bounds: the values
//! declared secret, and how to show and rebuild the driver. An instance carries it; the kit's
//! `secrets` method fills it in.

use futures_util::future::BoxFuture;

use super::request::KitRequest;
use super::shared::Shared;

/// What the secrets obligation knows of the kit, whatever the driver type's bounds: the declared
/// values and how to show and rebuild the driver.
pub(crate) trait SecretRules<T>: Send + Sync {
    /// The values declared secret (none: nothing to check).
    fn values(&self) -> &[String];
    /// The driver's `Debug`, where the kit was told the secrets (which asks for `Debug`).
    fn show_driver(&self, driver: &T) -> Option<String>;
    /// The options' `Debug` of the instance `request` describes.
    fn show_options(&self, request: &KitRequest) -> Option<String>;
    /// Build and start an instance for `request` (pointed at an unreachable address): every
    /// text it showed on the way (its options' `Debug`, its errors), and the instance if it
    /// started.
    fn build_unreachable(&self, request: KitRequest) -> BoxFuture<'_, Built<T>>;
}

/// An instance built against an unreachable address: what it showed, and itself if it started.
pub(crate) struct Built<T> {
    pub(crate) shown: Vec<(String, String)>,
    pub(crate) started: Option<Shared<T>>,
}
