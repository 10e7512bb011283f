//! Sandloom's benchmarks: resolution against its floors at 10 to 10,000 linked driver entries,
//! accessors on one and two threads, allocations, and startup as a process. Each is a
//! `[[bench]]` target of this package; the code they share is in the modules beside them
//! (`resolution/`, `allocations/`, `noop/`, `support/`). Results and the commands that reproduce
//! them are in `BENCHMARKS.md` at the repository root.
//!
//! ```sh
//! cargo bench -p sandloom-benches --bench resolution_100
//! ```
