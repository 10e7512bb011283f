//! Resolution with 10 linked driver entries (`sandloom-embedded`'s 10, no synthetic):
//! the kernel against its baselines. See `benches/resolution/mod.rs` and `BENCHMARKS.md`.

mod resolution;
mod support;

fn main() {
    resolution::main(&resolution::Bench {
        linked: sandloom::link_drivers!(sandloom_embedded, sandloom_bench_synthetic_10),
        entries: sandloom_bench_synthetic_10::LINKED,
        by_match: sandloom_bench_synthetic_10::by_match,
        register_all: sandloom_bench_synthetic_10::register_all,
    });
}
