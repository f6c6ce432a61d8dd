//! The admin API's view of the queue manager, for operators rather than applications: every
//! queue with its depth and attributes, browsing without removing, and put, get and clear with
//! the admin API's roles (the messaging API under `/ibmmq/rest/` has no roles and no listing).

use bytes::Bytes;
use serde_json::{Value, json};
use sluice_qm::{
    BrowseCursor, GetOptions, Message, Persistence, PropertyValue, PutContext, PutOptions, QmError,
    QueueDef, QueueKind, QueueManager, to_hex,
};

use crate::control::Answer;

/// Messages a browse returns when the request does not say.
const BROWSE_DEFAULT: usize = 20;
/// Most messages one browse returns: the page shows a preview, not the whole queue.
const BROWSE_MAX: usize = 200;
/// Body bytes shown of each message.
const PREVIEW_BYTES: usize = 4096;
/// PutApplName of messages put from the admin API.
const APPL_NAME: &str = "sluice admin";

fn error(status: u16, text: impl Into<String>) -> Answer {
    (status, json!({"error": text.into()}))
}

fn from_qm(e: &QmError) -> Answer {
    let status = match e {
        QmError::UnknownQueue(_) => 404,
        QmError::PutInhibited(_) | QmError::GetInhibited(_) | QmError::NotAuthorized(_) => 403,
        QmError::MsgTooBig { .. } => 413,
        QmError::QueueFull { .. } | QmError::DiskFull { .. } | QmError::ShutDown => 503,
        QmError::Invalid(_)
        | QmError::WrongQueueType { .. }
        | QmError::PersistentNotAllowed(_)
        | QmError::BadField { .. } => 400,
        // Uncommitted messages on a queue being cleared, and the like: a state, not a fault.
        QmError::InUse { .. } => 409,
        _ => 500,
    };
    (
        status,
        json!({"error": e.to_string(), "reason": e.reason_code()}),
    )
}

fn persistence(p: Persistence) -> &'static str {
    match p {
        Persistence::NotPersistent => "not_persistent",
        Persistence::Persistent => "persistent",
        Persistence::AsQueueDef => "as_queue_def",
    }
}

/// A queue's attributes, with its depth and storage when it holds messages.
fn queue_json(qm: &QueueManager, d: &QueueDef) -> Value {
    let mut v = json!({
        "name": d.name,
        "type": d.kind.name(),
        "max_depth": d.max_depth,
        "max_msg_length": d.max_msg_length,
        "default_persistence": persistence(d.default_persistence),
        "backout_threshold": d.backout_threshold,
        "backout_queue": d.backout_requeue_queue,
        "put_inhibited": d.put_inhibited,
        "get_inhibited": d.get_inhibited,
        "temporary_dynamic": d.temporary_dynamic,
    });
    if let QueueKind::Alias { target } = &d.kind {
        v["target"] = json!(target);
    }
    if !matches!(d.kind, QueueKind::Model) {
        // An alias whose target is missing has no depth; the listing still shows it.
        if let (Ok(depth), Ok(s)) = (qm.depth(&d.name), qm.queue_stats(&d.name)) {
            v["depth"] = json!(depth);
            v["bytes"] = json!(s.bytes);
            v["oldest_age_ms"] = json!(s.oldest_age_ms);
        }
    }
    v
}

fn property_json(p: &PropertyValue) -> Value {
    match p {
        PropertyValue::Bool(b) => json!(b),
        PropertyValue::Int(i) => json!(i),
        PropertyValue::Float(f) => json!(f),
        PropertyValue::String(s) => json!(s),
        PropertyValue::Bytes(b) => json!({"hex": to_hex(b)}),
    }
}

