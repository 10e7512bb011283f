//! The secrets obligation of the `objectstore` kit: the errors its operations can provoke.

use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::objectstore::{ListOptions, PutCondition};

use super::ObjectStoreSettings;
use crate::harness::Instance;
use sandloom_driverkit::objectstore::ObjectStoreProvider;

pub(super) async fn secrets_never_show<T: ObjectStoreProvider>(
    i: &Instance<T>,
    _: &ObjectStoreSettings,
) -> Result<(), String> {
    i.secrets_never_show(|store| {
        Box::pin(async move {
            let b = || Bytes::from_static(b"v");
            vec![
                store.get("").await.err(),
                store.head("").await.err(),
                store.put("", b()).await.err(),
                store.delete("").await.err(),
                store.put_if("", b(), PutCondition::IfAbsent).await.err(),
                store
                    .list("", ListOptions::default().with_limit(0))
                    .await
                    .err(),
                store.get("kit/secrets/never-written").await.err(),
                // Errors only where the server cannot be reached, or after `stop`.
                store.put("kit/secrets/written", b()).await.err(),
                store
                    .list("kit/secrets/", ListOptions::default())
                    .await
                    .err(),
            ]
        })
    })
    .await
}
