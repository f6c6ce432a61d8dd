//! The REST messaging API, shaped like IBM MQ's (`/ibmmq/rest/v1|v2|v3/messaging/...`),
//! transport-free: an HTTP server elsewhere calls [`handle`], which never waits: a get that
//! asked to wait and found nothing answers 204 with [`RestResponse::retry_until`], and the
//! server asks again until then (without holding a thread, and stopping when the client has
//! gone, so that no message is taken for a client that is no longer there).
//!
//! * `POST …/qmgr/{qmgr}/queue/{queue}/message` puts the request body. Request headers:
//!   `Content-Type` (text/*, application/json, application/xml → format `MQSTR`, anything
//!   else → blank format), `ibm-mq-md-correlationId` (48 hex digits, optional `ID:` prefix,
//!   or plain text up to 24 bytes), `ibm-mq-md-persistence` (`persistent` | `nonPersistent`),
//!   `ibm-mq-md-expiry` (`unlimited` | milliseconds), `ibm-mq-md-replyTo` (`queue[@qmgr]`),
//!   `ibm-mq-md-priority` (0-9), and message properties as `ibm-mq-usr-NAME` with a JSON
//!   value (`"red"`, `7`, `1.5`, `true`). Answers 201 with `ibm-mq-md-messageId`.
//! * Ids in answers are 48 hex digits; v3 writes them with IBM's `ID:` prefix (its queries and
//!   headers take either).
//! * `DELETE …/message` gets destructively; `GET …/message` browses the first message.
//!   Query: `correlationId=`, `messageId=` (hex), `wait=` (ms). Answers 200 with the body and
//!   `ibm-mq-md-messageId`, `ibm-mq-md-correlationId`, `ibm-mq-md-persistence`,
//!   `ibm-mq-md-expiry`, `ibm-mq-md-replyTo`, `ibm-mq-md-priority` and an `ibm-mq-usr-NAME`
//!   per property (text outside ASCII as JSON `\uXXXX` escapes); 204 when no message.
//! * Text content types must be UTF-8 (415 for another `charset`, 400 for invalid bytes); a get
//!   answers a text (MQSTR) message as UTF-8 (ISO-8859-1, CCSID 819, converted) and others as
//!   `application/octet-stream`.
//! * Without anonymous access every request needs HTTP basic credentials of a configured user
//!   or a bearer token (401 with `WWW-Authenticate` otherwise).
//! * Errors: 400 bad request, 403 put/get inhibited, 404 unknown queue manager or queue,
//!   405 other methods, 413 message too long, 503 queue full or storage problem; the body is
//!   IBM's JSON error shape `{"error":[{"type":"rest","msgId":…,"message":…,"explanation":…,
//!   "action":…,"completionCode":2,"reasonCode":…}]}` (the codes when the queue manager refused).

use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::error::QmError;
use crate::manager::QueueManager;
use crate::model::{
    BrowseCursor, GetOptions, ID_NONE, Message, Persistence, PropertyValue, PutContext, PutOptions,
    id_from_hex, id_from_text, id_to_hex,
};
use crate::net::AuthConfig;

/// An HTTP response for the server to send.
#[derive(Debug, Clone, PartialEq)]
pub struct RestResponse {
    /// HTTP status.
    pub status: u16,
    /// Response headers.
    pub headers: Vec<(String, String)>,
    /// Response body.
    pub body: Bytes,
    /// A get that asked to wait found no message yet: the same request may be made again
    /// until this moment (counted from this first answer); past it, this answer stands.
    pub retry_until: Option<Instant>,
}

/// Longest wait a REST get may ask for.
const MAX_WAIT: Duration = Duration::from_secs(120);

/// An error answer in the shape of IBM's: `{"error": [{"type", "msgId", "message",
/// "explanation", "action", and for a queue manager's refusal "completionCode" and
/// "reasonCode"}]}`, the message starting with its id.
fn error(status: u16, msg_id: &str, text: &str, reason: Option<u32>) -> RestResponse {
    let mut e = serde_json::json!({
        "type": "rest",
        "msgId": msg_id,
        "message": format!("{msg_id}: {text}"),
        "explanation": text,
        "action": "Correct the request, or the state it met, and send it again.",
    });
    if let Some(r) = reason {
        e["completionCode"] = serde_json::json!(2);
        e["reasonCode"] = serde_json::json!(r);
    }
    let body = serde_json::json!({ "error": [e] }).to_string();
    RestResponse {
        status,
        headers: vec![(
            "Content-Type".into(),
            "application/json;charset=utf-8".into(),
        )],
        body: Bytes::from(body),
        retry_until: None,
    }
}

