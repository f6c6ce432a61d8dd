//! On-demand parsing of JSON into the message tree.
//!
//! State kept per element (in the tree, so that copies of a tree carry it):
//! - `parser_flags`: [`ROOT`] for the `JSON` domain element, [`CONTAINER`] for objects and
//!   arrays this parser built, [`ARRAY`] for arrays, [`STARTED`] once a member was read (the next
//!   one needs a comma), [`AT_CHILD`] while the resume point is the start of the last child, an
//!   object or array whose end is not known yet.
//! - `resume`: where the next member (or the comma before it) starts, or with [`AT_CHILD`] the
//!   start of the last child.
//! - An object or array records its first byte as soon as it is built (`Tree::set_source_start`,
//!   which the tree re-homes when it copies elements between trees, so a pending container copied
//!   elsewhere still finds its bytes); its whole source span is set once its end is known: when
//!   its closing bracket is parsed, or when its parent skips over it. Scalars get theirs when they
//!   are built.
//!
//! `Expand::OneMore` builds one child and leaves an object or array child pending (skipping it
//! later scans its bytes without building elements). `Expand::All` builds the remaining children
//! *with their content* in one pass: parse timing "complete" therefore reads every byte once
//! instead of once per nesting level.

use sluice_tree::{Expand, NodeId, SourceSpan, Text, Tree, TreeError, Value};

use crate::json::error::{Fail, JsonErrorKind, parse_error, unexpected};
use crate::json::field_type;
use crate::json::scan::{self, Number};

pub(crate) const ROOT: u8 = 1;
pub(crate) const CONTAINER: u8 = 2;
pub(crate) const ARRAY: u8 = 4;
pub(crate) const STARTED: u8 = 8;
pub(crate) const AT_CHILD: u8 = 16;

/// The buffer and first byte of an object or array.
pub(crate) fn container_origin(tree: &Tree, id: NodeId) -> Option<(u32, u32)> {
    tree.source_start(id)
}

#[cold]
fn internal(what: &str) -> Fail {
    Box::new(TreeError::Internal(format!("JSON parser: {what}")))
}

/// Nesting level of `id`: 1 for `Data`, counting the JSON containers above it.
fn depth_of(tree: &Tree, id: NodeId) -> u32 {
    let mut d = 0;
    let mut at = Some(id);
    while let Some(n) = at {
        if tree.parser_flags(n) & CONTAINER == 0 {
            break;
        }
        d += 1;
        at = tree.parent(n);
    }
    d
}

/// The end of the object or array `child`, skipping its bytes when it was not parsed to its end.
/// Records the span so that it is found directly next time and can be copied when serialising.
pub(crate) fn container_end(tree: &mut Tree, child: NodeId, max_depth: u32) -> Result<usize, Fail> {
    if let Some(span) = tree.source(child) {
        return Ok(span.end as usize);
    }
    let flags = tree.parser_flags(child);
    let (buf, start) = container_origin(tree, child)
        .ok_or_else(|| internal("an object or array lost its source position"))?;
    if flags & CONTAINER == 0 || !tree.is_pending(child) {
        return Err(internal("an unfinished element has no end"));
    }
    let close = if flags & ARRAY != 0 { b']' } else { b'}' };
    let bytes = tree.buffer(buf).clone();
    let budget = max_depth.saturating_sub(depth_of(tree, child)) + 1;
    let end = scan::skip_container(&bytes, tree.resume(child) as usize, close, budget)?;
    tree.set_source(
        child,
        SourceSpan {
            buf,
            start,
            end: end as u32,
        },
    );
    Ok(end)
}

/// Expand the `JSON` domain element: build `Data`, and (when asked for more) check that only
/// white space follows it.
pub(crate) fn expand_root(
    tree: &mut Tree,
    id: NodeId,
    how: Expand,
    parser: u16,
    max_depth: u32,
) -> Result<(), Fail> {
    let span = tree
        .source(id)
        .ok_or_else(|| internal("the JSON element has no source bytes"))?;
    let bytes = tree.buffer(span.buf).clone();
    let src = bytes.get(..span.end as usize).unwrap_or(&bytes);
    let flags = tree.parser_flags(id);
    let mut pos = tree.resume(id) as usize;
    if flags & AT_CHILD == 0 {
        pos = scan::skip_ws(src, pos);
        let open = match src.get(pos) {
            None => {
                // An empty bit stream gives an empty JSON element.
                tree.finish_pending(id);
                return Ok(());
            }
            Some(&b) => b,
        };
        let array = match open {
            b'{' => false,
            b'[' => true,
            _ => return scalar_root(tree, id, src, span.buf, pos),
        };
        if max_depth == 0 {
            return Err(parse_error(pos, JsonErrorKind::DepthLimit(max_depth)));
        }
        let ft = if array {
            field_type::ARRAY
        } else {
            field_type::OBJECT
        };
        let data = tree.push_parsed(id, ft, Text::EMPTY, Text::from_static("Data"), Value::Null);
        tree.set_source_start(data, span.buf, pos as u32);
        let cflags = CONTAINER | if array { ARRAY } else { 0 };
        tree.set_pending(data, parser, pos as u32 + 1);
        tree.set_parser_flags(data, cflags);
        tree.set_resume(id, pos as u32);
        tree.set_parser_flags(id, flags | AT_CHILD);
        if how == Expand::OneMore {
            return Ok(());
        }
        expand_container(tree, data, Expand::All, parser, max_depth)?;
    }
    let data = tree
        .peek_last_child(id)
        .ok_or_else(|| internal("the JSON element lost its Data child"))?;
    let end = container_end(tree, data, max_depth)?;
    let after = scan::skip_ws(src, end);
    if after < src.len() {
        return Err(parse_error(after, JsonErrorKind::TrailingData));
    }
    tree.set_parser_flags(id, flags & !AT_CHILD);
    tree.set_resume(id, after as u32);
    tree.finish_pending(id);
    Ok(())
}

