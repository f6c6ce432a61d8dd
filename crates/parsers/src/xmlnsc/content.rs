//! Element content that is not a child element: the look-ahead that recognises simple
//! elements (text only), mixed text, comments and processing instructions, and the
//! opaque-element rules.

use sluice_tree::{NodeId, Text, Value};

use super::OpaqueRule;
use super::build::Builder;
use super::field_type as ft;
use super::flags;
use super::lexer::{Span, Token, is_all_space};
use super::text::{check_utf8, decode};
use crate::error::Error;

impl Builder<'_, '_> {
    /// Whether the element about to be built is to be kept opaque (most parsers have no rules).
    #[inline]
    pub(crate) fn is_opaque(&self, parent: NodeId, prefix: &[u8], local: &[u8]) -> bool {
        !self.p.opaque.is_empty() && self.matches_opaque_rule(parent, prefix, local)
    }

    fn matches_opaque_rule(&self, parent: NodeId, prefix: &[u8], local: &[u8]) -> bool {
        self.p.opaque.iter().any(|r| match r {
            OpaqueRule::Name {
                prefix: p,
                local: l,
            } => l == local && p.as_deref().is_none_or(|p| p == prefix),
            OpaqueRule::Path(path) => {
                let Some((last, outer)) = path.split_last() else {
                    return false;
                };
                if last != local {
                    return false;
                }
                let mut at = Some(parent);
                for want in outer.iter().rev() {
                    match at {
                        Some(a)
                            if self.tree.parser_flags(a) & flags::DOC == 0
                                && self.tree.name_bytes(a) == want.as_slice() =>
                        {
                            at = self.tree.parent(a);
                        }
                        _ => return false,
                    }
                }
                at.is_some_and(|a| self.tree.parser_flags(a) & flags::DOC != 0)
            }
        })
    }

    /// Look ahead from `pos` (just after a start tag): when the element holds only character
    /// data up to its end tag, return (value, all CDATA, end); otherwise `None`.
    #[inline(always)]
    pub(crate) fn leaf_content(
        &mut self,
        pos: usize,
        qname: Span,
    ) -> Result<Option<(Text, bool, usize)>, Error> {
        // Fast path for the common `text</name>`; values are mostly short, and a plain loop
        // finds their end sooner than a vectorised search is set up.
        let after = &self.bytes[pos..];
        let lt = match after.iter().take(24).position(|&b| b == b'<') {
            Some(i) => Some(i),
            None => memchr::memchr(b'<', after),
        };
        if let Some(i) = lt {
            let lt = pos + i;
            let q = &self.bytes[qname.0..qname.1];
            let rest = &self.bytes[lt..];
            if rest.len() > q.len() + 2
                && rest[1] == b'/'
                && sluice_tree::same_bytes(&rest[2..2 + q.len()], q)
                && rest[2 + q.len()] == b'>'
            {
                let v = if lt == pos {
                    Text::EMPTY
                } else {
                    self.value_text((pos, lt), false)?
                };
                return Ok(Some((v, false, lt + 3 + q.len())));
            }
            // A child start tag: not a simple element. The content is parsed (and checked)
            // when the folder is built.
            if rest.len() > 1 && !matches!(rest[1], b'/' | b'!' | b'?') {
                return Ok(None);
            }
        }
        let o = &self.p.options;
        let mut lx = self.lexer(pos);
        let mut attrs = Vec::new();
        let mut pieces: [(Span, bool); 2] = [((0, 0), false); 2];
        let mut n = 0usize;
        let mut all_cdata = true;
        let end = loop {
            let tok = lx.next_token(&mut attrs)?;
            let piece = match tok {
                Token::Text { start, end } => {
                    all_cdata = false;
                    ((start, end), false)
                }
                Token::CData { content, .. } => (content, true),
                Token::Comment { .. } if !o.retain_comments => continue,
                Token::Pi { .. } if !o.retain_pis => continue,
                Token::End { name, end, .. } => {
                    self.check_end(qname, name)?;
                    break end;
                }
                _ => return Ok(None),
            };
            if n < 2 {
                pieces[n] = piece;
            }
            n += 1;
        };
        let cdata = n > 0 && all_cdata;
        if n == 0 {
            return Ok(Some((Text::EMPTY, false, end)));
        }
        if n == 1 {
            let (s, is_cdata) = pieces[0];
            let v = if is_cdata {
                check_utf8(&self.bytes[s.0..s.1], s.0)?;
                self.src(s)
            } else {
                self.value_text(s, false)?
            };
            return Ok(Some((v, cdata, end)));
        }
        // Several pieces (text around comments or CDATA): concatenate them.
        let mut out = Vec::new();
        let mut lx = self.lexer(pos);
        loop {
            match lx.next_token(&mut attrs)? {
                Token::Text { start, end } => {
                    check_utf8(&self.bytes[start..end], start)?;
                    decode(
                        &self.bytes[start..end],
                        start,
                        false,
                        o.limits.max_entity_expansion,
                        &mut out,
                    )?;
                }
                Token::CData { content, .. } => {
                    check_utf8(&self.bytes[content.0..content.1], content.0)?;
                    out.extend_from_slice(&self.bytes[content.0..content.1]);
                }
                Token::End { .. } => break,
                _ => {}
            }
        }
        Ok(Some((self.tree.alloc_text(&out), cdata, end)))
    }

