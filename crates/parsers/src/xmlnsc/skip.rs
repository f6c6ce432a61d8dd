//! Skipping a subtree: find where an element ends without building anything.
//!
//! The scan checks what it must to find the right end (tags balance and match, quotes, comment
//! and CDATA terminators, the depth limit) and notes whether the skipped bytes use namespace
//! prefixes declared outside the element, so that the serialiser knows whether copying them is
//! safe. Character data is not decoded: that happens if and when the subtree is built.

use sluice_tree::{NodeId, SourceSpan, Tree};

use super::XmlnscParser;
use super::build::{buffer_of_element, qname_at};
use super::field_type as ft;
use super::flags;
use super::lexer::{Lexer, Span, Token, split_qname};
use super::scope::{self, Scope};
use crate::error::Error;

/// Scan from `pos` (inside an element whose start tag is done) to the end of that element.
/// `inner` are the prefixes the element itself declares (`""` for a default namespace);
/// `outer_default` says whether a non-empty default namespace is in scope outside it.
/// Returns the offset after the end tag and the dependency flags of the skipped content.
pub(crate) fn skip_content(
    p: &XmlnscParser,
    bytes: &[u8],
    pos: usize,
    qname: Option<Span>,
    inner: &[Vec<u8>],
    outer_default: bool,
    depth: usize,
) -> Result<(usize, u8), Error> {
    let limits = &p.options.limits;
    let mut lx = Lexer::new(bytes, pos, limits.max_attributes);
    let mut attrs = Vec::new();
    let mut open: Vec<(Span, usize)> = Vec::new();
    let mut declared: Vec<&[u8]> = inner.iter().map(Vec::as_slice).collect();
    let mut deps = 0u8;
    loop {
        match lx.next_token(&mut attrs)? {
            Token::Start {
                start,
                name,
                self_closing,
                ..
            } => {
                if depth + open.len() + 1 > limits.max_depth {
                    return Err(Error::DepthLimit {
                        offset: start,
                        limit: limits.max_depth,
                    });
                }
                let mark = declared.len();
                for a in &attrs {
                    let n = &bytes[a.name.0..a.name.1];
                    if n == b"xmlns" {
                        declared.push(b"");
                    } else if let Some(pf) = n.strip_prefix(b"xmlns:") {
                        declared.push(pf);
                    }
                }
                let (pf, _) = split_qname(bytes, name, start)?;
                let pf = &bytes[pf.0..pf.1];
                if !declared.contains(&pf) && pf != b"xml" {
                    deps |= if !pf.is_empty() || outer_default {
                        flags::NEEDS_OUTER
                    } else {
                        flags::NEEDS_EMPTY_DEFAULT
                    };
                }
                for a in &attrs {
                    let n = &bytes[a.name.0..a.name.1];
                    if n == b"xmlns" || n.starts_with(b"xmlns:") {
                        continue;
                    }
                    let (ap, _) = split_qname(bytes, a.name, a.name.0)?;
                    let ap = &bytes[ap.0..ap.1];
                    if !ap.is_empty() && ap != b"xml" && !declared.contains(&ap) {
                        deps |= flags::NEEDS_OUTER;
                    }
                }
                if self_closing {
                    declared.truncate(mark);
                } else {
                    open.push((name, mark));
                }
            }
            Token::End { start, name, end } => {
                let (expected, done) = match open.pop() {
                    Some((n, mark)) => {
                        declared.truncate(mark);
                        (Some(n), false)
                    }
                    None => (qname, true),
                };
                if let Some(q) = expected
                    && bytes[q.0..q.1] != bytes[name.0..name.1]
                {
                    return Err(Error::MismatchedEndTag {
                        offset: start,
                        expected: String::from_utf8_lossy(&bytes[q.0..q.1]).into_owned(),
                        found: String::from_utf8_lossy(&bytes[name.0..name.1]).into_owned(),
                    });
                }
                if done {
                    return Ok((end, deps));
                }
            }
            Token::Doctype { start, .. } => {
                return Err(Error::malformed(start, "DOCTYPE inside an element"));
            }
            Token::Eof => {
                let name = qname
                    .map(|q| String::from_utf8_lossy(&bytes[q.0..q.1]).into_owned())
                    .unwrap_or_default();
                return Err(Error::malformed(
                    bytes.len(),
                    format!("unexpected end of document: element <{name}> is not closed"),
                ));
            }
            _ => {}
        }
    }
}

/// Find the end of `c`, the open last child of `parent`, by skipping its remaining bytes;
/// record its span and dependency flags and move `parent` past it. `c` stays pending.
pub(crate) fn seal(
    p: &XmlnscParser,
    tree: &mut Tree,
    parent: NodeId,
    c: NodeId,
) -> Result<(), Error> {
    let Some(buf) = buffer_of_element(tree, c).or_else(|| buffer_of_element(tree, parent)) else {
        return Err(Error::malformed(
            0,
            "cannot find the source of this element to parse it",
        ));
    };
    let bytes = tree.buffer(buf).clone();
    let start = tree.resume(parent) as usize;
    let qname = qname_at(&bytes, start);
    // Prefixes the element declares itself, and whether a default namespace applies outside.
    let mut inner = Vec::new();
    let mut k = tree.peek_first_child(c);
    while let Some(a) = k {
        let t = tree.field_type(a);
        if !ft::is_attribute_like(t) {
            break;
        }
        if ft::is_namespace_decl(t) {
            inner.push(scope::decl_prefix(tree, a));
        }
        k = tree.peek_next_sibling(a);
    }
    let mut outer = Scope::default();
    scope::from_ancestors(tree, parent, buf, &mut outer);
    let outer_default = outer.lookup(b"").is_some_and(|b| !b.uri.is_empty());
    let depth = {
        let mut d = 0;
        let mut at = Some(c);
        while let Some(a) = at {
            if tree.parser_flags(a) & flags::DOC != 0 {
                break;
            }
            d += 1;
            at = tree.parent(a);
        }
        d
    };
    let from = tree.resume(c) as usize;
    let (end, deps) = skip_content(p, &bytes, from, qname, &inner, outer_default, depth)?;
    tree.set_source(
        c,
        SourceSpan {
            buf,
            start: start as u32,
            end: end as u32,
        },
    );
    let mut f = tree.parser_flags(c) | deps;
    let mut k = tree.peek_first_child(c);
    while let Some(a) = k {
        f |= tree.parser_flags(a) & flags::DEPS;
        k = tree.peek_next_sibling(a);
    }
    tree.set_parser_flags(c, f);
    tree.set_resume(parent, end as u32);
    let pf = tree.parser_flags(parent) & !flags::OPEN_LAST;
    tree.set_parser_flags(parent, pf);
    Ok(())
}