fn from_qm(e: &QmError) -> RestResponse {
    let status = match e {
        QmError::UnknownQueue(_) => 404,
        QmError::PutInhibited(_) | QmError::GetInhibited(_) | QmError::NotAuthorized(_) => 403,
        QmError::MsgTooBig { .. } => 413,
        QmError::QueueFull { .. }
        | QmError::DiskFull { .. }
        | QmError::Log { .. }
        | QmError::ShutDown => 503,
        QmError::Invalid(_)
        | QmError::Definition { .. }
        | QmError::Tls { .. }
        | QmError::BadField { .. }
        | QmError::WrongQueueType { .. }
        | QmError::PersistentNotAllowed(_) => 400,
        _ => 500,
    };
    error(status, "MQWB0100E", &e.to_string(), Some(e.reason_code()))
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
}

/// How the API version writes ids in answers: v3 keeps the `ID:` prefix, v1 and v2 give
/// the 48 hex digits alone.
#[derive(Clone, Copy)]
struct IdStyle {
    prefixed: bool,
}

impl IdStyle {
    fn text(self, id: &crate::model::MsgId) -> String {
        if self.prefixed {
            format!("ID:{}", id_to_hex(id))
        } else {
            id_to_hex(id)
        }
    }
}

/// Parse `/ibmmq/rest/vN/messaging/qmgr/{qmgr}/queue/{queue}/message` → (qmgr, queue, how
/// that version writes ids).
fn parse_path(path: &str) -> Option<(String, String, IdStyle)> {
    let p = path.strip_prefix("/ibmmq/rest/")?;
    let (version, rest) = p.split_once('/')?;
    let style = match version {
        "v1" | "v2" => IdStyle { prefixed: false },
        "v3" => IdStyle { prefixed: true },
        _ => return None,
    };
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        ["messaging", "qmgr", qmgr, "queue", queue, "message"] => {
            Some((percent_decode(qmgr)?, percent_decode(queue)?, style))
        }
        _ => None,
    }
}

/// PutApplName of the messages the REST API puts.
const REST_APPL_NAME: &str = "sluice REST messaging";

/// The user a request is made as, when it carries credentials the queue manager accepts
/// (HTTP basic `user:password`, or a bearer token: then no name), checked as the client
/// protocol's CONNECT is; `None` when it must not be served. Without credentials a request
/// passes, as nobody, when the queue manager allows anonymous connections.
pub fn authenticated(auth: &AuthConfig, headers: &[(String, String)]) -> Option<String> {
    use base64::Engine;
    let Some((scheme, value)) = header(headers, "authorization").and_then(|v| v.split_once(' '))
    else {
        return auth.allow_anonymous.then(String::new);
    };
    let value = value.trim();
    if scheme.eq_ignore_ascii_case("bearer") {
        return (!value.is_empty() && auth.check("", "", value)).then(String::new);
    }
    if !scheme.eq_ignore_ascii_case("basic") {
        return auth.allow_anonymous.then(String::new);
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(value)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())?;
    let (user, password) = decoded.split_once(':')?;
    (!user.is_empty() && auth.check(user, password, "")).then(|| user.to_string())
}

/// Handle one REST messaging request, from a client that `auth` must accept.
pub fn handle(
    qm: &QueueManager,
    auth: &AuthConfig,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: Bytes,
) -> RestResponse {
    let Some(user) = authenticated(auth, headers) else {
        let mut r = error(
            401,
            "MQWB0103E",
            "Not authorized: give the queue manager's user and password (HTTP basic) or a token (Bearer)",
            Some(2035),
        );
        r.headers.push((
            "WWW-Authenticate".into(),
            format!("Basic realm=\"{}\"", qm.name()),
        ));
        return r;
    };
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    let Some((qmgr, queue, ids)) = parse_path(path) else {
        return error(
            404,
            "MQWB0006E",
            &format!("no REST resource at '{path}'"),
            None,
        );
    };
    if qmgr != qm.name() {
        return error(
            404,
            "MQWB0009E",
            &format!("queue manager '{qmgr}' does not exist"),
            None,
        );
    }
    match method {
        "POST" => put(
            qm,
            &queue,
            headers,
            body,
            &PutContext::new(&user, REST_APPL_NAME),
            ids,
        ),
        "DELETE" | "GET" => get(qm, &queue, query, method == "GET", ids),
        _ => {
            let mut r = error(
                405,
                "MQWB0007E",
                &format!("method {method} not allowed"),
                None,
            );
            r.headers.push(("Allow".into(), "POST, DELETE, GET".into()));
            r
        }
    }
}

