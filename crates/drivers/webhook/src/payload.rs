//! The JSON body of a request (the schema is documented in the crate docs).

use std::collections::BTreeMap;

use sandloom_driverkit::notifier::{Message, NAME};
use sandloom_driverkit::sdk::bytes::Bytes;
use sandloom_driverkit::sdk::{ErrorKind, InfraError, InfraResult};
use serde::Serialize;

/// Borrowed from the message: encoding copies each string once, into the body.
#[derive(Serialize)]
struct Payload<'a> {
    id: &'a str,
    recipient: &'a str,
    subject: Option<&'a str>,
    body: &'a str,
    metadata: &'a BTreeMap<String, String>,
}

/// The request body for `message` under the message id `id`.
pub(crate) fn encode(id: &str, message: &Message) -> InfraResult<Bytes> {
    let payload = Payload {
        id,
        recipient: &message.recipient,
        subject: message.subject.as_deref(),
        body: &message.body,
        metadata: &message.metadata,
    };
    serde_json::to_vec(&payload)
        .map(Bytes::from)
        // Strings and a string map always serialize; kept typed rather than unwrapped.
        .map_err(|err| {
            InfraError::new(
                ErrorKind::Backend,
                NAME,
                "cannot encode the message as JSON",
            )
            .with_source(err)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_stable() {
        let message = Message::new("#ops", "disk \"full\"\n")
            .with_subject("Größe")
            .with_metadata("b", "2")
            .with_metadata("a", "1");
        let body = encode("id-1", &message).unwrap();
        assert_eq!(
            std::str::from_utf8(&body).unwrap(),
            r##"{"id":"id-1","recipient":"#ops","subject":"Größe","body":"disk \"full\"\n","metadata":{"a":"1","b":"2"}}"##
        );
        let bare = encode("id-2", &Message::new("x", "y")).unwrap();
        assert_eq!(
            &bare[..],
            br#"{"id":"id-2","recipient":"x","subject":null,"body":"y","metadata":{}}"#
        );
    }
}
