//! Resolution with 1000 linked driver entries (`sandloom-embedded`'s 10 and 990 synthetic):
//! the kernel against its baselines. See `benches/resolution/mod.rs` and `BENCHMARKS.md`.

mod resolution;
mod support;

fn main() {
    resolution::main(&resolution::Bench {
        linked: sandloom::link_drivers!(sandloom_embedded, sandloom_bench_synthetic_1000),
        entries: sandloom_bench_synthetic_1000::LINKED,
        by_match: sandloom_bench_synthetic_1000::by_match,
        register_all: sandloom_bench_synthetic_1000::register_all,
    });
}
