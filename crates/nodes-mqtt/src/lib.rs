//! MQTT nodes: MQTTSubscribe (an input node) and MQTTPublish, speaking MQTT 3.1.1 or 5 to a
//! broker that sluice.yaml names under `brokers:`.
//!
//! The client is rumqttc. Its manual acknowledgements let MQTTSubscribe acknowledge a QoS 1 or
//! 2 message only after the flow's unit of work committed; MQTTPublish waits for the broker's
//! PUBACK or PUBCOMP before the flow goes on. rumqttc 0.25 gives no per-publish completion, so
//! the publisher pairs each publish with the packet id the event loop reports for it (the loop
//! sends requests in the order it takes them) and that id with its acknowledgement.

mod connection;
pub mod publish;
pub mod subscribe;
mod tree;

use std::path::PathBuf;

use sluice_node_api::{BrokerDef, ConfigError, MqttBroker, NodeSpec, Services};

pub use connection::{Protocol, Qos};
pub use publish::MQTT_PUBLISH;
pub use subscribe::MQTT_SUBSCRIBE;

/// What goes wrong between a node and its broker.
#[derive(Debug, thiserror::Error)]
pub enum MqttError {
    /// The broker's `password_env` names a variable that is not set.
    #[error("the environment variable `{var}` (the broker's password_env) is not set")]
    PasswordEnv { var: String },
    /// A TLS certificate or key file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    TlsFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// rustls refused the TLS configuration (a bad certificate or key).
    #[error("TLS: {0}")]
    Tls(#[source] rustls::Error),
    /// The connection to the broker failed or was lost.
    #[error("the connection to the broker failed: {0}")]
    Connection(String),
    /// The client refused a request (its event loop is gone, or the topic is not valid).
    #[error("the MQTT client refused the request: {0}")]
    Client(String),
    /// The broker refused a publish (MQTT 5 reason code).
    #[error("the broker refused the publish: {0}")]
    Refused(String),
    /// No acknowledgement came within the node's timeout.
    #[error("no acknowledgement from the broker within {0} seconds")]
    Timeout(u64),
}

/// Register MQTTSubscribe and MQTTPublish.
pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    for s in [&MQTT_SUBSCRIBE, &MQTT_PUBLISH] {
        r(s);
    }
}

/// The MQTT broker a node's `broker` property names.
fn mqtt_broker(services: &Services, name: &str) -> Result<MqttBroker, ConfigError> {
    match services.broker(name)? {
        BrokerDef::Mqtt(b) => Ok(b.clone()),
        #[allow(unreachable_patterns)]
        other => Err(ConfigError::property(
            "broker",
            format!("broker `{name}` is a {} broker, not MQTT", other.protocol()),
        )),
    }
}

/// The client id of a node: its own, else the broker's with the flow and node appended, else one
/// made of the flow and node. Stable across restarts, so that a persistent session is found
/// again.
fn client_id(own: &Option<String>, broker: &MqttBroker, flow: &str, label: &str) -> String {
    match (own, &broker.client_id) {
        (Some(id), _) if !id.is_empty() => id.clone(),
        (_, Some(base)) if !base.is_empty() => format!("{base}-{flow}-{label}"),
        _ => format!("sluice-{flow}-{label}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn broker(client_id: Option<&str>) -> MqttBroker {
        MqttBroker {
            url: "tcp://127.0.0.1:1883".into(),
            host: "127.0.0.1".into(),
            port: 1883,
            client_id: client_id.map(str::to_string),
            username: None,
            password_env: None,
            tls: None,
            keep_alive_secs: 30,
        }
    }

    #[test]
    fn client_id_prefers_the_node_then_the_broker_when_set() {
        assert_eq!(
            client_id(&Some("mine".into()), &broker(Some("b")), "f", "n"),
            "mine"
        );
        assert_eq!(client_id(&None, &broker(Some("b")), "f", "n"), "b-f-n");
        assert_eq!(client_id(&None, &broker(None), "f", "n"), "sluice-f-n");
    }

    #[test]
    fn mqtt_broker_fails_with_a_hint_when_the_name_is_unknown() {
        let mut s = Services::none();
        s.brokers
            .insert("local".into(), BrokerDef::Mqtt(broker(None)));
        assert!(mqtt_broker(&s, "local").is_ok());
        let e = mqtt_broker(&s, "remote").unwrap_err();
        assert_eq!(e.property.as_deref(), Some("broker"));
        assert!(e.hint.unwrap_or_default().contains("local"));
    }
}
