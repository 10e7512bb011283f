//! Sandloom driver `secrets.vault`: [`Secrets`](sandloom_driverkit::secrets::Secrets) read from
//! a KV version 2 engine of Vault or `OpenBao`, over its HTTP API (`reqwest`, rustls).
//! `secrets` is a stable capability (contract 1.0).
//!
//! Link it in the application with `sandloom::link_drivers!(…, sandloom_driver_vault)` and
//! select it in `INFRA`:
//!
//! ```toml
//! [secrets.default]
//! driver = "vault"
//! address = "https://vault.internal:8200"
//! mount = "secret"          # a KV version 2 engine (default "secret")
//! prefix = "apps/orders"    # the driver reads only under it
//! # token: from SANDLOOM__SECRETS__DEFAULT__TOKEN, or role_id + secret_id for AppRole
//! ```
//!
//! # Mapping
//!
//! The secret `db/password` is the KV entry `<prefix>/db/password` of the mount: the driver
//! reads `GET /v1/<mount>/data/<prefix>/db/password`. Names follow the contract's rule, which
//! every KV path accepts, so every name maps and distinct names are distinct entries. The value
//! is the entry's field `value` (option `field`):
//!
//! - text: `{"value": "s3cr3t"}` reads as the bytes of that UTF-8 text;
//! - any bytes: `{"value": "AP+A", "encoding": "base64"}` reads as the bytes the standard,
//!   padded base64 encodes.
//!
//! Other fields of the entry are ignored (a `username` beside the `value`, say). An entry
//! without the field, with a field that is not a string, or with another `encoding`, answers
//! `Backend` naming the secret and what is wrong, never the value. Write one with the CLI:
//! `bao kv put -mount=secret apps/orders/db/password value=s3cr3t`, or for bytes
//! `bao kv put -mount=secret apps/orders/tls/key value=$(base64 -w0 key.der) encoding=base64`.
//!
//! # Features
//!
//! - `versions`: KV v2's own version numbers. `get_version(name, n)` reads `?version=n`;
//!   `current_version` is the metadata's `current_version`, `NotFound` when that version is
//!   deleted or destroyed. Version 0 is `InvalidInput` (Vault would read it as "current").
//! - `list`: `LIST` on the metadata folders under the prefix, recursively, from the deepest
//!   folder the asked prefix names; entries whose names break the contract's rule are left out.
//! - `watch`: polling. While a `changes` call waits, every `poll_interval_ms` it lists the
//!   names and reads each one's metadata (never a value; 8 at a time); a name whose current
//!   version, update time or deletion state differs from the last scan, or that appeared or
//!   went, has changed. Nothing runs between calls; the first call is the first comparison
//!   point. A scan costs one request per folder and one per secret under the prefix: keep
//!   the prefix to what the application reads.
//!
//! # Errors
//!
//! | what | kind |
//! |---|---|
//! | a name or list prefix that breaks the rule, version 0 | `InvalidInput` |
//! | 404 with KV's empty `errors` (no such entry, or a deleted version) | `NotFound`, naming the secret (and version) |
//! | 404 naming a missing route (no such mount) | `Backend` |
//! | 401, 403 (token invalid, expired, or without `read`/`list` on the path) | `Backend`, saying so |
//! | 429, 472, 473, 502, 503 (rate-limited, standby, sealed, a failing proxy) | `Unavailable` |
//! | 504; no answer within `request_timeout_ms` or no connection within `connect_timeout_ms` | `Timeout` |
//! | connection refused, reset or closed | `Unavailable` |
//! | a value above `max_value_bytes` (the answer is bounded too: never read whole) | `Backend` ([`too_large`](sandloom_driverkit::secrets::too_large)) |
//! | an entry the driver cannot read as a value (see Mapping) | `Backend` |
//! | after `stop` | `Stopped` |
//!
//! Messages name the path and the address (redacted), and quote what the server said in its
//! `errors` (paths and policies, never stored values). No message, log line, span or `Debug`
//! shows a token, a `secret_id` or a value: the `X-Vault-Token` header is marked sensitive, so
//! the HTTP stack prints it as `Sensitive`; answer bodies are not logged, and the driver's
//! copies of them are cleared from memory when dropped (the HTTP stack's own buffers are not in
//! its reach).
//!
//! # Lifecycle and health
//!
//! `from_options` checks the options and builds the HTTP client (no I/O). `start` logs in
//! (`AppRole`) and asks `sys/internal/ui/mounts/<mount>` whether `mount` is a KV version 2
//! engine the token reaches: a wrong address, token or mount fails the start with SANDLOOM-B022,
//! not the first read. `health` asks the same, within `request_timeout_ms`. With `AppRole`, the
//! driver logs in again when two thirds of the token's time to live have passed (at the next
//! request), and when a request is refused with 403 (a token revoked or cut short before its
//! time): it logs in and sends that request once more, once. `stop` ends waiting `changes` calls; every operation then answers `Stopped`.
//!
//! ```
//! use sandloom_driver_vault::{VaultSecrets, VaultSecretsOptions};
//! use sandloom_driverkit::Driver;
//!
//! let options = VaultSecretsOptions {
//!     token: Some("hvs.example".into()),
//!     prefix: Some("apps/orders".into()),
//!     ..VaultSecretsOptions::new("https://vault.internal:8200")
//! };
//! assert!(VaultSecrets::validate(&options).is_ok());
//! let secrets = VaultSecrets::from_options(options).unwrap();
//! assert_eq!(secrets.data_path("db/password"), "secret/data/apps/orders/db/password");
//! ```

mod address;
mod client;
mod entry;
mod errors;
mod options;
mod provider;
mod watch;

pub use entry::{BASE64, ENCODING_FIELD};
pub use options::VaultSecretsOptions;
pub use provider::VaultSecrets;

sandloom_driverkit::register_driver!(secrets, "vault", VaultSecrets);
