//! Building the XMLNSC tree from the source bytes, one child at a time or a whole subtree.
//!
//! State kept in the tree between calls (see [`super::flags`]):
//! - a pending element's `resume` is where its unparsed content continues;
//! - when its last child is a folder whose end is not known yet (`OPEN_LAST`), `resume` is that
//!   child's start tag; moving past the child skips its bytes ([`super::skip::seal`]) or, when
//!   everything is wanted, builds it;
//! - `NEEDS_OUTER` / `NEEDS_EMPTY_DEFAULT` say whether an element's original bytes rely on
//!   namespace declarations outside it, which decides whether the serialiser may copy them.

use sluice_tree::{Expand, NodeId, SourceSpan, Text, Tree, TreeError, Value};

use super::XmlnscParser;
use super::field_type as ft;
use super::flags;
use super::lexer::{Lexer, RawAttr, Span, Token, split_qname};
use super::scope::{self, Scope, XML_NS, XMLNS_NS};
use super::skip;
use super::subtree::build_past;
use super::text::{check_utf8, decode, needs_decode};
use crate::error::Error;

/// The source buffer an element was parsed from, when it can be told.
pub(crate) fn buffer_of_element(tree: &Tree, id: NodeId) -> Option<u32> {
    if let Some(s) = tree.source(id) {
        return Some(s.buf);
    }
    tree.name(id).as_src().map(|(buf, _, _)| buf)
}

/// The source buffer for parsing under `id`: its own, or the nearest ancestor's.
pub(super) fn locate(tree: &Tree, id: NodeId) -> Option<u32> {
    let mut at = Some(id);
    while let Some(a) = at {
        if let Some(b) = buffer_of_element(tree, a) {
            return Some(b);
        }
        at = tree.parent(a);
    }
    None
}

/// Where the start tag of element `id` begins, when it can be told.
pub(crate) fn start_of(tree: &Tree, bytes: &[u8], id: NodeId) -> Option<usize> {
    if let Some(s) = tree.source(id) {
        return Some(s.start as usize);
    }
    if let Some(p) = tree.parent(id)
        && tree.parser_flags(p) & flags::OPEN_LAST != 0
        && tree.peek_last_child(p) == Some(id)
    {
        return Some(tree.resume(p) as usize);
    }
    // A copied element: its name is a slice of its start tag, just after `<` and any prefix.
    if let Some((_, start, _)) = tree.name(id).as_src() {
        let start = start as usize;
        let lt = memchr::memrchr(b'<', bytes.get(..start)?)?;
        let between = &bytes[lt + 1..start];
        if between.is_empty() || between.ends_with(b":") {
            return Some(lt);
        }
    }
    None
}

/// The qualified name in the start tag at `start`.
pub(crate) fn qname_at(bytes: &[u8], start: usize) -> Option<Span> {
    let mut lx = Lexer::new(bytes, start, usize::MAX);
    let mut attrs = Vec::new();
    match lx.next_token(&mut attrs) {
        Ok(Token::Start { name, .. }) => Some(name),
        _ => None,
    }
}

/// The nesting depth of `id` (the document element is 1).
pub(super) fn depth_of(tree: &Tree, id: NodeId) -> usize {
    let mut d = 0;
    let mut at = Some(id);
    while let Some(a) = at {
        if tree.parser_flags(a) & flags::DOC != 0 {
            break;
        }
        d += 1;
        at = tree.parent(a);
    }
    d
}

/// The tree's index of the parser that owns `id`.
pub(super) fn parser_index(tree: &Tree, id: NodeId) -> Result<u16, Error> {
    tree.parser_index(id)
        .ok_or_else(|| Error::Internal("element has no parser".into()))
}

