//! Arbitrary bytes as an `INFRA` file: `InfraConfig::from_toml_str`, then `Kernel::check`
//! against the embedded drivers. Never a panic; every problem has a code, and a line and column
//! when it names a place.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // `from_file` refuses text that is not UTF-8 before parsing; the parser only sees UTF-8.
    if let Ok(text) = std::str::from_utf8(data) {
        sandloom_fuzz::parse_and_check(text, &[]);
    }
});
