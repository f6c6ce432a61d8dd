//! DFDL 1.0 (the first slice): a schema compiler for XSD with DFDL annotations, a parser from
//! data to the message tree under a `DFDL` domain element, and a serialiser back.
//!
//! The tree of a message is `DFDL` → the message's root element (the model's global element,
//! the product's "message type") → its content. Simple elements carry typed values: integers
//! as INTEGER, xs:decimal as DECIMAL, strings as CHARACTER, xs:date as DATE, xs:time as TIME,
//! xs:dateTime as TIMESTAMP, xs:boolean as BOOLEAN and xs:hexBinary as BLOB; a nil element has
//! a NULL value. docs/dfdl.md lists what the compiler accepts, property by property.

mod compile;
mod error;
mod escape;
mod model;
mod numbers;
mod parse;
mod props;
mod simple_type;
mod text;
mod unparse;
mod xml;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use sluice_tree::{Expand, NodeId, Parser, Text, Tree, TreeError, Value, field_type};

pub use crate::error::DfdlError;
use crate::model::Element;
use crate::parse::{INode, NO_PARENT, PVal};

/// The domain name and the name of its element under Root.
pub const DOMAIN: &str = "DFDL";

/// A compiled DFDL schema: every global element, ready to parse and serialise.
#[derive(Debug)]
pub struct Schema {
    roots: HashMap<String, Element>,
}

impl Schema {
    /// Read and compile the schema in `path` (and the documents it includes).
    pub fn load(path: &Path) -> Result<Schema, DfdlError> {
        Schema::compile(compile::load(path)?)
    }

    /// Compile a schema given as text; `name` is used in errors and includes are resolved
    /// against `base`.
    pub fn from_text(name: &str, text: &str, base: &Path) -> Result<Schema, DfdlError> {
        Schema::compile(compile::load_str(name, text, base)?)
    }

    fn compile(c: compile::Compiler) -> Result<Schema, DfdlError> {
        let mut roots = HashMap::new();
        for name in c.root_names() {
            let e = c.root(&name)?;
            roots.insert(name, e);
        }
        Ok(Schema { roots })
    }

    /// Whether the schema has the global element `name`.
    pub fn has_root(&self, name: &str) -> bool {
        self.roots.contains_key(name)
    }

    /// The global elements' names, sorted.
    pub fn root_names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.roots.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// Parse `data` as the global element `root` into the tree, as the last child of `parent`.
    /// The bytes must be the tree's buffer `buf` (so strings can point at them).
    fn parse_into(
        &self,
        root: &str,
        tree: &mut Tree,
        parent: NodeId,
        buf: u32,
        data: &[u8],
    ) -> Result<(), DfdlError> {
        let e = self.element(root)?;
        let nodes = parse::parse(e, data)?;
        build(tree, parent, buf, &nodes);
        Ok(())
    }

    fn element(&self, root: &str) -> Result<&Element, DfdlError> {
        self.roots.get(root).ok_or_else(|| DfdlError::Unparse {
            component: root.to_string(),
            message: format!(
                "the model has no global element '{root}' (it has: {})",
                self.root_names().join(", ")
            ),
        })
    }

    /// Write the tree element `id` (a message root element such as `DFDL.Order`) as data.
    pub fn unparse(&self, tree: &mut Tree, id: NodeId) -> Result<Vec<u8>, DfdlError> {
        let name = String::from_utf8_lossy(tree.name_bytes(id)).into_owned();
        let e = self.element(&name)?;
        let mut w = unparse::Writer::new(tree);
        w.root(e, id)?;
        Ok(w.out)
    }
}

