//! The LocalEnvironment as the product lays it out for its MQTT nodes: `MQTT.Input` written by
//! MQTTSubscribe, `Destination.MQTT.Output` read by MQTTPublish, `WrittenDestination.MQTT`
//! written by it. Sluice adds MQTT 5's user properties and content type, and the packet id.

use sluice_node_api::{Message, NodeError, Tree};
use sluice_nodes_core::fields::{field, folder, text};
use sluice_tree::{Value, field_type};

use crate::connection::{Qos, Received};

/// `LocalEnvironment.MQTT.Input`: Topic, QualityOfService, Retained, Duplicate, MessageId, and at
/// MQTT 5 ContentType and UserProperties (one field per property, in order; names may repeat).
pub fn write_input(le: &mut Tree, m: &Received) -> Result<(), NodeError> {
    let r = le.root();
    let mqtt = folder(le, r, "MQTT")?;
    let input = folder(le, mqtt, "Input")?;
    let topic = m.topic();
    let t = le.alloc_text(topic.as_bytes());
    field(le, input, "Topic", Value::Character(t))?;
    field(
        le,
        input,
        "QualityOfService",
        Value::Integer(i64::from(m.qos())),
    )?;
    field(le, input, "Retained", Value::Boolean(m.retain()))?;
    field(le, input, "Duplicate", Value::Boolean(m.dup()))?;
    field(le, input, "MessageId", Value::Integer(i64::from(m.pkid())))?;
    if let Some(ct) = m.content_type() {
        let t = le.alloc_text(ct.as_bytes());
        field(le, input, "ContentType", Value::Character(t))?;
    }
    let props = m.user_properties();
    if !props.is_empty() {
        let up = folder(le, input, "UserProperties")?;
        for (name, value) in props {
            let n = le.alloc_text(name.as_bytes());
            let v = le.alloc_text(value.as_bytes());
            le.create_last_child(up, field_type::NAME_VALUE, n, Value::Character(v))?;
        }
    }
    Ok(())
}

/// What `LocalEnvironment.Destination.MQTT.Output` overrides of MQTTPublish's properties.
#[derive(Debug, Default, PartialEq)]
pub struct Overrides {
    pub topic: Option<String>,
    pub qos: Option<Qos>,
    pub retain: Option<bool>,
    pub content_type: Option<String>,
    pub user_properties: Vec<(String, String)>,
}

/// Read `Destination.MQTT.Output`: TopicName, qos, Retained (the product's names), and
/// ContentType and UserProperties for MQTT 5.
pub fn read_overrides(msg: &mut Message) -> Result<Overrides, NodeError> {
    let le = &mut msg.local_environment;
    let r = le.root();
    let mut o = Overrides::default();
    let Some(out) = le.path(r, &["Destination", "MQTT", "Output"])? else {
        return Ok(o);
    };
    if let Some(id) = le.child_named(out, None, b"TopicName", 0)? {
        o.topic = text(le, id).filter(|t| !t.is_empty());
    }
    if let Some(id) = le.child_named(out, None, b"qos", 0)? {
        let n = match le.value(id) {
            Value::Integer(i) => Some(i),
            _ => text(le, id).and_then(|t| t.trim().parse().ok()),
        };
        o.qos = Some(n.and_then(Qos::from_number).ok_or_else(|| {
            NodeError::recoverable("LocalEnvironment.Destination.MQTT.Output.qos must be 0, 1 or 2")
        })?);
    }
    if let Some(id) = le.child_named(out, None, b"Retained", 0)? {
        o.retain = Some(match le.value(id) {
            Value::Boolean(b) => b,
            _ => text(le, id).is_some_and(|t| t.trim().eq_ignore_ascii_case("true")),
        });
    }
    if let Some(id) = le.child_named(out, None, b"ContentType", 0)? {
        o.content_type = text(le, id);
    }
    if let Some(up) = le.child_named(out, None, b"UserProperties", 0)? {
        for c in le.children(up)? {
            let name = String::from_utf8_lossy(le.name_bytes(c)).into_owned();
            o.user_properties
                .push((name, text(le, c).unwrap_or_default()));
        }
    }
    Ok(o)
}

/// `LocalEnvironment.WrittenDestination.MQTT`: ClientId, TopicName and QualityOfService of the
/// publish the broker acknowledged.
pub fn write_written(
    msg: &mut Message,
    client_id: &str,
    topic: &str,
    qos: Qos,
) -> Result<(), NodeError> {
    let le = &mut msg.local_environment;
    let r = le.root();
    let wd = match le.child_named(r, None, b"WrittenDestination", 0)? {
        Some(w) => w,
        None => folder(le, r, "WrittenDestination")?,
    };
    if let Some(old) = le.child_named(wd, None, b"MQTT", 0)? {
        le.delete(old)?;
    }
    let m = folder(le, wd, "MQTT")?;
    let c = le.alloc_text(client_id.as_bytes());
    field(le, m, "ClientId", Value::Character(c))?;
    let t = le.alloc_text(topic.as_bytes());
    field(le, m, "TopicName", Value::Character(t))?;
    field(
        le,
        m,
        "QualityOfService",
        Value::Integer(i64::from(qos.number())),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_tree::Text;

    #[test]
    fn read_overrides_takes_the_product_fields_when_an_esql_sets_them() {
        let mut msg = Message::new();
        let le = &mut msg.local_environment;
        let r = le.root();
        let d = folder(le, r, "Destination").unwrap();
        let m = folder(le, d, "MQTT").unwrap();
        let o = folder(le, m, "Output").unwrap();
        let t = le.alloc_text(b"a/b");
        field(le, o, "TopicName", Value::Character(t)).unwrap();
        field(le, o, "qos", Value::Integer(2)).unwrap();
        field(le, o, "Retained", Value::Boolean(true)).unwrap();
        let up = folder(le, o, "UserProperties").unwrap();
        let v = le.alloc_text(b"1");
        le.create_last_child(
            up,
            field_type::NAME_VALUE,
            Text::from_static("k"),
            Value::Character(v),
        )
        .unwrap();
        let got = read_overrides(&mut msg).unwrap();
        assert_eq!(
            got,
            Overrides {
                topic: Some("a/b".into()),
                qos: Some(Qos::ExactlyOnce),
                retain: Some(true),
                content_type: None,
                user_properties: vec![("k".into(), "1".into())],
            }
        );
    }

    #[test]
    fn read_overrides_fails_when_qos_is_not_0_1_or_2() {
        let mut msg = Message::new();
        let le = &mut msg.local_environment;
        let r = le.root();
        let d = folder(le, r, "Destination").unwrap();
        let m = folder(le, d, "MQTT").unwrap();
        let o = folder(le, m, "Output").unwrap();
        field(le, o, "qos", Value::Integer(3)).unwrap();
        assert!(read_overrides(&mut msg).is_err());
    }
}
