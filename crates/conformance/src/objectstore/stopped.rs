//! The obligation that every operation answers `Stopped` after `stop`.

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::objectstore::{CONDITIONAL_PUT, ListOptions, PutCondition};

use super::ObjectStoreSettings;
use crate::harness::Instance;
use crate::{call, expect_kind};
use sandloom_driverkit::objectstore::ObjectStoreProvider;

pub(super) async fn operations_after_stop_fail_with_stopped<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    let store = &*i.driver;
    call!("put", store.put("stop/object", Bytes::from_static(b"v")));
    i.driver
        .stop()
        .await
        .map_err(|err| format!("stop failed: {err}"))?;
    let stopped = ErrorKind::Stopped;
    let data = || Bytes::from_static(b"after stop");
    expect_kind(
        "put after stop",
        stopped,
        &store.put("stop/object", data()).await,
    )?;
    expect_kind("get after stop", stopped, &store.get("stop/object").await)?;
    expect_kind("head after stop", stopped, &store.head("stop/object").await)?;
    expect_kind(
        "delete after stop",
        stopped,
        &store.delete("stop/object").await,
    )?;
    expect_kind(
        "list after stop",
        stopped,
        &store.list("", ListOptions::default()).await,
    )?;
    if i.declares(CONDITIONAL_PUT) {
        expect_kind(
            "put_if after stop",
            stopped,
            &store
                .put_if("stop/new", data(), PutCondition::IfAbsent)
                .await,
        )?;
    }
    Ok(())
}
