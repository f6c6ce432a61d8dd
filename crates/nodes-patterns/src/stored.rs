//! How a message is kept on a state queue while a pattern node holds it (an aggregation's
//! replies, Resequence's early messages): its headers as the queue message's descriptor and
//! properties, its body serialised in its domain (UTF-8 for XML and JSON), and what the
//! descriptor lost (its MsgId, CorrelId and Priority) in `sluice.*` properties.

use sluice_node_api::{Message, NodeError};
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps, Domain, ParseTiming};
use sluice_nodes_mq::headers;
use sluice_qm::{ID_NONE, MsgId, PropertyValue};
use sluice_tree::{Position, Text, Value, field_type};

use crate::state::{self, P_CORREL, P_DOMAIN, P_PRIORITY};

/// A stored message's own MsgId: its descriptor's is the state queue's key.
const P_MSG_ID: &str = "sluice.msgId";

/// The message as it is kept on a state queue: its body serialised, the CorrelId `key` (to
/// find it again) and what it replaced in properties.
pub(crate) fn stored_form(msg: &mut Message, key: MsgId) -> Result<sluice_qm::Message, NodeError> {
    let domain = match msg.body()? {
        Some(b) => String::from_utf8_lossy(msg.root.name_bytes(b)).into_owned(),
        None => "BLOB".to_string(),
    };
    let (body, _) = sluice_nodes_core::domains::serialize_body(msg)?;
    let mut m = headers::from_tree(msg, body)?;
    m.set_property(
        P_CORREL,
        PropertyValue::Bytes(bytes::Bytes::copy_from_slice(&m.md.correl_id)),
    );
    m.set_property(P_PRIORITY, PropertyValue::Int(i64::from(m.md.priority)));
    m.set_property(
        P_MSG_ID,
        PropertyValue::Bytes(bytes::Bytes::copy_from_slice(&m.md.msg_id)),
    );
    m.set_property(P_DOMAIN, PropertyValue::String(domain));
    m.md.correl_id = key;
    m.md.priority = 0;
    m.md.expiry = -1;
    m.md.msg_id = ID_NONE;
    Ok(m)
}

/// A stored reply's headers as a message tree (its body left out), its domain and its body.
pub(crate) fn restore(
    mut m: sluice_qm::Message,
) -> Result<(Message, Domain, bytes::Bytes), NodeError> {
    let domain = match state::text_property(&m, P_DOMAIN).as_str() {
        "XMLNSC" => Domain::Xmlnsc,
        "JSON" => Domain::Json,
        _ => Domain::Blob,
    };
    if let Some(PropertyValue::Bytes(c)) = m.property(P_CORREL).cloned()
        && c.len() == 24
    {
        m.md.correl_id.copy_from_slice(&c);
    }
    // State stored before the message's own MsgId was kept comes back with the state queue's.
    if let Some(PropertyValue::Bytes(id)) = m.property(P_MSG_ID).cloned()
        && id.len() == 24
    {
        m.md.msg_id.copy_from_slice(&id);
    }
    m.md.priority = state::int_property(&m, P_PRIORITY).clamp(0, 9) as u8;
    m.md.expiry = -1;
    m.properties.retain(|(n, _)| !n.starts_with("sluice."));
    // The body was stored as its domain's serialiser wrote it (UTF-8 for XML and JSON): it is
    // parsed apart, without the descriptor's CCSID.
    let body = std::mem::take(&mut m.body);
    let headers = headers::to_tree(&m, &BodyParsing::blob())?;
    Ok((headers, domain, body))
}

pub(crate) fn parsing_of(domain: Domain) -> Result<BodyParsing, NodeError> {
    let props = BodyParsingProps {
        domain,
        parse_timing: ParseTiming::OnDemand,
        opaque_elements: Vec::new(),
    };
    BodyParsing::from_props(&props)
        .map_err(|e| NodeError::recoverable(format!("a stored reply: {}", e.message)))
}

/// A stored message as the message it was (its LocalEnvironment and Environment are not kept).
pub(crate) fn restore_message(m: sluice_qm::Message) -> Result<Message, NodeError> {
    let (mut msg, domain, body) = restore(m)?;
    let r = msg.root.root();
    if let Some(b) = msg.root.peek_last_child(r)
        && msg.root.name_bytes(b) == b"BLOB"
    {
        msg.root.delete(b)?;
    }
    parsing_of(domain)?.attach(&mut msg.root, body)?;
    Ok(msg)
}

/// One message of stored ones: `Root.Properties` (the first one's), then `Root.<top>` holding
/// the `attributes` as name-value fields and a folder per stored message, named by its entry,
/// with the message's Root (Properties, MQMD, body in its domain): the product's combined
/// aggregate reply and message collection.
pub(crate) fn folders_message(
    top: &str,
    attributes: &[(&str, &str)],
    entries: Vec<(String, sluice_qm::Message)>,
) -> Result<Message, NodeError> {
    let mut out = Message::new();
    let t = &mut out.root;
    let r = t.root();
    let props = match t.first_child(r)? {
        Some(p) if t.name_bytes(p) == b"Properties" => p,
        _ => t.create_last_child(
            r,
            field_type::NAME,
            Text::from_static("Properties"),
            Value::Null,
        )?,
    };
    let top_name = t.alloc_text(top.as_bytes());
    let top = t.create_last_child(r, field_type::NAME, top_name, Value::Null)?;
    for (name, value) in attributes {
        let n = t.alloc_text(name.as_bytes());
        let v = Value::Character(t.alloc_text(value.as_bytes()));
        t.create_last_child(top, field_type::NAME_VALUE, n, v)?;
    }
    let mut first = true;
    for (folder_name, stored) in entries {
        let (src, domain, body) = restore(stored)?;
        let sr = src.root.root();
        let name = t.alloc_text(folder_name.as_bytes());
        let folder = t.create_last_child(top, field_type::NAME, name, Value::Null)?;
        let mut child = src.root.peek_first_child(sr);
        while let Some(c) = child {
            child = src.root.peek_next_sibling(c);
            if src.root.name_bytes(c) == b"BLOB" && child.is_none() {
                continue;
            }
            if first && src.root.name_bytes(c) == b"Properties" {
                let mut pc = src.root.peek_first_child(c);
                while let Some(p) = pc {
                    t.copy_from(&src.root, p, props, Position::LastChild)?;
                    pc = src.root.peek_next_sibling(p);
                }
            }
            t.copy_from(&src.root, c, folder, Position::LastChild)?;
        }
        // Parsed in this tree (its parser registered here), then moved under its folder.
        let b = parsing_of(domain)?.attach(t, body)?;
        t.detach(b)?;
        t.attach(b, folder, Position::LastChild)?;
        first = false;
    }
    Ok(out)
}
