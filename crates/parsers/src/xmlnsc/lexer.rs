//! A small XML tokenizer over a byte slice that reports byte offsets.
//!
//! It reads one markup construct or one run of text per call and never looks past it, so the tree
//! builder can stop anywhere (on-demand parsing) and subtrees can be skipped without building
//! anything. It checks well-formedness of the markup it reads (names, attribute syntax, quotes,
//! terminators); text decoding and UTF-8 checks happen where values are built.

use memchr::{memchr, memchr2, memmem};

use crate::error::Error;

/// A byte range `[0, 1)` in the buffer being read.
pub(crate) type Span = (usize, usize);

/// One attribute of a start tag: the qualified name and the raw (undecoded) value.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawAttr {
    pub name: Span,
    pub value: Span,
    pub single_quoted: bool,
}

/// One token. Offsets are absolute positions in the buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Token {
    /// A start tag; its attributes are in the vector passed to [`Lexer::next_token`].
    Start {
        start: usize,
        name: Span,
        self_closing: bool,
        end: usize,
    },
    /// An end tag.
    End {
        start: usize,
        name: Span,
        end: usize,
    },
    /// Character data up to the next `<` (raw, references not decoded).
    Text { start: usize, end: usize },
    /// A CDATA section; `content` excludes the delimiters.
    CData { start: usize, content: Span },
    /// A comment; `content` excludes the delimiters.
    Comment { content: Span },
    /// A processing instruction (including the XML declaration, target `xml`).
    Pi {
        start: usize,
        target: Span,
        data: Span,
    },
    /// A document type declaration; `entities` tells whether its internal subset declares any.
    Doctype { start: usize, entities: bool },
    /// The end of the buffer.
    Eof,
}

const NAME_START: u8 = 1;
const NAME_CHAR: u8 = 2;
/// A name character that is ASCII and not ':': a name made of these needs neither a prefix
/// split nor a UTF-8 check.
pub(crate) const PLAIN_NAME_CHAR: u8 = 4;

/// Byte classes for XML names. Bytes of multi-byte UTF-8 characters count as name characters;
/// whether they are valid UTF-8 is checked when the name is used.
pub(crate) static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        let start = c.is_ascii_alphabetic() || c == b'_' || c == b':' || c >= 0x80;
        let chr = start || c.is_ascii_digit() || c == b'-' || c == b'.';
        t[i] = if start {
            NAME_START | NAME_CHAR
        } else if chr {
            NAME_CHAR
        } else {
            0
        };
        if chr && c != b':' && c < 0x80 {
            t[i] |= PLAIN_NAME_CHAR;
        }
        i += 1;
    }
    t
};

pub(crate) fn is_xml_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Whether every byte is XML white space.
pub(crate) fn is_all_space(s: &[u8]) -> bool {
    s.iter().all(|&b| is_xml_space(b))
}

