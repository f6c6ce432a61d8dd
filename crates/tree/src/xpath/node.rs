//! XPath nodes over message tree elements, and how field types map to XPath node kinds.
//!
//! The mapping uses XMLNSC's field type constants (IBM's "XMLNSC: Using field types" table),
//! which also suit the generic trees (Properties, headers, LocalEnvironment), whose elements are
//! `Name`, `Value` or `NameValue`:
//!
//! | field type | constant | XPath node |
//! |---|---|---|
//! | 0x03000100, 0x03000101 | XMLNSC.Attribute, XMLNSC.SingleAttribute | attribute |
//! | 0x03000102, 0x03000103 | XMLNSC.SingleNamespaceDecl, XMLNSC.NamespaceDecl | none (namespace declarations are not attributes in XPath) |
//! | 0x01000400, 0x01000300 | XMLNSC.XmlDeclaration, XMLNSC.DocumentType | none |
//! | 0x03000300, 0x03000301 | XMLNSC.EntityDefinition, XMLNSC.SingleEntityDefinition | none |
//! | 0x03000400 | XMLNSC.Comment | comment |
//! | 0x03000401 | XMLNSC.ProcessingInstruction | processing instruction |
//! | class 0x02000000 (XMLNSC.Value, CDataValue, …) | | text |
//! | anything else | | element; a non-null value is its first text child |
//!
//! The rule "class 0x03000000 with bit 0x100 set" would also catch namespace declarations and
//! entity definitions, so the exact attribute constants are used instead.

use crate::field_type::xmlnsc;
use crate::xpath::tree_api::NodeId;

/// Which tree of the message assembly a node is in. The order is the document order between
/// trees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TreeSlot {
    Root,
    LocalEnvironment,
    Environment,
    ExceptionList,
}

/// The XPath kind of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    Element,
    Attribute,
    /// A value-only element (mixed content).
    Text,
    /// The value of element `id`, seen as that element's first text child.
    ValueText,
    Comment,
    ProcessingInstruction,
}

/// A node of the XPath data model: an element of one of the context's trees, seen as `kind`.
/// Nodes come only from evaluation, so they always name an element of the context's trees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct XNode {
    pub(crate) slot: TreeSlot,
    pub(crate) id: NodeId,
    pub(crate) kind: NodeKind,
}

impl XNode {
    pub(crate) fn new(slot: TreeSlot, id: NodeId, kind: NodeKind) -> XNode {
        XNode { slot, id, kind }
    }

    /// The tree the node is in.
    pub fn slot(&self) -> TreeSlot {
        self.slot
    }

    /// The element of that tree (for a `ValueText` node, the element whose value it is).
    pub fn id(&self) -> NodeId {
        self.id
    }

    pub fn kind(&self) -> NodeKind {
        self.kind
    }
}

/// The XPath kind of an element with this field type; `None` when it is no XPath node.
pub fn classify(field_type: u32) -> Option<NodeKind> {
    match field_type {
        xmlnsc::ATTRIBUTE | xmlnsc::SINGLE_ATTRIBUTE => Some(NodeKind::Attribute),
        xmlnsc::SINGLE_NAMESPACE_DECL
        | xmlnsc::NAMESPACE_DECL
        | xmlnsc::XML_DECLARATION
        | xmlnsc::DOCUMENT_TYPE
        | xmlnsc::ENTITY_DEFINITION
        | xmlnsc::SINGLE_ENTITY_DEFINITION => None,
        xmlnsc::COMMENT => Some(NodeKind::Comment),
        xmlnsc::PROCESSING_INSTRUCTION => Some(NodeKind::ProcessingInstruction),
        t if t & 0xFF00_0000 == 0x0200_0000 => Some(NodeKind::Text),
        _ => Some(NodeKind::Element),
    }
}
