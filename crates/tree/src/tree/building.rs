//! Building the tree as parsers do: new elements, source spans and parse state, and the links
//! between siblings. Nothing here marks an element changed.

use std::sync::Arc;

use bytes::Bytes;

use super::*;

impl Tree {
    /// Inlined so that a new element is written straight into the arena: built apart and then
    /// copied, its narrow fields are stored and read back wide, and the copy waits on them.
    #[inline(always)]
    pub(super) fn alloc(&mut self, e: Element) -> NodeId {
        if self.free != NIL {
            return self.alloc_reused(e);
        }
        self.elements.push(e);
        NodeId((self.elements.len() - 1) as u32)
    }

    #[inline(never)]
    pub(super) fn alloc_reused(&mut self, e: Element) -> NodeId {
        let id = self.free;
        self.free = self.elements[id as usize].next;
        self.elements[id as usize] = e;
        NodeId(id)
    }

    /// Append a parsed child to `parent` without marking anything changed. Parsers use this;
    /// flow logic uses [`Tree::create_last_child`].
    pub fn push_parsed(
        &mut self,
        parent: NodeId,
        field_type: u32,
        namespace: Text,
        name: Text,
        value: Value,
    ) -> NodeId {
        self.push_parsed_spanned(parent, field_type, namespace, name, value, None, 0)
    }

