//! The MIME domain: multipart bodies (multipart/related, multipart/mixed, multipart/form-data
//! and any other multipart type) and single-part MIME entities, in the product's tree layout.
//!
//! ```text
//! MIME                              (the domain element)
//!   Content-Type = 'multipart/related; boundary=b; type="text/xml"; start="<root>"'
//!   MIME-Version = '1.0'            (every other header, name = value, in order)
//!   Parts
//!     (value)  = preamble           (a nameless BLOB, only when there is one)
//!     Part
//!       Content-Type = 'text/xml'
//!       Content-ID = '<root>'
//!       Data
//!         BLOB                      (the part body, in its own domain: BLOB by default)
//!           BLOB = X'3c…'
//!     Part
//!       Content-Type = 'multipart/alternative; boundary=c'
//!       Parts …                     (a multipart part nests its own Parts)
//!     (value)  = epilogue
//! ```
//!
//! A single-part entity has `Data` where a multipart has `Parts`. Header values are unfolded, and
//! headers of one name are joined with `, `. The top-level Content-Type comes from the
//! transport when the body is under Root and `Root.Properties.ContentType` is set (HTTP gives it
//! that way, and the body then starts with the content); otherwise the body starts with its own
//! header block (as MQ and files carry MIME). Part bodies in base64 or quoted-printable are
//! decoded into `Data` and encoded again when written, per their Content-Transfer-Encoding.
//!
//! The structure is parsed on the first navigation into the domain, in one pass over the bytes;
//! each part's body becomes its own domain element, which parses on demand in turn (XMLNSC or
//! JSON with [`PartDomains::ByContentType`]).
//!
//! The parser is our own over a byte slice rather than the `multer` crate: messages arrive whole
//! (the transports have read them), `multer` is a streaming async parser that would need a
//! runtime and copies for each part, and it reads only multipart/form-data, not related or mixed
//! with their preamble, epilogue and nesting. A slice parser can keep each part a zero-copy
//! slice of the message.

mod build;
pub mod codec;
pub mod parse;
mod write;

use std::sync::Arc;

use bytes::Bytes;
use sluice_tree::{Expand, NodeId, Parser, Text, Tree, TreeError, Value};

use crate::json::JsonParser;
use crate::xmlnsc::XmlnscParser;

/// The domain name and the name of its root element.
pub const DOMAIN: &str = "MIME";

/// Parser flag of the domain element: the Content-Type came from the transport, so the body
/// has no header block of its own.
const FROM_TRANSPORT: u8 = 1;

/// Which domain parses each part's body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PartDomains {
    /// Every body is a BLOB, as the product does; flows reparse with `CREATE … PARSE`.
    #[default]
    Blob,
    /// `text/xml`, `application/xml` and `…+xml` bodies are XMLNSC, `application/json` and
    /// `…+json` bodies are JSON, others BLOB.
    ByContentType,
}

/// The MIME domain's parser and serialiser. One instance serves every message.
#[derive(Clone, Debug, Default)]
pub struct MimeParser {
    parts: PartDomains,
    xml: Arc<XmlnscParser>,
    json: Arc<JsonParser>,
}

impl MimeParser {
    /// A parser whose part bodies are parsed per `parts`.
    pub fn new(parts: PartDomains) -> MimeParser {
        MimeParser {
            parts,
            ..MimeParser::default()
        }
    }
}

/// `Root.Properties.ContentType`, when `parent` is the root and it is set.
fn transport_content_type(tree: &mut Tree, parent: NodeId) -> Option<String> {
    if parent != tree.root() {
        return None;
    }
    let p = tree.child_named(parent, None, b"Properties", 0).ok()??;
    let c = tree.child_named(p, None, b"ContentType", 0).ok()??;
    let v = tree.value_bytes(c)?;
    let s = std::str::from_utf8(v).ok()?.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// Add the `MIME` domain element for `bytes` as the last child of `parent`, not parsed yet:
/// navigation parses it, `tree.expand_all(id)` parses it completely. Under Root, a set
/// `Properties.ContentType` is the message's Content-Type and the body has no header block.
pub fn attach(tree: &mut Tree, parent: NodeId, bytes: Bytes, parser: &Arc<MimeParser>) -> NodeId {
    let ct = transport_content_type(tree, parent);
    let empty = bytes.is_empty();
    let (id, index, _) = tree.push_domain(parent, DOMAIN, bytes, parser.clone());
    if let Some(ct) = ct {
        let v = tree.alloc_text(ct.as_bytes());
        tree.push_parsed(
            id,
            sluice_tree::field_type::NAME_VALUE,
            Text::EMPTY,
            Text::from_static("Content-Type"),
            Value::Character(v),
        );
        tree.set_parser_flags(id, FROM_TRANSPORT);
    }
    if !empty {
        tree.set_pending(id, index, 0);
    }
    id
}

/// Write the MIME domain element `id` as a MIME entity: its header block (with the
/// Content-Type), an empty line, then the content, as MQ, files and ASBITSTREAM carry MIME.
/// Returns the Content-Type written (with the boundary, made up when the tree had none).
pub fn serialize_entity(
    tree: &mut Tree,
    id: NodeId,
    out: &mut Vec<u8>,
) -> Result<String, TreeError> {
    write::write(tree, id, out, true)
}

/// Write only the content of the MIME domain element `id`, for transports that carry the
/// Content-Type outside the body (HTTP); returns that Content-Type, boundary included.
pub fn serialize_content(
    tree: &mut Tree,
    id: NodeId,
    out: &mut Vec<u8>,
) -> Result<String, TreeError> {
    write::write(tree, id, out, false)
}

impl Parser for MimeParser {
    fn domain(&self) -> &'static str {
        DOMAIN
    }

    fn expand(&self, tree: &mut Tree, id: NodeId, _how: Expand) -> Result<(), TreeError> {
        build::expand(self, tree, id)
    }

    fn serialize(&self, tree: &mut Tree, id: NodeId, out: &mut Vec<u8>) -> Result<(), TreeError> {
        write::write(tree, id, out, true).map(|_| ())
    }
}

#[cfg(test)]
mod tests;
