//! The options of `taskqueue.amqp`, as read from `INFRA`.

use sandloom_driverkit::SecretUrl;
use serde::Deserialize;

use crate::address::Address;

/// The address used when `url` is not set: a RabbitMQ on this machine with its default account.
pub(crate) const DEFAULT_URL: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
/// The queue-name prefix used when `queue_prefix` is not set.
pub(crate) const DEFAULT_PREFIX: &str = "sandloom.";
/// The longest prefix accepted: the prefix, the kind of queue and the queue's own name share
/// RabbitMQ's 255-byte limit on queue names.
pub(crate) const MAX_PREFIX_LEN: usize = 100;
/// RabbitMQ refuses an `x-expires`, `x-message-ttl` or `expiration` above this many milliseconds.
pub(crate) const MAX_BROKER_MS: u64 = u32::MAX as u64;

/// Options of `taskqueue.amqp`.
///
/// ```toml
/// [taskqueue.default]
/// driver = "amqp"
/// url = "amqp://app:secret@rabbit.internal:5672/%2f"   # the password is never shown
/// queue_prefix = "sandloom."                           # default
/// visibility_timeout_ms = 30000                        # default 30 s
/// max_attempts = 5                                     # default 5
/// connect_timeout_ms = 5000                            # default 5 s
/// operation_timeout_ms = 10000                         # default 10 s
/// reconnect_backoff_max_ms = 5000                      # default 5 s
/// # queue_ttl_ms = 86400000                            # delete queues unused for a day
/// ```
///
/// `Debug` never shows the URL's user-info:
///
/// ```
/// use sandloom_driver_amqp::AmqpTaskQueueOptions;
///
/// let options = AmqpTaskQueueOptions {
///     url: "amqp://app:hunter2@rabbit.internal:5672/%2f".into(),
///     ..AmqpTaskQueueOptions::default()
/// };
/// let shown = format!("{options:?}");
/// assert!(shown.contains("amqp://***@rabbit.internal:5672/%2f"));
/// assert!(!shown.contains("hunter2"));
/// assert_eq!((options.visibility_timeout_ms, options.max_attempts), (30_000, 5));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AmqpTaskQueueOptions {
    /// The broker: `amqp://user:password@host:port/vhost` (`amqps://` for TLS; the vhost is
    /// URL-encoded, `%2f` is `/`). Query parameters of the URL are passed on to the client:
    /// `heartbeat` (seconds), `frame_max`, `channel_max`, `auth_mechanism`. Secret: the user-info
    /// never appears in errors, logs or `Debug`. Default `amqp://guest:guest@127.0.0.1:5672/%2f`.
    pub url: SecretUrl,
    /// Prefix of every queue the driver declares (default `sandloom.`). The task queue `mail`
    /// lives in the RabbitMQ queues `<prefix>q.mail` (ready tasks), `<prefix>dead.mail` (dead
    /// letters) and `<prefix>delay.<ms>.mail` (delayed tasks, one queue per delay bucket). At most
    /// 100 bytes, and not starting with `amq.` (reserved by RabbitMQ).
    pub queue_prefix: String,
    /// How long a reserved task stays with its consumer before it is delivered again, in
    /// milliseconds (default 30 000). RabbitMQ has no such timeout: the driver keeps the deadline
    /// of every reservation it handed out and republishes the task when it passes. At least 1.
    pub visibility_timeout_ms: u64,
    /// How many deliveries a task gets (default 5): when the last one is nacked or times out,
    /// the task moves to the queue's dead letters. At least 1.
    pub max_attempts: u32,
    /// How long `start` (and every reconnection) may take to open the connection, in
    /// milliseconds (default 5 000). At least 1.
    pub connect_timeout_ms: u64,
    /// How long one broker call (a publish awaiting its confirm, a declare, a get) may take
    /// before the operation answers `Timeout`, in milliseconds (default 10 000). At least 1.
    pub operation_timeout_ms: u64,
    /// Longest wait between reconnection attempts after the connection is lost, in
    /// milliseconds (default 5 000): the wait starts at 100 ms and doubles up to this. Meanwhile
    /// operations answer `Unavailable` at once. At least 1.
    pub reconnect_backoff_max_ms: u64,
    /// When set, the ready and dead-letter queues are declared with `x-expires`: RabbitMQ deletes
    /// a queue, with the tasks in it, once nobody has used it for this many milliseconds. Meant
    /// for tests and throw-away environments (it must exceed every delay you use); unset by
    /// default, so queues are kept. Changing it for existing queues needs them deleted first
    /// (RabbitMQ refuses to redeclare a queue with other arguments). Between 1 and 4 294 967 295.
    pub queue_ttl_ms: Option<u64>,
}

