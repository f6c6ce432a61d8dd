//! The message tree: an arena of elements joined by parent, child and sibling links.
//!
//! Invariants:
//! - Element 0 is the root; ids are stable until an element is deleted, after which its slot may be
//!   reused by a later element of the same tree.
//! - An element marked *pending* has children that its parser has not materialised yet; they start
//!   at byte `resume` of its source buffer. Navigation that needs them asks the parser for more
//!   (on-demand parsing); a parse error surfaces from that navigation call.
//! - An element marked *dirty* (or any of whose descendants was changed) must be serialised from the
//!   tree; a clean element with a source span may be serialised by copying the span's bytes.
//!   Dirty is always set on every ancestor of a dirty element.

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::TreeError;
use crate::text::{Text, TextRef};
use crate::value::Value;

const NIL: u32 = u32::MAX;
const NO_PARSER: u16 = u16::MAX;

const PENDING: u8 = 1;
const DIRTY: u8 = 2;
const FREE: u8 = 4;

/// The index of an element in its tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// Where the bytes an element was parsed from lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceSpan {
    pub buf: u32,
    pub start: u32,
    pub end: u32,
}

#[derive(Clone, Copy, Debug)]
struct Element {
    name: Text,
    namespace: Text,
    value: Value,
    field_type: u32,
    parent: u32,
    first: u32,
    last: u32,
    prev: u32,
    next: u32,
    source: SourceSpan,
    resume: u32,
    parser: u16,
    flags: u8,
    parser_flags: u8,
}

impl Element {
    fn new(field_type: u32, name: Text, value: Value) -> Self {
        Element {
            name,
            namespace: Text::EMPTY,
            value,
            field_type,
            parent: NIL,
            first: NIL,
            last: NIL,
            prev: NIL,
            next: NIL,
            source: SourceSpan {
                buf: NIL,
                start: 0,
                end: 0,
            },
            resume: 0,
            parser: NO_PARSER,
            flags: 0,
            parser_flags: 0,
        }
    }
}

/// How much of a pending element a parser must materialise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expand {
    /// At least one more child (or none when there are no more).
    OneMore,
    /// Every remaining child.
    All,
}

/// A message domain's parser and serialiser, called by the tree for on-demand parsing.
pub trait Parser: Send + Sync + 'static {
    /// The domain name, for example `XMLNSC`.
    fn domain(&self) -> &'static str;

    /// Materialise children of the pending element `id`, continuing at [`Tree::resume`]. When no
    /// children remain the parser must call [`Tree::finish_pending`].
    fn expand(&self, tree: &mut Tree, id: NodeId, how: Expand) -> Result<(), TreeError>;

    /// Write the subtree under the domain element `id` in this domain's wire format.
    fn serialize(&self, tree: &mut Tree, id: NodeId, out: &mut Vec<u8>) -> Result<(), TreeError>;
}

/// One message tree (Root, LocalEnvironment, Environment or ExceptionList).
#[derive(Clone)]
pub struct Tree {
    elements: Vec<Element>,
    buffers: Vec<Bytes>,
    heap: Vec<u8>,
    parsers: Vec<Arc<dyn Parser>>,
    free: u32,
}

impl std::fmt::Debug for Tree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::debug::render(self))
    }
}

impl Tree {
    /// A tree holding only its root element.
    pub fn new(root_name: &'static str) -> Tree {
        Tree {
            elements: vec![Element::new(
                crate::field_type::NAME,
                Text::from_static(root_name),
                Value::Null,
            )],
            buffers: Vec::new(),
            heap: Vec::new(),
            parsers: Vec::new(),
            free: NIL,
        }
    }

    /// The root element.
    pub fn root(&self) -> NodeId {
        NodeId(0)
    }

    fn el(&self, id: NodeId) -> &Element {
        &self.elements[id.0 as usize]
    }

    fn el_mut(&mut self, id: NodeId) -> &mut Element {
        &mut self.elements[id.0 as usize]
    }

    fn opt(v: u32) -> Option<NodeId> {
        (v != NIL).then_some(NodeId(v))
    }

    // ----- strings and buffers -------------------------------------------------------------

