//! The queue message descriptor and properties in the message tree, under the names the product
//! uses (`Root.MQMD`, `Root.MQRFH2.usr`), so that ESQL written for it reads them unchanged.

use bytes::Bytes;
use sluice_node_api::{Message, NodeError};
use sluice_qm::{Mqmd, Persistence, PropertyValue};
use sluice_tree::{NodeId, Text, Tree, Value, field_type};

use sluice_nodes_core::domains::BodyParsing;

fn nv(t: &mut Tree, parent: NodeId, name: &'static str, v: Value) -> Result<NodeId, NodeError> {
    Ok(t.create_last_child(parent, field_type::NAME_VALUE, Text::from_static(name), v)?)
}

fn chars(t: &mut Tree, parent: NodeId, name: &'static str, s: &str) -> Result<NodeId, NodeError> {
    let v = t.alloc_text(s.as_bytes());
    nv(t, parent, name, Value::Character(v))
}

fn blob(t: &mut Tree, parent: NodeId, name: &'static str, b: &[u8]) -> Result<NodeId, NodeError> {
    let v = t.alloc_text(b);
    nv(t, parent, name, Value::Blob(v))
}

/// `YYYYMMDD` → days since 1970-01-01.
fn put_date(s: &str) -> Option<i32> {
    let y: i64 = s.get(0..4)?.parse().ok()?;
    let m: u32 = s.get(4..6)?.parse().ok()?;
    let d: u32 = s.get(6..8)?.parse().ok()?;
    Some(sluice_tree::text_form::days_from_civil(y, m, d) as i32)
}

/// `HHMMSSTH` → microseconds since midnight.
fn put_time(s: &str) -> Option<i64> {
    let h: i64 = s.get(0..2)?.parse().ok()?;
    let m: i64 = s.get(2..4)?.parse().ok()?;
    let sec: i64 = s.get(4..6)?.parse().ok()?;
    let hundredths: i64 = s.get(6..8)?.parse().ok()?;
    Some(((h * 60 + m) * 60 + sec) * 1_000_000 + hundredths * 10_000)
}

