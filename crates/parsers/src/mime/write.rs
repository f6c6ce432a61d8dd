//! Writing a MIME tree: headers, delimiters, part bodies in their transfer encodings.
//!
//! Parts nobody changed are copied from the message they were parsed from. A multipart
//! Content-Type without a boundary gets one made up here; a boundary that occurs in a part's
//! bytes is refused when the flow chose it, and made up again when this writer did.

use std::sync::atomic::{AtomicU64, Ordering};

use sluice_tree::{NodeId, Parser, Tree, TreeError, Value};

use super::codec::{self, Encoding};
use super::parse::{has_delimiter, is_multipart, param};
use super::{DOMAIN, FROM_TRANSPORT, transport_content_type};
use crate::{blob, json, xmlnsc};

fn err(message: impl Into<String>) -> TreeError {
    TreeError::Serialize {
        domain: DOMAIN,
        message: message.into(),
    }
}

/// Why writing a multipart stopped.
enum Stop {
    /// The boundary occurs inside a part.
    Collision,
    Tree(TreeError),
}

impl From<TreeError> for Stop {
    fn from(e: TreeError) -> Stop {
        Stop::Tree(e)
    }
}

/// A boundary unlikely to occur in any content, different for each call.
fn new_boundary() -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    format!("MIME_boundary_{t:016x}{n:08x}")
}

/// `ct` with a `boundary` parameter added.
fn with_boundary(ct: &str, boundary: &str) -> String {
    format!(
        "{}; boundary=\"{boundary}\"",
        ct.trim_end().trim_end_matches(';')
    )
}

/// A header's value as text.
fn header_text(tree: &Tree, id: NodeId) -> Result<Option<String>, TreeError> {
    Ok(match tree.value(id) {
        Value::Null => None,
        Value::Character(t) | Value::Blob(t) | Value::Decimal(t) | Value::Bit(t) => {
            Some(String::from_utf8_lossy(tree.bytes(t)).into_owned())
        }
        Value::Integer(i) => Some(i.to_string()),
        Value::Boolean(b) => Some(if b { "TRUE" } else { "FALSE" }.to_string()),
        Value::Float(f) => Some(f.to_string()),
        other => {
            return Err(err(format!(
                "the header '{}' holds a {} value",
                String::from_utf8_lossy(tree.name_bytes(id)),
                other.type_name()
            )));
        }
    })
}

/// The children of an entity (the domain element or a Part): its headers in order, and its
/// `Data` or `Parts`.
struct Entity {
    headers: Vec<(String, String)>,
    data: Option<NodeId>,
    parts: Option<NodeId>,
}

fn entity(tree: &mut Tree, id: NodeId) -> Result<Entity, TreeError> {
    let mut e = Entity {
        headers: Vec::new(),
        data: None,
        parts: None,
    };
    for c in tree.children(id)? {
        let name = tree.name_bytes(c);
        if name == b"Data" {
            e.data = Some(c);
        } else if name == b"Parts" {
            e.parts = Some(c);
        } else if !name.is_empty() {
            let n = String::from_utf8_lossy(name).into_owned();
            if let Some(v) = header_text(tree, c)? {
                e.headers.push((n, v));
            }
        }
    }
    Ok(e)
}

fn find<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn write_header(out: &mut Vec<u8>, name: &str, value: &str) -> Result<(), TreeError> {
    if value.contains(['\r', '\n']) || name.contains(['\r', '\n', ':']) {
        return Err(err(format!(
            "the header '{name}' has a line break or colon where none may be"
        )));
    }
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
    Ok(())
}

