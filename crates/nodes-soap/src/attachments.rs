//! SOAP with Attachments (SwA): a `multipart/related` HTTP body whose root part is the envelope
//! and whose other parts are the attachments, held in the tree as the product holds them, in the
//! SOAP domain's `Attachment` folder: one folder per attachment, named by its Content-ID (without
//! the angle brackets), with its MIME headers as fields (`Content-Type`, …) and the decoded
//! content as the BLOB `Data`. An MTOM message (XOP) is read the same way, with each part an
//! `xop:Include` refers to put back in the Body as base64 text.

use bytes::Bytes;
use sluice_node_api::NodeError;
use sluice_parsers::mime::{codec, parse};
use sluice_parsers::soap::SoapVersion;
use sluice_parsers::xmlnsc::field_type as xft;
use sluice_tree::{NodeId, Text, Tree, TreeError, Value};

/// One attachment, its content decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attachment {
    /// The Content-ID without angle brackets.
    pub content_id: String,
    /// Its other MIME headers (Content-ID and Content-Transfer-Encoding left out).
    pub headers: Vec<(String, String)>,
    pub data: Vec<u8>,
}

/// A SOAP with Attachments message taken apart.
#[derive(Debug)]
pub(crate) struct Related {
    /// The envelope (the root part's content).
    pub root: Bytes,
    /// The envelope's SOAP version, from the root part's Content-Type.
    pub version: SoapVersion,
    pub attachments: Vec<Attachment>,
}

/// Whether an HTTP Content-Type is `multipart/related`.
pub(crate) fn is_related(content_type: &str) -> bool {
    content_type
        .trim_start()
        .get(..17)
        .is_some_and(|t| t.eq_ignore_ascii_case("multipart/related"))
}

fn unbracket(id: &str) -> &str {
    let id = id.trim();
    id.strip_prefix('<')
        .and_then(|i| i.strip_suffix('>'))
        .unwrap_or(id)
}

/// Take apart a `multipart/related` body: the root part is the one the `start` parameter names,
/// else the first.
pub(crate) fn split(content_type: &str, body: &Bytes) -> Result<Related, String> {
    let entity = parse::entity(body, 0..body.len(), Some(content_type))
        .map_err(|e| format!("the multipart/related body does not parse: {e}"))?;
    let parse::Body::Multi(multi) = entity.body else {
        return Err("the multipart/related body has no parts".into());
    };
    let start = parse::param(content_type, "start");
    let root_at = start
        .as_deref()
        .and_then(|s| {
            multi.parts.iter().position(|(_, p)| {
                parse::header(&p.headers, "Content-ID")
                    .is_some_and(|id| unbracket(id) == unbracket(s))
            })
        })
        .unwrap_or(0);
    let mut root = None;
    let mut attachments = Vec::new();
    for (i, (_, part)) in multi.parts.iter().enumerate() {
        let parse::Body::Single(range) = &part.body else {
            return Err(format!(
                "part {} of the multipart/related body is itself multipart; attachments are single parts",
                i + 1
            ));
        };
        let encoding =
            codec::Encoding::from_header(parse::header(&part.headers, "Content-Transfer-Encoding"));
        let data = match encoding {
            codec::Encoding::Identity => None,
            e => Some(
                codec::decode(e, &body[range.clone()], range.start)
                    .map_err(|e| format!("part {} cannot be decoded: {e}", i + 1))?,
            ),
        };
        if i == root_at {
            // MTOM's root is `application/xop+xml; type="application/soap+xml"` for SOAP 1.2.
            let soap12 = parse::header(&part.headers, "Content-Type").is_some_and(|t| {
                let t = t.trim_start().to_ascii_lowercase();
                t.starts_with("application/soap+xml")
                    || (t.starts_with("application/xop+xml")
                        && parse::param(&t, "type")
                            .is_some_and(|x| x.trim() == "application/soap+xml"))
            });
            root = Some((
                data.map_or_else(|| body.slice(range.clone()), Bytes::from),
                if soap12 {
                    SoapVersion::V12
                } else {
                    SoapVersion::V11
                },
            ));
            continue;
        }
        let content_id = parse::header(&part.headers, "Content-ID")
            .map(|id| unbracket(id).to_string())
            .unwrap_or_else(|| format!("attachment{}", attachments.len() + 1));
        attachments.push(Attachment {
            content_id,
            headers: part
                .headers
                .iter()
                .filter(|h| {
                    !h.name.eq_ignore_ascii_case("Content-ID")
                        && !h.name.eq_ignore_ascii_case("Content-Transfer-Encoding")
                })
                .map(|h| (h.name.clone(), h.value.clone()))
                .collect(),
            data: data.unwrap_or_else(|| body[range.clone()].to_vec()),
        });
    }
    let (root, version) = root.ok_or("the multipart/related body has no root part")?;
    Ok(Related {
        root,
        version,
        attachments,
    })
}