/// Build the message assembly for a message taken from a queue.
pub fn to_tree(m: &sluice_qm::Message, parsing: &BodyParsing) -> Result<Message, NodeError> {
    let mut msg = Message::new();
    let t = &mut msg.root;
    let r = t.root();
    let md = &m.md;
    if let Some(p) = t.first_child(r)? {
        nv(t, p, "Encoding", Value::Integer(md.encoding as i64))?;
        nv(
            t,
            p,
            "CodedCharSetId",
            Value::Integer(md.coded_char_set_id as i64),
        )?;
        nv(
            t,
            p,
            "Persistence",
            Value::Boolean(md.persistence == Persistence::Persistent),
        )?;
        nv(t, p, "Priority", Value::Integer(md.priority as i64))?;
        blob(t, p, "ReplyIdentifier", &md.msg_id)?;
        chars(t, p, "ReplyProtocol", "MQ")?;
    }
    let h = t.create_last_child(r, field_type::NAME, Text::from_static("MQMD"), Value::Null)?;
    chars(t, h, "StrucId", "MD  ")?;
    nv(t, h, "Version", Value::Integer(2))?;
    nv(t, h, "Report", Value::Integer(md.report as i64))?;
    nv(t, h, "MsgType", Value::Integer(md.msg_type as i64))?;
    nv(t, h, "Expiry", Value::Integer(md.expiry as i64))?;
    nv(t, h, "Feedback", Value::Integer(md.feedback as i64))?;
    nv(t, h, "Encoding", Value::Integer(md.encoding as i64))?;
    nv(
        t,
        h,
        "CodedCharSetId",
        Value::Integer(md.coded_char_set_id as i64),
    )?;
    chars(t, h, "Format", &md.format)?;
    nv(t, h, "Priority", Value::Integer(md.priority as i64))?;
    nv(
        t,
        h,
        "Persistence",
        Value::Integer(md.persistence.code() as i64),
    )?;
    blob(t, h, "MsgId", &md.msg_id)?;
    blob(t, h, "CorrelId", &md.correl_id)?;
    nv(
        t,
        h,
        "BackoutCount",
        Value::Integer(md.backout_count as i64),
    )?;
    chars(t, h, "ReplyToQ", &md.reply_to_q)?;
    chars(t, h, "ReplyToQMgr", &md.reply_to_qmgr)?;
    chars(t, h, "UserIdentifier", &md.user_identifier)?;
    blob(t, h, "AccountingToken", &md.accounting_token)?;
    chars(t, h, "ApplIdentityData", &md.appl_identity_data)?;
    nv(t, h, "PutApplType", Value::Integer(md.put_appl_type as i64))?;
    chars(t, h, "PutApplName", &md.put_appl_name)?;
    match put_date(&md.put_date) {
        Some(d) => nv(t, h, "PutDate", Value::Date(d))?,
        None => chars(t, h, "PutDate", &md.put_date)?,
    };
    match put_time(&md.put_time) {
        Some(x) => nv(t, h, "PutTime", Value::GmtTime(x))?,
        None => chars(t, h, "PutTime", &md.put_time)?,
    };
    chars(t, h, "ApplOriginData", &md.appl_origin_data)?;
    blob(t, h, "GroupId", &md.group_id)?;
    nv(
        t,
        h,
        "MsgSeqNumber",
        Value::Integer(md.msg_seq_number as i64),
    )?;
    // Messages are never segmented here: the whole message at offset 0 (MQOL_UNDEFINED).
    nv(t, h, "Offset", Value::Integer(0))?;
    nv(t, h, "MsgFlags", Value::Integer(md.msg_flags as i64))?;
    nv(t, h, "OriginalLength", Value::Integer(-1))?;
    if !m.properties.is_empty() {
        let rfh = t.create_last_child(
            r,
            field_type::NAME,
            Text::from_static("MQRFH2"),
            Value::Null,
        )?;
        let usr =
            t.create_last_child(rfh, field_type::NAME, Text::from_static("usr"), Value::Null)?;
        for (name, v) in &m.properties {
            // `Group.name` is the field `name` of the folder `Group` (see `usr_properties`).
            let mut parent = usr;
            let mut leaf = name.as_str();
            if !name.split('.').any(str::is_empty) {
                while let Some((group, rest)) = leaf.split_once('.') {
                    parent = match t.child_named(parent, None, group.as_bytes(), 0)? {
                        Some(g) => g,
                        None => {
                            let g = t.alloc_text(group.as_bytes());
                            t.create_last_child(parent, field_type::NAME, g, Value::Null)?
                        }
                    };
                    leaf = rest;
                }
            }
            let n = t.alloc_text(leaf.as_bytes());
            let v = match v {
                PropertyValue::Bool(b) => Value::Boolean(*b),
                PropertyValue::Int(i) => Value::Integer(*i),
                PropertyValue::Float(f) => Value::Float(*f),
                PropertyValue::String(s) => Value::Character(t.alloc_text(s.as_bytes())),
                PropertyValue::Bytes(b) => Value::Blob(t.alloc_text(b)),
            };
            t.create_last_child(parent, field_type::NAME_VALUE, n, v)?;
        }
    }
    // A text domain's parser reads UTF-8: a body in another CCSID is converted first, as the
    // product's parsers decode by the descriptor's CodedCharSetId.
    let body = match parsing.text_domain() {
        Some(xml) => {
            sluice_codepage::body_to_utf8(m.body.clone(), i64::from(md.coded_char_set_id), xml)
                .map_err(|e| NodeError::recoverable(format!("the message body: {e}")))?
        }
        None => m.body.clone(),
    };
    parsing.attach(&mut msg.root, body)?;
    Ok(msg)
}

/// The value of `Root.MQMD.<name>` in a message, if present.
pub fn md_field(msg: &mut Message, name: &str) -> Result<Option<Value>, NodeError> {
    let r = msg.root.root();
    let Some(h) = msg.root.child_named(r, None, b"MQMD", 0)? else {
        return Ok(None);
    };
    Ok(msg
        .root
        .child_named(h, None, name.as_bytes(), 0)?
        .map(|f| msg.root.value(f)))
}