    /// Keep `bytes` alive with the tree and return its buffer index for [`Text::src`] handles.
    pub fn add_buffer(&mut self, bytes: Bytes) -> u32 {
        if let Some(i) = self
            .buffers
            .iter()
            .position(|b| b.as_ptr() == bytes.as_ptr() && b.len() == bytes.len())
        {
            return i as u32;
        }
        self.buffers.push(bytes);
        (self.buffers.len() - 1) as u32
    }

    /// The source buffer `buf` (a cheap reference-counted handle).
    pub fn buffer(&self, buf: u32) -> &Bytes {
        &self.buffers[buf as usize]
    }

    /// Store `s` in the tree's heap and return a handle to it.
    pub fn alloc_text(&mut self, s: &[u8]) -> Text {
        if s.is_empty() {
            return Text::EMPTY;
        }
        let start = self.heap.len() as u32;
        self.heap.extend_from_slice(s);
        Text::heap(start, s.len() as u32)
    }

    /// The bytes of a text handle.
    pub fn bytes(&self, t: Text) -> &[u8] {
        match t.get() {
            TextRef::Empty => b"",
            TextRef::Src { buf, start, len } => {
                &self.buffers[buf as usize][start as usize..(start + len) as usize]
            }
            TextRef::Heap { start, len } => &self.heap[start as usize..(start + len) as usize],
            TextRef::Static(s) => s.as_bytes(),
        }
    }

