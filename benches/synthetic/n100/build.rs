//! Generates the 90 `register_driver!` calls, the `match` and the `register()` calls.

fn main() {
    sandloom_bench_synthetic_gen::write(100);
}