/// An id field's bytes, cut or zero-padded to `N` (24 for ids, 32 for AccountingToken).
fn id_bytes<const N: usize>(t: &Tree, v: Value) -> Option<[u8; N]> {
    let b = match v {
        Value::Blob(x) | Value::Character(x) => t.bytes(x),
        _ => return None,
    };
    let mut id = [0u8; N];
    let n = b.len().min(N);
    id[..n].copy_from_slice(&b[..n]);
    Some(id)
}

/// An id field of `Root.MQMD` as 24 bytes.
pub fn md_id(msg: &mut Message, name: &str) -> Result<Option<[u8; 24]>, NodeError> {
    Ok(md_field(msg, name)?.and_then(|v| id_bytes(&msg.root, v)))
}

fn text_of(t: &Tree, v: Value) -> Option<String> {
    match v {
        Value::Character(x) => Some(String::from_utf8_lossy(t.bytes(x)).into_owned()),
        _ => None,
    }
}

fn int_of(t: &Tree, v: Value) -> Option<i64> {
    match v {
        Value::Integer(i) => Some(i),
        Value::Character(x) | Value::Decimal(x) => {
            std::str::from_utf8(t.bytes(x)).ok()?.trim().parse().ok()
        }
        _ => None,
    }
}

/// Build the queue message for the message assembly: the descriptor from `Root.MQMD` where the
/// flow set one, properties from `Root.MQRFH2.usr`, and the body serialised in its domain.
/// The properties under `folder` of `MQRFH2.usr`: a nested folder's fields are named with
/// their path (`Group.name`, as MQ names the properties of an MQRFH2 group); values of types
/// a property has no room for (dates, times, decimals) travel as their text.
fn usr_properties(
    t: &mut sluice_tree::Tree,
    folder: sluice_tree::NodeId,
    prefix: &str,
    props: &mut Vec<(String, PropertyValue)>,
) -> Result<(), NodeError> {
    for f in t.children(folder)? {
        let name = format!("{prefix}{}", String::from_utf8_lossy(t.name_bytes(f)));
        let v = match t.value(f) {
            Value::Null => {
                usr_properties(t, f, &format!("{name}."), props)?;
                continue;
            }
            Value::Boolean(b) => PropertyValue::Bool(b),
            Value::Integer(i) => PropertyValue::Int(i),
            Value::Float(x) => PropertyValue::Float(x),
            Value::Blob(x) => PropertyValue::Bytes(Bytes::copy_from_slice(t.bytes(x))),
            other => {
                let mut text = Vec::new();
                sluice_tree::text_form::write_value(t, other, &mut text);
                PropertyValue::String(String::from_utf8_lossy(&text).into_owned())
            }
        };
        props.push((name, v));
    }
    Ok(())
}