/// Put parsed elements into the tree. Elements come in document order, each after its parent.
fn build(tree: &mut Tree, parent: NodeId, buf: u32, nodes: &[INode<'_>]) {
    let mut ids: Vec<NodeId> = Vec::with_capacity(nodes.len());
    for n in nodes {
        let p = if n.parent == NO_PARENT {
            parent
        } else {
            ids[n.parent as usize]
        };
        let name = tree.intern_name(n.name.as_bytes());
        let (ft, value) = match &n.value {
            PVal::Folder => (field_type::NAME, Value::Null),
            PVal::Nil => (field_type::NAME_VALUE, Value::Null),
            PVal::Src(s, e) => (
                field_type::NAME_VALUE,
                Value::Character(Text::src_or_empty(buf, *s, e - s)),
            ),
            PVal::Text(t) => (
                field_type::NAME_VALUE,
                Value::Character(tree.alloc_text(t.as_bytes())),
            ),
            PVal::Int(i) => (field_type::NAME_VALUE, Value::Integer(*i)),
            PVal::Decimal(d) => (
                field_type::NAME_VALUE,
                Value::Decimal(tree.alloc_text(d.as_bytes())),
            ),
            PVal::Bool(b) => (field_type::NAME_VALUE, Value::Boolean(*b)),
            PVal::Date(d) => (field_type::NAME_VALUE, Value::Date(*d)),
            PVal::Time(t) => (field_type::NAME_VALUE, Value::Time(*t)),
            PVal::Timestamp(t) => (field_type::NAME_VALUE, Value::Timestamp(*t)),
            PVal::SrcBlob(s, e) => (
                field_type::NAME_VALUE,
                Value::Blob(Text::src_or_empty(buf, *s, e - s)),
            ),
            PVal::Blob(b) => (field_type::NAME_VALUE, Value::Blob(tree.alloc_text(b))),
        };
        ids.push(tree.push_parsed(p, ft, Text::EMPTY, name, value));
    }
}

/// The DFDL domain's parser and serialiser for one message model and message type. One
/// instance serves every message of an input node.
#[derive(Debug, Clone)]
pub struct DfdlParser {
    schema: Arc<Schema>,
    root: String,
}

impl DfdlParser {
    /// A parser of messages whose root is the global element `message_type` of `schema`.
    pub fn new(schema: Arc<Schema>, message_type: &str) -> Result<DfdlParser, DfdlError> {
        schema.element(message_type)?;
        Ok(DfdlParser {
            schema,
            root: message_type.to_string(),
        })
    }

    /// The schema.
    pub fn schema(&self) -> &Arc<Schema> {
        &self.schema
    }

    /// The message type (the root element's name).
    pub fn message_type(&self) -> &str {
        &self.root
    }

    /// How many bytes at the start of `data` one message takes: the message type parsed
    /// from there, whatever follows it left alone (a record of a parsed record sequence).
    pub fn message_length(&self, data: &[u8]) -> Result<usize, DfdlError> {
        parse::parse_prefix(self.schema.element(&self.root)?, data)
    }
}

fn tree_error(e: DfdlError) -> TreeError {
    match e {
        // The tree's error adds the domain and the offset.
        DfdlError::Parse {
            offset,
            component,
            message,
        } => TreeError::Parse {
            domain: DOMAIN,
            offset: offset as u64,
            message: format!("ParserException: schema component '{component}': {message}"),
        },
        other => TreeError::Serialize {
            domain: DOMAIN,
            message: other.to_string(),
        },
    }
}

impl Parser for DfdlParser {
    fn domain(&self) -> &'static str {
        DOMAIN
    }

    fn expand(&self, tree: &mut Tree, id: NodeId, _how: Expand) -> Result<(), TreeError> {
        // The whole message is parsed at the first look inside: DFDL formats often need later
        // data to know where earlier fields end, and one pass builds every element.
        let Some(span) = tree.source(id) else {
            tree.finish_pending(id);
            return Ok(());
        };
        let bytes = tree.buffer(span.buf).clone();
        let data = bytes
            .get(span.start as usize..span.end as usize)
            .ok_or_else(|| TreeError::Internal("DFDL source span outside its buffer".into()))?;
        self.schema
            .parse_into(&self.root, tree, id, span.buf, data)
            .map_err(tree_error)?;
        tree.finish_pending(id);
        Ok(())
    }

    fn serialize(&self, tree: &mut Tree, id: NodeId, out: &mut Vec<u8>) -> Result<(), TreeError> {
        let Some(root) = tree.first_child(id)? else {
            return Ok(());
        };
        let data = self.schema.unparse(tree, root).map_err(tree_error)?;
        out.extend_from_slice(&data);
        Ok(())
    }
}

/// Create the `DFDL` domain element as the last child of `parent` for the message `bytes`,
/// owned by `parser` and not parsed yet. The first navigation into it parses the message.
pub fn attach(tree: &mut Tree, parent: NodeId, bytes: Bytes, parser: &Arc<DfdlParser>) -> NodeId {
    let (id, index, _) = tree.push_domain(parent, DOMAIN, bytes, parser.clone());
    tree.set_pending(id, index, 0);
    id
}

/// Parse `bytes` with `parser` into a new tree whose Root holds the DFDL domain element,
/// completely (parse timing "complete"). For tools and tests.
pub fn parse_to_tree(parser: &Arc<DfdlParser>, bytes: Bytes) -> Result<(Tree, NodeId), TreeError> {
    let mut tree = Tree::new("Root");
    let root = tree.root();
    let id = attach(&mut tree, root, bytes, parser);
    tree.expand_all(id)?;
    Ok((tree, id))
}

#[cfg(test)]
mod tests;
