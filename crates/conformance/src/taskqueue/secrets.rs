//! The secrets obligation of the `taskqueue` kit: the errors its operations can provoke.

use sandloom_driverkit::taskqueue::TaskQueueProvider;

use super::TaskQueueSettings;
use crate::harness::Instance;

pub(super) async fn secrets_never_show<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    use sandloom_sdk_infra::bytes::Bytes;
    use sandloom_sdk_infra::taskqueue::EnqueueOptions;
    i.secrets_never_show(|q| {
        Box::pin(async move {
            let keyed = EnqueueOptions::default().with_idempotency_key("");
            vec![
                q.enqueue("", Bytes::from_static(b"v"), EnqueueOptions::default())
                    .await
                    .err(),
                q.enqueue("kit-secrets", Bytes::from_static(b"v"), keyed)
                    .await
                    .err(),
                q.reserve("", std::time::Duration::ZERO).await.err(),
                q.dead_letters("", 1).await.err(),
                // Errors only where the server cannot be reached, or after `stop`.
                q.reserve("kit-secrets", std::time::Duration::ZERO)
                    .await
                    .err(),
            ]
        })
    })
    .await
}