    pub(crate) fn check_end(&self, open: Span, close: Span) -> Result<(), Error> {
        let b = self.bytes;
        if !sluice_tree::same_bytes(&b[open.0..open.1], &b[close.0..close.1]) {
            return Err(Error::MismatchedEndTag {
                offset: close.0.saturating_sub(2),
                expected: String::from_utf8_lossy(&b[open.0..open.1]).into_owned(),
                found: String::from_utf8_lossy(&b[close.0..close.1]).into_owned(),
            });
        }
        Ok(())
    }

    /// Content that is not an element: mixed text, comments, PIs. Returns whether a child was
    /// built.
    pub(crate) fn other_content(&mut self, parent: NodeId, tok: Token) -> Result<bool, Error> {
        let o = &self.p.options;
        match tok {
            Token::Text { start, end } => {
                let raw = &self.bytes[start..end];
                if !o.retain_mixed || is_all_space(raw) {
                    if !o.retain_mixed {
                        // Dropped text must still be well formed.
                        check_utf8(raw, start)?;
                        if memchr::memchr(b'&', raw).is_some() {
                            self.scratch.clear();
                            decode(
                                raw,
                                start,
                                false,
                                o.limits.max_entity_expansion,
                                &mut self.scratch,
                            )?;
                        }
                    }
                    return Ok(false);
                }
                let v = self.value_text((start, end), false)?;
                self.tree.push_parsed(
                    parent,
                    ft::VALUE,
                    Text::EMPTY,
                    Text::EMPTY,
                    Value::Character(v),
                );
                Ok(true)
            }
            Token::CData { content, .. } => {
                if !o.retain_mixed {
                    return Ok(false);
                }
                check_utf8(&self.bytes[content.0..content.1], content.0)?;
                let v = self.src(content);
                self.tree.push_parsed(
                    parent,
                    ft::CDATA_VALUE,
                    Text::EMPTY,
                    Text::EMPTY,
                    Value::Character(v),
                );
                Ok(true)
            }
            Token::Comment { content, .. } => {
                if !o.retain_comments {
                    return Ok(false);
                }
                let v = self.name_text(content)?;
                self.tree.push_parsed(
                    parent,
                    ft::COMMENT,
                    Text::EMPTY,
                    Text::EMPTY,
                    Value::Character(v),
                );
                Ok(true)
            }
            Token::Pi {
                start,
                target,
                data,
                ..
            } => {
                if &self.bytes[target.0..target.1] == b"xml" {
                    return Err(Error::malformed(
                        start,
                        "XML declaration not at the start of the document",
                    ));
                }
                if !o.retain_pis {
                    return Ok(false);
                }
                let n = self.name_text(target)?;
                let v = self.name_text(data)?;
                self.tree.push_parsed(
                    parent,
                    ft::PROCESSING_INSTRUCTION,
                    Text::EMPTY,
                    n,
                    Value::Character(v),
                );
                Ok(true)
            }
            Token::Doctype { start, .. } => {
                Err(Error::malformed(start, "DOCTYPE inside an element"))
            }
            _ => Ok(false),
        }
    }
}
