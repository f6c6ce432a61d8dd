//! The document level of XMLNSC: byte-order mark, XML declaration, DOCTYPE (refused when it
//! declares entities, otherwise skipped), the one document element, and what may follow it.

use sluice_tree::{NodeId, Text, Value};

use super::build::{Builder, Pushed};
use super::field_type as ft;
use super::flags;
use super::lexer::{Span, Token, is_all_space, is_xml_space};
use super::text::check_utf8;
use crate::error::Error;

impl Builder<'_, '_> {
    /// Parse the document level (prolog, root element, epilog) up to the next child built.
    /// Returns true when the document is complete.
    pub(crate) fn document_step(&mut self, doc: NodeId) -> Result<bool, Error> {
        // Offsets in the tree are 32-bit, which also caps the limit.
        let limit = self.p.options.limits.max_size_bytes.min(u32::MAX as usize);
        if self.bytes.len() > limit {
            return Err(Error::SizeLimit {
                size: self.bytes.len(),
                limit,
            });
        }
        let mut pos = self.tree.resume(doc) as usize;
        if pos == 0 {
            if self.bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
                pos = 3;
            } else if self.bytes.starts_with(&[0xFE, 0xFF]) || self.bytes.starts_with(&[0xFF, 0xFE])
            {
                return Err(Error::UnsupportedEncoding {
                    offset: 0,
                    encoding: "UTF-16".into(),
                });
            }
        }
        let first = pos == 0 || pos == 3 && self.bytes.starts_with(&[0xEF, 0xBB, 0xBF]);
        let mut first = first && self.tree.peek_first_child(doc).is_none();
        if first && self.bytes.len() <= super::subtree::BUILD_PAST_MESSAGE_BYTES {
            // A message small enough to be built as navigation passes (see
            // `BUILD_PAST_MESSAGE_BYTES`) is usually built whole: growing the arena to that size
            // a step at a time would copy it over and over. Records of short fields make about
            // one element per 20 bytes.
            self.tree.reserve(self.bytes.len() / 20);
        }
        loop {
            let at = pos;
            let tok = self.next(&mut pos)?;
            let root_seen = self.tree.parser_flags(doc) & flags::ROOT_SEEN != 0;
            match tok {
                Token::Eof => {
                    if !root_seen {
                        return Err(Error::malformed(at, "no root element"));
                    }
                    self.tree.set_resume(doc, pos as u32);
                    self.tree.finish_pending(doc);
                    return Ok(true);
                }
                Token::Text { start, end } => {
                    if !is_all_space(&self.bytes[start..end]) {
                        let why = if root_seen {
                            "content after the root element"
                        } else {
                            "text before the root element"
                        };
                        return Err(Error::malformed(start, why));
                    }
                }
                Token::Pi {
                    start,
                    target,
                    data,
                    ..
                } if &self.bytes[target.0..target.1] == b"xml" => {
                    if !first {
                        return Err(Error::malformed(
                            start,
                            "XML declaration not at the start of the document",
                        ));
                    }
                    self.xml_declaration(doc, data)?;
                    self.tree.set_resume(doc, pos as u32);
                    return Ok(false);
                }
                Token::Doctype {
                    start, entities, ..
                } => {
                    if root_seen {
                        return Err(Error::malformed(start, "DOCTYPE after the root element"));
                    }
                    if entities {
                        return Err(Error::DtdEntities { offset: start });
                    }
                }
                Token::Start {
                    start,
                    name,
                    self_closing,
                    end,
                } => {
                    if root_seen {
                        return Err(Error::malformed(start, "a second root element"));
                    }
                    let pushed = self.push_element(doc, start, name, self_closing, end, 1)?;
                    let f = self.tree.parser_flags(doc) | flags::ROOT_SEEN;
                    self.tree.set_parser_flags(doc, f);
                    match pushed {
                        Pushed::Done { end } => self.tree.set_resume(doc, end as u32),
                        Pushed::Folder { id, content, .. } => {
                            self.tree.set_pending(id, self.index, content as u32);
                            self.tree.set_parser_flags(doc, f | flags::OPEN_LAST);
                            self.tree.set_resume(doc, start as u32);
                        }
                    }
                    return Ok(false);
                }
                Token::End { start, .. } => {
                    return Err(Error::malformed(start, "end tag without a start tag"));
                }
                Token::CData { start, .. } => {
                    return Err(Error::malformed(
                        start,
                        "CDATA section outside the root element",
                    ));
                }
                other => {
                    if self.other_content(doc, other)? {
                        self.tree.set_resume(doc, pos as u32);
                        return Ok(false);
                    }
                }
            }
            first = false;
        }
    }

    /// `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` as an XmlDeclaration folder.
    fn xml_declaration(&mut self, doc: NodeId, data: Span) -> Result<(), Error> {
        let b = self.bytes;
        let mut p = data.0;
        let mut items: Vec<(&'static str, Span)> = Vec::new();
        while p < data.1 {
            while p < data.1 && is_xml_space(b[p]) {
                p += 1;
            }
            if p >= data.1 {
                break;
            }
            let ns = p;
            while p < data.1 && b[p].is_ascii_alphabetic() {
                p += 1;
            }
            let key = match &b[ns..p] {
                b"version" => ft::DECL_VERSION,
                b"encoding" => ft::DECL_ENCODING,
                b"standalone" => ft::DECL_STANDALONE,
                _ => return Err(Error::malformed(ns, "invalid XML declaration")),
            };
            while p < data.1 && is_xml_space(b[p]) {
                p += 1;
            }
            if b.get(p) != Some(&b'=') {
                return Err(Error::malformed(p, "invalid XML declaration: expected '='"));
            }
            p += 1;
            while p < data.1 && is_xml_space(b[p]) {
                p += 1;
            }
            let q = match b.get(p) {
                Some(&q @ (b'"' | b'\'')) if p < data.1 => q,
                _ => {
                    return Err(Error::malformed(
                        p,
                        "invalid XML declaration: expected a quoted value",
                    ));
                }
            };
            let vs = p + 1;
            let ve = memchr::memchr(q, &b[vs..data.1])
                .map(|i| vs + i)
                .ok_or_else(|| {
                    Error::malformed(p, "invalid XML declaration: unterminated value")
                })?;
            p = ve + 1;
            items.push((key, (vs, ve)));
        }
        if let Some((_, v)) = items.iter().find(|(k, _)| *k == ft::DECL_ENCODING) {
            let enc = b[v.0..v.1].to_ascii_lowercase();
            if enc.starts_with(b"utf-16") || enc.starts_with(b"utf-32") || enc.starts_with(b"ucs") {
                return Err(Error::UnsupportedEncoding {
                    offset: v.0,
                    encoding: String::from_utf8_lossy(&b[v.0..v.1]).into_owned(),
                });
            }
        }
        for (_, v) in &items {
            check_utf8(&b[v.0..v.1], v.0)?;
        }
        let id = self.tree.push_parsed(
            doc,
            ft::XML_DECLARATION,
            Text::EMPTY,
            Text::from_static("XmlDeclaration"),
            Value::Null,
        );
        for (k, v) in items {
            let t = self.src(v);
            self.tree.push_parsed(
                id,
                ft::ATTRIBUTE,
                Text::EMPTY,
                Text::from_static(k),
                Value::Character(t),
            );
        }
        Ok(())
    }
}