/// Header prefix of a message property (IBM's `ibm-mq-usr-NAME: JSON value`).
const USR: &str = "ibm-mq-usr-";

fn property_from_json(v: &str) -> Option<PropertyValue> {
    match serde_json::from_str::<serde_json::Value>(v.trim()).ok()? {
        serde_json::Value::String(s) => Some(PropertyValue::String(s)),
        serde_json::Value::Bool(b) => Some(PropertyValue::Bool(b)),
        serde_json::Value::Number(n) => n
            .as_i64()
            .map(PropertyValue::Int)
            .or_else(|| n.as_f64().map(PropertyValue::Float)),
        _ => None,
    }
}

/// A property's value as JSON in ASCII alone (a header value cannot carry other bytes): text
/// outside ASCII is written as `\uXXXX` escapes, which any JSON reader turns back into it.
fn property_to_json(v: &PropertyValue) -> String {
    match v {
        PropertyValue::String(s) => {
            let json = serde_json::Value::from(s.as_str()).to_string();
            let mut out = String::with_capacity(json.len());
            let mut units = [0u16; 2];
            for c in json.chars() {
                if c.is_ascii() {
                    out.push(c);
                } else {
                    for u in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{u:04x}"));
                    }
                }
            }
            out
        }
        PropertyValue::Bool(b) => b.to_string(),
        PropertyValue::Int(i) => i.to_string(),
        PropertyValue::Float(f) => serde_json::Value::from(*f).to_string(),
        PropertyValue::Bytes(b) => serde_json::Value::from(crate::model::to_hex(b)).to_string(),
    }
}

/// The body of a text (MQSTR) message as UTF-8: as it is when it is UTF-8, converted from
/// ISO-8859-1 (CCSID 819); `None` for other messages, sent as bytes.
fn text_as_utf8(m: &Message) -> Option<Bytes> {
    if m.md.format.trim_end() != "MQSTR" {
        return None;
    }
    if m.md.coded_char_set_id == 819 {
        return Some(Bytes::from(
            m.body.iter().map(|&b| char::from(b)).collect::<String>(),
        ));
    }
    std::str::from_utf8(&m.body).ok().map(|_| m.body.clone())
}