/// Entry point for [`sluice_tree::Parser::expand`].
pub(crate) fn expand(
    p: &XmlnscParser,
    tree: &mut Tree,
    id: NodeId,
    how: Expand,
) -> Result<(), Error> {
    if tree.parser_flags(id) & flags::FAILED != 0 {
        return Err(Error::malformed(
            tree.resume(id) as usize,
            "the message could not be parsed (the error was reported earlier)",
        ));
    }
    if tree.parser_flags(id) & flags::OPEN_LAST != 0 {
        close_open_last(p, tree, id, how)?;
    }
    let Some(buf) = locate(tree, id) else {
        return Err(Error::malformed(
            tree.resume(id) as usize,
            "cannot find the source of this element to parse it",
        ));
    };
    let bytes = tree.buffer(buf).clone();
    let index = parser_index(tree, id)?;
    let mut b = Builder::new(p, tree, &bytes, buf, index);
    if b.tree.parser_flags(id) & flags::DOC != 0 {
        loop {
            let finished = b.document_step(id)?;
            if finished || how == Expand::OneMore {
                return Ok(());
            }
            if b.tree.parser_flags(id) & flags::OPEN_LAST != 0 {
                close_open_last(p, b.tree, id, how)?;
            }
        }
    }
    scope::from_ancestors(b.tree, id, buf, &mut b.scope);
    let depth = depth_of(b.tree, id);
    match how {
        Expand::OneMore => b.one_more(id, depth),
        Expand::All => b.all(id, depth),
    }
}

/// Move past the open last child of `id`: build it completely (`All`) or skip its bytes.
fn close_open_last(
    p: &XmlnscParser,
    tree: &mut Tree,
    id: NodeId,
    how: Expand,
) -> Result<(), Error> {
    let Some(c) = tree.peek_last_child(id) else {
        return Err(Error::Internal("open child missing".into()));
    };
    if tree.parser_flags(c) & flags::FAILED != 0 {
        return Err(Error::malformed(
            tree.resume(c) as usize,
            "the message could not be parsed (the error was reported earlier)",
        ));
    }
    match how {
        Expand::All => {
            while tree.is_pending(c) {
                expand(p, tree, c, Expand::All)?;
            }
        }
        Expand::OneMore => {
            if !build_past(p, tree, c) {
                skip::seal(p, tree, id, c)?
            }
        }
    }
    if tree.parser_flags(id) & flags::OPEN_LAST != 0 {
        // The child finished without telling its parent (it was moved); fall back to its span.
        let end = tree
            .source(c)
            .map(|s| s.end)
            .ok_or_else(|| Error::Internal("open child has no end".into()))?;
        tree.set_resume(id, end);
        let f = tree.parser_flags(id) & !flags::OPEN_LAST;
        tree.set_parser_flags(id, f);
    }
    Ok(())
}

/// How many simple children one on-demand step builds at most.
const BATCH: usize = 16;

/// What [`Builder::push_element`] made.
pub(crate) enum Pushed {
    /// A complete element (simple, empty or opaque); parsing continues at `end`.
    Done { end: usize },
    /// A folder whose content starts at `content`; scope entries from `mark` are its own.
    Folder {
        id: NodeId,
        content: usize,
        mark: usize,
    },
}

pub(crate) struct Builder<'t, 'b> {
    pub p: &'t XmlnscParser,
    pub tree: &'t mut Tree,
    pub bytes: &'b [u8],
    pub buf: u32,
    pub index: u16,
    pub attrs: Vec<RawAttr>,
    pub scope: Scope,
    pub scratch: Vec<u8>,
    pub seq: u32,
    pub rescanned: bool,
}

impl<'t, 'b> Builder<'t, 'b> {
    pub(super) fn new(
        p: &'t XmlnscParser,
        tree: &'t mut Tree,
        bytes: &'b [u8],
        buf: u32,
        index: u16,
    ) -> Builder<'t, 'b> {
        Builder {
            p,
            tree,
            bytes,
            buf,
            index,
            attrs: Vec::new(),
            scope: Scope::default(),
            scratch: Vec::new(),
            seq: 0,
            rescanned: false,
        }
    }

