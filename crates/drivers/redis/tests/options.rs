//! The options as written in `INFRA` (TOML): defaults, every key, refused keys and values.

use sandloom_driver_redis::{RedisCache, RedisCacheOptions};
use sandloom_driverkit::Driver;

fn parse(text: &str) -> Result<RedisCacheOptions, toml::de::Error> {
    toml::from_str(text)
}

#[test]
fn an_empty_table_gives_the_defaults() {
    let options = parse("").unwrap();
    assert_eq!(options, RedisCacheOptions::default());
    assert_eq!(options.url.expose(), "redis://127.0.0.1:6379");
    assert_eq!(options.prefix, None);
    assert_eq!(options.connect_timeout_ms, 2000);
    assert_eq!(options.response_timeout_ms, 1000);
    assert_eq!(options.default_ttl_ms, None);
    assert_eq!(options.tls_ca_file, None);
    assert!(RedisCache::validate(&options).is_ok());
}

#[test]
fn every_key_is_read() {
    let options = parse(
        r#"
        url = "rediss://cache.internal:6380/2"
        prefix = "shop"
        connect_timeout_ms = 500
        response_timeout_ms = 250
        default_ttl_ms = 60000
        tls_ca_file = "/etc/ssl/private-ca.pem"
        "#,
    )
    .unwrap();
    assert_eq!(options.prefix.as_deref(), Some("shop"));
    assert_eq!(options.default_ttl_ms, Some(60_000));
    assert!(RedisCache::validate(&options).is_ok());
    // Building does no I/O: the CA file is read by `start`, the server is not contacted.
    assert!(RedisCache::from_options(options).is_ok());
}

#[test]
fn a_misspelt_key_is_refused_by_name() {
    let err = parse("url = \"redis://x\"\nconnect_timeout = 5").unwrap_err();
    assert!(
        err.to_string().contains("unknown field `connect_timeout`"),
        "{err}"
    );
}

#[test]
fn values_that_make_no_sense_are_refused_by_validate() {
    for (text, expected) in [
        (
            "connect_timeout_ms = 0",
            "`connect_timeout_ms` must be at least 1",
        ),
        (
            "response_timeout_ms = 0",
            "`response_timeout_ms` must be at least 1",
        ),
        ("default_ttl_ms = 0", "`default_ttl_ms` must be at least 1"),
        ("prefix = \"\"", "`prefix` must not be empty"),
        ("url = \"localhost:6379\"", "`url` is not a Redis URL"),
        (
            "tls_ca_file = \"ca.pem\"",
            "`tls_ca_file` needs a `rediss://` url",
        ),
    ] {
        let options = parse(text).unwrap();
        let err = RedisCache::validate(&options).unwrap_err();
        // The error names its option, so the kernel places it at that key in INFRA.
        let (key, rest) = expected[1..].split_once("` ").unwrap();
        assert_eq!(err.option(), [key], "{text}: {err}");
        assert!(err.message().starts_with(rest), "{text}: {err}");
        assert!(
            err.to_string()
                .starts_with(&format!("option `{key}`: {rest}")),
            "{text}: {err}"
        );
    }
    assert!(parse("connect_timeout_ms = -1").is_err());
}