/// A top-level string, number, `true`, `false` or `null`: `Data` holds the value itself.
fn scalar_root(tree: &mut Tree, id: NodeId, src: &[u8], buf: u32, pos: usize) -> Result<(), Fail> {
    let mut decoded = Vec::new();
    let data = Text::from_static("Data");
    let end = push_scalar(tree, src, buf, id, data, pos, &mut decoded)?;
    let after = scan::skip_ws(src, end);
    if after < src.len() {
        return Err(parse_error(after, JsonErrorKind::TrailingData));
    }
    tree.set_resume(id, after as u32);
    tree.finish_pending(id);
    Ok(())
}

/// A container being parsed (the top one, or one entered while building everything).
struct Frame {
    id: NodeId,
    flags: u8,
    start: u32,
    depth: u32,
}

/// Where a parse stands: the container being filled and the position after its last child.
struct Cursor {
    cur: Frame,
    pos: usize,
    /// Containers entered while building everything (`Expand::All`), outermost first.
    stack: Vec<Frame>,
}

/// Expand an object or array: one more child, or every remaining child with its content.
pub(crate) fn expand_container(
    tree: &mut Tree,
    top: NodeId,
    how: Expand,
    parser: u16,
    max_depth: u32,
) -> Result<(), Fail> {
    let (buf, start) = container_origin(tree, top)
        .ok_or_else(|| internal("an object or array lost its source position"))?;
    let bytes = tree.buffer(buf).clone();
    let mut at = Cursor {
        cur: Frame {
            id: top,
            flags: tree.parser_flags(top),
            start,
            depth: depth_of(tree, top),
        },
        pos: tree.resume(top) as usize,
        stack: Vec::new(),
    };
    if at.cur.flags & AT_CHILD != 0 {
        let last = tree
            .peek_last_child(top)
            .ok_or_else(|| internal("a container lost its last child"))?;
        at.pos = container_end(tree, last, max_depth)?;
        at.cur.flags &= !AT_CHILD;
        tree.set_parser_flags(top, at.cur.flags);
        tree.set_resume(top, at.pos as u32);
    }
    let result = run(tree, &bytes, buf, &mut at, how, parser, max_depth);
    if result.is_err() {
        // Record how far the failing container got, so that a retry fails the same way instead
        // of building its children twice.
        tree.set_resume(at.cur.id, at.pos as u32);
        tree.set_parser_flags(at.cur.id, at.cur.flags);
    }
    result
}

