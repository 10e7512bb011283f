//! # sandloom-embedded — drivers that need no services
//!
//! The built-in drivers, owned by this package (no other package may register their names,
//! SANDLOOM-B021). They make Sandloom work on one machine with nothing installed, and they are
//! what `INFRA` selects when there is no `INFRA` at all.
//!
//! | name | features | options |
//! |---|---|---|
//! | `cache.memory` | `ttl`, `increment`, `bulk` | `capacity` (entries, default 10 000), `default_ttl_ms` |
//! | `objectstore.fs` (Unix) | `etag`, `conditional_put` | `root` (directory, required) |
//! | `objectstore.memory` | `etag`, `conditional_put` | none |
//! | `notifier.log` | `batch` | `level` (`info` default, `warn`, `debug`) |
//! | `notifier.memory` | `batch` | `capacity` (messages kept, default 1000), `outbox` (a name tests read with [`MemoryNotifier::outbox`]) |
//! | `taskqueue.memory` | `delay`, `dead_letter`, `fifo`, `dedupe` | `visibility_timeout_ms` (30 000), `max_attempts` (5), `dedupe_window_ms` (24 h) |
//! | `lock.memory` | none | none |
//! | `secrets.memory` (for tests) | `versions`, `watch`, `list` | `store` (a name shared with [`MemorySecretStore::named`]), `max_value_bytes` (1 MiB) |
//! | `secrets.env` | `list` | `prefix` (required), `max_value_bytes` (1 MiB) |
//! | `secrets.file` (Unix) | `watch`, `list` | `root` (required), `max_value_bytes` (1 MiB), `poll_interval_ms` (1000) |
//!
//! They run on Tokio and need a runtime with timers (`#[tokio::main]` has one; the kernel refuses
//! to start without one, SANDLOOM-B001).
//!
//! ## For applications
//!
//! Link the crate with `sandloom::link_drivers!(sandloom_embedded)`, then select the drivers in
//! `INFRA`:
//!
//! ```toml
//! [cache.default]
//! driver = "memory"
//! capacity = 50000
//! ```

mod cache_memory;
#[cfg(unix)]
mod confined;
mod lock_memory;
mod notifier_log;
mod notifier_memory;
#[cfg(unix)]
mod objectstore_fs;
mod objectstore_memory;
mod secrets_env;
#[cfg(unix)]
mod secrets_file;
mod secrets_memory;
mod serving;
mod taskqueue_memory;

pub use cache_memory::{MemoryCache, MemoryCacheOptions};
pub use lock_memory::MemoryLock;
pub use notifier_log::{LogLevel, LogNotifier, LogNotifierOptions};
pub use notifier_memory::{MemoryNotifier, MemoryNotifierOptions};
#[cfg(unix)]
pub use objectstore_fs::{FsObjectStore, FsObjectStoreOptions};
pub use objectstore_memory::MemoryObjectStore;
pub use secrets_env::{EnvSecrets, EnvSecretsOptions};
#[cfg(unix)]
pub use secrets_file::{FileSecrets, FileSecretsOptions};
pub use secrets_memory::{MemorySecretStore, MemorySecrets, MemorySecretsOptions};
pub use taskqueue_memory::{MemoryTaskQueue, MemoryTaskQueueOptions};

sandloom_driverkit::register_driver!(cache, "memory", MemoryCache);
sandloom_driverkit::register_driver!(lock, "memory", MemoryLock);
sandloom_driverkit::register_driver!(notifier, "log", LogNotifier);
sandloom_driverkit::register_driver!(notifier, "memory", MemoryNotifier);
#[cfg(unix)]
sandloom_driverkit::register_driver!(objectstore, "fs", FsObjectStore);
sandloom_driverkit::register_driver!(objectstore, "memory", MemoryObjectStore);
sandloom_driverkit::register_driver!(secrets, "env", EnvSecrets);
#[cfg(unix)]
sandloom_driverkit::register_driver!(secrets, "file", FileSecrets);
sandloom_driverkit::register_driver!(secrets, "memory", MemorySecrets);
sandloom_driverkit::register_driver!(taskqueue, "memory", MemoryTaskQueue);
