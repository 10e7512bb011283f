//! Obligations on queues themselves: isolation, the empty name, and every operation after `stop`.

use std::time::Duration;

use sandloom_sdk_infra::ErrorKind;
use sandloom_sdk_infra::bytes::Bytes;
use sandloom_sdk_infra::taskqueue::{DEAD_LETTER, EnqueueOptions, TaskQueue};

use super::TaskQueueSettings;
use super::support::{SLACK, expect_none, put, queue_name, take};
use crate::harness::Instance;
use crate::{call, ensure, expect_kind};
use sandloom_driverkit::taskqueue::TaskQueueProvider;

pub(super) async fn queues_are_isolated<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q: &dyn TaskQueue = &*i.driver;
    let vt = i.request.visibility_timeout;
    let first = queue_name(&i.request, "iso");
    let second = queue_name(&i.request, "iso-b");
    let unused = queue_name(&i.request, "iso-unused");
    // Names that differ from `first` only by a suffix, in case, by a trailing space, or as
    // NFC against NFD (`é` as one code point, and as `e` and a combining accent).
    let near = [
        second.clone(),
        queue_name(&i.request, "ISO"),
        format!("{first} "),
        queue_name(&i.request, "is\u{e9}"),
        queue_name(&i.request, "ise\u{301}"),
        format!("{first}."),
        queue_name(&i.request, "is%6F"), // `%6F` is `o`, percent-encoded
    ];
    let mut tasks = Vec::new();
    for name in std::iter::once(&first).chain(&near) {
        let id = put(q, name, Bytes::from(format!("for {name:?}"))).await?;
        tasks.push((name, id));
    }
    // Near-identical names last-enqueued first: a driver that folds them into one queue hands
    // one of them the other's task.
    for (name, id) in tasks.iter().rev() {
        let got = take(q, name, SLACK, &format!("reserve from {name:?}")).await?;
        ensure!(
            got.task.id == *id && got.task.queue == **name,
            "reserve from {name:?} delivered task {:?} of queue {:?}, expected {id:?}: queues \
             whose names differ by a suffix, in case, by a trailing space or as NFC and NFD are \
             distinct",
            got.task.id,
            got.task.queue
        );
        call!("ack", q.ack(&got));
    }
    expect_none(
        q,
        &unused,
        vt / 4,
        "a queue nothing was enqueued to must be empty",
    )
    .await?;
    // A consumer waiting on one queue is not handed another queue's task.
    let (waiting, late) = tokio::join!(
        expect_none(
            q,
            &second,
            Duration::from_millis(600),
            "a consumer waiting on one queue must not get a task enqueued to another"
        ),
        async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            put(q, &first, Bytes::from_static(b"late for a")).await
        }
    );
    waiting?;
    let late = late?;
    let got = take(
        q,
        &first,
        SLACK,
        "reserve of the late task from its own queue",
    )
    .await?;
    ensure!(
        got.task.id == late,
        "reserve from {first:?} delivered task {:?}, expected {late:?}",
        got.task.id
    );
    call!("ack", q.ack(&got));
    Ok(())
}

pub(super) async fn empty_queue_name_is_invalid_input<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q = &*i.driver;
    expect_kind(
        "enqueue to the queue \"\"",
        ErrorKind::InvalidInput,
        &q.enqueue("", Bytes::from_static(b"x"), EnqueueOptions::default())
            .await,
    )?;
    expect_kind(
        "reserve from the queue \"\"",
        ErrorKind::InvalidInput,
        &q.reserve("", Duration::ZERO).await,
    )?;
    // A long wait: a driver that waits before it checks the name hangs here, not answers.
    expect_kind(
        "reserve from the queue \"\" with a long wait",
        ErrorKind::InvalidInput,
        &q.reserve("", SLACK * 30).await,
    )?;
    if i.declares(DEAD_LETTER) {
        expect_kind(
            "dead_letters of the queue \"\"",
            ErrorKind::InvalidInput,
            &q.dead_letters("", 10).await,
        )?;
    }
    Ok(())
}

pub(super) async fn operations_after_stop_fail_with_stopped<T: TaskQueueProvider>(
    i: &Instance<T>,
    _: &TaskQueueSettings,
) -> Result<(), String> {
    let q = &*i.driver;
    let name = queue_name(&i.request, "stop");
    put(q, &name, Bytes::from_static(b"held")).await?;
    put(q, &name, Bytes::from_static(b"waiting")).await?;
    let held = take(q, &name, SLACK, "reserve of an enqueued task").await?;
    q.stop().await.map_err(|e| format!("stop failed: {e}"))?;
    expect_kind(
        "enqueue after stop",
        ErrorKind::Stopped,
        &q.enqueue(&name, Bytes::from_static(b"x"), EnqueueOptions::default())
            .await,
    )?;
    expect_kind(
        "reserve after stop",
        ErrorKind::Stopped,
        &q.reserve(&name, Duration::ZERO).await,
    )?;
    expect_kind("ack after stop", ErrorKind::Stopped, &q.ack(&held).await)?;
    expect_kind(
        "nack after stop",
        ErrorKind::Stopped,
        &q.nack(&held, None).await,
    )?;
    if i.declares(DEAD_LETTER) {
        expect_kind(
            "dead_letters after stop",
            ErrorKind::Stopped,
            &q.dead_letters(&name, 10).await,
        )?;
    }
    Ok(())
}