    /// A text handle as a string (invalid UTF-8 replaced).
    pub fn str(&self, t: Text) -> Cow<'_, str> {
        String::from_utf8_lossy(self.bytes(t))
    }

    /// Re-home a text handle of `other` into this tree.
    pub fn import_text(&mut self, other: &Tree, t: Text) -> Text {
        match t.get() {
            TextRef::Src { buf, start, len } => {
                let b = self.add_buffer(other.buffers[buf as usize].clone());
                Text::src(b, start, len)
            }
            TextRef::Heap { .. } => self.alloc_text(other.bytes(t)),
            TextRef::Empty | TextRef::Static(_) => t,
        }
    }

    fn import_value(&mut self, other: &Tree, v: Value) -> Value {
        match v {
            Value::Character(t) => Value::Character(self.import_text(other, t)),
            Value::Decimal(t) => Value::Decimal(self.import_text(other, t)),
            Value::Blob(t) => Value::Blob(self.import_text(other, t)),
            Value::Bit(t) => Value::Bit(self.import_text(other, t)),
            v => v,
        }
    }

    /// Register a domain parser with the tree; returns its index.
    pub fn add_parser(&mut self, p: Arc<dyn Parser>) -> u16 {
        if let Some(i) = self.parsers.iter().position(|q| Arc::ptr_eq(q, &p)) {
            return i as u16;
        }
        self.parsers.push(p);
        (self.parsers.len() - 1) as u16
    }

    /// The index of the parser that owns element `id` (for [`Tree::set_pending`]), if one does.
    pub fn parser_index(&self, id: NodeId) -> Option<u16> {
        let p = self.el(id).parser;
        (p != NO_PARSER).then_some(p)
    }

    /// Make room for `additional` more elements (a parser that knows the size of what it builds).
    pub fn reserve(&mut self, additional: usize) {
        self.elements.reserve(additional);
    }

    /// The parser that owns element `id`, if one does.
    pub fn parser_of(&self, id: NodeId) -> Option<Arc<dyn Parser>> {
        let p = self.el(id).parser;
        (p != NO_PARSER).then(|| self.parsers[p as usize].clone())
    }

    // ----- reading an element --------------------------------------------------------------

    pub fn name(&self, id: NodeId) -> Text {
        self.el(id).name
    }
    pub fn name_bytes(&self, id: NodeId) -> &[u8] {
        self.bytes(self.el(id).name)
    }
    pub fn namespace(&self, id: NodeId) -> Text {
        self.el(id).namespace
    }
    pub fn namespace_bytes(&self, id: NodeId) -> &[u8] {
        self.bytes(self.el(id).namespace)
    }
    pub fn value(&self, id: NodeId) -> Value {
        self.el(id).value
    }
    pub fn field_type(&self, id: NodeId) -> u32 {
        self.el(id).field_type
    }
    /// The value's bytes when it is character, decimal, BLOB or BIT data.
    pub fn value_bytes(&self, id: NodeId) -> Option<&[u8]> {
        match self.el(id).value {
            Value::Character(t) | Value::Decimal(t) | Value::Blob(t) | Value::Bit(t) => {
                Some(self.bytes(t))
            }
            _ => None,
        }
    }
    /// Whether element `id` was deleted (its id may not be used).
    pub fn is_deleted(&self, id: NodeId) -> bool {
        self.elements
            .get(id.0 as usize)
            .is_none_or(|e| e.flags & FREE != 0)
    }

    /// The original bytes of an element nobody changed, for serialisation by copy.
    pub fn original(&self, id: NodeId) -> Option<&[u8]> {
        let e = self.el(id);
        if e.flags & DIRTY != 0 || e.source.buf == NIL {
            return None;
        }
        Some(&self.buffers[e.source.buf as usize][e.source.start as usize..e.source.end as usize])
    }
    /// [`Tree::original`] as a shared slice of the source buffer (no copy).
    pub fn original_shared(&self, id: NodeId) -> Option<Bytes> {
        let e = self.el(id);
        if e.flags & DIRTY != 0 || e.source.buf == NIL {
            return None;
        }
        Some(
            self.buffers[e.source.buf as usize]
                .slice(e.source.start as usize..e.source.end as usize),
        )
    }
    pub fn source(&self, id: NodeId) -> Option<SourceSpan> {
        let e = self.el(id);
        (e.source.buf != NIL).then_some(e.source)
    }
    pub fn is_dirty(&self, id: NodeId) -> bool {
        self.el(id).flags & DIRTY != 0
    }
    /// Whether element `id` has children not yet parsed.
    pub fn is_pending(&self, id: NodeId) -> bool {
        self.el(id).flags & PENDING != 0
    }
    /// Where the unparsed children of a pending element start in its source buffer.
    pub fn resume(&self, id: NodeId) -> u32 {
        self.el(id).resume
    }
    /// The number of elements slots in use (a measure of tree size).
    pub fn len(&self) -> usize {
        self.elements.len()
    }
    pub fn is_empty(&self) -> bool {
        false
    }

    // ----- navigation (parses on demand) ---------------------------------------------------

    fn expand(&mut self, id: NodeId, how: Expand) -> Result<(), TreeError> {
        let p = self.el(id).parser;
        if p == NO_PARSER {
            self.el_mut(id).flags &= !PENDING;
            return Ok(());
        }
        let parser = self.parsers[p as usize].clone();
        let before = (self.el(id).last, self.el(id).resume);
        parser.expand(self, id, how)?;
        if self.is_pending(id) && (self.el(id).last, self.el(id).resume) == before {
            return Err(TreeError::Internal(format!(
                "{} parser made no progress expanding an element",
                parser.domain()
            )));
        }
        Ok(())
    }

    /// Parse every remaining child of `id` (not their descendants).
    pub fn expand_children(&mut self, id: NodeId) -> Result<(), TreeError> {
        while self.is_pending(id) {
            self.expand(id, Expand::All)?;
        }
        Ok(())
    }

    /// Parse the whole subtree under `id` (parse timing "complete").
    pub fn expand_all(&mut self, id: NodeId) -> Result<(), TreeError> {
        // Growing the arena a few times over costs a copy of everything built so far; one element
        // per 32 source bytes is about what XML and JSON messages make.
        if self.is_pending(id)
            && let Some(span) = self.source(id)
        {
            self.elements.reserve((span.end - span.start) as usize / 32);
        }
        let mut stack = vec![id];
        while let Some(n) = stack.pop() {
            self.expand_children(n)?;
            let mut c = self.el(n).first;
            while c != NIL {
                stack.push(NodeId(c));
                c = self.elements[c as usize].next;
            }
        }
        Ok(())
    }

    pub fn parent(&self, id: NodeId) -> Option<NodeId> {
        Self::opt(self.el(id).parent)
    }

    pub fn first_child(&mut self, id: NodeId) -> Result<Option<NodeId>, TreeError> {
        while self.el(id).first == NIL && self.is_pending(id) {
            self.expand(id, Expand::OneMore)?;
        }
        Ok(Self::opt(self.el(id).first))
    }

    pub fn last_child(&mut self, id: NodeId) -> Result<Option<NodeId>, TreeError> {
        self.expand_children(id)?;
        Ok(Self::opt(self.el(id).last))
    }

    pub fn next_sibling(&mut self, id: NodeId) -> Result<Option<NodeId>, TreeError> {
        let e = *self.el(id);
        if e.next == NIL && e.parent != NIL {
            let parent = NodeId(e.parent);
            while self.el(id).next == NIL && self.is_pending(parent) {
                self.expand(parent, Expand::OneMore)?;
            }
        }
        Ok(Self::opt(self.el(id).next))
    }

    pub fn prev_sibling(&self, id: NodeId) -> Option<NodeId> {
        Self::opt(self.el(id).prev)
    }

    /// Children already materialised, without parsing (for serialisers of changed trees after
    /// [`Tree::expand_all`], and for debugging).
    pub fn peek_first_child(&self, id: NodeId) -> Option<NodeId> {
        Self::opt(self.el(id).first)
    }
    pub fn peek_last_child(&self, id: NodeId) -> Option<NodeId> {
        Self::opt(self.el(id).last)
    }
    pub fn peek_next_sibling(&self, id: NodeId) -> Option<NodeId> {
        Self::opt(self.el(id).next)
    }

    /// The `index`-th (0-based) child of `id` with this name (and namespace, when given), parsing
    /// only as far as needed.
    pub fn child_named(
        &mut self,
        id: NodeId,
        namespace: Option<&[u8]>,
        name: &[u8],
        index: usize,
    ) -> Result<Option<NodeId>, TreeError> {
        let mut seen = 0;
        let mut c = self.first_child(id)?;
        while let Some(n) = c {
            if self.name_bytes(n) == name
                && namespace.is_none_or(|ns| self.namespace_bytes(n) == ns)
            {
                if seen == index {
                    return Ok(Some(n));
                }
                seen += 1;
            }
            c = self.next_sibling(n)?;
        }
        Ok(None)
    }

    /// Follow a path of names from `id` (first match at each step).
    pub fn path(&mut self, id: NodeId, names: &[&str]) -> Result<Option<NodeId>, TreeError> {
        let mut at = id;
        for n in names {
            match self.child_named(at, None, n.as_bytes(), 0)? {
                Some(c) => at = c,
                None => return Ok(None),
            }
        }
        Ok(Some(at))
    }

    /// The number of children of `id` (parses the whole level).
    pub fn child_count(&mut self, id: NodeId) -> Result<usize, TreeError> {
        self.expand_children(id)?;
        let mut n = 0;
        let mut c = self.el(id).first;
        while c != NIL {
            n += 1;
            c = self.elements[c as usize].next;
        }
        Ok(n)
    }

    /// The children of `id` as a list (parses the whole level).
    pub fn children(&mut self, id: NodeId) -> Result<Vec<NodeId>, TreeError> {
        self.expand_children(id)?;
        let mut out = Vec::new();
        let mut c = self.el(id).first;
        while c != NIL {
            out.push(NodeId(c));
            c = self.elements[c as usize].next;
        }
        Ok(out)
    }

    // ----- building (used by parsers; does not mark anything changed) ----------------------

    fn alloc(&mut self, e: Element) -> NodeId {
        if self.free != NIL {
            let id = self.free;
            self.free = self.elements[id as usize].next;
            self.elements[id as usize] = e;
            NodeId(id)
        } else {
            self.elements.push(e);
            NodeId((self.elements.len() - 1) as u32)
        }
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
        let mut e = Element::new(field_type, name, value);
        e.namespace = namespace;
        e.parser = self.el(parent).parser;
        let id = self.alloc(e);
        self.link_last(parent, id);
        id
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

    /// Record the source span of a parsed element.
    pub fn set_source(&mut self, id: NodeId, span: SourceSpan) {
        self.el_mut(id).source = span;
    }

    /// Mark `id` as having unparsed children starting at `resume`, owned by `parser`.
    pub fn set_pending(&mut self, id: NodeId, parser: u16, resume: u32) {
        let e = self.el_mut(id);
        e.parser = parser;
        e.resume = resume;
        e.flags |= PENDING;
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
        self.el_mut(id).flags &= !PENDING;
    }

    /// Set the parser owning `id` (its domain element) without marking it pending.
    pub fn set_parser(&mut self, id: NodeId, parser: u16) {
        self.el_mut(id).parser = parser;
    }

    fn link_last(&mut self, parent: NodeId, id: NodeId) {
        let last = self.el(parent).last;
        {
            let e = self.el_mut(id);
            e.parent = parent.0;
            e.prev = last;
            e.next = NIL;
        }
        if last == NIL {
            self.el_mut(parent).first = id.0;
        } else {
            self.elements[last as usize].next = id.0;
        }
        self.el_mut(parent).last = id.0;
    }

    fn link_first(&mut self, parent: NodeId, id: NodeId) {
        let first = self.el(parent).first;
        {
            let e = self.el_mut(id);
            e.parent = parent.0;
            e.next = first;
            e.prev = NIL;
        }
        if first == NIL {
            self.el_mut(parent).last = id.0;
        } else {
            self.elements[first as usize].prev = id.0;
        }
        self.el_mut(parent).first = id.0;
    }

    fn link_after(&mut self, sibling: NodeId, id: NodeId) {
        let s = *self.el(sibling);
        {
            let e = self.el_mut(id);
            e.parent = s.parent;
            e.prev = sibling.0;
            e.next = s.next;
        }
        if s.next == NIL {
            self.elements[s.parent as usize].last = id.0;
        } else {
            self.elements[s.next as usize].prev = id.0;
        }
        self.el_mut(sibling).next = id.0;
    }

    fn link_before(&mut self, sibling: NodeId, id: NodeId) {
        let s = *self.el(sibling);
        {
            let e = self.el_mut(id);
            e.parent = s.parent;
            e.next = sibling.0;
            e.prev = s.prev;
        }
        if s.prev == NIL {
            self.elements[s.parent as usize].first = id.0;
        } else {
            self.elements[s.prev as usize].next = id.0;
        }
        self.el_mut(sibling).prev = id.0;
    }

    fn unlink(&mut self, id: NodeId) {
        let e = *self.el(id);
        if e.parent == NIL {
            return;
        }
        if e.prev == NIL {
            self.elements[e.parent as usize].first = e.next;
        } else {
            self.elements[e.prev as usize].next = e.next;
        }
        if e.next == NIL {
            self.elements[e.parent as usize].last = e.prev;
        } else {
            self.elements[e.next as usize].prev = e.prev;
        }
        let m = self.el_mut(id);
        m.parent = NIL;
        m.prev = NIL;
        m.next = NIL;
    }

    // ----- changing the tree (marks changed subtrees) --------------------------------------

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
        self.el_mut(id).value = v;
        self.touch(id);
    }
    pub fn set_name(&mut self, id: NodeId, name: Text) {
        self.el_mut(id).name = name;
        self.touch(id);
    }
    pub fn set_namespace(&mut self, id: NodeId, ns: Text) {
        self.el_mut(id).namespace = ns;
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

    fn new_child_element(&mut self, field_type: u32, name: Text, value: Value) -> NodeId {
        self.alloc(Element::new(field_type, name, value))
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
        let mut at = Some(target);
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
        let mut stack = vec![id.0];
        while let Some(n) = stack.pop() {
            let mut c = self.elements[n as usize].first;
            while c != NIL {
                stack.push(c);
                c = self.elements[c as usize].next;
            }
            let e = &mut self.elements[n as usize];
            *e = Element::new(0, Text::EMPTY, Value::Null);
            e.flags = FREE;
            e.next = self.free;
            self.free = n;
        }
        Ok(())
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

    fn copy_one(&mut self, src: &Tree, id: NodeId) -> NodeId {
        let mut e = *src.el(id);
        e.name = self.import_text(src, e.name);
        e.namespace = self.import_text(src, e.namespace);
        e.value = self.import_value(src, e.value);
        if e.source.buf != NIL {
            e.source.buf = self.add_buffer(src.buffers[e.source.buf as usize].clone());
        }
        if e.parser != NO_PARSER {
            e.parser = self.add_parser(src.parsers[e.parser as usize].clone());
        }
        e.parent = NIL;
        e.first = NIL;
        e.last = NIL;
        e.prev = NIL;
        e.next = NIL;
        self.alloc(e)
    }

    /// Replace the whole content of this tree by a copy of `src` (cheap: a memcpy and refcounts).
    pub fn clone_from_tree(&mut self, src: &Tree) {
        self.clone_from(src);
    }
}

/// Where an attached or created element goes relative to a target element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    FirstChild,
    LastChild,
    NextSibling,
    PrevSibling,
}
