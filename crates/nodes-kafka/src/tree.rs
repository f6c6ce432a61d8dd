//! The LocalEnvironment as the product lays it out for its Kafka nodes: `Kafka.Input` written by
//! KafkaConsumer and KafkaRead (topicName, partition, offset, key, and the message's headers in
//! `KafkaHeader`), `Destination.Kafka.Output` read by KafkaProducer (topicName, key, KafkaHeader;
//! Sluice adds partition), `WrittenDestination.Kafka` written by it (topicName, partition,
//! offset), and `Kafka.Read` read by KafkaRead (topicName, partition, offset; Sluice's names for
//! what its properties say). Sluice adds the message's `timestamp`.

use rdkafka::message::Headers;
use sluice_node_api::{Message, NodeError, Tree};
use sluice_nodes_core::fields::{field, folder, text};
use sluice_tree::{NodeId, Value, field_type};

/// `LocalEnvironment.Kafka.Input` for a received message. A key or header value that is not
/// UTF-8 is kept as a BLOB.
pub fn write_input(le: &mut Tree, m: &impl rdkafka::Message) -> Result<(), NodeError> {
    let r = le.root();
    let kafka = match le.child_named(r, None, b"Kafka", 0)? {
        Some(k) => k,
        None => folder(le, r, "Kafka")?,
    };
    if let Some(old) = le.child_named(kafka, None, b"Input", 0)? {
        le.delete(old)?;
    }
    let input = folder(le, kafka, "Input")?;
    let t = le.alloc_text(m.topic().as_bytes());
    field(le, input, "topicName", Value::Character(t))?;
    field(
        le,
        input,
        "partition",
        Value::Integer(i64::from(m.partition())),
    )?;
    field(le, input, "offset", Value::Integer(m.offset()))?;
    if let Some(k) = m.key() {
        let v = bytes_value(le, k);
        field(le, input, "key", v)?;
    }
    if let Some(ms) = m.timestamp().to_millis() {
        field(
            le,
            input,
            "timestamp",
            Value::GmtTimestamp(ms.saturating_mul(1000)),
        )?;
    }
    if let Some(hs) = m.headers() {
        let h = folder(le, input, "KafkaHeader")?;
        for header in hs.iter() {
            let n = le.alloc_text(header.key.as_bytes());
            let v = match header.value {
                Some(b) => bytes_value(le, b),
                None => Value::Null,
            };
            le.create_last_child(h, field_type::NAME_VALUE, n, v)?;
        }
    }
    Ok(())
}

/// What `LocalEnvironment.Destination.Kafka.Output` overrides of KafkaProducer's properties.
#[derive(Debug, Default, PartialEq)]
pub struct Overrides {
    pub topic: Option<String>,
    pub key: Option<Vec<u8>>,
    pub partition: Option<i32>,
    pub headers: Vec<(String, Vec<u8>)>,
}

/// Read `Destination.Kafka.Output`: topicName, key, partition and the KafkaHeader folder.
pub fn read_overrides(msg: &mut Message) -> Result<Overrides, NodeError> {
    let le = &mut msg.local_environment;
    let r = le.root();
    let mut o = Overrides::default();
    let Some(out) = le.path(r, &["Destination", "Kafka", "Output"])? else {
        return Ok(o);
    };
    if let Some(id) = le.child_named(out, None, b"topicName", 0)? {
        o.topic = text(le, id).filter(|t| !t.is_empty());
    }
    if let Some(id) = le.child_named(out, None, b"key", 0)? {
        o.key = bytes(le, id);
    }
    if let Some(id) = le.child_named(out, None, b"partition", 0)? {
        o.partition = Some(integer(le, id, "Destination.Kafka.Output.partition")?);
    }
    if let Some(h) = le.child_named(out, None, b"KafkaHeader", 0)? {
        for c in le.children(h)? {
            let name = String::from_utf8_lossy(le.name_bytes(c)).into_owned();
            o.headers.push((name, bytes(le, c).unwrap_or_default()));
        }
    }
    Ok(o)
}

/// `LocalEnvironment.WrittenDestination.Kafka`: where the cluster put the message.
pub fn write_written(
    msg: &mut Message,
    topic: &str,
    partition: i32,
    offset: i64,
) -> Result<(), NodeError> {
    let le = &mut msg.local_environment;
    let r = le.root();
    let wd = match le.child_named(r, None, b"WrittenDestination", 0)? {
        Some(w) => w,
        None => folder(le, r, "WrittenDestination")?,
    };
    if let Some(old) = le.child_named(wd, None, b"Kafka", 0)? {
        le.delete(old)?;
    }
    let k = folder(le, wd, "Kafka")?;
    let t = le.alloc_text(topic.as_bytes());
    field(le, k, "topicName", Value::Character(t))?;
    field(le, k, "partition", Value::Integer(i64::from(partition)))?;
    field(le, k, "offset", Value::Integer(offset))?;
    Ok(())
}

/// What `LocalEnvironment.Kafka.Read` overrides of KafkaRead's properties.
#[derive(Debug, Default, PartialEq)]
pub struct ReadOverrides {
    pub topic: Option<String>,
    pub partition: Option<i32>,
    pub offset: Option<i64>,
}

