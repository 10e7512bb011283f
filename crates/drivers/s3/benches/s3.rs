//! `objectstore.s3` against the `object_store` crate's `AmazonS3` used directly, on the same S3
//! server in the same run: put and get of a 1 KiB object.
//!
//! ```sh
//! eval "$(scripts/test-services up)"
//! cargo bench -p sandloom-driver-s3 -- --measurement-time 3
//! ```
//!
//! Without `SANDLOOM_TEST_S3_URL` it says how to run it and exits successfully.

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path;
use object_store::{ObjectStore as _, ObjectStoreExt as _, PutOptions, PutPayload};
use sandloom_driver_s3::{S3ObjectStore, S3ObjectStoreOptions};
use sandloom_driverkit::Driver;
use sandloom_driverkit::objectstore::ObjectStore;
use sandloom_driverkit::sdk::bytes::Bytes;

const SIZE: usize = 1024;

fn main() {
    let Ok(endpoint) = std::env::var("SANDLOOM_TEST_S3_URL") else {
        println!(
            "benchmark s3 skipped: set SANDLOOM_TEST_S3_URL \
             (eval \"$(scripts/test-services up)\") and run `cargo bench -p sandloom-driver-s3`"
        );
        return;
    };
    let bucket =
        std::env::var("SANDLOOM_TEST_S3_BUCKET").unwrap_or_else(|_| "sandloom-test".to_owned());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let prefix = format!("bench/{}", std::process::id());

    let driver = S3ObjectStore::from_options(S3ObjectStoreOptions {
        endpoint: Some(endpoint.clone().into()),
        bucket: bucket.clone(),
        access_key_id: Some("test".into()),
        secret_access_key: Some("test".into()),
        prefix: Some(prefix.clone()),
        ..Default::default()
    })
    .expect("valid options");
    runtime
        .block_on(driver.start())
        .expect("the S3 server answers");
    let store: &dyn ObjectStore = &driver;

    let raw = AmazonS3Builder::new()
        .with_endpoint(&endpoint)
        .with_allow_http(endpoint.starts_with("http://"))
        .with_bucket_name(&bucket)
        .with_region("us-east-1")
        .with_access_key_id("test")
        .with_secret_access_key("test")
        .build()
        .expect("an AmazonS3 client");

    let data = Bytes::from(vec![b'x'; SIZE]);
    let raw_path = Path::from(format!("{prefix}/raw/object"));
    runtime
        .block_on(store.put("driver/object", data.clone()))
        .expect("put through the driver");
    runtime
        .block_on(raw.put(&raw_path, PutPayload::from(data.clone())))
        .expect("put through object_store");

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("s3_1KiB");
    group.throughput(Throughput::Bytes(SIZE as u64));
    group.bench_function("put/driver", |b| {
        b.iter(|| {
            runtime
                .block_on(store.put("driver/object", data.clone()))
                .expect("put")
        });
    });
    group.bench_function("put/object_store", |b| {
        b.iter(|| {
            runtime
                .block_on(raw.put_opts(
                    &raw_path,
                    PutPayload::from(data.clone()),
                    PutOptions::default(),
                ))
                .expect("put")
        });
    });
    group.bench_function("get/driver", |b| {
        b.iter(|| black_box(runtime.block_on(store.get("driver/object")).expect("get")));
    });
    group.bench_function("get/object_store", |b| {
        b.iter(|| {
            black_box(
                runtime
                    .block_on(async { raw.get(&raw_path).await?.bytes().await })
                    .expect("get"),
            )
        });
    });
    group.finish();
    criterion.final_summary();

    if std::env::args().any(|arg| arg == "--bench") {
        runtime.block_on(paired_runs(store, &raw, &raw_path, &data));
    }
    runtime.block_on(driver.stop()).expect("stop");
}

const PAIRS: usize = 300;

/// Criterion measures the driver and the client one after the other, so load that comes and
/// goes on the machine (and in the S3 server) lands on one side. Pairs of calls, in alternating
/// order, see the same conditions: their medians give a steadier ratio.
async fn paired_runs(store: &dyn ObjectStore, raw: &AmazonS3, raw_path: &Path, data: &Bytes) {
    let put_driver = || async {
        store
            .put("driver/object", data.clone())
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    };
    let put_raw = || async {
        raw.put(raw_path, PutPayload::from(data.clone()))
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    };
    let get_driver = || async {
        store
            .get("driver/object")
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    };
    let get_raw = || async {
        match raw.get(raw_path).await {
            Ok(result) => result.bytes().await.map(drop).map_err(|e| e.to_string()),
            Err(err) => Err(err.to_string()),
        }
    };
    paired("put", put_driver, put_raw).await;
    paired("get", get_driver, get_raw).await;
}

/// Time `PAIRS` calls of each, alternating which goes first, and print the medians.
async fn paired<D, R, DF, RF>(name: &str, driver: D, raw: R)
where
    D: Fn() -> DF,
    R: Fn() -> RF,
    DF: Future<Output = Result<(), String>>,
    RF: Future<Output = Result<(), String>>,
{
    let (mut through_driver, mut direct) = (Vec::new(), Vec::new());
    for round in 0..PAIRS {
        for driver_turn in [round % 2 == 0, round % 2 != 0] {
            let started = std::time::Instant::now();
            if driver_turn {
                driver().await.expect("driver call");
                through_driver.push(started.elapsed());
            } else {
                raw().await.expect("object_store call");
                direct.push(started.elapsed());
            }
        }
    }
    let median = |times: &mut Vec<std::time::Duration>| {
        times.sort_unstable();
        times[times.len() / 2]
    };
    let (d, r) = (median(&mut through_driver), median(&mut direct));
    println!(
        "paired {name} (1 KiB, {PAIRS} pairs): driver median {d:?}, object_store median {r:?}, \
         driver throughput = {:.3}x object_store",
        r.as_secs_f64() / d.as_secs_f64()
    );
}
