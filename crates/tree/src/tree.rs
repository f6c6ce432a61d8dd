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
use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::TreeError;
use crate::packed::Packed;
use crate::text::{Text, TextRef, same_bytes};
use crate::value::Value;

mod building;
mod editing;
mod sharing;

const NIL: u32 = u32::MAX;
const NO_PARSER: u16 = u16::MAX;
/// No source span.
const NO_BUF: u16 = u16::MAX;
/// Buffer index `buf` as an element stores it, or [`NO_BUF`] past the 65,535 it can name.
fn short_buf(buf: u32) -> u16 {
    u16::try_from(buf)
        .ok()
        .filter(|&b| b != NO_BUF)
        .unwrap_or(NO_BUF)
}

/// A source span whose end is not known yet.
const OPEN: u32 = u32::MAX;
/// The namespace is in [`Tree::ns_overflow`] (a tree with more distinct namespaces than fit).
const NS_OVERFLOW: u16 = u16::MAX;
/// The bits of `Element::flags` that are the tree's; the value's kind is above them.
const FLAG_BITS: u8 = 0x0F;
const KIND_SHIFT: u8 = 4;

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

/// One element in 64 bytes, so that building a tree writes one cache line per element.
#[derive(Clone, Copy, Debug)]
struct Element {
    name: Text,
    /// The value's words (see [`Packed`]); its kind is in the high bits of `flags`.
    value: [u32; 3],
    field_type: u32,
    parent: u32,
    first: u32,
    /// The previous sibling; a first child's `prev` is its parent's last child, which makes the
    /// last child an O(1) step without a field of its own.
    prev: u32,
    next: u32,
    src_start: u32,
    /// [`OPEN`] while only the start is known.
    src_end: u32,
    resume: u32,
    /// The source buffer, or [`NO_BUF`].
    src_buf: u16,
    /// Index in [`Tree::namespaces`] (0: no namespace).
    namespace: u16,
    parser: u16,
    /// PENDING, DIRTY and FREE, with the value's kind in the high four bits.
    flags: u8,
    parser_flags: u8,
}

const _: () = assert!(std::mem::size_of::<Element>() == 64);

/// An element with nothing set: unnamed, null, unlinked, without source or parser.
const BLANK: Element = Element {
    name: Text::EMPTY,
    value: [0; 3],
    field_type: 0,
    parent: NIL,
    first: NIL,
    prev: NIL,
    next: NIL,
    src_start: 0,
    src_end: 0,
    resume: 0,
    src_buf: NO_BUF,
    namespace: 0,
    parser: NO_PARSER,
    flags: 0,
    parser_flags: 0,
};

impl Element {
    fn new(field_type: u32, name: Text, value: Packed) -> Self {
        Element {
            name,
            value: value.words,
            field_type,
            flags: value.kind << KIND_SHIFT,
            ..BLANK
        }
    }

    fn packed(&self) -> Packed {
        Packed {
            kind: self.flags >> KIND_SHIFT,
            words: self.value,
        }
    }

    fn set_packed(&mut self, p: Packed) {
        self.value = p.words;
        self.flags = (self.flags & FLAG_BITS) | (p.kind << KIND_SHIFT);
    }

