//! Benchmarks only: the code generator of the synthetic driver crates
//! (`sandloom-bench-synthetic-10`, `-100`, `-1000`, `-10000`) that the resolution benchmarks
//! link, one per benchmark binary.
//!
//! A crate of this family registers `linked − 10` synthetic drivers, so that a binary linking
//! it and `sandloom-embedded` (10 built-in drivers) holds exactly `linked` driver entries: linkme
//! slices are global to a binary, and the kernel scans all of it on every resolution, so the
//! only honest way to measure N entries is a binary that links N entries.
//!
//! The synthetic drivers take turns over the four public capabilities and are named like
//! third-party drivers, `<stem>-<index>` (`redis-0`, `s3-1`, `sqs-2`, …): names of many lengths,
//! some as long as a selected name (`gcs-12` and `memory`), so that neither the kernel nor a
//! baseline is flattered by names that always differ in length. Beside the registrations, the crate gets the two
//! hand-written alternatives the benchmarks compare against: a `match` over every linked
//! `(capability, name)` and a `register_all` making one explicit `register()` call for each.
//!
//! ```
//! let source = sandloom_bench_synthetic_gen::generate(12);
//! assert!(source.contains("register_driver!(cache, \"redis-0\""));
//! assert!(source.contains("register_driver!(notifier, \"s3-1\""));
//! assert!(source.contains("(\"objectstore\", \"fs\") => Some(Found::Builtin(4))"));
//! ```

use std::fmt::Write as _;

/// The drivers `sandloom-embedded` registers, as `(capability, driver)`; `Found::Builtin(i)` is
/// an index into this list.
pub const BUILTIN: [(&str, &str); 10] = [
    ("cache", "memory"),
    ("lock", "memory"),
    ("notifier", "log"),
    ("notifier", "memory"),
    ("objectstore", "fs"),
    ("objectstore", "memory"),
    ("secrets", "env"),
    ("secrets", "file"),
    ("secrets", "memory"),
    ("taskqueue", "memory"),
];

/// The capabilities synthetic drivers are registered under, in turn.
pub const CAPABILITIES: [&str; 4] = ["cache", "notifier", "objectstore", "taskqueue"];

/// The stems of synthetic driver names, in turn: `<stem>-<index>`.
pub const STEMS: [&str; 10] = [
    "redis",
    "s3",
    "sqs",
    "nats",
    "kafka",
    "memcached",
    "postgres",
    "sqlite",
    "smtp",
    "gcs",
];

/// The name of synthetic driver `index`.
///
/// ```
/// assert_eq!(sandloom_bench_synthetic_gen::synthetic_name(12), "sqs-12");
/// ```
pub fn synthetic_name(index: usize) -> String {
    format!("{}-{index}", STEMS[index % STEMS.len()])
}

/// The Rust source of a synthetic crate for `linked` entries in all (built-ins included).
///
/// # Panics
/// When `linked` is smaller than the number of built-in drivers.
pub fn generate(linked: usize) -> String {
    let synthetic = linked
        .checked_sub(BUILTIN.len())
        .expect("`linked` counts the built-in drivers too");
    let mut names: Vec<(&str, String, String)> = BUILTIN
        .iter()
        .enumerate()
        .map(|(i, &(c, d))| (c, d.to_owned(), format!("Found::Builtin({i})")))
        .collect();
    names.extend((0..synthetic).map(|i| {
        (
            CAPABILITIES[i % CAPABILITIES.len()],
            synthetic_name(i),
            format!("Found::Synthetic({i})"),
        )
    }));

    let mut out = String::new();
    let _ = writeln!(
        out,
        "/// Driver entries in a binary that links this crate and `sandloom-embedded`.\n\
         pub const LINKED: usize = {linked};\n\
         /// Synthetic drivers this crate registers: [`LINKED`] less the built-in ones.\n\
         pub const SYNTHETIC: usize = {synthetic};\n"
    );
    for (capability, name, _) in &names[BUILTIN.len()..] {
        let _ = writeln!(
            out,
            "sandloom_driverkit::register_driver!({capability}, \"{name}\", sandloom_bench_synthetic::Synthetic);"
        );
    }

    // A hand-written `match`, arms in the order a person would keep them: sorted.
    names.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    out.push_str(
        "\n/// Find a linked driver with a hand-written `match` over every linked name: the floor.\n\
         #[must_use]\n\
         #[allow(clippy::too_many_lines, clippy::match_same_arms)]\n\
         pub fn by_match(capability: &str, name: &str) -> Option<Found> {\n    \
         match (capability, name) {\n",
    );
    for (capability, name, found) in &names {
        let _ = writeln!(
            out,
            "        (\"{capability}\", \"{name}\") => Some({found}),"
        );
    }
    out.push_str("        _ => None,\n    }\n}\n");

    // A runtime registry filled by one explicit call per driver, as a plugin system does it.
    out.push_str(
        "\n/// Fill `registry` with one explicit `register()` call per linked driver.\n\
         #[allow(clippy::too_many_lines)]\n\
         pub fn register_all(registry: &mut Registry) {\n",
    );
    for (capability, name, found) in &names {
        let _ = writeln!(
            out,
            "    registry.register(\"{capability}\", \"{name}\", {found});"
        );
    }
    out.push_str("}\n");
    out
}

/// For a build script: write [`generate`]`(linked)` to `$OUT_DIR/synthetic.rs`.
///
/// # Panics
/// Outside a build script (no `OUT_DIR`), or when the file cannot be written.
pub fn write(linked: usize) {
    let out_dir = std::env::var_os("OUT_DIR").expect("run from a build script");
    let path = std::path::Path::new(&out_dir).join("synthetic.rs");
    std::fs::write(&path, generate(linked)).expect("write the generated source");
    println!("cargo::rerun-if-changed=build.rs");
}
