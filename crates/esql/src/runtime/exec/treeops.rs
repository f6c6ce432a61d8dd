//! Changing trees: assignment (SET), subtree copies, and values crossing into the tree.

use sluice_esql_scalar::Value;
use sluice_tree::{NodeId, Position, Tree, field_type, same_bytes};

use super::nav::{Sel, intern};
use super::{Exec, Loc, R, RtError, RtVal};
use crate::runtime::convert;

impl<'a> Exec<'a> {
    /// Set the value of a field, making a name-only element a name-value one.
    pub fn set_value(&mut self, at: Loc, v: &Value) -> R<()> {
        self.check_writable(at.tree)?;
        let t = self.tree(at.tree)?;
        let tv = convert::to_tree(t, v);
        t.set_value(at.node, tv);
        if !v.is_null() && t.field_type(at.node) == field_type::NAME {
            t.set_field_type(at.node, field_type::NAME_VALUE);
        }
        Ok(())
    }

    /// `SET target = value` where the target exists (or was just created).
    pub fn assign(&mut self, at: Loc, v: RtVal) -> R<Loc> {
        match v {
            RtVal::S(s) => {
                self.set_value(at, &s)?;
                Ok(at)
            }
            RtVal::F(src) => self.copy_onto(at, src),
            RtVal::L(items) => match items.into_iter().next() {
                Some(first) => self.assign(at, first),
                None => {
                    self.delete(at)?;
                    Ok(at)
                }
            },
        }
    }

    /// Delete a field (the root of a tree is emptied instead).
    pub fn delete(&mut self, at: Loc) -> R<()> {
        self.check_writable(at.tree)?;
        let t = self.tree(at.tree)?;
        if at.node == NodeId(0) {
            t.delete(at.node)?;
            t.set_value(at.node, sluice_tree::Value::Null);
        } else if !t.is_deleted(at.node) {
            t.delete(at.node)?;
        }
        Ok(())
    }

    /// Run a copy whose source and target are in the same tree (one arena) from a scratch copy
    /// of the source in a tree of its own.
    fn via_scratch<T>(&mut self, src: Loc, copy: impl FnOnce(&mut Self, Loc) -> R<T>) -> R<T> {
        let mut tmp = Tree::new("Copy");
        let t = self.tree(src.tree)?;
        t.expand_all(src.node)?;
        let top = tmp.copy_from(t, src.node, NodeId(0), Position::LastChild)?;
        let idx = self.trees.len() as u32;
        self.trees.push(tmp);
        let r = copy(
            self,
            Loc {
                tree: idx,
                node: top,
            },
        );
        self.trees.pop();
        r
    }

    /// Make `dst` a copy of `src`: its value, type and children (its name stays). A root
    /// target keeps its element and receives copies of the children, so `SET OutputRoot =
    /// InputRoot` copies handles and unparsed spans, never the message bytes.
    pub fn copy_onto(&mut self, dst: Loc, src: Loc) -> R<Loc> {
        self.check_writable(dst.tree)?;
        if dst == src {
            return Ok(dst);
        }
        if src.tree == dst.tree {
            return self.via_scratch(src, |x, s| x.copy_onto(dst, s));
        }
        let [d, s] = self
            .trees
            .get_disjoint_mut([dst.tree as usize, src.tree as usize])
            .map_err(|_| {
                RtError::general("a reference points into a tree that no longer exists")
            })?;
        let root = NodeId(0);
        if dst.node == root
            && src.node == root
            && d.len() == 1
            && d.name_bytes(root) == s.name_bytes(root)
        {
            // A whole tree onto a new one (`SET OutputRoot = InputRoot`, `SET
            // OutputLocalEnvironment = InputLocalEnvironment`): nothing can refer into the
            // target yet, so it becomes a clone, the elements copied in one go.
            d.clone_from_tree(s);
            return Ok(dst);
        }
        if dst.node == root || d.parent(dst.node).is_none() {
            // Replace the children of a root (or a detached element) in place.
            while let Some(c) = d.last_child(dst.node)? {
                d.delete(c)?;
            }
            let mut c = s.first_child(src.node)?;
            while let Some(id) = c {
                d.copy_from(s, id, dst.node, Position::LastChild)?;
                c = s.next_sibling(id)?;
            }
            let v = s.value(src.node);
            let v = import_value(d, s, v);
            d.set_value(dst.node, v);
            return Ok(dst);
        }
        // Make sure pending children of the source's parent do not matter: copy_detached takes
        // the element with its pending state, so unparsed content stays unparsed.
        let copy = d.copy_detached(s, src.node);
        if d.name_bytes(copy) != d.name_bytes(dst.node) {
            let n = d.name(dst.node);
            d.set_name(copy, n);
        }
        if d.namespace_bytes(copy) != d.namespace_bytes(dst.node) {
            let n = d.namespace(dst.node);
            d.set_namespace(copy, n);
        }
        d.attach(copy, dst.node, Position::NextSibling)?;
        d.delete(dst.node)?;
        Ok(Loc {
            tree: dst.tree,
            node: copy,
        })
    }

    /// Copy `src` as the new last child of `parent`, named (and namespaced) as step `s` names
    /// it: what `copy_onto` makes of a target that did not exist, without the empty field.
    pub fn copy_as_child(&mut self, parent: Loc, src: Loc, s: &Sel) -> R<Loc> {
        self.check_writable(parent.tree)?;
        let [d, st] = self
            .trees
            .get_disjoint_mut([parent.tree as usize, src.tree as usize])
            .map_err(|_| {
                RtError::general("a reference points into a tree that no longer exists")
            })?;
        let copy = d.copy_detached(st, src.node);
        let name = s.name.as_deref().unwrap_or_default();
        if !same_bytes(d.name_bytes(copy), name) {
            let n = intern(d, name);
            d.set_name(copy, n);
        }
        let ns = s.ns.as_deref().unwrap_or_default();
        if !d.namespace_is(copy, ns) {
            let n = intern(d, ns);
            d.set_namespace(copy, n);
        }
        d.attach(copy, parent.node, Position::LastChild)?;
        Ok(Loc {
            tree: parent.tree,
            node: copy,
        })
    }

    /// Copy `src` (name included) to a position relative to `target`.
    pub fn copy_to(&mut self, target: Loc, src: Loc, pos: Position) -> R<Loc> {
        self.check_writable(target.tree)?;
        if src.tree == target.tree {
            return self.via_scratch(src, |x, s| x.copy_to(target, s, pos));
        }
        let [d, s] = self
            .trees
            .get_disjoint_mut([target.tree as usize, src.tree as usize])
            .map_err(|_| {
                RtError::general("a reference points into a tree that no longer exists")
            })?;
        let id = d.copy_from(s, src.node, target.node, pos)?;
        Ok(Loc {
            tree: target.tree,
            node: id,
        })
    }
}

/// A value of tree `s` re-homed in tree `d`.
fn import_value(d: &mut Tree, s: &Tree, v: sluice_tree::Value) -> sluice_tree::Value {
    use sluice_tree::Value as V;
    match v {
        V::Character(t) => V::Character(d.import_text(s, t)),
        V::Decimal(t) => V::Decimal(d.import_text(s, t)),
        V::Blob(t) => V::Blob(d.import_text(s, t)),
        V::Bit(t) => V::Bit(d.import_text(s, t)),
        other => other,
    }
}