    pub(crate) fn lexer(&self, pos: usize) -> Lexer<'_> {
        Lexer::new(self.bytes, pos, self.p.options.limits.max_attributes)
    }

    #[inline(always)]
    pub(crate) fn next(&mut self, pos: &mut usize) -> Result<Token, Error> {
        let mut lx = Lexer::new(self.bytes, *pos, self.p.options.limits.max_attributes);
        let t = lx.next_token(&mut self.attrs)?;
        *pos = lx.pos;
        Ok(t)
    }

    #[inline]
    pub(crate) fn src(&self, s: Span) -> Text {
        Text::src_or_empty(self.buf, s.0 as u32, (s.1 - s.0) as u32)
    }

    /// A name as a text handle, checked to be UTF-8.
    #[inline]
    pub(crate) fn name_text(&self, s: Span) -> Result<Text, Error> {
        check_utf8(&self.bytes[s.0..s.1], s.0)?;
        Ok(self.src(s))
    }

    /// Decoded character data as a text handle: a slice of the source when nothing changes.
    #[inline(always)]
    pub(crate) fn value_text(&mut self, s: Span, attribute: bool) -> Result<Text, Error> {
        // Most values are short printable ASCII without references: answer those here, without
        // a call whose returned handle would be copied through memory.
        let raw = &self.bytes[s.0..s.1];
        if raw.len() <= 32 && raw.iter().all(|&b| (0x20..0x7f).contains(&b) && b != b'&') {
            return Ok(self.src(s));
        }
        let mut t = Text::EMPTY;
        self.decoded_text(s, attribute, &mut t)?;
        Ok(t)
    }

    /// [`Builder::value_text`] for the general case, writing the handle to `out`.
    #[inline(never)]
    fn decoded_text(&mut self, s: Span, attribute: bool, out: &mut Text) -> Result<(), Error> {
        let raw = &self.bytes[s.0..s.1];
        check_utf8(raw, s.0)?;
        if !needs_decode(raw, attribute) {
            *out = self.src(s);
            return Ok(());
        }
        self.scratch.clear();
        decode(
            raw,
            s.0,
            attribute,
            self.p.options.limits.max_entity_expansion,
            &mut self.scratch,
        )?;
        *out = self.tree.alloc_text(&self.scratch);
        Ok(())
    }

    /// Resolve a prefix (empty: the default namespace) for a tag at `offset` declared by tag
    /// `seq`; returns the namespace and the dependency flags it adds.
    #[inline(always)]
    pub(crate) fn resolve(
        &mut self,
        prefix: &[u8],
        offset: usize,
        seq: u32,
    ) -> Result<(Text, u8), Error> {
        if prefix == b"xml" {
            return Ok((Text::from_static(XML_NS), 0));
        }
        if prefix == b"xmlns" {
            return Err(Error::malformed(
                offset,
                "the prefix 'xmlns' cannot name an element or attribute",
            ));
        }
        let mut found = self.scope.lookup(prefix);
        if found.is_none() && !prefix.is_empty() && !self.rescanned {
            self.rescanned = true;
            scope::rescan(self.tree, self.bytes, self.buf, offset, &mut self.scope);
            found = self.scope.lookup(prefix);
        }
        match found {
            Some(b) if b.owner == seq => Ok((b.uri, 0)),
            Some(b) => Ok((b.uri, flags::NEEDS_OUTER)),
            None if prefix.is_empty() => Ok((Text::EMPTY, flags::NEEDS_EMPTY_DEFAULT)),
            None => Err(Error::UndeclaredPrefix {
                offset,
                prefix: String::from_utf8_lossy(prefix).into_owned(),
            }),
        }
    }

    /// Build the element whose start tag was just read, with its attributes and namespace
    /// declarations; simple, empty and opaque elements are completed here.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn push_element(
        &mut self,
        parent: NodeId,
        start: usize,
        qname: Span,
        self_closing: bool,
        tag_end: usize,
        depth: usize,
    ) -> Result<Pushed, Error> {
        let limits = &self.p.options.limits;
        if depth > limits.max_depth {
            return Err(Error::DepthLimit {
                offset: start,
                limit: limits.max_depth,
            });
        }
        self.seq += 1;
        let seq = self.seq;
        let mark = self.scope.len();
        let attrs = std::mem::take(&mut self.attrs);
        let r = self.push_element_inner(
            parent,
            start,
            qname,
            self_closing,
            tag_end,
            depth,
            seq,
            mark,
            &attrs,
        );
        self.attrs = attrs;
        if r.is_err() || matches!(r, Ok(Pushed::Done { .. })) {
            self.scope.truncate(mark);
        }
        r
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn push_element_inner(
        &mut self,
        parent: NodeId,
        start: usize,
        qname: Span,
        self_closing: bool,
        tag_end: usize,
        depth: usize,
        seq: u32,
        mark: usize,
        attrs: &[RawAttr],
    ) -> Result<Pushed, Error> {
        let bytes = self.bytes;
        // Namespace declarations first: they apply to the tag's own names. Children keep the
        // source order of the attributes and declarations.
        let mut decl_uris: Vec<Option<Text>> = Vec::with_capacity(attrs.len());
        for a in attrs {
            let n = &bytes[a.name.0..a.name.1];
            let prefix = if n == b"xmlns" {
                &b""[..]
            } else if let Some(p) = n.strip_prefix(b"xmlns:") {
                if p.is_empty() || p.contains(&b':') {
                    return Err(Error::malformed(
                        a.name.0,
                        "invalid namespace declaration name",
                    ));
                }
                p
            } else {
                decl_uris.push(None);
                continue;
            };
            let uri = self.value_text(a.value, true)?;
            if !prefix.is_empty() && uri.is_empty() {
                return Err(Error::malformed(
                    a.value.0,
                    "a namespace prefix cannot be bound to the empty name",
                ));
            }
            self.scope.push(prefix, uri, seq);
            decl_uris.push(Some(uri));
        }
        let (pfx, local) = split_qname(bytes, qname, start)?;
        let (ns, mut deps) = self.resolve(&bytes[pfx.0..pfx.1], start, seq)?;
        let name = self.name_text(local)?;
        let mut kids: Vec<(u32, Text, Text, Text)> = Vec::with_capacity(attrs.len());
        for (a, decl) in attrs.iter().zip(decl_uris) {
            if let Some(uri) = decl {
                let (kns, kname) = if a.name.1 - a.name.0 == 5 {
                    (Text::EMPTY, Text::from_static("xmlns"))
                } else {
                    (
                        Text::from_static(XMLNS_NS),
                        self.name_text((a.name.0 + 6, a.name.1))?,
                    )
                };
                let t = if a.single_quoted {
                    ft::SINGLE_NAMESPACE_DECL
                } else {
                    ft::NAMESPACE_DECL
                };
                kids.push((t, kns, kname, uri));
                continue;
            }
            let (ap, al) = split_qname(bytes, a.name, a.name.0)?;
            let ans = if ap.0 == ap.1 {
                Text::EMPTY
            } else {
                let (u, d) = self.resolve(&bytes[ap.0..ap.1], a.name.0, seq)?;
                deps |= d;
                u
            };
            let aname = self.name_text(al)?;
            let v = self.value_text(a.value, true)?;
            let t = if a.single_quoted {
                ft::SINGLE_ATTRIBUTE
            } else {
                ft::ATTRIBUTE
            };
            kids.push((t, ans, aname, v));
        }
        if self.is_opaque(parent, &bytes[pfx.0..pfx.1], &bytes[local.0..local.1]) {
            let (end, sdeps) = if self_closing {
                (tag_end, 0)
            } else {
                let inner: Vec<Vec<u8>> = attrs
                    .iter()
                    .filter_map(|a| {
                        let n = &bytes[a.name.0..a.name.1];
                        if n == b"xmlns" {
                            Some(Vec::new())
                        } else {
                            n.strip_prefix(b"xmlns:").map(<[u8]>::to_vec)
                        }
                    })
                    .collect();
                let outer_default = self.scope.lookup(b"").is_some_and(|b| !b.uri.is_empty());
                skip::skip_content(
                    self.p,
                    bytes,
                    tag_end,
                    Some(qname),
                    &inner,
                    outer_default,
                    depth,
                )?
            };
            let raw = self.src((start, end));
            let id = self
                .tree
                .push_parsed(parent, ft::BIT_STREAM, ns, name, Value::Blob(raw));
            self.tree.set_source(id, self.span(start, end));
            self.tree.set_parser_flags(id, deps | sdeps);
            return Ok(Pushed::Done { end });
        }
        let leaf = if self_closing {
            Some((Text::EMPTY, false, tag_end))
        } else {
            self.leaf_content(tag_end, qname)?
        };
        let ftype = match leaf {
            Some((_, true, _)) => ft::CDATA_FIELD,
            Some(_) => ft::FIELD,
            None => ft::FOLDER,
        };
        let value = match leaf {
            Some((v, _, _)) => Value::Character(v),
            None => Value::Null,
        };
        let id = self.tree.push_parsed(parent, ftype, ns, name, value);
        for (t, kns, kname, v) in kids {
            self.tree
                .push_parsed(id, t, kns, kname, Value::Character(v));
        }
        self.tree.set_parser_flags(id, deps);
        match leaf {
            Some((_, _, end)) => {
                self.tree.set_source(id, self.span(start, end));
                Ok(Pushed::Done { end })
            }
            None => Ok(Pushed::Folder {
                id,
                content: tag_end,
                mark,
            }),
        }
    }

    pub(crate) fn span(&self, start: usize, end: usize) -> SourceSpan {
        SourceSpan {
            buf: self.buf,
            start: start as u32,
            end: end as u32,
        }
    }

    /// Build at least one more child of the pending element `id` (or finish it). Simple children
    /// that follow are built in the same call, up to [`BATCH`], so that navigating sibling by
    /// sibling pays the set-up of a parse call once per batch rather than once per element. An
    /// error past the first child is left for the call that reaches it: on-demand parsing reports
    /// it no earlier than navigation gets there.
    fn one_more(&mut self, id: NodeId, depth: usize) -> Result<(), Error> {
        let start = start_of(self.tree, self.bytes, id);
        for built in 0..BATCH {
            match self.one_child(id, start, depth) {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(_) if built > 0 => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Build the next child of `id` (whose start tag is at `start`); true when it was a complete
    /// element and more may follow, false when a folder was opened or `id` finished.
    fn one_child(&mut self, id: NodeId, start: Option<usize>, depth: usize) -> Result<bool, Error> {
        let mut pos = self.tree.resume(id) as usize;
        loop {
            let tok = self.next(&mut pos)?;
            match tok {
                Token::Start {
                    start: s,
                    name,
                    self_closing,
                    end,
                } => {
                    return match self.push_element(id, s, name, self_closing, end, depth + 1)? {
                        Pushed::Done { end } => {
                            self.tree.set_resume(id, end as u32);
                            Ok(true)
                        }
                        Pushed::Folder {
                            id: c,
                            content,
                            mark,
                        } => {
                            self.tree.set_pending(c, self.index, content as u32);
                            let f = self.tree.parser_flags(id) | flags::OPEN_LAST;
                            self.tree.set_parser_flags(id, f);
                            self.tree.set_resume(id, s as u32);
                            // A small folder in a small message is built now, so that the
                            // batch goes on past it (see `BUILD_PAST_MESSAGE_BYTES`); its own
                            // namespace declarations then go out of scope for its siblings.
                            let built = build_past(self.p, self.tree, c);
                            if built {
                                self.scope.truncate(mark);
                            }
                            Ok(built)
                        }
                    };
                }
                Token::End { name, end, .. } => {
                    if let Some(q) = start.and_then(|s| qname_at(self.bytes, s)) {
                        self.check_end(q, name)?;
                    }
                    self.finish(id, start, end);
                    return Ok(false);
                }
                Token::Eof => return Err(self.unclosed(start)),
                other => {
                    if self.other_content(id, other)? {
                        self.tree.set_resume(id, pos as u32);
                        return Ok(true);
                    }
                }
            }
        }
    }

    pub(super) fn unclosed(&self, start: Option<usize>) -> Error {
        let name = start
            .and_then(|s| qname_at(self.bytes, s))
            .map(|q| String::from_utf8_lossy(&self.bytes[q.0..q.1]).into_owned())
            .unwrap_or_default();
        Error::malformed(
            self.bytes.len(),
            format!("unexpected end of document: element <{name}> is not closed"),
        )
    }

    /// Record that element `id` ends at `end`: span, dependency flags, parent's resume point.
    pub(super) fn finish(&mut self, id: NodeId, start: Option<usize>, end: usize) {
        let t = &*self.tree;
        let mut deps = t.parser_flags(id) & flags::DEPS;
        let mut c = t.peek_first_child(id);
        while let Some(k) = c {
            deps |= t.parser_flags(k) & flags::DEPS;
            c = t.peek_next_sibling(k);
        }
        self.finish_with(id, start, end, deps);
    }

    /// [`Builder::finish`] when the dependency flags of `id` and its children are known.
    pub(super) fn finish_with(&mut self, id: NodeId, start: Option<usize>, end: usize, deps: u8) {
        let t = &mut *self.tree;
        if let Some(s) = start {
            t.set_source(
                id,
                SourceSpan {
                    buf: self.buf,
                    start: s as u32,
                    end: end as u32,
                },
            );
        }
        t.set_parser_flags(id, deps);
        t.finish_pending(id);
        if let Some(p) = t.parent(id)
            && t.parser_flags(p) & flags::OPEN_LAST != 0
            && t.peek_last_child(p) == Some(id)
        {
            t.set_resume(p, end as u32);
            let f = t.parser_flags(p) & !flags::OPEN_LAST;
            t.set_parser_flags(p, f);
        }
    }
}

/// Conversion for the [`sluice_tree::Parser`] implementation.
pub(crate) fn tree_error(e: Error) -> TreeError {
    e.into_tree_error(super::DOMAIN)
}
