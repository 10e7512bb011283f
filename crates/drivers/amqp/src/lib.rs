//! Sandloom driver `taskqueue.amqp`: a `TaskQueue` on RabbitMQ, through `lapin`.
//!
//! Link it with `sandloom::link_drivers!(sandloom_driver_amqp)` and select it in `INFRA`:
//!
//! ```toml
//! [taskqueue.default]
//! driver = "amqp"
//! url = "amqp://app:secret@rabbit.internal:5672/%2f"
//! visibility_timeout_ms = 30000
//! max_attempts = 5
//! ```
//!
//! Features: `delay` and `dead_letter` (not `fifo`; not `dedupe`: the broker cannot tell a
//! retried publish from a new task, so an enqueue with an idempotency key answers
//! `Unsupported`). Options: [`AmqpTaskQueueOptions`].
//!
//! # How tasks live on the broker
//!
//! The task queue `mail` uses, with the default prefix `sandloom.`:
//!
//! | RabbitMQ queue | holds |
//! |---|---|
//! | `sandloom.q.mail` | ready tasks: durable classic queue, persistent messages |
//! | `sandloom.dead.mail` | dead letters, oldest first, until someone removes them |
//! | `sandloom.delay.<ms>.mail` | delayed tasks, one queue per delay bucket; they expire into `sandloom.q.mail` |
//!
//! - **Enqueue** publishes to the default exchange with `mandatory` set and waits for the
//!   publisher confirm: it returns once the broker has the task, and answers an error on a
//!   negative confirm. The task id is the message's `message_id`.
//! - **Reserve** takes a message with `basic.get` (manual ack); when the queue is empty it waits
//!   with a consumer of prefetch 1, cancelled as soon as one task arrived or the wait ended. The
//!   message stays unacked on this connection for as long as the reservation lasts. There is no
//!   `prefetch` option on purpose: tasks prefetched into a client buffer would be hidden from
//!   every other consumer without being reserved by anyone. A `reserve` the caller gives up on
//!   (or that times out) strands nothing: a late answer is put back in the queue.
//! - **Visibility timeout**: RabbitMQ has none (an unacked message waits for its connection to
//!   close). The driver keeps every reservation's deadline; when it passes, the driver
//!   republishes the task and acks the old delivery. A late `ack` or `nack` answers `Conflict`.
//! - **Attempts** are counted in the header `x-sandloom-attempts`: a nack or a timeout publishes
//!   a new copy with the count one higher (classic queues count nothing themselves). A task whose
//!   consumer died (connection lost, process killed) comes back from the broker marked
//!   `redelivered`; the next `reserve` counts that lost delivery by republishing it too, so even
//!   a task that crashes every worker reaches `max_attempts`. Redelivered tasks re-enter the
//!   ready queue at the back.
//! - **Retry limit**: when the last allowed delivery is nacked or times out, the task is
//!   published to its dead-letter queue (with a confirm) and the delivery acked.
//!   [`dead_letters`](sandloom_driverkit::taskqueue::TaskQueue::dead_letters) lists that queue
//!   without consuming it (it takes up to `limit` messages on a channel of its own and closes it,
//!   which puts them back in order); two listings at the same moment may each see fewer.
//! - **Delays** (and `nack` with `retry_after`) use the dead-letter pattern: the copy goes to a
//!   delay queue with a per-message `expiration`; the delay queue dead-letters expired messages
//!   into the ready queue. RabbitMQ expires messages only at the head of a queue, so a long delay
//!   would hold back a shorter one behind it: delays go to buckets (the delay rounded up to an
//!   eighth of its highest power of two), one queue each, so a task is held back by at most an
//!   eighth of its delay. Delay queues delete themselves when unused (`x-expires`, renewed before
//!   it could cut a delay short). One hop lasts at most 20 days (RabbitMQ's 32-bit TTLs): a
//!   longer delay's copy carries when it is due (header `x-sandloom-due-ms`), and one that
//!   reaches the ready queue early is parked again for the rest. Any delay is accepted;
//!   `Duration::MAX` is held a hundred years.
//! - **Connection loss**: operations answer `Unavailable` (or `Timeout` after
//!   `operation_timeout_ms`), reservations of the lost connection answer `Conflict` (the broker
//!   redelivers their tasks; the driver does not publish a second copy when their timeout
//!   passes), and the next operation reconnects on a new connection and channels, with a backoff
//!   from 100 ms up to `reconnect_backoff_max_ms` between attempts.
//! - **Cleanup**: with `queue_ttl_ms`, ready and dead-letter queues are declared with
//!   `x-expires` and disappear after that long unused (tests use this; production keeps them).
//!
//! # Errors
//!
//! | failure | kind |
//! |---|---|
//! | empty or too long queue name | `InvalidInput` |
//! | stale receipt (acked, nacked, timed out, or its connection lost) | `Conflict` |
//! | broker unreachable, connection lost, negative publisher confirm, reconnect backoff | `Unavailable` |
//! | no answer within `operation_timeout_ms` / `connect_timeout_ms` | `Timeout` |
//! | a queue exists with other arguments, access refused, other broker errors | `Backend` |
//! | after `stop` | `Stopped` |
//!
//! Messages name the broker as `amqp://***@host:port/vhost`: the user-info never appears in an
//! error, a log line or `Debug` output.

mod address;
mod engine;
mod errors;
mod ledger;
mod link;
mod message;
mod naming;
mod options;
mod provider;
mod receive;
mod settle;

pub use options::AmqpTaskQueueOptions;
pub use provider::AmqpTaskQueue;

sandloom_driverkit::register_driver!(taskqueue, "amqp", AmqpTaskQueue);