    fn span(&self) -> Option<SourceSpan> {
        (self.src_buf != NO_BUF && self.src_end != OPEN).then_some(SourceSpan {
            buf: u32::from(self.src_buf),
            start: self.src_start,
            end: self.src_end,
        })
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
    /// How many elements are pending: at zero, a complete parse needs no walk of the tree.
    pending: u32,
    /// Distinct namespaces: index `i` (from 1; 0 is "none") is at `namespaces[i - 1]`.
    /// Elements store the index. Empty until a namespace is used, so that a new tree costs one
    /// allocation.
    namespaces: Vec<Text>,
    /// The namespace most recently stored, so that a run of elements in one namespace does not
    /// hash its bytes per element.
    ns_last: (Text, u16),
    /// Made when first needed: a tree is moved by value from node to node, and these would make
    /// it four times larger.
    lookups: Option<Box<Lookups>>,
}

/// The tables a tree needs only once names are interned or namespaces stored.
#[derive(Clone, Default)]
struct Lookups {
    ns_by_bytes: HashMap<Box<[u8]>, u16>,
    ns_overflow: HashMap<u32, Text>,
    /// Names stored lately by [`Tree::intern_name`], by a hash of their bytes: flow logic
    /// that builds a message names thousands of elements with a handful of names.
    names: [Text; NAME_CACHE],
}

/// The bytes of text `t` of a tree with these source buffers and heap ([`Tree::bytes`], for when
/// another part of the tree is borrowed at the same time).
fn bytes_of<'t>(buffers: &'t [Bytes], heap: &'t [u8], t: Text) -> &'t [u8] {
    match t.get() {
        TextRef::Empty => b"",
        TextRef::Src { buf, start, len } => {
            &buffers[buf as usize][start as usize..(start + len) as usize]
        }
        TextRef::Heap { start, len } => &heap[start as usize..(start + len) as usize],
        TextRef::Static(s) => s.as_bytes(),
    }
}

/// How many names [`Tree::intern_name`] remembers.
const NAME_CACHE: usize = sharing::NAME_CACHE;

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
                Packed::default(),
            )],
            buffers: Vec::new(),
            heap: Vec::new(),
            parsers: Vec::new(),
            free: NIL,
            pending: 0,
            namespaces: Vec::new(),
            ns_last: (Text::EMPTY, 0),
            lookups: None,
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

    /// The last child's index, or NIL.
    fn last_of(&self, id: NodeId) -> u32 {
        match self.el(id).first {
            NIL => NIL,
            f => self.elements[f as usize].prev,
        }
    }

    fn pack(&mut self, v: Value) -> Packed {
        Packed::pack(v, |b| {
            let start = self.heap.len() as u32;
            self.heap.extend_from_slice(b);
            Text::heap(start, b.len() as u32)
        })
    }

    fn unpack(&self, p: Packed) -> Value {
        p.unpack(|t| self.bytes(t))
    }

    /// The index under which element namespaces `ns` are stored.
    fn ns_index(&mut self, ns: Text) -> u16 {
        if ns.is_empty() {
            return 0;
        }
        if ns == self.ns_last.0 {
            return self.ns_last.1;
        }
        let lookups = self.lookups.get_or_insert_default();
        let bytes = bytes_of(&self.buffers, &self.heap, ns);
        let i = match lookups.ns_by_bytes.get(bytes) {
            Some(&i) => i,
            None if self.namespaces.len() + 1 < usize::from(NS_OVERFLOW) => {
                let i = self.namespaces.len() as u16 + 1;
                lookups.ns_by_bytes.insert(bytes.into(), i);
                self.namespaces.push(ns);
                i
            }
            None => return NS_OVERFLOW,
        };
        self.ns_last = (ns, i);
        i
    }

    /// Store namespace `ns` on element `id`.
    fn put_namespace(&mut self, id: NodeId, ns: Text) {
        let i = self.ns_index(ns);
        if i == NS_OVERFLOW {
            self.overflow_namespace(id, ns);
        }
        self.el_mut(id).namespace = i;
    }

    /// Keep the namespace of an element whose tree has more distinct ones than an index holds.
    fn overflow_namespace(&mut self, id: NodeId, ns: Text) {
        self.lookups
            .get_or_insert_default()
            .ns_overflow
            .insert(id.0, ns);
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
        bytes_of(&self.buffers, &self.heap, t)
    }

    /// A text handle as a string (invalid UTF-8 replaced).
    pub fn str(&self, t: Text) -> Cow<'_, str> {
        String::from_utf8_lossy(self.bytes(t))
    }

    /// Re-home a text handle of `other` into this tree.
    pub fn import_text(&mut self, other: &Tree, t: Text) -> Text {
        match t.get() {
            TextRef::Src { buf, start, len } => {
                let b = self.import_buffer(other, buf);
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

    /// The domain of the parser that owns element `id`, if one does.
    pub fn parser_domain(&self, id: NodeId) -> Option<&'static str> {
        let p = self.el(id).parser;
        (p != NO_PARSER).then(|| self.parsers[p as usize].domain())
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
        match self.el(id).namespace {
            NS_OVERFLOW => self
                .lookups
                .as_ref()
                .and_then(|l| l.ns_overflow.get(&id.0).copied())
                .unwrap_or_default(),
            0 => Text::EMPTY,
            i => self.namespaces[usize::from(i) - 1],
        }
    }
    pub fn namespace_bytes(&self, id: NodeId) -> &[u8] {
        self.bytes(self.namespace(id))
    }
    /// Whether element `id` is named `name` (see [`same_bytes`]).
    #[inline]
    pub fn name_is(&self, id: NodeId, name: &[u8]) -> bool {
        same_bytes(self.bytes(self.el(id).name), name)
    }
    /// Whether element `id` is in namespace `ns` (empty: in none).
    #[inline]
    pub fn namespace_is(&self, id: NodeId, ns: &[u8]) -> bool {
        match self.el(id).namespace {
            0 => ns.is_empty(),
            _ => same_bytes(self.namespace_bytes(id), ns),
        }
    }
    pub fn value(&self, id: NodeId) -> Value {
        self.unpack(self.el(id).packed())
    }
    pub fn field_type(&self, id: NodeId) -> u32 {
        self.el(id).field_type
    }
    /// The value's bytes when it is character, decimal, BLOB or BIT data.
    pub fn value_bytes(&self, id: NodeId) -> Option<&[u8]> {
        self.el(id).packed().text().map(|t| self.bytes(t))
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
        if e.flags & DIRTY != 0 {
            return None;
        }
        let s = e.span()?;
        Some(&self.buffers[s.buf as usize][s.start as usize..s.end as usize])
    }
    /// [`Tree::original`] as a shared slice of the source buffer (no copy).
    pub fn original_shared(&self, id: NodeId) -> Option<Bytes> {
        let e = self.el(id);
        if e.flags & DIRTY != 0 {
            return None;
        }
        let s = e.span()?;
        Some(self.buffers[s.buf as usize].slice(s.start as usize..s.end as usize))
    }
    /// Where the bytes of element `id` lie, once their end is known.
    pub fn source(&self, id: NodeId) -> Option<SourceSpan> {
        self.el(id).span()
    }
    /// The buffer and first byte of element `id`'s source, even while its end is not known.
    pub fn source_start(&self, id: NodeId) -> Option<(u32, u32)> {
        let e = self.el(id);
        (e.src_buf != NO_BUF).then_some((u32::from(e.src_buf), e.src_start))
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
            self.clear_pending(id);
            return Ok(());
        }
        let parser = self.parsers[p as usize].clone();
        let before = (self.last_of(id), self.el(id).resume);
        parser.expand(self, id, how)?;
        if self.is_pending(id) && (self.last_of(id), self.el(id).resume) == before {
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
            if self.pending == 0 {
                // Nothing anywhere is left to parse (a parser that builds whole subtrees).
                return Ok(());
            }
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
        Ok(Self::opt(self.last_of(id)))
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
        let e = self.el(id);
        if e.parent == NIL || self.elements[e.parent as usize].first == id.0 {
            return None;
        }
        Self::opt(e.prev)
    }

    /// Children already materialised, without parsing (for serialisers of changed trees after
    /// [`Tree::expand_all`], and for debugging).
    pub fn peek_first_child(&self, id: NodeId) -> Option<NodeId> {
        Self::opt(self.el(id).first)
    }
    pub fn peek_last_child(&self, id: NodeId) -> Option<NodeId> {
        Self::opt(self.last_of(id))
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
            if self.name_is(n, name) && namespace.is_none_or(|ns| self.namespace_is(n, ns)) {
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
}

/// Where an attached or created element goes relative to a target element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    FirstChild,
    LastChild,
    NextSibling,
    PrevSibling,
}
