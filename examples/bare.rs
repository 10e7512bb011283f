//! A bare hello world: the baseline of the startup benchmark (`benches/startup.rs`), what any
//! process costs on this machine from exec to exit.

fn main() {
    println!("hello, world");
}
