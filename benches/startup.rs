//! Startup as a process: the quickstart example on embedded defaults (in a fresh temporary
//! directory, as a user runs it) from exec to exit, against a bare hello world (`examples/bare.rs`).
//! Both are the root package's example binaries of this benchmark's profile, which it builds
//! first with cargo (a no-op when they are up to date), so `cargo bench` works from a fresh clone.
//! See `BENCHMARKS.md`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{BatchSize, Criterion};

/// The examples this benchmark times.
const EXAMPLES: [&str; 2] = ["quickstart", "bare"];

/// Build [`EXAMPLES`] with the profile of this benchmark binary, into the target directory it
/// runs from, and return the directory that holds them. Exits with a message if cargo fails.
///
/// This binary is `<target>/[<triple>/]<profile dir>/deps/startup-<hash>`: the profile is read
/// from that path (cargo passes none at run time), so `cargo bench` builds the examples with
/// `bench` and `cargo test --benches` with `test`, each where that command put this binary.
fn build_examples() -> PathBuf {
    let exe = std::env::current_exe().expect("the path of this benchmark");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<this benchmark>");
    let profile = match profile_dir.file_name().and_then(|name| name.to_str()) {
        Some("debug") => "test",
        Some("release") => "bench",
        Some(custom) => custom,
        None => panic!("no profile directory in {}", exe.display()),
    };
    let parent = profile_dir.parent().expect("a target directory");
    // cargo keeps its rustc cache at the root of a target directory (and tags the root when it
    // creates it — not when something else did first, as scripts/test-services does in CI); a
    // `--target <triple>` build is one level down.
    let root =
        |dir: &Path| dir.join(".rustc_info.json").is_file() || dir.join("CACHEDIR.TAG").is_file();
    let (target_dir, triple) = if root(parent) {
        (parent, None)
    } else {
        (
            parent.parent().expect("a target directory"),
            parent.file_name(),
        )
    };

    // `CARGO` is the cargo that runs this benchmark, so the examples get the same toolchain.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(&cargo);
    command
        .arg("build")
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml"))
        .args([
            "--package",
            "sandloom",
            "--profile",
            profile,
            "--target-dir",
        ])
        .arg(target_dir);
    if let Some(triple) = triple {
        command.arg("--target").arg(triple);
    }
    for example in EXAMPLES {
        command.args(["--example", example]);
    }
    let status = command.status();
    if !matches!(&status, Ok(status) if status.success()) {
        let outcome = match status {
            Ok(status) => status.to_string(),
            Err(err) => format!("it could not be run: {err}"),
        };
        eprintln!(
            "the startup benchmark needs the examples {EXAMPLES:?} of profile `{profile}`, and building them failed ({outcome}): {command:?}"
        );
        std::process::exit(1);
    }
    profile_dir.join("examples")
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
    let examples = build_examples();
    let [quickstart, bare] = EXAMPLES.map(|name| examples.join(name));
    for program in [&quickstart, &bare] {
        assert!(
            program.is_file(),
            "{} is missing, though cargo built the examples",
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