/// Parse from `at` as far as `how` asks. The innermost container and the position live in
/// locals while parsing and go back to `at` at the end: kept in `at` they would be updated with
/// narrow stores (a flag byte) that the wide copy pushing a frame then waits on.
fn run(
    tree: &mut Tree,
    src: &[u8],
    buf: u32,
    at: &mut Cursor,
    how: Expand,
    parser: u16,
    max_depth: u32,
) -> Result<(), Fail> {
    let Frame {
        id: mut cur_id,
        flags: mut cur_flags,
        start: mut cur_start,
        depth: mut cur_depth,
    } = at.cur;
    let mut at_pos = at.pos;
    let mut decoded = Vec::new();
    let result = loop {
        let mut pos = scan::skip_ws(src, at_pos);
        let array = cur_flags & ARRAY != 0;
        let close = if array { b']' } else { b'}' };
        let expected = if array { "',' or ']'" } else { "',' or '}'" };
        let Some(&c) = src.get(pos) else {
            break Err(unexpected(src, pos, expected));
        };
        if c == close {
            pos += 1;
            tree.set_resume(cur_id, pos as u32);
            tree.set_parser_flags(cur_id, cur_flags);
            tree.set_source(
                cur_id,
                SourceSpan {
                    buf,
                    start: cur_start,
                    end: pos as u32,
                },
            );
            tree.finish_pending(cur_id);
            at_pos = pos;
            match at.stack.pop() {
                None => break Ok(()),
                Some(parent) => {
                    cur_id = parent.id;
                    cur_flags = parent.flags;
                    cur_start = parent.start;
                    cur_depth = parent.depth;
                    continue;
                }
            }
        }
        if cur_flags & STARTED != 0 {
            if c != b',' {
                break Err(unexpected(src, pos, expected));
            }
            pos = scan::skip_ws(src, pos + 1);
        }
        let name = if array {
            Text::from_static(crate::json::ITEM)
        } else {
            if src.get(pos) != Some(&b'"') {
                break Err(unexpected(src, pos, "a member name string"));
            }
            let (after, escaped) = match scan::scan_string(src, pos, &mut decoded) {
                Ok(r) => r,
                Err(e) => break Err(e),
            };
            let name = text_of(tree, buf, pos + 1, after - 1, escaped, &decoded);
            pos = scan::skip_ws(src, after);
            if src.get(pos) != Some(&b':') {
                break Err(unexpected(src, pos, "':'"));
            }
            pos = scan::skip_ws(src, pos + 1);
            name
        };
        let Some(&v) = src.get(pos) else {
            break Err(unexpected(src, pos, "a value"));
        };
        if v == b'{' || v == b'[' {
            if cur_depth >= max_depth {
                break Err(parse_error(pos, JsonErrorKind::DepthLimit(max_depth)));
            }
            let child_array = v == b'[';
            let ft = if child_array {
                field_type::ARRAY
            } else {
                field_type::OBJECT
            };
            let cflags = CONTAINER | if child_array { ARRAY } else { 0 };
            let child =
                tree.push_parsed_spanned(cur_id, ft, Text::EMPTY, name, Value::Null, None, cflags);
            tree.set_source_start(child, buf, pos as u32);
            tree.set_pending(child, parser, pos as u32 + 1);
            cur_flags |= STARTED;
            tree.set_resume(cur_id, pos as u32);
            tree.set_parser_flags(cur_id, cur_flags | AT_CHILD);
            if how == Expand::OneMore {
                break Ok(());
            }
            at.stack.push(Frame {
                id: cur_id,
                flags: cur_flags,
                start: cur_start,
                depth: cur_depth,
            });
            cur_id = child;
            cur_flags = cflags;
            cur_start = pos as u32;
            cur_depth += 1;
            at_pos = pos + 1;
            continue;
        }
        let end = match push_scalar(tree, src, buf, cur_id, name, pos, &mut decoded) {
            Ok(end) => end,
            Err(e) => break Err(e),
        };
        cur_flags |= STARTED;
        at_pos = end;
        if how == Expand::OneMore {
            tree.set_resume(cur_id, end as u32);
            tree.set_parser_flags(cur_id, cur_flags);
            break Ok(());
        }
    };
    at.cur = Frame {
        id: cur_id,
        flags: cur_flags,
        start: cur_start,
        depth: cur_depth,
    };
    at.pos = at_pos;
    result
}

/// The text of a string scanned by [`scan::scan_string`]: a slice of the message when it held no
/// escapes, else a copy of the decoded value.
#[inline]
fn text_of(
    tree: &mut Tree,
    buf: u32,
    start: usize,
    end: usize,
    escaped: bool,
    decoded: &[u8],
) -> Text {
    if escaped {
        tree.alloc_text(decoded)
    } else {
        Text::src_or_empty(buf, start as u32, (end - start) as u32)
    }
}

/// Parse the string, number or literal at `pos` and append it to `parent` as a name/value
/// element; returns the position after the value.
#[inline]
fn push_scalar(
    tree: &mut Tree,
    src: &[u8],
    buf: u32,
    parent: NodeId,
    name: Text,
    pos: usize,
    decoded: &mut Vec<u8>,
) -> Result<usize, Fail> {
    let span = |end: usize| {
        Some(SourceSpan {
            buf,
            start: pos as u32,
            end: end as u32,
        })
    };
    let ft = field_type::NAME_VALUE;
    let (value, end) = match src[pos] {
        b'"' => {
            // Strings are most values: built here, their handle goes to the element without
            // passing through a `Value` in memory.
            let (end, escaped) = scan::scan_string(src, pos, decoded)?;
            let t = if escaped {
                tree.alloc_text(decoded)
            } else {
                Text::src_or_empty(buf, pos as u32 + 1, (end - pos - 2) as u32)
            };
            let v = Value::Character(t);
            tree.push_parsed_spanned(parent, ft, Text::EMPTY, name, v, span(end), 0);
            return Ok(end);
        }
        b'-' | b'0'..=b'9' => {
            let (n, end) = scan::scan_number(src, pos)?;
            let v = match n {
                Number::Integer(i) => Value::Integer(i),
                Number::Float(f) => Value::Float(f),
                Number::BigInteger => {
                    Value::Decimal(Text::src(buf, pos as u32, (end - pos) as u32))
                }
            };
            (v, end)
        }
        b't' => (
            Value::Boolean(true),
            scan::expect_literal(src, pos, b"true")?,
        ),
        b'f' => (
            Value::Boolean(false),
            scan::expect_literal(src, pos, b"false")?,
        ),
        b'n' => (Value::Null, scan::expect_literal(src, pos, b"null")?),
        _ => return Err(unexpected(src, pos, "a value")),
    };
    tree.push_parsed_spanned(parent, ft, Text::EMPTY, name, value, span(end), 0);
    Ok(end)
}