    /// [`Tree::push_parsed`] with the source span (when the end is known) and the parser flags
    /// given at once. A parser building a whole message calls this per element: the element is
    /// written in one piece instead of being revisited by each setter.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn push_parsed_spanned(
        &mut self,
        parent: NodeId,
        field_type: u32,
        namespace: Text,
        name: Text,
        value: Value,
        span: Option<SourceSpan>,
        parser_flags: u8,
    ) -> NodeId {
        let packed = match value {
            // Parsed values are mostly text and folders: no call for them.
            Value::Character(t) => Packed {
                kind: crate::packed::CHARACTER,
                words: t.to_raw(),
            },
            Value::Null => Packed::default(),
            v => self.pack(v),
        };
        let ns = if namespace.is_empty() {
            0
        } else {
            self.ns_index(namespace)
        };
        let parser = self.el(parent).parser;
        // The element is placed blank and then filled field by field in the arena. Built whole
        // on the stack and copied, its narrow fields are stored and then read back wide, and
        // the copy waits for them.
        let i = if self.free != NIL {
            self.alloc_reused(BLANK)
        } else {
            self.elements.push(BLANK);
            NodeId((self.elements.len() - 1) as u32)
        };
        let e = &mut self.elements[i.0 as usize];
        e.name = name;
        e.value = packed.words;
        e.field_type = field_type;
        e.flags = packed.kind << KIND_SHIFT;
        e.parser = parser;
        e.parser_flags = parser_flags;
        e.namespace = ns;
        if let Some(s) = span
            && s.end != OPEN
        {
            e.src_buf = short_buf(s.buf);
            e.src_start = s.start;
            e.src_end = s.end;
        }
        if ns == NS_OVERFLOW {
            self.overflow_namespace(i, namespace);
        }
        self.link_last(parent, i);
        i
    }

    /// Add a body domain's element named `name` as the last child of `parent`, owned by `parser`,
    /// with `bytes` as its source. Returns the element, the parser's index and the buffer's index;
    /// the domain's parser decides whether the element is pending.
    pub fn push_domain(
        &mut self,
        parent: NodeId,
        name: &'static str,
        bytes: Bytes,
        parser: Arc<dyn Parser>,
    ) -> (NodeId, u16, u32) {
        let end = bytes.len() as u32;
        let buf = self.add_buffer(bytes);
        let index = self.add_parser(parser);
        let id = self.push_parsed(
            parent,
            crate::field_type::NAME,
            Text::EMPTY,
            Text::from_static(name),
            Value::Null,
        );
        self.set_source(id, SourceSpan { buf, start: 0, end });
        self.set_parser(id, index);
        (id, index, buf)
    }

    /// Record the source span of a parsed element. A tree keeps spans in its first 65,535
    /// buffers; elements of later buffers are serialised from the tree.
    pub fn set_source(&mut self, id: NodeId, span: SourceSpan) {
        let e = self.el_mut(id);
        e.src_buf = if span.end == OPEN {
            NO_BUF
        } else {
            short_buf(span.buf)
        };
        e.src_start = span.start;
        e.src_end = span.end;
    }

    /// Record where a parsed element starts while its end is not known yet; [`Tree::source`]
    /// stays `None` until [`Tree::set_source`] gives the whole span.
    pub fn set_source_start(&mut self, id: NodeId, buf: u32, start: u32) {
        let e = self.el_mut(id);
        e.src_buf = short_buf(buf);
        e.src_start = start;
        e.src_end = OPEN;
    }

    /// Mark `id` as having unparsed children starting at `resume`, owned by `parser`.
    pub fn set_pending(&mut self, id: NodeId, parser: u16, resume: u32) {
        let e = self.el_mut(id);
        e.parser = parser;
        e.resume = resume;
        if e.flags & PENDING == 0 {
            e.flags |= PENDING;
            self.pending += 1;
        }
    }

    /// Move the resume point of a pending element after the children just parsed.
    pub fn set_resume(&mut self, id: NodeId, resume: u32) {
        self.el_mut(id).resume = resume;
    }

    /// Bits a parser keeps about an element (their meaning is the parser's).
    pub fn parser_flags(&self, id: NodeId) -> u8 {
        self.el(id).parser_flags
    }
    pub fn set_parser_flags(&mut self, id: NodeId, f: u8) {
        self.el_mut(id).parser_flags = f;
    }

    /// Mark every child of `id` as parsed.
    pub fn finish_pending(&mut self, id: NodeId) {
        self.clear_pending(id);
    }

    pub(super) fn clear_pending(&mut self, id: NodeId) {
        let e = self.el_mut(id);
        if e.flags & PENDING != 0 {
            e.flags &= !PENDING;
            self.pending -= 1;
        }
    }

    /// Copy the subtree `src_id` of `src` as the last child of `parent`, as a parser builds: a
    /// domain that parses its body with another domain's parser (SOAP with XMLNSC) takes the
    /// parts over without marking anything changed, so an untouched body still goes out as it
    /// came in.
    pub fn push_copy(&mut self, parent: NodeId, src: &Tree, src_id: NodeId) -> NodeId {
        let id = self.copy_detached(src, src_id);
        self.link_last(parent, id);
        id
    }

    /// Move the parsed element `id`, with its subtree, to the end of `parent`'s children, as a
    /// parser builds: a domain that parses its body with another domain's parser in the same
    /// tree (SOAP with XMLNSC) puts the parts where it wants them without copying them and
    /// without marking anything changed.
    pub fn move_parsed(&mut self, id: NodeId, parent: NodeId) {
        self.unlink(id);
        self.link_last(parent, id);
    }

    /// Remove the parsed element `id` and its subtree without marking anything changed: what a
    /// parser built only to take parts from ([`Tree::move_parsed`]).
    pub fn drop_parsed(&mut self, id: NodeId) {
        self.unlink(id);
        self.free_subtree(id);
    }

    /// Set the parser owning `id` (its domain element) without marking it pending.
    pub fn set_parser(&mut self, id: NodeId, parser: u16) {
        self.el_mut(id).parser = parser;
    }

    /// Link `id` as the only child of `parent`.
    pub(super) fn link_only(&mut self, parent: NodeId, id: NodeId) {
        let e = self.el_mut(id);
        e.parent = parent.0;
        e.prev = id.0;
        e.next = NIL;
        self.el_mut(parent).first = id.0;
    }

    pub(super) fn link_last(&mut self, parent: NodeId, id: NodeId) {
        let first = self.el(parent).first;
        if first == NIL {
            return self.link_only(parent, id);
        }
        let last = self.elements[first as usize].prev;
        let e = self.el_mut(id);
        e.parent = parent.0;
        e.prev = last;
        e.next = NIL;
        self.elements[last as usize].next = id.0;
        self.elements[first as usize].prev = id.0;
    }

    pub(super) fn link_first(&mut self, parent: NodeId, id: NodeId) {
        let first = self.el(parent).first;
        if first == NIL {
            return self.link_only(parent, id);
        }
        let last = self.elements[first as usize].prev;
        let e = self.el_mut(id);
        e.parent = parent.0;
        e.prev = last;
        e.next = first;
        self.elements[first as usize].prev = id.0;
        self.el_mut(parent).first = id.0;
    }

    pub(super) fn link_after(&mut self, sibling: NodeId, id: NodeId) {
        let s = *self.el(sibling);
        let e = self.el_mut(id);
        e.parent = s.parent;
        e.prev = sibling.0;
        e.next = s.next;
        if s.next == NIL {
            let first = self.elements[s.parent as usize].first;
            self.elements[first as usize].prev = id.0;
        } else {
            self.elements[s.next as usize].prev = id.0;
        }
        self.el_mut(sibling).next = id.0;
    }

    pub(super) fn link_before(&mut self, sibling: NodeId, id: NodeId) {
        let s = *self.el(sibling);
        if self.elements[s.parent as usize].first == sibling.0 {
            return self.link_first(NodeId(s.parent), id);
        }
        let e = self.el_mut(id);
        e.parent = s.parent;
        e.next = sibling.0;
        e.prev = s.prev;
        self.elements[s.prev as usize].next = id.0;
        self.el_mut(sibling).prev = id.0;
    }

    pub(super) fn unlink(&mut self, id: NodeId) {
        let e = *self.el(id);
        if e.parent == NIL {
            return;
        }
        let first = self.elements[e.parent as usize].first;
        if first == id.0 {
            if e.next != NIL {
                // The new first child inherits the link to the last one.
                self.elements[e.next as usize].prev = e.prev;
            }
            self.elements[e.parent as usize].first = e.next;
        } else {
            self.elements[e.prev as usize].next = e.next;
            let after = if e.next == NIL { first } else { e.next };
            self.elements[after as usize].prev = e.prev;
        }
        let m = self.el_mut(id);
        m.parent = NIL;
        m.prev = NIL;
        m.next = NIL;
    }
}
