//! Writing a message for the wire: SOAP with Attachments when the `Attachment` folder has
//! children, MTOM (XOP) when the node allows it and the Body has base64Binary content large
//! enough, a plain envelope otherwise — the product's order of preference.
//!
//! MTOM moves the content of each Body element that the WSDL's schemas declare as
//! base64Binary, and whose decoded content is at least the threshold (1000 bytes unless
//! `MTOMThreshold` says otherwise), into a binary part, leaving an `xop:Include` in its place.
//! The product writes MTOM only when the node's validation is on (it knows the types from the
//! schema then); so does Sluice. The tree the flow goes on with is left as it was.

use std::collections::HashSet;

use base64::Engine as _;
use sluice_node_api::NodeError;
use sluice_parsers::soap::{self, SoapVersion};
use sluice_parsers::xmlnsc::field_type as xft;
use sluice_tree::{NodeId, Text, Tree, TreeError, Value};

use crate::attachments::{self, Attachment, XOP_NS};

/// The size, in decoded bytes, from which base64Binary content goes in a part of its own.
pub(crate) const DEFAULT_THRESHOLD: usize = 1000;
/// How deep the Body is searched for binary content.
const MAX_DEPTH: usize = 256;

/// What MTOM may move out of a Body.
pub(crate) struct Mtom<'a> {
    /// The base64Binary elements of the WSDL's schemas, by (namespace, local name).
    pub elements: &'a HashSet<(String, String)>,
    /// The smallest decoded content moved.
    pub threshold: usize,
}

/// Whether MTOM is allowed and its threshold, after the LocalEnvironment's overrides
/// `Destination.SOAP.<direction>.AllowMTOM` (`true`/`false`) and `.MTOMThreshold` (bytes).
pub(crate) fn settings(
    le: &mut Tree,
    direction: &'static str,
    allow: bool,
) -> Result<(bool, usize), NodeError> {
    let r = le.root();
    // ESQL may set them as BOOLEAN and INTEGER as well as as text.
    let mut read = |name: &'static str| -> Result<Option<String>, NodeError> {
        let Some(id) = le.path(r, &["Destination", "SOAP", direction, name])? else {
            return Ok(None);
        };
        Ok(match le.value(id) {
            Value::Boolean(b) => Some(b.to_string()),
            Value::Integer(n) => Some(n.to_string()),
            _ => le
                .value_bytes(id)
                .map(|b| String::from_utf8_lossy(b).into_owned()),
        })
    };
    let allow = match read("AllowMTOM")? {
        Some(v) => match v.trim().to_ascii_lowercase().as_str() {
            "true" | "1" => true,
            "false" | "0" => false,
            other => {
                return Err(NodeError::recoverable(format!(
                    "LocalEnvironment.Destination.SOAP.{direction}.AllowMTOM is `{other}`; give true or false"
                )));
            }
        },
        None => allow,
    };
    let threshold = match read("MTOMThreshold")? {
        Some(v) => v.trim().parse::<usize>().map_err(|_| {
            NodeError::recoverable(format!(
                "LocalEnvironment.Destination.SOAP.{direction}.MTOMThreshold is `{v}`; give a number of bytes"
            ))
        })?,
        None => DEFAULT_THRESHOLD,
    };
    Ok((allow, threshold))
}

/// The message body to send for the SOAP domain element `soap` of `tree`, with its HTTP
/// Content-Type when it is multipart (`None`: a plain envelope).
pub(crate) fn write(
    tree: &mut Tree,
    soap: NodeId,
    version: SoapVersion,
    mtom: Option<Mtom<'_>>,
) -> Result<(Vec<u8>, Option<String>), NodeError> {
    let attached = attachments::from_tree(tree, soap)?;
    if !attached.is_empty() {
        let mut out = Vec::new();
        soap::serialize_to(tree, soap, &mut out)?;
        let (ct, body) = attachments::join(&out, version, &attached, false)?;
        return Ok((body, Some(ct)));
    }
    if let Some(m) = mtom
        && !m.elements.is_empty()
    {
        // Moved out of a copy, so that the flow goes on with the content where it was.
        let mut copy = tree.clone();
        let parts = optimise(&mut copy, soap, &m)?;
        if !parts.is_empty() {
            let mut out = Vec::new();
            soap::serialize_to(&mut copy, soap, &mut out)?;
            let (ct, body) = attachments::join(&out, version, &parts, true)?;
            return Ok((body, Some(ct)));
        }
    }
    let mut out = Vec::new();
    soap::serialize_to(tree, soap, &mut out)?;
    Ok((out, None))
}