/// A property name that can be part of a header name.
fn header_safe(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

fn put(
    qm: &QueueManager,
    queue: &str,
    headers: &[(String, String)],
    body: Bytes,
    context: &PutContext,
    ids: IdStyle,
) -> RestResponse {
    let ct = header(headers, "content-type")
        .unwrap_or("text/plain")
        .to_ascii_lowercase();
    let text = ct.starts_with("text/")
        || ct.starts_with("application/json")
        || ct.starts_with("application/xml");
    // Text is stored as UTF-8 (CCSID 1208) and said to be so on get: other character sets
    // are refused rather than mislabelled.
    if text {
        let charset = ct.split(';').skip(1).find_map(|p| {
            let (k, v) = p.split_once('=')?;
            (k.trim() == "charset").then(|| v.trim().trim_matches('"').to_string())
        });
        if let Some(cs) = charset.filter(|cs| cs != "utf-8" && cs != "utf8") {
            return error(
                415,
                "MQWB0305E",
                &format!("The character set {cs} is not acceptable for the request: send utf-8"),
                None,
            );
        }
        if std::str::from_utf8(&body).is_err() {
            return error(
                400,
                "MQWB0305E",
                "The body is not valid UTF-8 text, as its content type says",
                None,
            );
        }
    }
    let mut m = Message::new(body);
    context.apply(&mut m);
    m.md.format = if text {
        "MQSTR   ".into()
    } else {
        "        ".into()
    };
    for (name, v) in headers {
        let Some(prop) = name
            .get(..USR.len())
            .filter(|p| p.eq_ignore_ascii_case(USR))
            .map(|_| &name[USR.len()..])
        else {
            continue;
        };
        match property_from_json(v) {
            Some(value) if !prop.is_empty() => m.properties.push((prop.to_string(), value)),
            _ => {
                return error(
                    400,
                    "MQWB0115E",
                    &format!(
                        "{name} '{v}' is not valid: a JSON string, number or boolean, as \"red\" or 7"
                    ),
                    None,
                );
            }
        }
    }
    if let Some(v) = header(headers, "ibm-mq-md-correlationId") {
        match id_from_text(v) {
            Some(id) => m.md.correl_id = id,
            None => {
                return error(
                    400,
                    "MQWB0115E",
                    &format!("ibm-mq-md-correlationId '{v}' is not valid"),
                    None,
                );
            }
        }
    }
    if let Some(v) = header(headers, "ibm-mq-md-persistence") {
        m.md.persistence = match v {
            "persistent" => Persistence::Persistent,
            "nonPersistent" => Persistence::NotPersistent,
            _ => {
                return error(
                    400,
                    "MQWB0115E",
                    &format!("ibm-mq-md-persistence '{v}' is not valid"),
                    None,
                );
            }
        };
    }
    if let Some(v) = header(headers, "ibm-mq-md-expiry") {
        m.md.expiry = match v {
            "unlimited" => -1,
            ms => match ms.parse::<u64>() {
                Ok(ms) => ms.div_ceil(100).clamp(1, i32::MAX as u64) as i32,
                Err(_) => {
                    return error(
                        400,
                        "MQWB0115E",
                        &format!("ibm-mq-md-expiry '{v}' is not valid"),
                        None,
                    );
                }
            },
        };
    }
    if let Some(v) = header(headers, "ibm-mq-md-replyTo") {
        let (q, mgr) = v.split_once('@').unwrap_or((v, ""));
        if crate::manager::validate_name(q).is_err() {
            return error(
                400,
                "MQWB0115E",
                &format!("ibm-mq-md-replyTo '{v}' is not valid"),
                None,
            );
        }
        m.md.reply_to_q = q.into();
        m.md.reply_to_qmgr = if mgr.is_empty() {
            qm.name().into()
        } else {
            mgr.into()
        };
    }
    if let Some(v) = header(headers, "ibm-mq-md-priority") {
        match v.parse::<u8>() {
            Ok(p) if p <= 9 => m.md.priority = p,
            _ => {
                return error(
                    400,
                    "MQWB0115E",
                    &format!("ibm-mq-md-priority '{v}' is not valid"),
                    None,
                );
            }
        }
    }
    match qm.put(queue, m, &PutOptions::default()) {
        Ok(id) => RestResponse {
            status: 201,
            headers: vec![("ibm-mq-md-messageId".into(), ids.text(&id))],
            body: Bytes::new(),
            retry_until: None,
        },
        Err(e) => from_qm(&e),
    }
}

fn get(qm: &QueueManager, queue: &str, query: &str, browse: bool, ids: IdStyle) -> RestResponse {
    let mut o = GetOptions::new();
    for kv in query.split('&').filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        let v = percent_decode(v).unwrap_or_default();
        match k {
            "correlationId" | "messageId" => {
                // In the query an id is its 48 hex digits (after an optional `ID:`).
                let Some(id) = id_from_hex(&v) else {
                    return error(400, "MQWB0115E", &format!("{k} '{v}' is not valid"), None);
                };
                if k == "correlationId" {
                    o.correl_id = Some(id)
                } else {
                    o.msg_id = Some(id)
                }
            }
            "wait" => match v.parse::<u64>() {
                Ok(ms) => o.wait = Some(Duration::from_millis(ms).min(MAX_WAIT)),
                Err(_) => {
                    return error(400, "MQWB0115E", &format!("wait '{v}' is not valid"), None);
                }
            },
            _ => {
                return error(
                    400,
                    "MQWB0101E",
                    &format!("query parameter '{k}' is not valid"),
                    None,
                );
            }
        }
    }
    // The wait is the caller's (see the module's doc): this attempt does not wait.
    let retry_until = o.wait.take().map(|w| Instant::now() + w);
    let r = if browse {
        qm.browse(queue, &o, &mut BrowseCursor::new())
    } else {
        qm.get(queue, &o)
    };
    match r {
        Ok(None) => RestResponse {
            status: 204,
            headers: Vec::new(),
            body: Bytes::new(),
            retry_until,
        },
        Ok(Some(mut m)) => {
            let ct = match text_as_utf8(&m) {
                Some(utf8) => {
                    m.body = utf8;
                    "text/plain;charset=utf-8"
                }
                None => "application/octet-stream",
            };
            let md = &m.md;
            let mut h = vec![
                ("Content-Type".to_string(), ct.to_string()),
                ("ibm-mq-md-messageId".into(), ids.text(&md.msg_id)),
                (
                    "ibm-mq-md-persistence".into(),
                    if md.persistence == Persistence::Persistent {
                        "persistent"
                    } else {
                        "nonPersistent"
                    }
                    .into(),
                ),
                (
                    "ibm-mq-md-expiry".into(),
                    if md.expiry < 0 {
                        "unlimited".into()
                    } else {
                        (i64::from(md.expiry) * 100).to_string()
                    },
                ),
                ("ibm-mq-md-priority".into(), md.priority.to_string()),
            ];
            if md.correl_id != ID_NONE {
                h.push(("ibm-mq-md-correlationId".into(), ids.text(&md.correl_id)));
            }
            // Properties that a header can carry (a dead-letter header's `dlh.*` among them).
            for (name, v) in &m.properties {
                if header_safe(name) {
                    h.push((format!("{USR}{name}"), property_to_json(v)));
                }
            }
            if !md.reply_to_q.is_empty() {
                h.push((
                    "ibm-mq-md-replyTo".into(),
                    format!("{}@{}", md.reply_to_q, md.reply_to_qmgr),
                ));
            }
            RestResponse {
                status: 200,
                headers: h,
                body: m.body,
                retry_until: None,
            }
        }
        Err(e) => from_qm(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request from anyone (the queue manager allows anonymous access).
    fn call(
        qm: &QueueManager,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: Bytes,
    ) -> RestResponse {
        handle(qm, &AuthConfig::anonymous(), method, path, headers, body)
    }
    use crate::{QmConfig, QueueDef};

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }
    const P: &str = "/ibmmq/rest/v1/messaging/qmgr/SLUICE/queue/DEV.QUEUE.1/message";

    #[test]
    fn post_then_delete_round_trips_descriptor_headers() {
        let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
        qm.define(QueueDef::local("DEV.QUEUE.1")).expect("define");
        let hdrs = h(&[
            ("Content-Type", "text/plain;charset=utf-8"),
            (
                "ibm-mq-md-correlationId",
                "414d5120514d31202020202020202020d2b6a85f2000d20e",
            ),
            ("ibm-mq-md-persistence", "persistent"),
            ("ibm-mq-md-expiry", "60000"),
            ("ibm-mq-md-replyTo", "REPLY.Q@QM2"),
        ]);
        let r = call(&qm, "POST", P, &hdrs, Bytes::from("Hello World!"));
        assert_eq!(r.status, 201, "{:?}", r.body);
        let id = r
            .headers
            .iter()
            .find(|(n, _)| n == "ibm-mq-md-messageId")
            .expect("id")
            .1
            .clone();
        let r = call(
            &qm,
            "DELETE",
            &format!("{P}?messageId={id}&wait=10"),
            &[],
            Bytes::new(),
        );
        assert_eq!(r.status, 200);
        assert_eq!(r.body, "Hello World!");
        let get = |n: &str| {
            r.headers
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(
            get("ibm-mq-md-correlationId").as_deref(),
            Some("414d5120514d31202020202020202020d2b6a85f2000d20e")
        );
        assert_eq!(get("ibm-mq-md-persistence").as_deref(), Some("persistent"));
        assert_eq!(get("ibm-mq-md-replyTo").as_deref(), Some("REPLY.Q@QM2"));
        assert_eq!(
            get("Content-Type").as_deref(),
            Some("text/plain;charset=utf-8")
        );
        let exp: i64 = get("ibm-mq-md-expiry")
            .expect("expiry")
            .parse()
            .expect("number");
        assert!(exp > 0 && exp <= 60000);
        let r = call(&qm, "DELETE", P, &[], Bytes::new());
        assert_eq!(r.status, 204);
    }

    #[test]
    fn errors_have_ibm_statuses() {
        let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
        let r = call(&qm, "POST", P, &[], Bytes::from("x"));
        assert_eq!(r.status, 404);
        let body: serde_json::Value = serde_json::from_slice(&r.body).expect("JSON");
        let e = &body["error"][0];
        assert_eq!(e["reasonCode"], 2085, "{e}");
        assert_eq!(e["completionCode"], 2, "{e}");
        assert_eq!(e["type"], "rest", "{e}");
        let id = e["msgId"].as_str().expect("an id");
        assert!(
            e["message"]
                .as_str()
                .expect("text")
                .starts_with(&format!("{id}: "))
        );
        assert!(
            e["explanation"].is_string() && e["action"].is_string(),
            "{e}"
        );
        let r = call(
            &qm,
            "POST",
            "/ibmmq/rest/v1/messaging/qmgr/OTHER/queue/Q/message",
            &[],
            Bytes::new(),
        );
        assert_eq!(r.status, 404);
        qm.define(QueueDef {
            max_depth: 1,
            ..QueueDef::local("DEV.QUEUE.1")
        })
        .expect("define");
        assert_eq!(call(&qm, "POST", P, &[], Bytes::from("1")).status, 201);
        assert_eq!(call(&qm, "POST", P, &[], Bytes::from("2")).status, 503);
        assert_eq!(
            call(
                &qm,
                "POST",
                P,
                &h(&[("ibm-mq-md-persistence", "maybe")]),
                Bytes::new()
            )
            .status,
            400
        );
        assert_eq!(call(&qm, "PUT", P, &[], Bytes::new()).status, 405);
        assert_eq!(
            call(&qm, "DELETE", &format!("{P}?wait=abc"), &[], Bytes::new()).status,
            400
        );
        assert_eq!(
            call(
                &qm,
                "DELETE",
                &format!("{P}?correlationId=zz"),
                &[],
                Bytes::new()
            )
            .status,
            400
        );
        assert_eq!(call(&qm, "GET", P, &[], Bytes::new()).status, 200);
        assert_eq!(qm.depth("DEV.QUEUE.1").expect("depth"), 1);
    }

    #[test]
    fn without_anonymous_access_a_request_needs_the_queue_managers_credentials() {
        let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
        qm.define(QueueDef::local("DEV.QUEUE.1")).expect("define");
        let auth = AuthConfig {
            allow_anonymous: false,
            users: [("app".to_string(), "secret".to_string())].into(),
            tokens: vec!["tok123".into()],
        };
        let post = |creds: Option<&str>| {
            let hs = creds
                .map(|c| h(&[("Authorization", c)]))
                .unwrap_or_default();
            handle(&qm, &auth, "POST", P, &hs, Bytes::from("x"))
        };
        let refused = post(None);
        assert_eq!(refused.status, 401);
        assert!(
            refused
                .headers
                .iter()
                .any(|(n, v)| n == "WWW-Authenticate" && v.starts_with("Basic"))
        );
        for bad in [
            "Basic YXBwOndyb25n",
            "Bearer nope",
            "Basic !!!",
            "Digest x",
            "Bearer ",
        ] {
            assert_eq!(post(Some(bad)).status, 401, "{bad}");
        }
        assert_eq!(qm.depth("DEV.QUEUE.1").expect("depth"), 0, "nothing put");
        assert_eq!(post(Some("Basic YXBwOnNlY3JldA==")).status, 201);
        assert_eq!(post(Some("bearer tok123")).status, 201);
        let got = handle(&qm, &auth, "DELETE", P, &[], Bytes::new());
        assert_eq!(got.status, 401, "gets too");
        assert_eq!(qm.depth("DEV.QUEUE.1").expect("depth"), 2);
        // Put as the user the credentials named, by the REST API.
        let m = qm
            .get("DEV.QUEUE.1", &GetOptions::new())
            .expect("get")
            .expect("msg");
        assert_eq!(m.md.user_identifier, "app");
        assert_eq!(m.md.put_appl_name, REST_APPL_NAME);
    }

    #[test]
    fn v3_writes_ids_with_the_id_prefix() {
        let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
        qm.define(QueueDef::local("DEV.QUEUE.1")).expect("define");
        let v3 = P.replace("/v1/", "/v3/");
        let correl = format!("ID:{}", "ab".repeat(24));
        let hs = h(&[("ibm-mq-md-correlationId", &correl)]);
        let r = call(&qm, "POST", &v3, &hs, Bytes::from("x"));
        assert_eq!(r.status, 201);
        let id = r.headers[0].1.clone();
        assert!(id.starts_with("ID:") && id.len() == 51, "{id}");
        let r = call(
            &qm,
            "GET",
            &format!("{P}?messageId={id}"),
            &[],
            Bytes::new(),
        );
        let v1_id = &r
            .headers
            .iter()
            .find(|(n, _)| n == "ibm-mq-md-messageId")
            .expect("id")
            .1;
        assert_eq!(v1_id, &id[3..], "v1 writes the hex alone");
        let r = call(
            &qm,
            "DELETE",
            &format!("{v3}?messageId={id}"),
            &[],
            Bytes::new(),
        );
        let header = |n: &str| {
            r.headers
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(header("ibm-mq-md-messageId"), Some(id.clone()));
        assert_eq!(header("ibm-mq-md-correlationId"), Some(correl));
    }

    #[test]
    fn text_is_utf8_both_ways() {
        let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
        qm.define(QueueDef::local("DEV.QUEUE.1")).expect("define");
        let post = |ct: &str, body: &'static [u8]| {
            let hs = h(&[("Content-Type", ct)]);
            call(&qm, "POST", P, &hs, Bytes::from_static(body)).status
        };
        assert_eq!(post("text/plain;charset=iso-8859-1", b"caf\xe9"), 415);
        assert_eq!(post("text/plain;charset=utf-8", b"caf\xe9"), 400);
        assert_eq!(qm.depth("DEV.QUEUE.1").expect("depth"), 0);
        assert_eq!(post("text/plain; charset=UTF-8", "café".as_bytes()), 201);
        // ISO-8859-1 text put by another application comes out as UTF-8.
        let mut latin1 = Message::new(&b"caf\xe9"[..]);
        latin1.md.format = "MQSTR   ".into();
        latin1.md.coded_char_set_id = 819;
        qm.put("DEV.QUEUE.1", latin1, &PutOptions::default())
            .expect("put");
        let mut bad = Message::new(&b"\xff\xfe"[..]);
        bad.md.format = "MQSTR   ".into();
        qm.put("DEV.QUEUE.1", bad, &PutOptions::default())
            .expect("put");
        let cafe: &[u8] = "café".as_bytes();
        for (body, ct) in [
            (cafe, "text/plain;charset=utf-8"),
            (cafe, "text/plain;charset=utf-8"),
            (b"\xff\xfe", "application/octet-stream"),
        ] {
            let r = call(&qm, "DELETE", P, &[], Bytes::new());
            assert_eq!(&r.body[..], body);
            assert!(
                r.headers.contains(&("Content-Type".into(), ct.into())),
                "{ct}"
            );
        }
    }

    #[test]
    fn message_properties_travel_as_ibm_mq_usr_headers() {
        let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
        qm.define(QueueDef::local("DEV.QUEUE.1")).expect("define");
        let bad = call(
            &qm,
            "POST",
            P,
            &h(&[("ibm-mq-usr-color", "red")]),
            Bytes::new(),
        );
        assert_eq!(bad.status, 400, "a bare word is not JSON");
        let props = h(&[
            ("ibm-mq-usr-color", "\"red\""),
            ("ibm-mq-usr-count", "7"),
            ("ibm-mq-usr-city", "\"Zürich 😀\""),
        ]);
        assert_eq!(call(&qm, "POST", P, &props, Bytes::from("x")).status, 201);
        let r = call(&qm, "DELETE", P, &[], Bytes::new());
        assert_eq!(r.status, 200);
        let get = |n: &str| {
            r.headers
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("ibm-mq-usr-color"), Some("\"red\""));
        assert_eq!(get("ibm-mq-usr-count"), Some("7"));
        // Header values are ASCII: the text comes back as JSON escapes of the same characters.
        let city = get("ibm-mq-usr-city").expect("a property outside ASCII is not dropped");
        assert_eq!(city, r#""Z\u00fcrich \ud83d\ude00""#);
        assert_eq!(
            property_from_json(city),
            Some(PropertyValue::String("Zürich 😀".into()))
        );
    }

    #[test]
    fn a_get_that_waits_answers_at_once_with_until_when_to_ask_again() {
        let qm = QueueManager::open_in_memory(QmConfig::default()).expect("qm");
        qm.define(QueueDef::local("DEV.QUEUE.1")).expect("define");
        let asked = Instant::now();
        let r = call(&qm, "DELETE", &format!("{P}?wait=5000"), &[], Bytes::new());
        assert_eq!(r.status, 204);
        let until = r.retry_until.expect("a time to ask again until");
        assert!(until >= asked + Duration::from_millis(5000));
        let r = call(&qm, "DELETE", P, &[], Bytes::new());
        assert_eq!((r.status, r.retry_until), (204, None));
    }
}