/// Put the parts of a received message into the tree of the SOAP domain element `soap`
/// (parsed already): MTOM parts back into the Body ([`inline_xop`]), the others into
/// `Attachment`.
pub(crate) fn read_into_tree(
    tree: &mut Tree,
    soap: NodeId,
    mut attachments: Vec<Attachment>,
) -> Result<(), TreeError> {
    if attachments.is_empty() {
        return Ok(());
    }
    inline_xop(tree, soap, &mut attachments)?;
    add_to_tree(tree, soap, &attachments)
}

/// Add `attachments` to the SOAP domain element `soap` as its `Attachment` folder.
fn add_to_tree(tree: &mut Tree, soap: NodeId, attachments: &[Attachment]) -> Result<(), TreeError> {
    if attachments.is_empty() {
        return Ok(());
    }
    let folder = tree.create_last_child(
        soap,
        xft::FOLDER,
        Text::from_static("Attachment"),
        Value::Null,
    )?;
    for a in attachments {
        let name = tree.alloc_text(a.content_id.as_bytes());
        let f = tree.create_last_child(folder, xft::FOLDER, name, Value::Null)?;
        for (h, v) in &a.headers {
            let n = tree.alloc_text(h.as_bytes());
            let v = tree.alloc_text(v.as_bytes());
            tree.create_last_child(f, xft::FIELD, n, Value::Character(v))?;
        }
        let data = tree.alloc_text(&a.data);
        tree.create_last_child(f, xft::FIELD, Text::from_static("Data"), Value::Blob(data))?;
    }
    Ok(())
}

/// XOP's namespace, of the `xop:Include` elements an MTOM message puts where binary content was.
pub(crate) const XOP_NS: &str = "http://www.w3.org/2004/08/xop/include";
/// How deep the Body is searched for `xop:Include` elements.
const MAX_XOP_DEPTH: usize = 256;

/// MTOM: put the content of each attachment an `xop:Include` in the Body refers to
/// (`href="cid:…"`) in its place, as base64 text of the element that held the Include, as the
/// product represents MTOM content; those attachments leave `attachments`.
fn inline_xop(
    tree: &mut Tree,
    soap: NodeId,
    attachments: &mut Vec<Attachment>,
) -> Result<(), TreeError> {
    let Some(body) = tree.child_named(soap, None, b"Body", 0)? else {
        return Ok(());
    };
    let mut stack = vec![(body, 0usize)];
    while let Some((id, depth)) = stack.pop() {
        for c in tree.children(id)? {
            let t = tree.field_type(c);
            if t != xft::FOLDER && t != xft::FIELD {
                continue;
            }
            if tree.namespace_bytes(c) != XOP_NS.as_bytes() || tree.name_bytes(c) != b"Include" {
                if depth < MAX_XOP_DEPTH {
                    stack.push((c, depth + 1));
                }
                continue;
            }
            let href = tree
                .children(c)?
                .into_iter()
                .find(|&a| tree.field_type(a) == xft::ATTRIBUTE && tree.name_bytes(a) == b"href")
                .and_then(|a| tree.value_bytes(a))
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .unwrap_or_default();
            let cid = href.strip_prefix("cid:").unwrap_or(&href);
            // A `cid:` URL escapes its Content-ID (RFC 2392).
            let cid = sluice_openapi::percent_decode(cid);
            let Some(at) = attachments.iter().position(|a| a.content_id == cid) else {
                return Err(TreeError::Parse {
                    domain: "SOAP",
                    offset: 0,
                    message: format!(
                        "xop:Include refers to `{href}`, which no part of the message is"
                    ),
                });
            };
            let a = attachments.remove(at);
            use base64::Engine as _;
            let text = base64::engine::general_purpose::STANDARD.encode(&a.data);
            tree.delete(c)?;
            let v = tree.alloc_text(text.as_bytes());
            tree.set_value(id, Value::Character(v));
        }
    }
    Ok(())
}

