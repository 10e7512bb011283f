//! Sandloom driver `objectstore.s3`: an [`ObjectStore`](sandloom_driverkit::objectstore::ObjectStore)
//! on a bucket of AWS S3 or of any S3-compatible server (`MinIO`, Ceph, R2, moto, …), through the
//! [`object_store`] crate.
//!
//! Link it in the application with `sandloom::link_drivers!(sandloom_driver_s3)` and select it
//! in `INFRA`:
//!
//! ```toml
//! [objectstore.uploads]
//! driver = "s3"
//! endpoint = "https://minio.internal:9000"   # omit for AWS S3
//! region = "us-east-1"
//! bucket = "uploads"
//! prefix = "orders"                          # keys live under `orders/` in the bucket
//! access_key_id = "AKIA…"
//! # secret_access_key: from SANDLOOM__OBJECTSTORE__UPLOADS__SECRET_ACCESS_KEY
//! ```
//!
//! Features: `etag`, and `conditional_put` when the option of that name says the server honours
//! conditional writes atomically. The options are documented on [`S3ObjectStoreOptions`], the
//! behaviour on [`S3ObjectStore`].
//!
//! ```
//! use sandloom_driver_s3::{S3ObjectStore, S3ObjectStoreOptions};
//! use sandloom_driverkit::Driver;
//!
//! let options = S3ObjectStoreOptions { bucket: "uploads".into(), ..Default::default() };
//! assert!(S3ObjectStore::validate(&options).is_ok());
//! assert_eq!(S3ObjectStore::supported_features(), ["etag", "conditional_put"]);
//! assert_eq!(S3ObjectStore::features_for(&options), ["etag"]);
//! let atomic = S3ObjectStoreOptions { conditional_put: true, ..options };
//! assert_eq!(S3ObjectStore::features_for(&atomic), ["etag", "conditional_put"]);
//! ```

mod address;
mod errors;
mod keys;
mod options;
mod provider;

pub use options::S3ObjectStoreOptions;
pub use provider::S3ObjectStore;

sandloom_driverkit::register_driver!(objectstore, "s3", S3ObjectStore);