/// Replace the content of each binary element of the Body that reaches the threshold by an
/// `xop:Include` of a new part; the parts.
fn optimise(tree: &mut Tree, soap: NodeId, m: &Mtom<'_>) -> Result<Vec<Attachment>, TreeError> {
    let Some(body) = tree.child_named(soap, None, b"Body", 0)? else {
        return Ok(Vec::new());
    };
    let mut parts = Vec::new();
    let mut stack = vec![(body, 0usize)];
    let run = uuid::Uuid::new_v4().simple().to_string();
    while let Some((id, depth)) = stack.pop() {
        for c in tree.children(id)? {
            let t = tree.field_type(c);
            if t != xft::FOLDER && t != xft::FIELD {
                continue;
            }
            let key = (
                String::from_utf8_lossy(tree.namespace_bytes(c)).into_owned(),
                String::from_utf8_lossy(tree.name_bytes(c)).into_owned(),
            );
            let data = if m.elements.contains(&key) {
                tree.value_bytes(c).and_then(decode)
            } else {
                None
            };
            match data {
                Some(data) if data.len() >= m.threshold => {
                    let content_id = format!("part{}.{run}@sluice", parts.len() + 1);
                    include(tree, soap, c, &content_id)?;
                    parts.push(Attachment {
                        content_id,
                        headers: vec![(
                            "Content-Type".to_string(),
                            "application/octet-stream".to_string(),
                        )],
                        data,
                    });
                }
                _ if depth < MAX_DEPTH => stack.push((c, depth + 1)),
                _ => {}
            }
        }
    }
    Ok(parts)
}

/// base64 text (line breaks and spaces allowed) decoded; `None` when it is not base64.
fn decode(text: &[u8]) -> Option<Vec<u8>> {
    let compact: Vec<u8> = text
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()
}