/// A message's descriptor, properties and the start of its body: as text when it is UTF-8,
/// else as hex.
pub fn message_json(m: &Message) -> Value {
    let md = &m.md;
    let shown = &m.body[..m.body.len().min(PREVIEW_BYTES)];
    let mut body = json!({"length": m.body.len(), "truncated": shown.len() < m.body.len()});
    match std::str::from_utf8(shown) {
        Ok(t) => body["text"] = json!(t),
        // Cut inside a character: the text up to it is still text.
        Err(e) if e.error_len().is_none() && e.valid_up_to() > 0 => {
            body["text"] = json!(String::from_utf8_lossy(&shown[..e.valid_up_to()]));
            body["truncated"] = json!(true);
        }
        Err(_) => body["hex"] = json!(to_hex(&shown[..shown.len().min(512)])),
    }
    json!({
        "descriptor": {
            "msg_id": to_hex(&md.msg_id),
            "correl_id": to_hex(&md.correl_id),
            "format": md.format.trim_end(),
            "persistence": persistence(md.persistence),
            "priority": md.priority,
            "expiry": md.expiry,
            "msg_type": md.msg_type,
            "encoding": md.encoding,
            "ccsid": md.coded_char_set_id,
            "reply_to_q": md.reply_to_q,
            "reply_to_qmgr": md.reply_to_qmgr,
            "backout_count": md.backout_count,
            "put_appl_name": md.put_appl_name,
            "put_date": md.put_date,
            "put_time": md.put_time,
            "user_identifier": md.user_identifier,
        },
        "properties": m.properties.iter().map(|(n, v)| json!({"name": n, "value": property_json(v)})).collect::<Vec<_>>(),
        "body": body,
    })
}

/// A query parameter's value.
fn query_param<'q>(query: &'q str, name: &str) -> Option<&'q str> {
    query
        .split('&')
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// A path segment with `%XX` escapes undone (queue names may hold `/` and `%`).
pub fn decode_segment(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn browse(qm: &QueueManager, name: &str, query: &str) -> Answer {
    let limit = match query_param(query, "limit").map(str::parse::<usize>) {
        None => BROWSE_DEFAULT,
        Some(Ok(n)) if (1..=BROWSE_MAX).contains(&n) => n,
        Some(_) => {
            return error(
                400,
                format!("limit must be a number from 1 to {BROWSE_MAX}"),
            );
        }
    };
    let depth = match qm.depth(name) {
        Ok(d) => d,
        Err(e) => return from_qm(&e),
    };
    let mut cursor = BrowseCursor::new();
    let mut messages = Vec::new();
    while messages.len() < limit {
        match qm.browse(name, &GetOptions::new(), &mut cursor) {
            Ok(Some(m)) => messages.push(message_json(&m)),
            Ok(None) => break,
            Err(e) => return from_qm(&e),
        }
    }
    (
        200,
        json!({"queue": name, "depth": depth, "messages": messages}),
    )
}

/// What `POST …/messages` puts: `{"body": TEXT, "priority": 0-9, "persistent": BOOL,
/// "reply_to_q": NAME, "properties": {NAME: string, number or boolean}}`, all but `body`
/// optional.
fn message_from(body: &[u8], user: &str) -> Result<Message, String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the body must be a JSON object with a \"body\" text: {e}"))?;
    let text = v["body"]
        .as_str()
        .ok_or("the JSON object needs \"body\", the message's text")?;
    let mut m = Message::new(Bytes::from(text.to_string()));
    PutContext::new(user, APPL_NAME).apply(&mut m);
    m.md.format = "MQSTR   ".into();
    match &v["priority"] {
        Value::Null => {}
        p => {
            m.md.priority = p
                .as_u64()
                .filter(|p| *p <= 9)
                .and_then(|p| u8::try_from(p).ok())
                .ok_or("\"priority\" must be a number from 0 to 9")?;
        }
    }
    match &v["persistent"] {
        Value::Null => {}
        Value::Bool(true) => m.md.persistence = Persistence::Persistent,
        Value::Bool(false) => m.md.persistence = Persistence::NotPersistent,
        _ => return Err("\"persistent\" must be true or false".into()),
    }
    match &v["reply_to_q"] {
        Value::Null => {}
        Value::String(q) if q.is_empty() => {}
        Value::String(q) => {
            sluice_qm::validate_name(q).map_err(|e| format!("\"reply_to_q\": {e}"))?;
            m.md.reply_to_q.clone_from(q);
        }
        _ => return Err("\"reply_to_q\" must be a queue name".into()),
    }
    match &v["properties"] {
        Value::Null => {}
        Value::Object(props) => {
            for (k, p) in props {
                let value = match p {
                    Value::String(s) => PropertyValue::String(s.clone()),
                    Value::Bool(b) => PropertyValue::Bool(*b),
                    Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                        (Some(i), _) => PropertyValue::Int(i),
                        (None, Some(f)) => PropertyValue::Float(f),
                        _ => return Err(format!("property '{k}' is not a number we can hold")),
                    },
                    _ => {
                        return Err(format!(
                            "property '{k}' must be a string, number or boolean"
                        ));
                    }
                };
                m.properties.push((k.clone(), value));
            }
        }
        _ => return Err("\"properties\" must be an object".into()),
    }
    Ok(m)
}

