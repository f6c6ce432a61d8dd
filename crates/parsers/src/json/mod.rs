//! The JSON domain: a parser that builds the message tree on demand and a serialiser that writes
//! it back, modelled on the product's JSON parser.
//!
//! The tree of a message is `JSON` → `Data` → the content of the top-level object or array; a
//! message that is one string, number, `true`, `false` or `null` gives a `Data` holding that
//! value, and a `Data` holding a value is written as that value. An
//! object is a folder ([`field_type::OBJECT`]) of members; an array is a [`field_type::ARRAY`]
//! element whose children are named `Item`; strings parse as CHARACTER, numbers without a fraction
//! or exponent as INTEGER (DECIMAL beyond 64 bits), other numbers as FLOAT, `true`/`false` as
//! BOOLEAN and `null` as NULL, all as [`field_type::NAME_VALUE`] elements. A `Padding` child of
//! `JSON` (JSONP) makes the serialiser wrap the output as `padding(...)`.

mod error;
pub mod field_type;
mod format;
mod parse;
mod scan;
mod serialize;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use bytes::Bytes;
use sluice_tree::{Expand, NodeId, Parser, Tree, TreeError};

pub use crate::json::error::JsonErrorKind;

/// The domain name and the name of its root element.
pub const DOMAIN: &str = "JSON";
/// The name the parser gives array items (the serialiser ignores item names).
pub const ITEM: &str = "Item";

/// Limits of the JSON parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonOptions {
    /// The deepest nesting of objects and arrays accepted (`Data` is level 1).
    pub max_depth: u32,
    /// The largest message accepted, in bytes (at most 4 GiB - 1: offsets are 32-bit).
    pub max_size: usize,
}

impl Default for JsonOptions {
    fn default() -> Self {
        JsonOptions {
            max_depth: 512,
            max_size: 1 << 30,
        }
    }
}

/// The JSON domain's parser and serialiser. One instance serves every message (it keeps no
/// per-message state); register it with [`Tree::add_parser`] through [`attach`].
#[derive(Clone, Debug, Default)]
pub struct JsonParser {
    options: JsonOptions,
}

impl JsonParser {
    /// A parser with the default limits.
    pub fn new() -> JsonParser {
        JsonParser::default()
    }

    /// A parser with the given limits.
    pub fn with_options(options: JsonOptions) -> JsonParser {
        JsonParser { options }
    }

    /// The parser's limits.
    pub fn options(&self) -> JsonOptions {
        self.options
    }

    fn index(&self, tree: &mut Tree, id: NodeId) -> Result<u16, TreeError> {
        let p = tree
            .parser_of(id)
            .ok_or_else(|| TreeError::Internal("JSON element without a parser".into()))?;
        Ok(tree.add_parser(p))
    }
}

impl Parser for JsonParser {
    fn domain(&self) -> &'static str {
        DOMAIN
    }

    fn expand(&self, tree: &mut Tree, id: NodeId, how: Expand) -> Result<(), TreeError> {
        let parser = self.index(tree, id)?;
        let flags = tree.parser_flags(id);
        if flags & parse::ROOT != 0 {
            parse::expand_root(tree, id, how, parser, self.options.max_depth).map_err(|e| *e)
        } else if flags & parse::CONTAINER != 0 {
            parse::expand_container(tree, id, how, parser, self.options.max_depth).map_err(|e| *e)
        } else {
            // Not an element this parser left pending: nothing to build.
            tree.finish_pending(id);
            Ok(())
        }
    }

    fn serialize(&self, tree: &mut Tree, id: NodeId, out: &mut Vec<u8>) -> Result<(), TreeError> {
        serialize::serialize_domain(tree, id, self.options.max_depth, out)
    }
}

/// Create the `JSON` domain element as the last child of `parent` for the message `bytes`, owned
/// by `parser` and not parsed yet. Navigation parses it on demand; `tree.expand_all(id)` parses
/// it completely (parse timing "complete"). A UTF-8 byte order mark is skipped.
pub fn attach(
    tree: &mut Tree,
    parent: NodeId,
    bytes: Bytes,
    parser: &Arc<JsonParser>,
) -> Result<NodeId, TreeError> {
    let limit = parser.options.max_size.min(u32::MAX as usize);
    if bytes.len() > limit {
        return Err(*error::parse_error(
            limit,
            JsonErrorKind::SizeLimit {
                size: bytes.len(),
                limit,
            },
        ));
    }
    // A UTF-8 byte order mark is skipped.
    let start = if bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let (id, index, _) = tree.push_domain(parent, DOMAIN, bytes, parser.clone());
    tree.set_pending(id, index, start);
    tree.set_parser_flags(id, parse::ROOT);
    Ok(id)
}

/// Parse the whole message under the domain element `json` (parse timing "complete"). Same result
/// as `tree.expand_all(json)`; faster on a message nobody navigated yet, because one expansion of
/// the domain element builds every element and the tree's walk over them is not needed.
pub fn parse_complete(tree: &mut Tree, json: NodeId) -> Result<(), TreeError> {
    if tree.is_pending(json) && tree.peek_first_child(json).is_none() {
        tree.expand_children(json)?;
        if let Some(data) = tree.peek_first_child(json)
            && !tree.is_pending(data)
        {
            return Ok(());
        }
    }
    tree.expand_all(json)
}

/// The JSON text of the domain element `json` (a convenience over [`Parser::serialize`]).
pub fn to_bytes(tree: &mut Tree, json: NodeId, parser: &JsonParser) -> Result<Vec<u8>, TreeError> {
    let mut out = Vec::new();
    parser.serialize(tree, json, &mut out)?;
    Ok(out)
}
