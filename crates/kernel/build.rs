//! Tells the kernel the target it is compiled for. The survey that names unlinked candidate
//! crates runs `cargo metadata --frozen`, which without `--filter-platform` needs every
//! package of the lock file on disk, other platforms' included: on a machine that only built
//! for its own it failed, and the candidates went missing from the error.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(target) = std::env::var("TARGET") {
        println!("cargo:rustc-env=SANDLOOM_KERNEL_TARGET={target}");
    }
}