/// Answer a request of a queue route (`template`, one of the `/api/v1/queues` routes of
/// [`crate::control::ROUTES`]). Runs on a blocking thread: a put may wait for the log.
pub fn answer(
    qm: &QueueManager,
    method: &str,
    template: &str,
    name: Option<&str>,
    query: &str,
    body: &[u8],
    user: &str,
) -> Answer {
    if template == "/api/v1/queues" {
        let queues: Vec<Value> = qm.list().iter().map(|d| queue_json(qm, d)).collect();
        return (
            200,
            json!({"queue_manager": qm.name(), "dead_letter_queue": qm.dead_letter_queue(), "queues": queues}),
        );
    }
    let Some(name) = name.and_then(decode_segment) else {
        return error(400, "the queue name in the path is not valid");
    };
    match (method, template) {
        (_, "/api/v1/queues/{name}") => match qm.queue_def(&name) {
            Ok(d) => (200, queue_json(qm, &d)),
            Err(e) => from_qm(&e),
        },
        ("GET", "/api/v1/queues/{name}/messages") => browse(qm, &name, query),
        ("POST", "/api/v1/queues/{name}/messages") => {
            let m = match message_from(body, user) {
                Ok(m) => m,
                Err(e) => return error(400, e),
            };
            match qm.put(&name, m, &PutOptions::default()) {
                Ok(id) => (
                    201,
                    json!({"queue": name, "msg_id": to_hex(&id), "depth": qm.depth(&name).ok()}),
                ),
                Err(e) => from_qm(&e),
            }
        }
        (_, "/api/v1/queues/{name}/get") => match qm.get(&name, &GetOptions::new()) {
            Ok(m) => (
                200,
                json!({"queue": name, "message": m.as_ref().map(message_json), "depth": qm.depth(&name).ok()}),
            ),
            Err(e) => from_qm(&e),
        },
        (_, "/api/v1/queues/{name}/clear") => match qm.clear(&name) {
            Ok(n) => (200, json!({"queue": name, "cleared": n, "depth": 0})),
            Err(e) => from_qm(&e),
        },
        (m, other) => error(500, format!("the server has no handler for {m} {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qm() -> std::sync::Arc<QueueManager> {
        let qm = QueueManager::open_in_memory(sluice_qm::QmConfig::default()).expect("qm");
        qm.define(QueueDef::local("A.Q")).expect("define");
        qm
    }

    #[test]
    fn put_browse_get_and_clear_change_the_depth_when_called_in_turn() {
        let qm = qm();
        let put = br#"{"body": "hello", "priority": 4, "properties": {"colour": "red", "n": 7}}"#;
        let (s, v) = answer(
            &qm,
            "POST",
            "/api/v1/queues/{name}/messages",
            Some("A.Q"),
            "",
            put,
            "olga",
        );
        assert_eq!((s, v["depth"].as_u64()), (201, Some(1)), "{v}");
        answer(
            &qm,
            "POST",
            "/api/v1/queues/{name}/messages",
            Some("A.Q"),
            "",
            br#"{"body": "two"}"#,
            "olga",
        );
        let (s, v) = answer(
            &qm,
            "GET",
            "/api/v1/queues/{name}/messages",
            Some("A.Q"),
            "limit=1",
            b"",
            "",
        );
        assert_eq!(s, 200);
        assert_eq!(v["depth"], 2);
        let m = &v["messages"][0];
        assert_eq!(v["messages"].as_array().map(Vec::len), Some(1));
        assert_eq!(m["body"]["text"], "hello");
        assert_eq!(m["descriptor"]["priority"], 4);
        assert_eq!(m["descriptor"]["user_identifier"], "olga");
        assert_eq!(m["properties"][1]["value"], 7);

        let (_, v) = answer(
            &qm,
            "POST",
            "/api/v1/queues/{name}/get",
            Some("A.Q"),
            "",
            b"",
            "",
        );
        assert_eq!(
            (v["message"]["body"]["text"].as_str(), v["depth"].as_u64()),
            (Some("hello"), Some(1))
        );
        let (_, v) = answer(
            &qm,
            "POST",
            "/api/v1/queues/{name}/clear",
            Some("A.Q"),
            "",
            b"",
            "",
        );
        assert_eq!(v["cleared"], 1);
        let (_, v) = answer(
            &qm,
            "POST",
            "/api/v1/queues/{name}/get",
            Some("A.Q"),
            "",
            b"",
            "",
        );
        assert!(v["message"].is_null(), "{v}");
        let (_, v) = answer(&qm, "GET", "/api/v1/queues", None, "", b"", "");
        assert_eq!(v["queues"][0]["name"], "A.Q");
        assert_eq!(v["queues"][0]["depth"], 0);
    }

    #[test]
    fn answer_refuses_bad_input_with_400_or_404_when_given() {
        let qm = qm();
        let put = |body: &[u8]| {
            answer(
                &qm,
                "POST",
                "/api/v1/queues/{name}/messages",
                Some("A.Q"),
                "",
                body,
                "u",
            )
            .0
        };
        assert_eq!(put(b"not json"), 400);
        assert_eq!(put(br#"{"text": "no body"}"#), 400);
        assert_eq!(put(br#"{"body": "x", "priority": 12}"#), 400);
        assert_eq!(put(br#"{"body": "x", "properties": {"a": [1]}}"#), 400);
        let get = |name: &str, query: &str| {
            answer(
                &qm,
                "GET",
                "/api/v1/queues/{name}/messages",
                Some(name),
                query,
                b"",
                "",
            )
            .0
        };
        assert_eq!(get("NO.SUCH", ""), 404);
        assert_eq!(get("A.Q", "limit=0"), 400);
        assert_eq!(get("A%2", ""), 400);
    }

    #[test]
    fn message_json_shows_hex_when_the_body_is_not_text() {
        let m = Message::new(Bytes::from_static(&[0xff, 0x00, 0x41]));
        let v = message_json(&m);
        assert_eq!(v["body"]["hex"], "ff0041");
        assert!(v["body"]["text"].is_null());
    }

    #[test]
    fn decode_segment_undoes_escapes_and_refuses_broken_ones_when_given() {
        assert_eq!(decode_segment("A%2FB").as_deref(), Some("A/B"));
        assert_eq!(decode_segment("PLAIN.Q").as_deref(), Some("PLAIN.Q"));
        assert_eq!(decode_segment("A%zz"), None);
        assert_eq!(decode_segment("A%"), None);
    }
}