pub fn from_tree(msg: &mut Message, body: Bytes) -> Result<sluice_qm::Message, NodeError> {
    let mut md = Mqmd::default();
    let mut props = Vec::new();
    let r = msg.root.root();
    let t = &mut msg.root;
    if let Some(h) = t.child_named(r, None, b"MQMD", 0)? {
        for f in t.children(h)? {
            let v = t.value(f);
            let name = t.name_bytes(f).to_vec();
            match name.as_slice() {
                b"MsgId" => md.msg_id = id_bytes(t, v).unwrap_or(md.msg_id),
                b"CorrelId" => md.correl_id = id_bytes(t, v).unwrap_or(md.correl_id),
                b"GroupId" => md.group_id = id_bytes(t, v).unwrap_or(md.group_id),
                b"ReplyToQ" => {
                    md.reply_to_q = text_of(t, v).unwrap_or_default().trim_end().to_string()
                }
                b"ReplyToQMgr" => {
                    md.reply_to_qmgr = text_of(t, v).unwrap_or_default().trim_end().to_string()
                }
                // MQCHAR8: a shorter format is padded with blanks, as MQ stores it.
                b"Format" => md.format = format!("{:<8}", text_of(t, v).unwrap_or_default()),
                b"UserIdentifier" => md.user_identifier = text_of(t, v).unwrap_or_default(),
                b"ApplIdentityData" => md.appl_identity_data = text_of(t, v).unwrap_or_default(),
                b"PutApplName" => md.put_appl_name = text_of(t, v).unwrap_or_default(),
                b"Persistence" => {
                    if let Some(p) = int_of(t, v).and_then(|i| Persistence::from_code(i as u8)) {
                        md.persistence = p;
                    }
                }
                b"Expiry" => md.expiry = int_of(t, v).unwrap_or(-1) as i32,
                b"Priority" => md.priority = int_of(t, v).unwrap_or(0).clamp(0, 9) as u8,
                b"Encoding" => md.encoding = int_of(t, v).unwrap_or(546) as i32,
                b"CodedCharSetId" => md.coded_char_set_id = int_of(t, v).unwrap_or(1208) as i32,
                b"MsgType" => md.msg_type = int_of(t, v).unwrap_or(8) as i32,
                b"Feedback" => md.feedback = int_of(t, v).unwrap_or(0) as i32,
                b"MsgSeqNumber" => md.msg_seq_number = int_of(t, v).unwrap_or(1) as i32,
                b"MsgFlags" => md.msg_flags = int_of(t, v).unwrap_or(0) as i32,
                b"Report" => md.report = int_of(t, v).unwrap_or(0) as i32,
                b"PutApplType" => md.put_appl_type = int_of(t, v).unwrap_or(0) as i32,
                b"AccountingToken" => {
                    md.accounting_token = id_bytes(t, v).unwrap_or(md.accounting_token)
                }
                b"ApplOriginData" => md.appl_origin_data = text_of(t, v).unwrap_or_default(),
                _ => {}
            }
        }
    }
    if let Some(rfh) = t.child_named(r, None, b"MQRFH2", 0)?
        && let Some(usr) = t.child_named(rfh, None, b"usr", 0)?
    {
        usr_properties(t, usr, "", &mut props)?;
    }
    Ok(sluice_qm::Message {
        md,
        properties: props,
        body,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn put_date_and_time_convert_to_tree_values() {
        assert_eq!(super::put_date("19700101"), Some(0));
        assert_eq!(super::put_date("20240101"), Some(19_723));
        assert_eq!(super::put_time("01020304"), Some(3_723_040_000));
        assert_eq!(super::put_date("2024"), None);
    }

    #[test]
    fn property_groups_are_folders_and_other_types_travel_as_text() {
        use sluice_qm::PropertyValue as P;
        use sluice_tree::{Text, Value, field_type};
        let mut m = sluice_qm::Message::new("x");
        m.properties = vec![
            ("Colour".into(), P::String("blue".into())),
            ("Order.Id".into(), P::Int(7)),
            ("Order.Lines.Count".into(), P::Int(2)),
            ("odd..name".into(), P::Bool(true)),
        ];
        let parsing = sluice_nodes_core::domains::BodyParsing::blob();
        let mut tree = super::to_tree(&m, &parsing).expect("tree");
        let t = &mut tree.root;
        let r = t.root();
        let count = t
            .path(r, &["MQRFH2", "usr", "Order", "Lines", "Count"])
            .expect("path")
            .expect("a nested field");
        assert_eq!(t.value(count), Value::Integer(2));
        // A DATE set by ESQL, and a format written short.
        let usr = t.path(r, &["MQRFH2", "usr"]).expect("path").expect("usr");
        let day = Text::from_static("Day");
        t.create_last_child(usr, field_type::NAME_VALUE, day, Value::Date(19_723))
            .expect("add");
        let md = t.path(r, &["MQMD"]).expect("path").expect("MQMD");
        let format = t.path(md, &["Format"]).expect("path").expect("Format");
        let short = t.alloc_text(b"MQSTR");
        t.set_value(format, Value::Character(short));
        let back = super::from_tree(&mut tree, bytes::Bytes::new()).expect("message");
        let mut expected = m.properties.clone();
        expected.push(("Day".into(), P::String("2024-01-01".into())));
        assert_eq!(back.properties, expected);
        assert_eq!(back.md.format, "MQSTR   ");
    }
}
