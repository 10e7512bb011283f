//! Generates the 990 `register_driver!` calls, the `match` and the `register()` calls.

fn main() {
    sandloom_bench_synthetic_gen::write(1000);
}
