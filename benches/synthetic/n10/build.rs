//! Generates the `match` and the `register()` calls (no `register_driver!`: the 10 built-in drivers are the 10 entries).

fn main() {
    sandloom_bench_synthetic_gen::write(10);
}
