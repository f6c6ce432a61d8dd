//! The trees an expression is evaluated against, and navigation in the XPath data model over
//! them (children, attributes, parents, siblings, string values, names).
//!
//! Navigation uses the tree's on-demand calls (`first_child`, `next_sibling`), so it parses
//! only the part of a message it visits.

use std::collections::HashMap;

use crate::xpath::error::XPathError;
use crate::xpath::node::{NodeKind, TreeSlot, XNode, classify};
use crate::xpath::tree_api::{Message, NodeId, Tree, Value};
use crate::xpath::value::{append_value, string_to_number, value_number};

/// The message assembly an expression reads: Root, LocalEnvironment, Environment (optional)
/// and ExceptionList.
pub struct XPathContext<'a> {
    root: &'a mut Tree,
    local_environment: &'a mut Tree,
    environment: Option<&'a mut Tree>,
    exception_list: &'a mut Tree,
    /// Sibling positions already counted, for document-order sorting. Evaluation only adds
    /// parsed elements at the end of a level, so positions stay valid while the context lives.
    pub(crate) sibling_index: HashMap<(TreeSlot, NodeId), u32>,
}

impl<'a> XPathContext<'a> {
    /// A context over a message and the flow invocation's Environment tree.
    pub fn new(message: &'a mut Message, environment: &'a mut Tree) -> XPathContext<'a> {
        let Message {
            root,
            local_environment,
            exception_list,
        } = message;
        XPathContext::from_trees(root, local_environment, Some(environment), exception_list)
    }

    /// A context over a message alone; `$Environment` is then an empty node-set.
    pub fn without_environment(message: &'a mut Message) -> XPathContext<'a> {
        let Message {
            root,
            local_environment,
            exception_list,
        } = message;
        XPathContext::from_trees(root, local_environment, None, exception_list)
    }

    /// A context over separate trees.
    pub fn from_trees(
        root: &'a mut Tree,
        local_environment: &'a mut Tree,
        environment: Option<&'a mut Tree>,
        exception_list: &'a mut Tree,
    ) -> XPathContext<'a> {
        XPathContext {
            root,
            local_environment,
            environment,
            exception_list,
            sibling_index: HashMap::new(),
        }
    }

    /// The tree in `slot`, if the context has one.
    pub fn tree(&self, slot: TreeSlot) -> Option<&Tree> {
        match slot {
            TreeSlot::Root => Some(&*self.root),
            TreeSlot::LocalEnvironment => Some(&*self.local_environment),
            TreeSlot::Environment => self.environment.as_deref(),
            TreeSlot::ExceptionList => Some(&*self.exception_list),
        }
    }

    /// The tree in `slot` for changes, if the context has one. Nodes from earlier evaluations
    /// may not be used after changing a tree.
    pub fn tree_mut(&mut self, slot: TreeSlot) -> Option<&mut Tree> {
        // A change may move siblings, so remembered positions no longer hold.
        self.sibling_index.clear();
        self.navigable(slot)
    }

    /// The tree in `slot` for navigation (which may parse but never moves elements).
    fn navigable(&mut self, slot: TreeSlot) -> Option<&mut Tree> {
        match slot {
            TreeSlot::Root => Some(&mut *self.root),
            TreeSlot::LocalEnvironment => Some(&mut *self.local_environment),
            TreeSlot::Environment => self.environment.as_deref_mut(),
            TreeSlot::ExceptionList => Some(&mut *self.exception_list),
        }
    }

    pub(crate) fn tree_of(&mut self, slot: TreeSlot) -> Result<&mut Tree, XPathError> {
        self.navigable(slot).ok_or_else(|| {
            XPathError::Internal(format!("a node refers to the absent {slot:?} tree"))
        })
    }

    /// Check that a node handed in by a caller names a live element of this context.
    fn check(&self, n: XNode) -> Result<(), XPathError> {
        match self.tree(n.slot) {
            Some(t) if !t.is_deleted(n.id) => Ok(()),
            _ => Err(XPathError::StaleNode),
        }
    }

    pub(crate) fn read(&self, slot: TreeSlot) -> Result<&Tree, XPathError> {
        self.tree(slot).ok_or_else(|| {
            XPathError::Internal(format!("a node refers to the absent {slot:?} tree"))
        })
    }

    /// The root element of the tree in `slot`.
    pub(crate) fn root_node(&self, slot: TreeSlot) -> Option<XNode> {
        let tree = self.tree(slot)?;
        Some(XNode::new(slot, tree.root(), NodeKind::Element))
    }

    /// `$Body`: the last child of Root, unless that is Properties (then there is no body).
    pub(crate) fn body_node(&mut self) -> Result<Option<XNode>, XPathError> {
        let tree = &mut *self.root;
        let r = tree.root();
        let Some(last) = tree.last_child(r)? else {
            return Ok(None);
        };
        if tree.name_bytes(last) == b"Properties" {
            return Ok(None);
        }
        Ok(classify(tree.field_type(last)).map(|k| XNode::new(TreeSlot::Root, last, k)))
    }

    // ----- the child axis ---------------------------------------------------------------

    /// The first element from `at` on (inclusive, then its next siblings) that is a node on
    /// the child axis: not an attribute, and not an element XPath does not see.
    fn visible_from(
        &mut self,
        slot: TreeSlot,
        mut at: Option<NodeId>,
    ) -> Result<Option<XNode>, XPathError> {
        let tree = self.tree_of(slot)?;
        while let Some(c) = at {
            match classify(tree.field_type(c)) {
                Some(NodeKind::Attribute) | None => at = tree.next_sibling(c)?,
                Some(kind) => return Ok(Some(XNode::new(slot, c, kind))),
            }
        }
        Ok(None)
    }

    /// The first child of `n` on the child axis: its value as a text node, else its first
    /// child element, text, comment or processing instruction.
    pub(crate) fn first_child(&mut self, n: XNode) -> Result<Option<XNode>, XPathError> {
        if n.kind != NodeKind::Element {
            return Ok(None);
        }
        let tree = self.tree_of(n.slot)?;
        if !tree.value(n.id).is_null() {
            return Ok(Some(XNode::new(n.slot, n.id, NodeKind::ValueText)));
        }
        let first = tree.first_child(n.id)?;
        self.visible_from(n.slot, first)
    }

    /// The next sibling of `n` on the child axis.
    pub(crate) fn next_sibling(&mut self, n: XNode) -> Result<Option<XNode>, XPathError> {
        let tree = self.tree_of(n.slot)?;
        let next = match n.kind {
            NodeKind::ValueText => tree.first_child(n.id)?,
            NodeKind::Attribute => return Ok(None),
            _ => {
                if tree.parent(n.id).is_none() {
                    return Ok(None);
                }
                tree.next_sibling(n.id)?
            }
        };
        self.visible_from(n.slot, next)
    }

    /// The previous sibling of `n` on the child axis (parses nothing: earlier siblings exist).
    pub(crate) fn prev_sibling(&mut self, n: XNode) -> Result<Option<XNode>, XPathError> {
        let tree = self.read(n.slot)?;
        if matches!(n.kind, NodeKind::ValueText | NodeKind::Attribute) {
            return Ok(None);
        }
        let Some(parent) = tree.parent(n.id) else {
            return Ok(None);
        };
        let mut at = tree.prev_sibling(n.id);
        while let Some(c) = at {
            match classify(tree.field_type(c)) {
                Some(NodeKind::Attribute) | None => at = tree.prev_sibling(c),
                Some(kind) => return Ok(Some(XNode::new(n.slot, c, kind))),
            }
        }
        let parent_is_element = classify(tree.field_type(parent)) == Some(NodeKind::Element);
        if parent_is_element && !tree.value(parent).is_null() {
            return Ok(Some(XNode::new(n.slot, parent, NodeKind::ValueText)));
        }
        Ok(None)
    }

    /// The parent of `n` (an attribute's parent is its element).
    pub(crate) fn parent(&self, n: XNode) -> Result<Option<XNode>, XPathError> {
        if n.kind == NodeKind::ValueText {
            return Ok(Some(XNode::new(n.slot, n.id, NodeKind::Element)));
        }
        let tree = self.read(n.slot)?;
        Ok(tree.parent(n.id).map(|p| {
            XNode::new(
                n.slot,
                p,
                classify(tree.field_type(p)).unwrap_or(NodeKind::Element),
            )
        }))
    }

    /// The node after `n` in a pre-order walk of the subtree of `top` (child axis only).
    pub(crate) fn next_in_subtree(
        &mut self,
        n: XNode,
        top: XNode,
    ) -> Result<Option<XNode>, XPathError> {
        if let Some(c) = self.first_child(n)? {
            return Ok(Some(c));
        }
        let mut at = n;
        loop {
            if at == top {
                return Ok(None);
            }
            if let Some(s) = self.next_sibling(at)? {
                return Ok(Some(s));
            }
            match self.parent(at)? {
                Some(p) => at = p,
                None => return Ok(None),
            }
        }
    }

    // ----- the attribute axis -------------------------------------------------------------

    /// The attribute after `prev` (or the first, when `prev` is None) of element `n`.
    ///
    /// A parser writes attributes before the element's content, so on an element nobody
    /// changed the scan stops at the first content child instead of parsing the whole level;
    /// on a changed element every child is checked.
    pub(crate) fn next_attribute(
        &mut self,
        n: XNode,
        prev: Option<XNode>,
    ) -> Result<Option<XNode>, XPathError> {
        if n.kind != NodeKind::Element {
            return Ok(None);
        }
        let tree = self.tree_of(n.slot)?;
        let changed = tree.is_dirty(n.id);
        let mut at = match prev {
            None => tree.first_child(n.id)?,
            Some(p) => tree.next_sibling(p.id)?,
        };
        while let Some(c) = at {
            match classify(tree.field_type(c)) {
                Some(NodeKind::Attribute) => {
                    return Ok(Some(XNode::new(n.slot, c, NodeKind::Attribute)));
                }
                None => {}
                Some(_) if !changed => return Ok(None),
                Some(_) => {}
            }
            at = tree.next_sibling(c)?;
        }
        Ok(None)
    }

    // ----- names and values ---------------------------------------------------------------

    /// The local name of an element, attribute or processing instruction (empty for others).
    pub fn local_name(&self, n: XNode) -> Result<&[u8], XPathError> {
        self.check(n)?;
        let tree = self.read(n.slot)?;
        Ok(match n.kind {
            NodeKind::Element | NodeKind::Attribute | NodeKind::ProcessingInstruction => {
                tree.name_bytes(n.id)
            }
            _ => b"",
        })
    }

    /// The namespace URI of an element or attribute (empty for none).
    pub fn namespace_uri(&self, n: XNode) -> Result<&[u8], XPathError> {
        self.check(n)?;
        let tree = self.read(n.slot)?;
        Ok(match n.kind {
            NodeKind::Element | NodeKind::Attribute => tree.namespace_bytes(n.id),
            _ => b"",
        })
    }

    /// The string value of `n` (XPath 1.0 §5): for an element, its own value followed by the
    /// text of all its descendants in document order; for other nodes, their value.
    pub fn string_value(&mut self, n: XNode) -> Result<String, XPathError> {
        self.check(n)?;
        let mut out = String::new();
        self.append_string_value(n, &mut out)?;
        Ok(out)
    }

    pub(crate) fn append_string_value(
        &mut self,
        n: XNode,
        out: &mut String,
    ) -> Result<(), XPathError> {
        if n.kind != NodeKind::Element {
            let tree = self.read(n.slot)?;
            append_value(tree, tree.value(n.id), out);
            return Ok(());
        }
        let mut at = self.first_child(n)?;
        while let Some(d) = at {
            if matches!(d.kind, NodeKind::Text | NodeKind::ValueText) {
                let tree = self.read(d.slot)?;
                append_value(tree, tree.value(d.id), out);
            }
            at = self.next_in_subtree(d, n)?;
        }
        Ok(())
    }

    /// `number()` of a node's string value, reading numeric leaf values directly.
    pub(crate) fn number_value(&mut self, n: XNode) -> Result<f64, XPathError> {
        let tree = self.tree_of(n.slot)?;
        let v = tree.value(n.id);
        if !matches!(v, Value::Null) {
            let leaf = match n.kind {
                NodeKind::Element => tree.first_child(n.id)?.is_none(),
                _ => true,
            };
            if leaf && let Some(x) = value_number(tree, v) {
                return Ok(x);
            }
        }
        Ok(string_to_number(&self.string_value(n)?))
    }
}
