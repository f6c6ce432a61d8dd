//! Document order: sorting node-sets and removing duplicates.
//!
//! Element ids are not in document order (elements created by flow logic get new slots), so a
//! node's order key is its path of sibling positions from the root. Within an element, its
//! attributes come first, then its own value as a text node, then its children.

use std::cmp::Ordering;

use crate::xpath::context::XPathContext;
use crate::xpath::error::XPathError;
use crate::xpath::node::{NodeKind, XNode, classify};
use crate::xpath::tree_api::NodeId;

/// Attributes sort before the element's value and children.
const ATTRIBUTE_MARK: i64 = -2;
/// An element's own value sorts before its children.
const VALUE_MARK: i64 = -1;

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    slot: crate::xpath::node::TreeSlot,
    path: Vec<i64>,
}

impl XPathContext<'_> {
    /// The 0-based position of `id` among its siblings (materialised ones: earlier siblings
    /// always are), remembered for later sorts.
    fn sibling_position(&mut self, n: XNode, id: NodeId) -> Result<u32, XPathError> {
        if let Some(&i) = self.sibling_index.get(&(n.slot, id)) {
            return Ok(i);
        }
        let slot = n.slot;
        let tree = self.read(slot)?;
        let mut back = Vec::new();
        let mut at = Some(id);
        let mut base = None;
        while let Some(c) = at {
            if let Some(&i) = self.sibling_index.get(&(slot, c)) {
                base = Some(i);
                break;
            }
            back.push(c);
            at = tree.prev_sibling(c);
        }
        // `back` runs from `id` to the first uncounted sibling; number them from the base.
        let mut next = base.map_or(0, |b| b + 1);
        for c in back.into_iter().rev() {
            self.sibling_index.insert((slot, c), next);
            next += 1;
        }
        Ok(next - 1)
    }

    fn order_key(&mut self, n: XNode) -> Result<Key, XPathError> {
        let mut rev: Vec<i64> = Vec::new();
        if n.kind == NodeKind::ValueText {
            rev.push(VALUE_MARK);
        }
        let mut at = n.id;
        loop {
            let tree = self.read(n.slot)?;
            let Some(parent) = tree.parent(at) else { break };
            let is_attribute = classify(tree.field_type(at)) == Some(NodeKind::Attribute);
            let pos = i64::from(self.sibling_position(n, at)?);
            rev.push(pos);
            if is_attribute {
                rev.push(ATTRIBUTE_MARK);
            }
            at = parent;
        }
        rev.reverse();
        Ok(Key {
            slot: n.slot,
            path: rev,
        })
    }

    /// Sort `nodes` into document order and drop duplicates.
    pub(crate) fn sort_dedup(&mut self, nodes: Vec<XNode>) -> Result<Vec<XNode>, XPathError> {
        if nodes.len() < 2 {
            return Ok(nodes);
        }
        let mut keyed = Vec::with_capacity(nodes.len());
        for n in nodes {
            keyed.push((self.order_key(n)?, n));
        }
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        keyed.dedup_by(|a, b| a.0.cmp(&b.0) == Ordering::Equal && a.1 == b.1);
        Ok(keyed.into_iter().map(|(_, n)| n).collect())
    }
}
