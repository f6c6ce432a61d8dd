//! Changing the tree as flow logic does: values, names, new, moved, deleted and copied
//! elements. Every change marks the changed subtree, so that serialisers rebuild it.

use super::*;

impl Tree {
    /// Mark `id` and its ancestors as changed, so serialisers rebuild them.
    pub fn touch(&mut self, id: NodeId) {
        let mut at = id.0;
        while at != NIL {
            let e = &mut self.elements[at as usize];
            if e.flags & DIRTY != 0 {
                break;
            }
            e.flags |= DIRTY;
            at = e.parent;
        }
    }

    pub fn set_value(&mut self, id: NodeId, v: Value) {
        let p = self.pack(v);
        self.el_mut(id).set_packed(p);
        self.touch(id);
    }
    pub fn set_name(&mut self, id: NodeId, name: Text) {
        self.el_mut(id).name = name;
        self.touch(id);
    }
    pub fn set_namespace(&mut self, id: NodeId, ns: Text) {
        self.put_namespace(id, ns);
        self.touch(id);
    }
    pub fn set_field_type(&mut self, id: NodeId, t: u32) {
        self.el_mut(id).field_type = t;
        self.touch(id);
    }

    /// Set a character value from a string.
    pub fn set_str(&mut self, id: NodeId, s: &str) {
        let t = self.alloc_text(s.as_bytes());
        self.set_value(id, Value::Character(t));
    }

    pub(super) fn new_child_element(
        &mut self,
        field_type: u32,
        name: Text,
        value: Value,
    ) -> NodeId {
        let p = self.pack(value);
        self.alloc(Element::new(field_type, name, p))
    }

    /// Create an element as the last child of `parent`.
    pub fn create_last_child(
        &mut self,
        parent: NodeId,
        field_type: u32,
        name: Text,
        value: Value,
    ) -> Result<NodeId, TreeError> {
        self.expand_children(parent)?;
        let id = self.new_child_element(field_type, name, value);
        self.link_last(parent, id);
        self.touch(id);
        Ok(id)
    }

    /// Create an element as the first child of `parent`.
    pub fn create_first_child(
        &mut self,
        parent: NodeId,
        field_type: u32,
        name: Text,
        value: Value,
    ) -> Result<NodeId, TreeError> {
        self.expand_children(parent)?;
        let id = self.new_child_element(field_type, name, value);
        self.link_first(parent, id);
        self.touch(id);
        Ok(id)
    }

    /// Create an element right after `sibling`.
    pub fn create_next_sibling(
        &mut self,
        sibling: NodeId,
        field_type: u32,
        name: Text,
        value: Value,
    ) -> Result<NodeId, TreeError> {
        let parent = self.parent(sibling).ok_or(TreeError::NoParent)?;
        self.expand_children(parent)?;
        let id = self.new_child_element(field_type, name, value);
        self.link_after(sibling, id);
        self.touch(id);
        Ok(id)
    }

    /// Create an element right before `sibling`.
    pub fn create_prev_sibling(
        &mut self,
        sibling: NodeId,
        field_type: u32,
        name: Text,
        value: Value,
    ) -> Result<NodeId, TreeError> {
        let parent = self.parent(sibling).ok_or(TreeError::NoParent)?;
        self.expand_children(parent)?;
        let id = self.new_child_element(field_type, name, value);
        self.link_before(sibling, id);
        self.touch(id);
        Ok(id)
    }

    /// Take `id` (and its subtree) out of the tree; it can be attached elsewhere in this tree.
    pub fn detach(&mut self, id: NodeId) -> Result<(), TreeError> {
        let parent = self.parent(id).ok_or(TreeError::NoParent)?;
        self.expand_children(parent)?;
        self.touch(parent);
        self.unlink(id);
        Ok(())
    }

    /// Attach a detached element at `pos` relative to `target`.
    pub fn attach(&mut self, id: NodeId, target: NodeId, pos: Position) -> Result<(), TreeError> {
        if self.el(id).parent != NIL {
            return Err(TreeError::Attached);
        }
        // Only an element with children can have `target` inside it.
        let mut at = if self.el(id).first == NIL {
            (target == id).then_some(target)
        } else {
            Some(target)
        };
        while let Some(a) = at {
            if a == id {
                return Err(TreeError::Cycle);
            }
            at = self.parent(a);
        }
        match pos {
            Position::FirstChild => {
                self.expand_children(target)?;
                self.link_first(target, id)
            }
            Position::LastChild => {
                self.expand_children(target)?;
                self.link_last(target, id)
            }
            Position::NextSibling | Position::PrevSibling => {
                let parent = self.parent(target).ok_or(TreeError::NoParent)?;
                self.expand_children(parent)?;
                if pos == Position::NextSibling {
                    self.link_after(target, id)
                } else {
                    self.link_before(target, id)
                }
            }
        }
        if let Some(p) = self.parent(id) {
            self.touch(p);
        }
        Ok(())
    }

