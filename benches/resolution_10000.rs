//! Resolution with 10000 linked driver entries (`sandloom-embedded`'s 10 and 9990 synthetic):
//! the kernel against its baselines. See `benches/resolution/mod.rs` and `BENCHMARKS.md`.

mod resolution;
mod support;

fn main() {
    resolution::main(&resolution::Bench {
        linked: sandloom::link_drivers!(sandloom_embedded, sandloom_bench_synthetic_10000),
        entries: sandloom_bench_synthetic_10000::LINKED,
        by_match: sandloom_bench_synthetic_10000::by_match,
        register_all: sandloom_bench_synthetic_10000::register_all,
    });
}
