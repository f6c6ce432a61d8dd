//! The BLOB domain: the body as one byte string, never interpreted.
//!
//! The domain element `BLOB` has one child, also named `BLOB`, whose BLOB value is the whole
//! body (a slice of the received bytes: nothing is copied). Serialising writes the value of that
//! child (or of every `BLOB` child, in order, when flow logic added more).

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use sluice_tree::{Expand, NodeId, Parser, SourceSpan, Text, Tree, TreeError, Value};

/// The domain name, also the name of the domain element and of its child.
pub const DOMAIN: &str = "BLOB";

/// The BLOB parser; it has no options.
#[derive(Debug, Default)]
pub struct BlobParser;

/// Add the `BLOB` domain element for `bytes` as the last child of `parent` (the Root).
pub fn attach(tree: &mut Tree, parent: NodeId, bytes: Bytes) -> NodeId {
    static PARSER: OnceLock<Arc<BlobParser>> = OnceLock::new();
    let parser = PARSER.get_or_init(|| Arc::new(BlobParser)).clone();
    let len = bytes.len() as u32;
    let (id, _, buf) = tree.push_domain(parent, DOMAIN, bytes, parser);
    let span = SourceSpan {
        buf,
        start: 0,
        end: len,
    };
    let value = Value::Blob(if len == 0 {
        Text::EMPTY
    } else {
        Text::src(buf, 0, len)
    });
    let child = tree.push_parsed(
        id,
        sluice_tree::field_type::NAME_VALUE,
        Text::EMPTY,
        Text::from_static(DOMAIN),
        value,
    );
    tree.set_source(child, span);
    id
}

/// Write the body of the BLOB domain element `id`.
pub fn serialize_to(tree: &mut Tree, id: NodeId, out: &mut Vec<u8>) -> Result<(), TreeError> {
    if let Some(o) = tree.original(id) {
        out.extend_from_slice(o);
        return Ok(());
    }
    for c in tree.children(id)? {
        if tree.name_bytes(c) != DOMAIN.as_bytes() {
            continue;
        }
        match tree.value(c) {
            Value::Blob(t) | Value::Character(t) => out.extend_from_slice(tree.bytes(t)),
            Value::Null => {}
            other => {
                return Err(TreeError::Serialize {
                    domain: DOMAIN,
                    message: format!(
                        "the BLOB field holds a {} value, not BLOB",
                        other.type_name()
                    ),
                });
            }
        }
    }
    Ok(())
}

impl Parser for BlobParser {
    fn domain(&self) -> &'static str {
        DOMAIN
    }

    fn expand(&self, tree: &mut Tree, id: NodeId, _how: Expand) -> Result<(), TreeError> {
        // Everything is built by `attach`; nothing is ever pending.
        tree.finish_pending(id);
        Ok(())
    }

    fn serialize(&self, tree: &mut Tree, id: NodeId, out: &mut Vec<u8>) -> Result<(), TreeError> {
        serialize_to(tree, id, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_attach_holds_whole_body_without_copy() {
        let mut t = Tree::new("Root");
        let r = t.root();
        let body = Bytes::from_static(b"\x00\x01binary\xff");
        let id = attach(&mut t, r, body.clone());
        let c = t.first_child(id).ok().flatten();
        assert!(c.is_some());
        let c = c.unwrap_or(id);
        assert_eq!(t.name_bytes(c), b"BLOB");
        assert_eq!(t.value_bytes(c), Some(&body[..]));
        assert!(matches!(t.value(c), Value::Blob(t) if t.as_src().is_some()));
        let mut out = Vec::new();
        assert!(serialize_to(&mut t, id, &mut out).is_ok());
        assert_eq!(out, &body[..]);
    }

    #[test]
    fn blob_serialise_writes_changed_value() {
        let mut t = Tree::new("Root");
        let r = t.root();
        let id = attach(&mut t, r, Bytes::from_static(b"old"));
        let c = t.first_child(id).ok().flatten().unwrap_or(id);
        let v = t.alloc_text(b"new bytes");
        t.set_value(c, Value::Blob(v));
        let mut out = Vec::new();
        assert!(BlobParser.serialize(&mut t, id, &mut out).is_ok());
        assert_eq!(out, b"new bytes");
    }

    #[test]
    fn blob_empty_body_is_empty_blob() {
        let mut t = Tree::new("Root");
        let r = t.root();
        let id = attach(&mut t, r, Bytes::new());
        let mut out = Vec::new();
        assert!(serialize_to(&mut t, id, &mut out).is_ok());
        assert!(out.is_empty());
    }
}