    /// Delete `id` and everything under it; their slots are reused.
    pub fn delete(&mut self, id: NodeId) -> Result<(), TreeError> {
        if id.0 == 0 {
            // The root stays; deleting it empties it.
            while let Some(c) = self.last_child(id)? {
                self.delete(c)?;
            }
            return Ok(());
        }
        if let Some(parent) = self.parent(id) {
            self.detach(id)?;
            self.touch(parent);
        }
        self.free_subtree(id);
        Ok(())
    }

    /// Put the slots of the detached element `id` and everything under it on the free list.
    pub(super) fn free_subtree(&mut self, id: NodeId) {
        let mut stack = vec![id.0];
        while let Some(n) = stack.pop() {
            let mut c = self.elements[n as usize].first;
            while c != NIL {
                stack.push(c);
                c = self.elements[c as usize].next;
            }
            let e = &mut self.elements[n as usize];
            if e.flags & PENDING != 0 {
                self.pending -= 1;
            }
            *e = Element::new(0, Text::EMPTY, Packed::default());
            e.flags = FREE;
            e.next = self.free;
            self.free = n;
        }
    }

    /// Take back the children a parser built under `parent` after `keep` (all of them when
    /// `None`), with their subtrees, as if they had never been parsed: for a parser that tried
    /// to build ahead and gave up. Nothing is marked changed.
    pub fn discard_parsed(&mut self, parent: NodeId, keep: Option<NodeId>) {
        loop {
            let last = self.last_of(parent);
            if last == NIL || keep == Some(NodeId(last)) {
                return;
            }
            self.unlink(NodeId(last));
            self.free_subtree(NodeId(last));
        }
    }

    /// Copy the subtree `src_id` of `src` into this tree at `pos` relative to `target`. Unparsed
    /// parts are copied unparsed (they share the source bytes and parser).
    pub fn copy_from(
        &mut self,
        src: &Tree,
        src_id: NodeId,
        target: NodeId,
        pos: Position,
    ) -> Result<NodeId, TreeError> {
        let top = self.copy_detached(src, src_id);
        self.attach(top, target, pos)?;
        Ok(top)
    }

    /// Copy the subtree `src_id` of `src` into this tree as a detached element.
    pub fn copy_detached(&mut self, src: &Tree, src_id: NodeId) -> NodeId {
        let top = self.copy_one(src, src_id);
        if src.el(src_id).first == NIL {
            // A field without children (the usual copy): no walk to set up.
            return top;
        }
        let mut stack = vec![(src_id, top)];
        while let Some((s, d)) = stack.pop() {
            let mut c = src.el(s).first;
            while c != NIL {
                let nc = self.copy_one(src, NodeId(c));
                self.link_last(d, nc);
                stack.push((NodeId(c), nc));
                c = src.elements[c as usize].next;
            }
        }
        top
    }

    pub(super) fn copy_one(&mut self, src: &Tree, id: NodeId) -> NodeId {
        let mut e = *src.el(id);
        e.name = self.import_text(src, e.name);
        let value = self.import_value(src, src.value(id));
        let packed = self.pack(value);
        e.set_packed(packed);
        if e.src_buf != NO_BUF {
            let b = self.import_buffer(src, u32::from(e.src_buf));
            e.src_buf = short_buf(b);
        }
        if e.parser != NO_PARSER {
            e.parser = self.import_parser(src, e.parser);
        }
        e.namespace = 0;
        e.parent = NIL;
        e.first = NIL;
        e.prev = NIL;
        e.next = NIL;
        if e.flags & PENDING != 0 {
            self.pending += 1;
        }
        let id2 = self.alloc(e);
        let ns = src.namespace(id);
        if !ns.is_empty() {
            let ns = self.import_text(src, ns);
            self.put_namespace(id2, ns);
        }
        id2
    }

    /// Replace the whole content of this tree by a copy of `src` (cheap: a memcpy and refcounts).
    pub fn clone_from_tree(&mut self, src: &Tree) {
        self.clone_from(src);
    }
}
