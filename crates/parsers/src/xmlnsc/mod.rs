//! The XMLNSC domain: XML with namespaces in the product's compact tree shape.
//!
//! Tree shape (as the product builds it):
//! - the domain element `XMLNSC` holds an optional `XmlDeclaration` folder (attributes
//!   `Version`, `Encoding`, `StandAlone`), retained comments and processing instructions, and
//!   the document element;
//! - an element with child elements is a [`field_type::FOLDER`] without a value; an element
//!   holding only text is a [`field_type::FIELD`] (only CDATA: [`field_type::CDATA_FIELD`])
//!   whose CHARACTER value is the decoded text; an empty element (`<a/>` or `<a></a>`) has the
//!   empty string as its value;
//! - attributes and namespace declarations are children placed before the content, in source
//!   order: attributes with type [`field_type::ATTRIBUTE`] (or `SINGLE_ATTRIBUTE` when single
//!   quoted), namespace declarations [`field_type::NAMESPACE_DECL`] named by their prefix (in
//!   namespace `http://www.w3.org/2000/xmlns/`) or `xmlns` for the default namespace, with the
//!   URI as value;
//! - element and attribute namespaces are URIs; white space between elements is dropped and
//!   other text between elements is kept only with `retain_mixed` (as value-only
//!   [`field_type::VALUE`] children);
//! - an opaque element is one [`field_type::BIT_STREAM`] element whose BLOB value is its whole
//!   XML text, never parsed.
//!
//! Parsing is on demand: [`attach`] only records the body; navigation builds as much as it asks
//! for. DTDs are never processed: a DOCTYPE that declares entities is refused and only the five
//! predefined entities and character references are recognised. Bodies must be UTF-8 (a UTF-8
//! byte-order mark is skipped; UTF-16/32 are refused).

mod build;
mod content;
mod document;
pub mod field_type;
mod lexer;
mod plain;
mod scope;
mod skip;
mod subtree;
mod text;
mod write;

use std::sync::Arc;

use bytes::Bytes;
use sluice_tree::{Expand, NodeId, Parser, Tree, TreeError};

pub use scope::{XML_NS, XMLNS_NS};
pub use write::{serialize_to, serialize_wrapped};

/// The domain name, also the name of the domain element.
pub const DOMAIN: &str = "XMLNSC";

/// Meanings of [`Tree::parser_flags`] bits on XMLNSC elements.
pub(crate) mod flags {
    /// The element's original bytes use a namespace prefix (or default namespace) declared by
    /// an ancestor: they cannot be copied into another context.
    pub const NEEDS_OUTER: u8 = 0x01;
    /// The original bytes hold unprefixed element names in no namespace: they cannot be copied
    /// where a default namespace is declared.
    pub const NEEDS_EMPTY_DEFAULT: u8 = 0x02;
    pub const DEPS: u8 = NEEDS_OUTER | NEEDS_EMPTY_DEFAULT;
    /// Parsing this element failed; `resume` holds the offset of the error.
    pub const FAILED: u8 = 0x10;
    /// (Domain element) the document element has been seen.
    pub const ROOT_SEEN: u8 = 0x20;
    /// The last child is a folder whose end is not known yet; `resume` is its start tag.
    pub const OPEN_LAST: u8 = 0x40;
    /// The domain element.
    pub const DOC: u8 = 0x80;
}

/// Limits that protect the broker from hostile or broken messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Deepest element nesting accepted (the document element is depth 1). Default 1,000.
    pub max_depth: usize,
    /// Most attributes (including namespace declarations) on one element. Default 10,000.
    pub max_attributes: usize,
    /// Largest body accepted, in bytes. Default 100 MiB.
    pub max_size_bytes: usize,
    /// Most entity and character references in one text value or attribute value.
    /// Default 1,000,000. (No DTD is processed, so each reference expands to at most one
    /// character; the limit bounds the work per value.)
    pub max_entity_expansion: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 1000,
            max_attributes: 10_000,
            max_size_bytes: 100 * 1024 * 1024,
            max_entity_expansion: 1_000_000,
        }
    }
}

/// The parser options of an input node for the XMLNSC domain.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct XmlnscOptions {
    /// Elements kept as their raw XML text, never parsed: a local name (`SaleList`), a
    /// prefixed name matched against the source prefix (`soapenv:Header`), `//name`, or an
    /// absolute path of local names (`/Parent/SaleList`).
    pub opaque_elements: Vec<String>,
    /// Keep text between child elements as value-only children (default: dropped).
    pub retain_mixed: bool,
    /// Keep comments as `Comment` children (default: dropped).
    pub retain_comments: bool,
    /// Keep processing instructions as `ProcessingInstruction` children (default: dropped).
    pub retain_pis: bool,
    pub limits: Limits,
}

/// An opaque-element rule, prepared from [`XmlnscOptions::opaque_elements`].
#[derive(Clone, Debug)]
pub(crate) enum OpaqueRule {
    Name {
        prefix: Option<Vec<u8>>,
        local: Vec<u8>,
    },
    Path(Vec<Vec<u8>>),
}

fn local_part(s: &str) -> Vec<u8> {
    s.rsplit(':').next().unwrap_or(s).as_bytes().to_vec()
}

/// The XMLNSC parser and serialiser. One instance serves every message of an input node.
#[derive(Debug)]
pub struct XmlnscParser {
    options: XmlnscOptions,
    opaque: Vec<OpaqueRule>,
}

impl Default for XmlnscParser {
    fn default() -> Self {
        XmlnscParser::new(XmlnscOptions::default())
    }
}

impl XmlnscParser {
    pub fn new(options: XmlnscOptions) -> XmlnscParser {
        let opaque = options
            .opaque_elements
            .iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .map(|s| {
                if let Some(rest) = s.strip_prefix("//") {
                    name_rule(rest)
                } else if let Some(rest) = s.strip_prefix('/') {
                    OpaqueRule::Path(rest.split('/').map(local_part).collect())
                } else {
                    name_rule(s)
                }
            })
            .collect();
        XmlnscParser { options, opaque }
    }

    pub fn options(&self) -> &XmlnscOptions {
        &self.options
    }
}

fn name_rule(s: &str) -> OpaqueRule {
    match s.split_once(':') {
        Some((p, l)) => OpaqueRule::Name {
            prefix: Some(p.as_bytes().to_vec()),
            local: l.as_bytes().to_vec(),
        },
        None => OpaqueRule::Name {
            prefix: None,
            local: s.as_bytes().to_vec(),
        },
    }
}

/// Add the `XMLNSC` domain element for `bytes` as the last child of `parent` (the Root),
/// unparsed: navigation parses it on demand, `tree.expand_all(id)` parses it completely.
pub fn attach(tree: &mut Tree, parent: NodeId, bytes: Bytes, parser: Arc<XmlnscParser>) -> NodeId {
    let empty = bytes.is_empty();
    let (id, index, _) = tree.push_domain(parent, DOMAIN, bytes, parser);
    tree.set_parser_flags(id, flags::DOC);
    if !empty {
        tree.set_pending(id, index, 0);
    }
    id
}

impl Parser for XmlnscParser {
    fn domain(&self) -> &'static str {
        DOMAIN
    }

    fn expand(&self, tree: &mut Tree, id: NodeId, how: Expand) -> Result<(), TreeError> {
        build::expand(self, tree, id, how).map_err(build::tree_error)
    }

    fn serialize(&self, tree: &mut Tree, id: NodeId, out: &mut Vec<u8>) -> Result<(), TreeError> {
        serialize_to(tree, id, out)
    }
}