impl Default for AmqpTaskQueueOptions {
    fn default() -> Self {
        Self {
            url: DEFAULT_URL.into(),
            queue_prefix: DEFAULT_PREFIX.to_owned(),
            visibility_timeout_ms: 30_000,
            max_attempts: 5,
            connect_timeout_ms: 5_000,
            operation_timeout_ms: 10_000,
            reconnect_backoff_max_ms: 5_000,
            queue_ttl_ms: None,
        }
    }
}

impl AmqpTaskQueueOptions {
    /// Every problem with these options, in a message for people (never with the URL's
    /// user-info); `None` when they are usable.
    pub(crate) fn problem(&self) -> Option<String> {
        if let Err(problem) = Address::parse(self.url.expose()) {
            return Some(problem);
        }
        let at_least_one = [
            ("visibility_timeout_ms", self.visibility_timeout_ms),
            ("max_attempts", u64::from(self.max_attempts)),
            ("connect_timeout_ms", self.connect_timeout_ms),
            ("operation_timeout_ms", self.operation_timeout_ms),
            ("reconnect_backoff_max_ms", self.reconnect_backoff_max_ms),
        ];
        if let Some((name, _)) = at_least_one.iter().find(|(_, value)| *value == 0) {
            return Some(format!("`{name}` must be at least 1"));
        }
        if let Some(ttl) = self.queue_ttl_ms
            && !(1..=MAX_BROKER_MS).contains(&ttl)
        {
            return Some(format!(
                "`queue_ttl_ms` must be between 1 and {MAX_BROKER_MS} (RabbitMQ's limit for `x-expires`), not {ttl}"
            ));
        }
        if self.queue_prefix.len() > MAX_PREFIX_LEN {
            return Some(format!(
                "`queue_prefix` must be at most {MAX_PREFIX_LEN} bytes long, it has {}",
                self.queue_prefix.len()
            ));
        }
        if self.queue_prefix.starts_with("amq.") {
            return Some(format!(
                "`queue_prefix` {:?} starts with `amq.`, which RabbitMQ reserves for itself",
                self.queue_prefix
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<AmqpTaskQueueOptions, toml::de::Error> {
        toml::from_str(text)
    }

    #[test]
    fn every_option_has_a_default() {
        let options = parse("").unwrap();
        assert_eq!(options, AmqpTaskQueueOptions::default());
        assert_eq!(options.url.expose(), DEFAULT_URL);
        assert_eq!(options.queue_prefix, DEFAULT_PREFIX);
        assert_eq!(options.problem(), None);
    }

    #[test]
    fn unknown_options_are_refused() {
        let err = parse("visibility_timeout = 5").unwrap_err().to_string();
        assert!(err.contains("unknown field `visibility_timeout`"), "{err}");
        assert!(parse("prefetch = 10").is_err());
    }

    #[test]
    fn values_that_cannot_work_are_refused_with_the_option_named() {
        let problem = |text: &str| parse(text).unwrap().problem().unwrap_or_default();
        assert!(problem("visibility_timeout_ms = 0").contains("`visibility_timeout_ms`"));
        assert!(problem("max_attempts = 0").contains("`max_attempts`"));
        assert!(problem("connect_timeout_ms = 0").contains("`connect_timeout_ms`"));
        assert!(problem("operation_timeout_ms = 0").contains("`operation_timeout_ms`"));
        assert!(problem("reconnect_backoff_max_ms = 0").contains("`reconnect_backoff_max_ms`"));
        assert!(problem("queue_ttl_ms = 0").contains("`queue_ttl_ms`"));
        assert!(problem("queue_ttl_ms = 4294967296").contains("`queue_ttl_ms`"));
        assert!(problem("queue_prefix = \"amq.mine.\"").contains("`amq.`"));
        assert!(problem(&format!("queue_prefix = \"{}\"", "p".repeat(101))).contains("100 bytes"));
        assert!(problem("url = \"redis://127.0.0.1:6379\"").contains("amqp://"));
        assert_eq!(
            parse("queue_ttl_ms = 60000\nqueue_prefix = \"\"")
                .unwrap()
                .problem(),
            None
        );
    }
}
