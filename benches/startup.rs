//! Startup as a process: the quickstart example on embedded defaults (in a fresh temporary
//! directory, as a user runs it) from exec to exit, against a bare hello world (`examples/bare.rs`).
//! Both are the example binaries of the same profile, next to this benchmark's own binary: build
//! them first (`cargo build --release --example quickstart --example bare` before
//! `cargo bench`; `cargo test` builds them for test mode). See `BENCHMARKS.md`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{BatchSize, Criterion};

/// `target/<profile>/examples`: this binary is `target/<profile>/deps/startup-<hash>`.
fn examples_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the path of this benchmark");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<this benchmark>")
        .join("examples")
}

/// Run `program` in `dir` with no `SANDLOOM…` variables, its output discarded, and check that
/// it succeeded.
fn run(program: &Path, dir: &Path) {
    let mut command = Command::new(program);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("SANDLOOM") {
            command.env_remove(name);
        }
    }
    let status = command
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the example runs");
    assert!(status.success(), "{} failed: {status}", program.display());
}

fn main() {
    let examples = examples_dir();
    let [quickstart, bare] = ["quickstart", "bare"].map(|name| examples.join(name));
    for program in [&quickstart, &bare] {
        assert!(
            program.is_file(),
            "{} is missing: build the examples of this profile first \
             (`cargo build --release --example quickstart --example bare` before `cargo bench -p sandloom-benches`)",
            program.display()
        );
    }

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("startup");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(10));
    let here = tempfile::tempdir().expect("a temporary directory");
    group.bench_function("bare", |b| b.iter(|| run(&bare, here.path())));
    group.bench_function("quickstart", |b| {
        // A fresh directory each time, as a first run; created and removed outside the timing.
        b.iter_batched(
            || tempfile::tempdir().expect("a temporary directory"),
            |dir| {
                run(&quickstart, dir.path());
                dir
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
    criterion.final_summary();
}
