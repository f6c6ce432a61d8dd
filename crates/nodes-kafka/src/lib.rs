//! Kafka nodes: KafkaConsumer (an input node), KafkaProducer and KafkaRead, speaking to a Kafka
//! cluster that sluice.yaml names under `brokers:`.
//!
//! The client is librdkafka, through rdkafka (built from source, linked with the system's
//! OpenSSL for TLS and SCRAM). Its consumer lets the node store an offset only once the flow's
//! unit of work committed (`enable.auto.offset.store=false`); the stored offsets are what the
//! consumer commits to the group. Its producer reports each message's delivery, which
//! KafkaProducer waits for before the flow goes on. docs/brokers.md says why this client.

mod client;
pub mod consumer;
pub mod producer;
pub mod read;
mod tree;

use sluice_node_api::{BrokerDef, ConfigError, KafkaBroker, NodeSpec, Services};

pub use consumer::KAFKA_CONSUMER;
pub use producer::KAFKA_PRODUCER;
pub use read::KAFKA_READ;

/// What goes wrong between a node and its Kafka cluster.
#[derive(Debug, thiserror::Error)]
pub enum KafkaError {
    /// The broker's `password_env` names a variable that is not set.
    #[error("the environment variable `{var}` (the broker's password_env) is not set")]
    PasswordEnv { var: String },
    /// librdkafka refused the client's configuration, or could not create the client (a TLS
    /// file it cannot read, say).
    #[error("cannot create the Kafka client: {0}")]
    Client(#[source] rdkafka::error::KafkaError),
    /// A request to the cluster failed (subscribe, seek, commit, assign, produce).
    #[error("{what}: {source}")]
    Request {
        what: &'static str,
        #[source]
        source: rdkafka::error::KafkaError,
    },
    /// The cluster did not take a produced message (the delivery report is an error).
    #[error("the message was not delivered: {0}")]
    Delivery(#[source] rdkafka::error::KafkaError),
    /// No delivery report or message came within the node's timeout.
    #[error("no answer from the Kafka cluster within {0} ms")]
    Timeout(u64),
}

/// Register KafkaConsumer, KafkaProducer and KafkaRead.
pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    for s in [&KAFKA_CONSUMER, &KAFKA_PRODUCER, &KAFKA_READ] {
        r(s);
    }
}

/// The Kafka cluster a node's `broker` property names.
fn kafka_broker(services: &Services, name: &str) -> Result<KafkaBroker, ConfigError> {
    match services.broker(name)? {
        BrokerDef::Kafka(b) => Ok(b.clone()),
        other => Err(ConfigError::property(
            "broker",
            format!(
                "broker `{name}` is a {} broker, not Kafka",
                other.protocol()
            ),
        )),
    }
}

/// The client id of a node: its own, else the broker's with the flow and node appended, else one
/// made of the flow and node.
fn client_id(own: &Option<String>, broker: &KafkaBroker, flow: &str, label: &str) -> String {
    match (own, &broker.client_id) {
        (Some(id), _) if !id.is_empty() => id.clone(),
        (_, Some(base)) if !base.is_empty() => format!("{base}-{flow}-{label}"),
        _ => format!("sluice-{flow}-{label}"),
    }
}

/// Kafka's rules for a topic name: 1 to 249 of `a-z A-Z 0-9 . _ -`, not `.` or `..`.
fn check_topic(t: &str) -> Result<(), &'static str> {
    if t.is_empty() || t.len() > 249 {
        return Err("it must have 1 to 249 characters");
    }
    if t == "." || t == ".." {
        return Err("`.` and `..` are not topic names");
    }
    if !t
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    {
        return Err("it may hold only letters, digits, `.`, `_` and `-`");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_node_api::KafkaSasl;

    pub(crate) fn broker() -> KafkaBroker {
        KafkaBroker {
            bootstrap_servers: "127.0.0.1:9092".into(),
            client_id: None,
            username: None,
            password_env: None,
            sasl_mechanism: KafkaSasl::Plain,
            tls: None,
        }
    }

    #[test]
    fn client_id_prefers_the_node_then_the_broker_when_set() {
        let mut b = broker();
        assert_eq!(client_id(&Some("mine".into()), &b, "f", "n"), "mine");
        assert_eq!(client_id(&None, &b, "f", "n"), "sluice-f-n");
        b.client_id = Some("app".into());
        assert_eq!(client_id(&None, &b, "f", "n"), "app-f-n");
    }

    #[test]
    fn kafka_broker_fails_when_the_broker_is_not_kafka() {
        let mut s = Services::none();
        s.brokers
            .insert("events".into(), BrokerDef::Kafka(broker()));
        assert!(kafka_broker(&s, "events").is_ok());
        let e = kafka_broker(&s, "other").unwrap_err();
        assert!(e.hint.unwrap_or_default().contains("events"));
    }

    #[test]
    fn check_topic_refuses_names_kafka_refuses_when_given_them() {
        for ok in ["orders", "a.b_c-1", "X"] {
            assert!(check_topic(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".", "..", "a/b", "a b", &"x".repeat(250)] {
            assert!(check_topic(bad).is_err(), "{bad}");
        }
    }
}
