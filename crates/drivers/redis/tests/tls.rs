//! `rediss://` against a TLS `redis-server` of the test's own, with a certificate authority the
//! test makes: trusted through `tls_ca_file`, refused without it.

mod support;

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};
use sandloom_driver_redis::{RedisCache, RedisCacheOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::cache::Cache;
use sandloom_driverkit::sdk::bytes::Bytes;
use support::{OwnRedis, free_port};

struct TlsFiles {
    _dir: tempfile::TempDir,
    ca: PathBuf,
    certificate: PathBuf,
    key: PathBuf,
}

/// A private CA and a server certificate for 127.0.0.1 signed by it, as PEM files.
fn tls_files() -> TlsFiles {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "sandloom test CA");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let server_key = KeyPair::generate().unwrap();
    let mut server_params =
        CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
    server_params
        .distinguished_name
        .push(DnType::CommonName, "127.0.0.1");
    let server_certificate = server_params.signed_by(&server_key, &*ca).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    TlsFiles {
        ca: write("ca.pem", ca.pem()),
        certificate: write("server.pem", server_certificate.pem()),
        key: write("server.key", server_key.serialize_pem()),
        _dir: dir,
    }
}

fn tls_server(files: &TlsFiles) -> OwnRedis {
    let port = free_port().to_string();
    let path = |path: &Path| path.to_str().unwrap().to_owned();
    let (certificate, key, ca) = (path(&files.certificate), path(&files.key), path(&files.ca));
    OwnRedis::start_with(
        port.parse().unwrap(),
        &[
            "--port",
            "0",
            "--tls-port",
            &port,
            "--tls-cert-file",
            &certificate,
            "--tls-key-file",
            &key,
            "--tls-ca-cert-file",
            &ca,
            "--tls-auth-clients",
            "no",
        ],
    )
}

fn options(url: String, tls_ca_file: Option<PathBuf>) -> RedisCacheOptions {
    RedisCacheOptions {
        url: url.into(),
        tls_ca_file,
        connect_timeout_ms: 2000,
        ..RedisCacheOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rediss_with_a_private_ca_works() {
    let files = tls_files();
    let server = tls_server(&files);
    let cache = RedisCache::from_options(options(
        format!("rediss://127.0.0.1:{}", server.port),
        Some(files.ca.clone()),
    ))
    .unwrap();
    cache.start().await.expect("TLS start with the private CA");
    cache
        .set("over-tls", Bytes::from_static(b"secret value"))
        .await
        .unwrap();
    assert_eq!(
        cache.get("over-tls").await.unwrap().as_deref(),
        Some(&b"secret value"[..])
    );
    assert!(cache.health().await.is_healthy());
    cache.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rediss_refuses_a_server_certificate_it_does_not_trust() {
    let files = tls_files();
    let server = tls_server(&files);
    // The web PKI roots do not include the test's CA.
    let url = format!("rediss://:hunter2-secret@127.0.0.1:{}", server.port);
    let cache = RedisCache::from_options(options(url, None)).unwrap();
    let err = cache.start().await.unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains(&format!("rediss://***@127.0.0.1:{}", server.port)),
        "{message}"
    );
    assert!(!message.contains("hunter2-secret"), "{message}");
    eprintln!("untrusted certificate: {message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_ca_file_or_plain_redis_against_tls_fails_at_start() {
    let files = tls_files();
    let server = tls_server(&files);
    let missing = files.ca.with_file_name("missing.pem");
    let cache = RedisCache::from_options(options(
        format!("rediss://127.0.0.1:{}", server.port),
        Some(missing),
    ))
    .unwrap();
    let message = cache.start().await.unwrap_err().to_string();
    assert!(message.contains("cannot read `tls_ca_file`"), "{message}");

    let cache =
        RedisCache::from_options(options(format!("redis://127.0.0.1:{}", server.port), None))
            .unwrap();
    let message = cache.start().await.unwrap_err().to_string();
    assert!(
        message.contains(&format!("127.0.0.1:{}", server.port)),
        "{message}"
    );
    eprintln!("plain client against TLS: {message}");
}