/// Put `<xop:Include href="cid:ID"/>` in place of the content of `el`.
fn include(tree: &mut Tree, soap: NodeId, el: NodeId, content_id: &str) -> Result<(), TreeError> {
    tree.set_value(el, Value::Null);
    tree.set_field_type(el, xft::FOLDER);
    let inc = tree.create_last_child(el, xft::FOLDER, Text::from_static("Include"), Value::Null)?;
    let ns = tree.alloc_text(XOP_NS.as_bytes());
    tree.set_namespace(inc, ns);
    let href = tree.alloc_text(format!("cid:{content_id}").as_bytes());
    tree.create_last_child(
        inc,
        xft::ATTRIBUTE,
        Text::from_static("href"),
        Value::Character(href),
    )?;
    crate::wsa::declare_prefix(tree, soap, "xop", XOP_NS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use sluice_parsers::soap::SoapParser;

    const NS: &str = "urn:test:files";

    fn parsed(data_b64: &str) -> (Tree, NodeId) {
        let text = format!(
            r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" xmlns:f="{NS}"><s:Body><f:upload><f:name>a</f:name><f:data>{data_b64}</f:data></f:upload></s:Body></s:Envelope>"#
        );
        let mut t = Tree::new("Root");
        let r = t.root();
        let id = soap::attach(&mut t, r, Bytes::from(text), SoapParser::shared());
        t.expand_all(id).unwrap();
        (t, id)
    }

    fn elements() -> HashSet<(String, String)> {
        [(NS.to_string(), "data".to_string())].into_iter().collect()
    }

    #[test]
    fn write_moves_binary_content_at_the_threshold_into_a_part() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(1500).collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let (mut t, id) = parsed(&b64);
        let el = elements();
        let m = Mtom {
            elements: &el,
            threshold: 1000,
        };
        let (body, ct) = write(&mut t, id, SoapVersion::V11, Some(m)).unwrap();
        let ct = ct.expect("multipart");
        assert!(ct.contains("type=\"application/xop+xml\""), "{ct}");
        let r = attachments::split(&ct, &Bytes::from(body)).unwrap();
        let env = String::from_utf8_lossy(&r.root);
        assert!(env.contains("Include"), "{env}");
        assert!(!env.contains(&b64[..40]), "{env}");
        assert_eq!(r.attachments.len(), 1);
        assert_eq!(r.attachments[0].data, bytes);
        // The flow's own tree keeps the content inline.
        let mut out = Vec::new();
        soap::serialize_to(&mut t, id, &mut out).unwrap();
        assert!(String::from_utf8_lossy(&out).contains(&b64), "unchanged");
    }

    #[test]
    fn write_keeps_content_inline_when_below_the_threshold_or_not_allowed() {
        let b64 = base64::engine::general_purpose::STANDARD.encode([7u8; 10]);
        let (mut t, id) = parsed(&b64);
        let el = elements();
        let m = Mtom {
            elements: &el,
            threshold: 1000,
        };
        let (body, ct) = write(&mut t, id, SoapVersion::V11, Some(m)).unwrap();
        assert!(ct.is_none());
        assert!(String::from_utf8_lossy(&body).contains(&b64));
        let (_, ct) = write(&mut t, id, SoapVersion::V11, None).unwrap();
        assert!(ct.is_none());
    }

    fn local_environment(fields: &[(&'static str, &str)]) -> Tree {
        let mut le = Tree::new("LocalEnvironment");
        let r = le.root();
        let mut at = r;
        for name in ["Destination", "SOAP", "Reply"] {
            at = le
                .create_last_child(at, xft::FOLDER, Text::from_static(name), Value::Null)
                .unwrap();
        }
        for (name, v) in fields {
            let t = le.alloc_text(v.as_bytes());
            le.create_last_child(at, xft::FIELD, Text::from_static(name), Value::Character(t))
                .unwrap();
        }
        le
    }

    #[test]
    fn settings_take_the_local_environment_over_the_property() {
        let mut le = local_environment(&[]);
        assert_eq!(
            settings(&mut le, "Reply", true).unwrap(),
            (true, DEFAULT_THRESHOLD)
        );
        let mut le = local_environment(&[("AllowMTOM", "false"), ("MTOMThreshold", "50")]);
        assert_eq!(settings(&mut le, "Reply", true).unwrap(), (false, 50));
        let mut le = local_environment(&[("AllowMTOM", "TRUE")]);
        assert!(settings(&mut le, "Reply", false).unwrap().0);
        let mut le = local_environment(&[]);
        let reply = le
            .path(le.root(), &["Destination", "SOAP", "Reply"])
            .unwrap()
            .unwrap();
        le.create_last_child(
            reply,
            xft::FIELD,
            Text::from_static("AllowMTOM"),
            Value::Boolean(true),
        )
        .unwrap();
        le.create_last_child(
            reply,
            xft::FIELD,
            Text::from_static("MTOMThreshold"),
            Value::Integer(7),
        )
        .unwrap();
        assert_eq!(settings(&mut le, "Reply", false).unwrap(), (true, 7));
    }

    #[test]
    fn settings_fail_when_the_local_environment_holds_nonsense() {
        let mut le = local_environment(&[("MTOMThreshold", "lots")]);
        let e = settings(&mut le, "Reply", true).unwrap_err();
        assert!(
            e.exception.text.contains("MTOMThreshold"),
            "{}",
            e.exception.text
        );
        let mut le = local_environment(&[("AllowMTOM", "maybe")]);
        assert!(settings(&mut le, "Reply", true).is_err());
    }
}