/// Read `Kafka.Read`: topicName, partition, offset.
pub fn read_read(msg: &mut Message) -> Result<ReadOverrides, NodeError> {
    let le = &mut msg.local_environment;
    let r = le.root();
    let mut o = ReadOverrides::default();
    let Some(rd) = le.path(r, &["Kafka", "Read"])? else {
        return Ok(o);
    };
    if let Some(id) = le.child_named(rd, None, b"topicName", 0)? {
        o.topic = text(le, id).filter(|t| !t.is_empty());
    }
    if let Some(id) = le.child_named(rd, None, b"partition", 0)? {
        o.partition = Some(integer(le, id, "Kafka.Read.partition")?);
    }
    if let Some(id) = le.child_named(rd, None, b"offset", 0)? {
        o.offset = Some(integer(le, id, "Kafka.Read.offset")?);
    }
    Ok(o)
}

fn bytes_value(t: &mut Tree, b: &[u8]) -> Value {
    let s = t.alloc_text(b);
    if std::str::from_utf8(b).is_ok() {
        Value::Character(s)
    } else {
        Value::Blob(s)
    }
}

/// A field's value as the bytes Kafka carries: a string's UTF-8, a BLOB's bytes.
fn bytes(t: &Tree, id: NodeId) -> Option<Vec<u8>> {
    match t.value(id) {
        Value::Null => None,
        Value::Character(s) => Some(t.str(s).as_bytes().to_vec()),
        Value::Integer(i) => Some(i.to_string().into_bytes()),
        _ => t.value_bytes(id).map(<[u8]>::to_vec),
    }
}

fn integer<T: TryFrom<i64>>(t: &Tree, id: NodeId, what: &str) -> Result<T, NodeError> {
    let n = match t.value(id) {
        Value::Integer(i) => Some(i),
        _ => text(t, id).and_then(|s| s.trim().parse().ok()),
    };
    n.and_then(|n| T::try_from(n).ok()).ok_or_else(|| {
        NodeError::recoverable(format!(
            "LocalEnvironment.{what} must be a whole number in range"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdkafka::message::{Header, OwnedHeaders, OwnedMessage, Timestamp};
    use sluice_tree::Text;

    #[test]
    fn write_input_lays_out_the_product_fields_when_a_message_has_key_and_headers() {
        let headers = OwnedHeaders::new()
            .insert(Header {
                key: "Name",
                value: Some("Bob"),
            })
            .insert(Header {
                key: "raw",
                value: Some(&[0xffu8, 0x00][..]),
            });
        let m = OwnedMessage::new(
            Some(b"body".to_vec()),
            Some(b"k1".to_vec()),
            "orders".into(),
            Timestamp::CreateTime(1_700_000_000_000),
            2,
            41,
            Some(headers),
        );
        let mut msg = Message::new();
        write_input(&mut msg.local_environment, &m).unwrap();
        let le = &mut msg.local_environment;
        let r = le.root();
        let input = le.path(r, &["Kafka", "Input"]).unwrap().unwrap();
        let get = |le: &mut Tree, n: &str| le.child_named(input, None, n.as_bytes(), 0).unwrap();
        let t = get(le, "topicName").unwrap();
        assert_eq!(text(le, t).as_deref(), Some("orders"));
        let p = get(le, "partition").unwrap();
        assert_eq!(le.value(p), Value::Integer(2));
        let o = get(le, "offset").unwrap();
        assert_eq!(le.value(o), Value::Integer(41));
        let k = get(le, "key").unwrap();
        assert_eq!(text(le, k).as_deref(), Some("k1"));
        let ts = get(le, "timestamp").unwrap();
        assert_eq!(le.value(ts), Value::GmtTimestamp(1_700_000_000_000_000));
        let h = get(le, "KafkaHeader").unwrap();
        let hs = le.children(h).unwrap();
        assert_eq!(hs.len(), 2);
        assert_eq!(text(le, hs[0]).as_deref(), Some("Bob"));
        assert!(matches!(le.value(hs[1]), Value::Blob(_)));
        assert_eq!(bytes(le, hs[1]), Some(vec![0xff, 0x00]));
    }

    fn output(msg: &mut Message) -> NodeId {
        let le = &mut msg.local_environment;
        let r = le.root();
        let d = folder(le, r, "Destination").unwrap();
        let k = folder(le, d, "Kafka").unwrap();
        folder(le, k, "Output").unwrap()
    }

    #[test]
    fn read_overrides_takes_topic_key_partition_and_headers_when_set() {
        let mut msg = Message::new();
        let o = output(&mut msg);
        let le = &mut msg.local_environment;
        let t = le.alloc_text(b"customers");
        field(le, o, "topicName", Value::Character(t)).unwrap();
        let k = le.alloc_text(b"c-7");
        field(le, o, "key", Value::Character(k)).unwrap();
        let p = le.alloc_text(b"3");
        field(le, o, "partition", Value::Character(p)).unwrap();
        let h = folder(le, o, "KafkaHeader").unwrap();
        let v = le.alloc_text(b"Bob");
        le.create_last_child(
            h,
            field_type::NAME_VALUE,
            Text::from_static("Name"),
            Value::Character(v),
        )
        .unwrap();
        assert_eq!(
            read_overrides(&mut msg).unwrap(),
            Overrides {
                topic: Some("customers".into()),
                key: Some(b"c-7".to_vec()),
                partition: Some(3),
                headers: vec![("Name".into(), b"Bob".to_vec())],
            }
        );
    }

    #[test]
    fn read_overrides_fails_when_the_partition_is_not_a_number() {
        let mut msg = Message::new();
        let o = output(&mut msg);
        let le = &mut msg.local_environment;
        let p = le.alloc_text(b"first");
        field(le, o, "partition", Value::Character(p)).unwrap();
        assert!(read_overrides(&mut msg).is_err());
    }
}
