//! How a task is written into an AMQP message, and read back.

use lapin::BasicProperties;
use lapin::types::{AMQPValue, FieldTable, ShortString};

/// The header counting the deliveries a task has had before this copy of it was published.
/// RabbitMQ counts nothing on classic queues, so every redelivery is a new copy of the message
/// carrying the count one higher (see the crate documentation).
pub(crate) const ATTEMPTS_HEADER: &str = "x-sandloom-attempts";

/// The header of a copy delayed longer than one delay queue holds it: when the task is due, in
/// milliseconds since the Unix epoch. A copy that reaches the ready queue before then is not
/// delivered but parked again for the rest of its delay.
pub(crate) const DUE_HEADER: &str = "x-sandloom-due-ms";

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

/// Persistent (`delivery_mode` 2), with the task id as `message_id` and the deliveries so far
/// in [`ATTEMPTS_HEADER`]; `expiration_ms` is the per-message TTL of a delayed copy, and
/// `due_ms` (in [`DUE_HEADER`]) when a longer delay ends.
pub(crate) fn properties(
    task_id: &str,
    attempts: u32,
    expiration_ms: Option<u64>,
    due_ms: Option<u64>,
) -> BasicProperties {
    let mut headers = FieldTable::default();
    headers.insert(
        ATTEMPTS_HEADER.into(),
        AMQPValue::LongLongInt(i64::from(attempts)),
    );
    if let Some(due) = due_ms {
        headers.insert(
            DUE_HEADER.into(),
            AMQPValue::LongLongInt(i64::try_from(due).unwrap_or(i64::MAX)),
        );
    }
    let properties = BasicProperties::default()
        .with_delivery_mode(2)
        .with_message_id(ShortString::from(task_id))
        .with_headers(headers);
    match expiration_ms {
        Some(ms) => properties.with_expiration(ShortString::from(ms.to_string())),
        None => properties,
    }
}

/// The deliveries a message's task has had before this copy was published (0 when the header is
/// missing, as on a message some other publisher put in the queue).
pub(crate) fn attempts_of(properties: &BasicProperties) -> u32 {
    let number = header_number(properties, ATTEMPTS_HEADER).unwrap_or(0);
    u32::try_from(number.max(0)).unwrap_or(u32::MAX)
}

/// How many milliseconds of its delay a copy still has to wait (`None` when it is due: no
/// [`DUE_HEADER`], or its time has come).
pub(crate) fn still_delayed_ms(properties: &BasicProperties) -> Option<u64> {
    let due = header_number(properties, DUE_HEADER)?;
    let left = due - i128::from(now_ms());
    (left > 0).then(|| u64::try_from(left).unwrap_or(u64::MAX))
}

/// An integer header of any AMQP integer type.
fn header_number(properties: &BasicProperties, header: &str) -> Option<i128> {
    let value = properties
        .headers()
        .as_ref()
        .and_then(|headers| headers.inner().get(header))?;
    let number: i128 = match value {
        AMQPValue::ShortShortInt(n) => (*n).into(),
        AMQPValue::ShortShortUInt(n) => (*n).into(),
        AMQPValue::ShortInt(n) => (*n).into(),
        AMQPValue::ShortUInt(n) => (*n).into(),
        AMQPValue::LongInt(n) => (*n).into(),
        AMQPValue::LongUInt(n) => (*n).into(),
        AMQPValue::LongLongInt(n) => (*n).into(),
        AMQPValue::Timestamp(n) => (*n).into(),
        _ => return None,
    };
    Some(number)
}

/// The task id a message carries, if any.
pub(crate) fn id_of(properties: &BasicProperties) -> Option<String> {
    properties
        .message_id()
        .as_ref()
        .map(|id| id.as_str().to_owned())
        .filter(|id| !id.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_round_trip() {
        let properties = properties("t-1", 3, Some(1500), None);
        assert_eq!(still_delayed_ms(&properties), None);
        assert_eq!(attempts_of(&properties), 3);
        assert_eq!(id_of(&properties).as_deref(), Some("t-1"));
        assert_eq!(properties.delivery_mode(), &Some(2));
        assert_eq!(
            properties.expiration().as_ref().map(ShortString::as_str),
            Some("1500")
        );
        assert_eq!(attempts_of(&BasicProperties::default()), 0);
        assert_eq!(id_of(&BasicProperties::default()), None);
    }

    #[test]
    fn a_copy_due_later_is_still_delayed() {
        let later = properties("t-1", 0, Some(1000), Some(now_ms() + 60_000));
        let left = still_delayed_ms(&later).unwrap();
        assert!(left > 50_000 && left <= 60_000, "{left}");
        let past = properties("t-1", 0, None, Some(now_ms().saturating_sub(1)));
        assert_eq!(still_delayed_ms(&past), None);
    }

    #[test]
    fn reads_any_integer_type() {
        let mut headers = FieldTable::default();
        headers.insert(ATTEMPTS_HEADER.into(), AMQPValue::ShortInt(-4));
        let negative = BasicProperties::default().with_headers(headers.clone());
        assert_eq!(attempts_of(&negative), 0);
        headers.insert(ATTEMPTS_HEADER.into(), AMQPValue::LongUInt(7));
        assert_eq!(
            attempts_of(&BasicProperties::default().with_headers(headers)),
            7
        );
    }
}