/// The attachments in the `Attachment` folder of the SOAP domain element `soap`.
pub(crate) fn from_tree(tree: &mut Tree, soap: NodeId) -> Result<Vec<Attachment>, TreeError> {
    let Some(folder) = tree.child_named(soap, None, b"Attachment", 0)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for f in tree.children(folder)? {
        let content_id = String::from_utf8_lossy(tree.name_bytes(f)).into_owned();
        let mut headers = Vec::new();
        let mut data = Vec::new();
        for c in tree.children(f)? {
            let name = String::from_utf8_lossy(tree.name_bytes(c)).into_owned();
            let value = tree.value_bytes(c).unwrap_or_default().to_vec();
            if name == "Data" {
                data = value;
            } else if !name.is_empty() {
                headers.push((name, String::from_utf8_lossy(&value).into_owned()));
            }
        }
        out.push(Attachment {
            content_id,
            headers,
            data,
        });
    }
    Ok(out)
}

/// The Content-ID of the envelope part of the messages written here.
const ROOT_ID: &str = "rootpart@sluice";

/// Write `envelope` and `attachments` as a `multipart/related` body: its Content-Type (boundary,
/// `type` and `start` included) and bytes. With `mtom`, the envelope part is XOP's
/// `application/xop+xml` (the SOAP media type in its `type` parameter and the multipart's
/// `start-info`), as MTOM writes it.
pub(crate) fn join(
    envelope: &[u8],
    version: SoapVersion,
    attachments: &[Attachment],
    mtom: bool,
) -> Result<(String, Vec<u8>), NodeError> {
    let boundary = format!("MIMEBoundary_{}", uuid::Uuid::new_v4().simple());
    let delimiter = format!("--{boundary}");
    // A searcher built once: comparing the delimiter at every byte of the content cost more
    // than writing the whole message.
    let finder = memchr::memmem::Finder::new(delimiter.as_bytes());
    let clashes = |b: &[u8]| finder.find(b).is_some();
    if clashes(envelope) || attachments.iter().any(|a| clashes(&a.data)) {
        // A random 128-bit boundary inside the content means the content was made to clash.
        return Err(NodeError::recoverable(
            "an attachment contains the MIME boundary chosen for it",
        ));
    }
    let root_type = match version {
        SoapVersion::V11 => "text/xml",
        SoapVersion::V12 => "application/soap+xml",
    };
    let mut out = Vec::with_capacity(
        envelope.len()
            + attachments
                .iter()
                .map(|a| a.data.len() + 200)
                .sum::<usize>()
            + 200,
    );
    let mut push = |s: &str| out.extend_from_slice(s.as_bytes());
    let root_part_type = if mtom {
        format!("application/xop+xml; charset=utf-8; type=\"{root_type}\"")
    } else {
        version.content_type().to_string()
    };
    push(&format!(
        "{delimiter}\r\nContent-Type: {root_part_type}\r\nContent-Transfer-Encoding: binary\r\nContent-ID: <{ROOT_ID}>\r\n\r\n"
    ));
    out.extend_from_slice(envelope);
    for a in attachments {
        let mut head = format!("\r\n{delimiter}\r\n");
        let has_type = a
            .headers
            .iter()
            .any(|(h, _)| h.eq_ignore_ascii_case("Content-Type"));
        if !has_type {
            head.push_str("Content-Type: application/octet-stream\r\n");
        }
        for (h, v) in &a.headers {
            // Header values come from the tree: a line end in one would start a header of its own.
            let v: String = v.chars().filter(|c| *c != '\r' && *c != '\n').collect();
            head.push_str(&format!("{h}: {v}\r\n"));
        }
        head.push_str(&format!(
            "Content-Transfer-Encoding: binary\r\nContent-ID: <{}>\r\n\r\n",
            a.content_id
        ));
        out.extend_from_slice(head.as_bytes());
        out.extend_from_slice(&a.data);
    }
    out.extend_from_slice(format!("\r\n{delimiter}--\r\n").as_bytes());
    let content_type = if mtom {
        format!(
            "multipart/related; type=\"application/xop+xml\"; start=\"<{ROOT_ID}>\"; start-info=\"{root_type}\"; boundary=\"{boundary}\""
        )
    } else {
        format!(
            "multipart/related; type=\"{root_type}\"; start=\"<{ROOT_ID}>\"; boundary=\"{boundary}\""
        )
    };
    Ok((content_type, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENVELOPE: &str = r#"<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><a/></soapenv:Body></soapenv:Envelope>"#;

    #[test]
    fn split_finds_the_root_by_start_and_decodes_attachments() {
        let body = format!(
            "--b1\r\nContent-Type: image/png\r\nContent-ID: <pic>\r\nContent-Transfer-Encoding: base64\r\n\r\naGk=\r\n\
             --b1\r\nContent-Type: text/xml\r\nContent-ID: <env>\r\n\r\n{ENVELOPE}\r\n--b1--\r\n"
        );
        let r = split(
            "multipart/related; type=\"text/xml\"; start=\"<env>\"; boundary=b1",
            &Bytes::from(body),
        )
        .unwrap();
        assert_eq!(&r.root[..], ENVELOPE.as_bytes());
        assert_eq!(r.attachments.len(), 1);
        assert_eq!(r.attachments[0].content_id, "pic");
        assert_eq!(r.attachments[0].data, b"hi");
        assert_eq!(
            r.attachments[0].headers,
            vec![("Content-Type".to_string(), "image/png".to_string())]
        );
    }

    #[test]
    fn join_then_split_gives_back_the_envelope_and_attachments() {
        let atts = vec![Attachment {
            content_id: "doc1".into(),
            headers: vec![("Content-Type".into(), "application/pdf".into())],
            data: b"%PDF\r\n--not-a-boundary\r\n\x00\xff".to_vec(),
        }];
        let (ct, body) = join(ENVELOPE.as_bytes(), SoapVersion::V11, &atts, false).unwrap();
        assert!(is_related(&ct));
        let r = split(&ct, &Bytes::from(body)).unwrap();
        assert_eq!(r.version, SoapVersion::V11);
        assert_eq!(&r.root[..], ENVELOPE.as_bytes());
        assert_eq!(r.attachments, atts);
    }

    #[test]
    fn split_fails_clearly_when_the_body_is_not_multipart() {
        let e = split(
            "multipart/related; boundary=zz",
            &Bytes::from_static(b"no parts here"),
        )
        .unwrap_err();
        assert!(e.contains("multipart/related"), "{e}");
    }

    #[test]
    fn read_into_tree_fails_when_an_xop_include_names_no_part() {
        let env = r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><a><xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:gone"/></a></s:Body></s:Envelope>"#;
        let mut t = Tree::new("Root");
        let r = t.root();
        let soap = sluice_parsers::soap::attach(
            &mut t,
            r,
            Bytes::from_static(env.as_bytes()),
            sluice_parsers::soap::SoapParser::shared(),
        );
        t.expand_all(soap).unwrap();
        let other = Attachment {
            content_id: "other".into(),
            headers: Vec::new(),
            data: b"x".to_vec(),
        };
        let e = read_into_tree(&mut t, soap, vec![other])
            .unwrap_err()
            .to_string();
        assert!(e.contains("cid:gone"), "{e}");
    }

    #[test]
    fn tree_round_trip_keeps_headers_and_data() {
        let mut t = Tree::new("Root");
        let r = t.root();
        let soap = t
            .create_last_child(r, xft::FOLDER, Text::from_static("SOAP"), Value::Null)
            .unwrap();
        let atts = vec![Attachment {
            content_id: "a1".into(),
            headers: vec![("Content-Type".into(), "text/plain".into())],
            data: b"attached".to_vec(),
        }];
        add_to_tree(&mut t, soap, &atts).unwrap();
        assert_eq!(from_tree(&mut t, soap).unwrap(), atts);
    }
}
