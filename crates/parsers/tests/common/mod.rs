//! Helpers shared by the XMLNSC integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use bytes::Bytes;
use sluice_parsers::xmlnsc::{self, XmlnscOptions, XmlnscParser};
use sluice_tree::{NodeId, Tree, TreeError, Value};

/// A Root tree with the body attached under XMLNSC (unparsed).
pub fn attach(xml: &str, options: XmlnscOptions) -> (Tree, NodeId) {
    attach_bytes(xml.as_bytes().to_vec(), options)
}

pub fn attach_bytes(xml: Vec<u8>, options: XmlnscOptions) -> (Tree, NodeId) {
    let mut t = Tree::new("Root");
    let r = t.root();
    let id = xmlnsc::attach(
        &mut t,
        r,
        Bytes::from(xml),
        Arc::new(XmlnscParser::new(options)),
    );
    (t, id)
}

/// Attach and parse completely.
pub fn parse(xml: &str) -> (Tree, NodeId) {
    parse_with(xml, XmlnscOptions::default())
}

pub fn parse_with(xml: &str, options: XmlnscOptions) -> (Tree, NodeId) {
    let (mut t, id) = attach(xml, options);
    if let Err(e) = t.expand_all(id) {
        panic!("parse failed: {e}");
    }
    (t, id)
}

pub fn try_parse(xml: &[u8]) -> Result<(Tree, NodeId), TreeError> {
    let (mut t, id) = attach_bytes(xml.to_vec(), XmlnscOptions::default());
    t.expand_all(id)?;
    Ok((t, id))
}

pub fn ser(t: &mut Tree, id: NodeId) -> String {
    let mut out = Vec::new();
    if let Err(e) = xmlnsc::serialize_to(t, id, &mut out) {
        panic!("serialise failed: {e}");
    }
    String::from_utf8(out).unwrap_or_else(|e| panic!("not UTF-8: {e}"))
}

/// Children as (field type, {ns}name, value) lines, recursively, for comparisons.
pub fn dump(t: &mut Tree, id: NodeId) -> String {
    let mut out = String::new();
    dump_into(t, id, 0, &mut out);
    out
}

fn dump_into(t: &mut Tree, id: NodeId, depth: usize, out: &mut String) {
    let kids = t
        .children(id)
        .unwrap_or_else(|e| panic!("navigation failed: {e}"));
    for k in kids {
        let ns = String::from_utf8_lossy(t.namespace_bytes(k)).into_owned();
        let name = String::from_utf8_lossy(t.name_bytes(k)).into_owned();
        let v = match t.value(k) {
            Value::Null => String::new(),
            Value::Character(x) => format!(" = '{}'", t.str(x)),
            Value::Blob(x) => format!(" = X'{}'", t.str(x)),
            other => format!(" = {other:?}"),
        };
        let nsp = if ns.is_empty() {
            String::new()
        } else {
            format!("{{{ns}}}")
        };
        out.push_str(&format!(
            "{}{:08X} {nsp}{name}{v}\n",
            "  ".repeat(depth),
            t.field_type(k)
        ));
        dump_into(t, k, depth + 1, out);
    }
}

/// Navigate by local names from the XMLNSC element.
pub fn at(t: &mut Tree, id: NodeId, names: &[&str]) -> NodeId {
    t.path(id, names)
        .unwrap_or_else(|e| panic!("navigation failed: {e}"))
        .unwrap_or_else(|| panic!("no element at {names:?}"))
}

pub fn text(t: &Tree, id: NodeId) -> String {
    match t.value(id) {
        Value::Character(x) => t.str(x).into_owned(),
        other => format!("{other:?}"),
    }
}

/// `seed` with `edits` applied in turn: each `(position, byte, op)` overwrites (op 0),
/// inserts (op 1) or removes (otherwise) at the position, clamped to the body.
pub fn mutate(seed: &str, edits: Vec<(usize, u8, u8)>) -> Vec<u8> {
    let mut body = seed.as_bytes().to_vec();
    for (pos, byte, op) in edits {
        let pos = pos.min(body.len());
        match op {
            0 if pos < body.len() => body[pos] = byte,
            1 => body.insert(pos, byte),
            _ if pos < body.len() => {
                body.remove(pos);
            }
            _ => {}
        }
    }
    body
}