/// A cursor over the buffer.
pub(crate) struct Lexer<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
    pub max_attributes: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(buf: &'a [u8], pos: usize, max_attributes: usize) -> Self {
        Lexer {
            buf,
            pos,
            max_attributes,
        }
    }

    fn skip_space(&mut self) {
        while self.pos < self.buf.len() && is_xml_space(self.buf[self.pos]) {
            self.pos += 1;
        }
    }

    fn name(&mut self, what: &str) -> Result<Span, Error> {
        let s = self.pos;
        match self.buf.get(s) {
            Some(&b) if CLASS[b as usize] & NAME_START != 0 => {}
            Some(_) => return Err(Error::malformed(s, format!("invalid character in {what}"))),
            None => {
                return Err(Error::malformed(
                    s,
                    format!("unexpected end of document in {what}"),
                ));
            }
        }
        let mut p = s + 1;
        while p < self.buf.len() && CLASS[self.buf[p] as usize] & NAME_CHAR != 0 {
            p += 1;
        }
        self.pos = p;
        Ok((s, p))
    }

    fn find(&self, from: usize, pat: &[u8], what: &str, start: usize) -> Result<usize, Error> {
        memmem::find(&self.buf[from..], pat)
            .map(|i| from + i)
            .ok_or_else(|| Error::malformed(start, format!("unterminated {what}")))
    }

    /// Read the next token; attributes of a start tag are written to `attrs` (cleared first).
    #[inline(always)]
    pub fn next_token(&mut self, attrs: &mut Vec<RawAttr>) -> Result<Token, Error> {
        let mut t = Token::Eof;
        self.read_token(attrs, &mut t)?;
        Ok(t)
    }

    /// [`Lexer::next_token`] writing the token to `out`. Hot loops use this form: a token
    /// written in place is read back field by field, where a returned one is copied in wide
    /// loads that wait on the narrower stores that built it.
    #[inline(always)]
    pub fn read_token(&mut self, attrs: &mut Vec<RawAttr>, out: &mut Token) -> Result<(), Error> {
        let buf = self.buf;
        let start = self.pos;
        if start >= buf.len() {
            *out = Token::Eof;
            return Ok(());
        }
        if buf[start] != b'<' {
            let end = memchr(b'<', &buf[start..]).map_or(buf.len(), |i| start + i);
            self.pos = end;
            *out = Token::Text { start, end };
            return Ok(());
        }
        match buf.get(start + 1) {
            Some(b'/') => {
                self.pos = start + 2;
                let name = self.name("end tag name")?;
                self.skip_space();
                if buf.get(self.pos) != Some(&b'>') {
                    return Err(Error::malformed(
                        self.pos,
                        "expected '>' to close the end tag",
                    ));
                }
                self.pos += 1;
                *out = Token::End {
                    start,
                    name,
                    end: self.pos,
                };
                Ok(())
            }
            Some(b'!') => {
                *out = self.markup_decl(start)?;
                Ok(())
            }
            Some(b'?') => {
                self.pos = start + 2;
                let target = self.name("processing instruction target")?;
                let close = self.find(target.1, b"?>", "processing instruction", start)?;
                let mut ds = target.1;
                if ds < close && !is_xml_space(buf[ds]) {
                    return Err(Error::malformed(
                        ds,
                        "expected white space after the processing instruction target",
                    ));
                }
                while ds < close && is_xml_space(buf[ds]) {
                    ds += 1;
                }
                self.pos = close + 2;
                *out = Token::Pi {
                    start,
                    target,
                    data: (ds, close),
                };
                Ok(())
            }
            _ => {
                self.pos = start + 1;
                let name = self.name("element name")?;
                if buf.get(self.pos) == Some(&b'>') {
                    // No attributes: most tags, answered without the call.
                    attrs.clear();
                } else {
                    self.attributes(attrs)?;
                }
                let self_closing = buf[self.pos] == b'/';
                self.pos += if self_closing { 2 } else { 1 };
                *out = Token::Start {
                    start,
                    name,
                    self_closing,
                    end: self.pos,
                };
                Ok(())
            }
        }
    }

    /// Attributes up to `>` or `/>`; leaves `pos` on the `>` or `/`.
    fn attributes(&mut self, attrs: &mut Vec<RawAttr>) -> Result<(), Error> {
        attrs.clear();
        let buf = self.buf;
        loop {
            let before = self.pos;
            self.skip_space();
            match buf.get(self.pos) {
                Some(b'>') => return Ok(()),
                Some(b'/') => {
                    if buf.get(self.pos + 1) == Some(&b'>') {
                        return Ok(());
                    }
                    return Err(Error::malformed(
                        self.pos,
                        "expected '>' after '/' in a tag",
                    ));
                }
                None => {
                    return Err(Error::malformed(
                        self.pos,
                        "unexpected end of document in a tag",
                    ));
                }
                Some(_) if self.pos == before => {
                    return Err(Error::malformed(
                        self.pos,
                        "expected white space before an attribute",
                    ));
                }
                Some(_) => {}
            }
            let name = self.name("attribute name")?;
            self.skip_space();
            if buf.get(self.pos) != Some(&b'=') {
                return Err(Error::malformed(
                    self.pos,
                    "expected '=' after the attribute name",
                ));
            }
            self.pos += 1;
            self.skip_space();
            let q = match buf.get(self.pos) {
                Some(&q @ (b'"' | b'\'')) => q,
                _ => {
                    return Err(Error::malformed(
                        self.pos,
                        "expected a quoted attribute value",
                    ));
                }
            };
            let vs = self.pos + 1;
            let ve = match memchr2(q, b'<', &buf[vs..]) {
                Some(i) if buf[vs + i] == q => vs + i,
                Some(i) => {
                    return Err(Error::malformed(vs + i, "'<' in an attribute value"));
                }
                None => return Err(Error::malformed(self.pos, "unterminated attribute value")),
            };
            self.pos = ve + 1;
            if attrs.len() >= self.max_attributes {
                return Err(Error::AttributeLimit {
                    offset: name.0,
                    limit: self.max_attributes,
                });
            }
            let n = &buf[name.0..name.1];
            let dup = if attrs.len() < 32 {
                attrs.iter().any(|a| &buf[a.name.0..a.name.1] == n)
            } else {
                // Large attribute counts: keep duplicate detection sub-quadratic.
                let mut seen: std::collections::HashSet<&[u8]> =
                    attrs.iter().map(|a| &buf[a.name.0..a.name.1]).collect();
                !seen.insert(n)
            };
            if dup {
                return Err(Error::malformed(name.0, "duplicate attribute"));
            }
            attrs.push(RawAttr {
                name,
                value: (vs, ve),
                single_quoted: q == b'\'',
            });
        }
    }

    fn markup_decl(&mut self, start: usize) -> Result<Token, Error> {
        let buf = &self.buf[start..];
        if buf.starts_with(b"<!--") {
            let close = self.find(start + 4, b"-->", "comment", start)?;
            self.pos = close + 3;
            return Ok(Token::Comment {
                content: (start + 4, close),
            });
        }
        if buf.starts_with(b"<![CDATA[") {
            let close = self.find(start + 9, b"]]>", "CDATA section", start)?;
            self.pos = close + 3;
            return Ok(Token::CData {
                start,
                content: (start + 9, close),
            });
        }
        if buf.starts_with(b"<!DOCTYPE") {
            return self.doctype(start);
        }
        Err(Error::malformed(start, "invalid markup declaration"))
    }

    /// Skip a DOCTYPE, noting whether its internal subset declares entities. Nothing in it is
    /// interpreted: no DTD processing and no external entities, ever.
    fn doctype(&mut self, start: usize) -> Result<Token, Error> {
        let buf = self.buf;
        let mut p = start + 9;
        let mut in_subset = false;
        let mut entities = false;
        while p < buf.len() {
            match buf[p] {
                q @ (b'"' | b'\'') => {
                    p = memchr(q, &buf[p + 1..])
                        .map(|i| p + 1 + i + 1)
                        .ok_or_else(|| Error::malformed(p, "unterminated literal in DOCTYPE"))?;
                    continue;
                }
                b'[' if !in_subset => in_subset = true,
                b']' if in_subset => in_subset = false,
                b'<' if in_subset => {
                    if buf[p..].starts_with(b"<!--") {
                        p = self.find(p + 4, b"-->", "comment", p)? + 3;
                        continue;
                    }
                    if buf[p..].starts_with(b"<!ENTITY") {
                        entities = true;
                    }
                }
                b'>' if !in_subset => {
                    self.pos = p + 1;
                    return Ok(Token::Doctype { start, entities });
                }
                _ => {}
            }
            p += 1;
        }
        Err(Error::malformed(start, "unterminated DOCTYPE"))
    }
}

/// Split a qualified name into (prefix, local); the prefix is empty when there is none.
pub(crate) fn split_qname(buf: &[u8], name: Span, offset: usize) -> Result<(Span, Span), Error> {
    let s = &buf[name.0..name.1];
    match memchr(b':', s) {
        None => Ok(((name.0, name.0), name)),
        Some(i) => {
            if i == 0 || i + 1 == s.len() || memchr(b':', &s[i + 1..]).is_some() {
                return Err(Error::malformed(offset, "invalid qualified name"));
            }
            Ok(((name.0, name.0 + i), (name.0 + i + 1, name.1)))
        }
    }
}