/// Write the domain element `id`; with `with_headers`, its header block first.
pub(super) fn write(
    tree: &mut Tree,
    id: NodeId,
    out: &mut Vec<u8>,
    with_headers: bool,
) -> Result<String, TreeError> {
    let transport = tree.parser_flags(id) & FROM_TRANSPORT != 0;
    let root_ct = match tree.parent(id) {
        Some(p) => transport_content_type(tree, p),
        None => None,
    };
    // A message nobody changed goes out as it came, when it came in the form asked for.
    if !tree.is_dirty(id) && transport != with_headers && tree.original(id).is_some() {
        let ct = match root_ct {
            Some(ct) => ct,
            None => {
                let e = entity(tree, id)?;
                find(&e.headers, "Content-Type")
                    .unwrap_or_default()
                    .to_string()
            }
        };
        if let Some(o) = tree.original(id) {
            out.extend_from_slice(o);
        }
        return Ok(ct);
    }
    let e = entity(tree, id)?;
    let field_ct = find(&e.headers, "Content-Type").map(str::to_string);
    let candidates = [root_ct, field_ct];
    let mut ct = if e.parts.is_some() {
        candidates
            .into_iter()
            .flatten()
            .find(|c| is_multipart(c))
            .unwrap_or_else(|| "multipart/mixed".to_string())
    } else {
        candidates
            .into_iter()
            .flatten()
            .find(|c| !c.trim().is_empty() && !is_multipart(c))
            .unwrap_or_else(|| "application/octet-stream".to_string())
    };
    let mut content = Vec::new();
    if let Some(parts) = e.parts {
        ct = multipart(tree, parts, &ct, &mut content)?;
    } else if let Some(data) = e.data {
        data_bytes(tree, data, encoding(&e.headers), &mut content)?;
    }
    if with_headers {
        if find(&e.headers, "Content-Type").is_none() {
            write_header(out, "Content-Type", &ct)?;
        }
        for (n, v) in &e.headers {
            let v = if n.eq_ignore_ascii_case("Content-Type") {
                &ct
            } else {
                v
            };
            write_header(out, n, v)?;
        }
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(&content);
    Ok(ct)
}

fn encoding(headers: &[(String, String)]) -> Encoding {
    Encoding::from_header(find(headers, "Content-Transfer-Encoding"))
}

/// Write the multipart `parts` with the boundary of `ct` (made up when it has none); returns
/// the Content-Type used.
fn multipart(
    tree: &mut Tree,
    parts: NodeId,
    ct: &str,
    out: &mut Vec<u8>,
) -> Result<String, TreeError> {
    if let Some(b) = param(ct, "boundary") {
        if b.is_empty() || b.len() > super::parse::MAX_BOUNDARY {
            return Err(err(format!("'{b}' is not a usable boundary")));
        }
        return match parts_bytes(tree, parts, &b, out) {
            Ok(()) => Ok(ct.to_string()),
            Err(Stop::Tree(e)) => Err(e),
            Err(Stop::Collision) => Err(err(format!(
                "the boundary '{b}' occurs in the content of a part; choose another"
            ))),
        };
    }
    for _ in 0..8 {
        let b = new_boundary();
        let start = out.len();
        match parts_bytes(tree, parts, &b, out) {
            Ok(()) => return Ok(with_boundary(ct, &b)),
            Err(Stop::Tree(e)) => return Err(e),
            Err(Stop::Collision) => out.truncate(start),
        }
    }
    Err(err(
        "no boundary could be found that does not occur in the parts",
    ))
}

fn parts_bytes(
    tree: &mut Tree,
    parts: NodeId,
    boundary: &str,
    out: &mut Vec<u8>,
) -> Result<(), Stop> {
    let delim = format!("--{boundary}");
    let mut seen_part = false;
    let mut epilogue: Option<Vec<u8>> = None;
    for c in tree.children(parts)? {
        let is_part = tree.name_bytes(c) == b"Part";
        if !is_part {
            let bytes = match tree.value(c) {
                Value::Blob(t) | Value::Character(t) if tree.name_bytes(c).is_empty() => {
                    tree.bytes(t).to_vec()
                }
                _ => continue,
            };
            if seen_part {
                // Nothing reads the epilogue for delimiters.
                epilogue
                    .get_or_insert_with(Vec::new)
                    .extend_from_slice(&bytes);
            } else {
                let start = out.len();
                out.extend_from_slice(&bytes);
                out.extend_from_slice(b"\r\n");
                if has_delimiter(&out[start..], boundary.as_bytes()) {
                    return Err(Stop::Collision);
                }
            }
            continue;
        }
        seen_part = true;
        out.extend_from_slice(delim.as_bytes());
        out.extend_from_slice(b"\r\n");
        let start = out.len();
        part_bytes(tree, c, out)?;
        // The line break is the one before the next delimiter: a delimiter-like last line of
        // the part would only count with it.
        out.extend_from_slice(b"\r\n");
        if has_delimiter(&out[start..], boundary.as_bytes()) {
            return Err(Stop::Collision);
        }
    }
    if !seen_part {
        return Err(Stop::Tree(err("a multipart needs one Part at least")));
    }
    out.extend_from_slice(delim.as_bytes());
    out.extend_from_slice(b"--\r\n");
    if let Some(e) = epilogue {
        out.extend_from_slice(&e);
    }
    Ok(())
}

/// One part between its delimiter lines: headers, empty line, body.
fn part_bytes(tree: &mut Tree, part: NodeId, out: &mut Vec<u8>) -> Result<(), TreeError> {
    if !tree.is_dirty(part)
        && let Some(o) = tree.original(part)
    {
        out.extend_from_slice(o);
        return Ok(());
    }
    let e = entity(tree, part)?;
    let mut body = Vec::new();
    let mut ct = find(&e.headers, "Content-Type").map(str::to_string);
    if let Some(parts) = e.parts {
        let want = ct
            .clone()
            .filter(|c| is_multipart(c))
            .unwrap_or_else(|| "multipart/mixed".to_string());
        ct = Some(multipart(tree, parts, &want, &mut body)?);
    } else if let Some(data) = e.data {
        data_bytes(tree, data, encoding(&e.headers), &mut body)?;
    }
    for (n, v) in &e.headers {
        let v = match &ct {
            Some(c) if n.eq_ignore_ascii_case("Content-Type") => c,
            _ => v,
        };
        write_header(out, n, v)?;
    }
    if find(&e.headers, "Content-Type").is_none()
        && let Some(c) = ct.filter(|_| e.parts.is_some())
    {
        write_header(out, "Content-Type", &c)?;
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&body);
    Ok(())
}

/// A `Data` element's body in the transfer encoding `enc`.
fn data_bytes(
    tree: &mut Tree,
    data: NodeId,
    enc: Encoding,
    out: &mut Vec<u8>,
) -> Result<(), TreeError> {
    if !tree.is_dirty(data)
        && let Some(o) = tree.original(data)
    {
        // The bytes as they came, still in their transfer encoding.
        out.extend_from_slice(o);
        return Ok(());
    }
    let mut raw = Vec::new();
    let children = tree.children(data)?;
    if children.is_empty() {
        match tree.value(data) {
            Value::Blob(t) | Value::Character(t) => raw.extend_from_slice(tree.bytes(t)),
            Value::Null => {}
            other => {
                return Err(err(format!("Data holds a {} value", other.type_name())));
            }
        }
    }
    for c in children {
        let name = String::from_utf8_lossy(tree.name_bytes(c)).into_owned();
        match name.as_str() {
            // `Data.BLOB = x'…'` set straight on the domain element, without `BLOB.BLOB`.
            "BLOB" if tree.peek_first_child(c).is_none() => match tree.value(c) {
                Value::Blob(t) | Value::Character(t) => raw.extend_from_slice(tree.bytes(t)),
                _ => {}
            },
            "BLOB" => blob::serialize_to(tree, c, &mut raw)?,
            "XMLNSC" | "XMLNS" | "XML" => xmlnsc::serialize_to(tree, c, &mut raw)?,
            "JSON" => json::JsonParser::default().serialize(tree, c, &mut raw)?,
            _ => match tree
                .parser_of(c)
                .filter(|p| p.domain().as_bytes() == name.as_bytes())
            {
                Some(p) => p.serialize(tree, c, &mut raw)?,
                None => {
                    return Err(err(format!(
                        "Data holds '{name}', which is not a message domain (BLOB, XMLNSC, JSON, MIME…)"
                    )));
                }
            },
        }
    }
    codec::encode(enc, &raw, out);
    Ok(())
}
