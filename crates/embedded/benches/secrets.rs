//! `get` of the three `secrets` drivers, called as a module calls it (through `&dyn Secrets`),
//! against what each reads with no driver: a map lookup and copy (memory), `std::env::var_os`
//! (env), `std::fs::read` of the path (file). Values of 32 bytes and 64 KiB. Every side runs
//! in `block_on` of the same current-thread runtime, so the runtime's cost is on both; the
//! map copy is measured again wrapped in a `Secret`, whose drop zeroes it (what a `get` pays
//! for the zeroing, apart from the rest).
//!
//! `cargo bench -p sandloom-embedded --bench secrets -- --measurement-time 3`.

use std::collections::HashMap;
use std::ffi::OsString;
use std::hint::black_box;
use std::os::unix::ffi::OsStringExt;
use std::sync::Arc;

use criterion::Criterion;
use sandloom_driverkit::Driver;
use sandloom_driverkit::sdk::Secret;
use sandloom_driverkit::secrets::Secrets;
use sandloom_embedded::{
    EnvSecrets, EnvSecretsOptions, FileSecrets, FileSecretsOptions, MemorySecrets,
    MemorySecretsOptions,
};
use tokio::runtime::Runtime;

const PREFIX: &str = "SANDLOOM_BENCH_SECRET_";
const SIZES: [(&str, usize); 2] = [("32B", 32), ("64KiB", 64 * 1024)];

fn value(size: usize) -> Vec<u8> {
    (0..size).map(|n| b'a' + (n % 26) as u8).collect()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let memory = MemorySecrets::from_options(MemorySecretsOptions::default()).expect("options");
    let mut raw_map = HashMap::new();
    for (label, size) in SIZES {
        let name = format!("bench/{label}");
        memory
            .store()
            .set(&name, value(size))
            .expect("a valid name");
        raw_map.insert(name.clone(), value(size));
        std::fs::create_dir_all(dir.path().join("bench")).expect("the bench folder");
        std::fs::write(dir.path().join(&name), value(size)).expect("a secret file");
        let variable = EnvSecrets::variable(PREFIX, &name).expect("a mapped name");
        // SAFETY: set before any other thread exists; nothing else reads the environment.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var(variable, OsString::from_vec(value(size)));
        }
    }
    let env = EnvSecrets::from_options(EnvSecretsOptions::new(PREFIX)).expect("options");
    let file = FileSecrets::from_options(FileSecretsOptions::new(dir.path())).expect("options");
    runtime
        .block_on(file.start())
        .expect("the directory is readable");
    let drivers: [(&str, Arc<dyn Secrets>); 3] = [
        ("memory", Arc::new(memory)),
        ("env", Arc::new(env)),
        ("file", Arc::new(file)),
    ];

    let mut criterion = Criterion::default().configure_from_args();
    for (label, _) in SIZES {
        let mut group = criterion.benchmark_group(format!("secrets_get_{label}"));
        for (driver, secrets) in &drivers {
            let name = format!("bench/{label}");
            group.bench_function(format!("{driver}.get"), |b| {
                b.iter(|| run(&runtime, &**secrets, black_box(&name)));
            });
        }
        let name = format!("bench/{label}");
        group.bench_function("raw map lookup and copy", |b| {
            b.iter(|| {
                runtime.block_on(async { black_box(raw_map.get(black_box(&name)).cloned()) })
            });
        });
        group.bench_function("raw map lookup and copy, zeroized on drop", |b| {
            b.iter(|| {
                runtime.block_on(async {
                    black_box(raw_map.get(black_box(&name)).cloned().map(Secret::new)).is_some()
                })
            });
        });
        let variable = EnvSecrets::variable(PREFIX, &name).expect("a mapped name");
        group.bench_function("raw std::env::var_os", |b| {
            b.iter(|| {
                runtime.block_on(async { black_box(std::env::var_os(black_box(&variable))) })
            });
        });
        let path = dir.path().join(&name);
        group.bench_function("raw std::fs::read", |b| {
            b.iter(|| {
                runtime.block_on(async {
                    black_box(std::fs::read(black_box(&path)).expect("readable"))
                })
            });
        });
        group.finish();
    }
    criterion.final_summary();
}

fn run(runtime: &Runtime, secrets: &dyn Secrets, name: &str) -> usize {
    runtime
        .block_on(secrets.get(name))
        .expect("a seeded secret")
        .expose()
        .len()
}
