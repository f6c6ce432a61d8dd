//! Reading a MIME entity from a byte slice into a plain structure (no tree yet), per RFC 2045
//! and RFC 2046: header blocks, multipart bodies split at their boundary delimiters, preamble and
//! epilogue. Delimiter and header lines may end in CRLF or in a bare LF.
//!
//! Everything here is one forward pass over the slice with `memmem` searches: no input can make
//! it loop, and nesting is bounded by [`MAX_DEPTH`].

use std::ops::Range;

use memchr::memmem;

use crate::error::Error;

/// How deeply multiparts may nest inside multiparts.
pub const MAX_DEPTH: usize = 32;
/// The longest boundary accepted (RFC 2046 allows 70 characters; some senders exceed it).
pub const MAX_BOUNDARY: usize = 200;

/// One header line, unfolded, with duplicates already joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub name: String,
    pub value: String,
}

/// A parsed entity: the top-level message or one body part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    pub headers: Vec<Header>,
    pub body: Body,
}

/// What an entity's body is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// A single body: the bytes as they are on the wire (transfer encoding not yet undone).
    Single(Range<usize>),
    /// A multipart body.
    Multi(Multipart),
}

/// A multipart body split at its delimiters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Multipart {
    /// Everything between the first delimiter and the close delimiter.
    pub span: Range<usize>,
    pub preamble: Option<Range<usize>>,
    /// Each part's bytes between its delimiter lines, with what was read from them.
    pub parts: Vec<(Range<usize>, Entity)>,
    pub epilogue: Option<Range<usize>>,
}

/// The value of a header of `headers`, by name in any case.
pub fn header<'h>(headers: &'h [Header], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str())
}

/// Whether a Content-Type value is a multipart type.
pub fn is_multipart(content_type: &str) -> bool {
    content_type
        .trim_start()
        .get(..10)
        .is_some_and(|p| p.eq_ignore_ascii_case("multipart/"))
}

/// The value of parameter `name` of a Content-Type value (`type/sub; name=value; …`), with the
/// quotes of a quoted string removed.
pub fn param(content_type: &str, name: &str) -> Option<String> {
    let mut rest = content_type.split_once(';')?.1;
    loop {
        let (key, after) = rest.split_once('=')?;
        let key = key.trim();
        let after = after.trim_start();
        let (value, next) = if let Some(q) = after.strip_prefix('"') {
            let mut v = String::new();
            let mut chars = q.char_indices();
            let mut end = q.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, e)) = chars.next() {
                            v.push(e);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => v.push(c),
                }
            }
            let tail = &q[end.min(q.len())..];
            (v, tail.split_once(';').map_or("", |(_, n)| n))
        } else {
            match after.split_once(';') {
                Some((v, n)) => (v.trim().to_string(), n),
                None => (after.trim().to_string(), ""),
            }
        };
        if key.eq_ignore_ascii_case(name) {
            return Some(value);
        }
        if next.is_empty() {
            return None;
        }
        rest = next;
    }
}

/// Read the entity in `buf[range]`. With `content_type` (the transport's, as HTTP gives it) the
/// range is the body alone; without, it starts with the entity's header block.
pub fn entity(
    buf: &[u8],
    range: Range<usize>,
    content_type: Option<&str>,
) -> Result<Entity, Error> {
    let (headers, body_start) = match content_type {
        Some(_) => (Vec::new(), range.start),
        None => {
            let (h, at) = headers(buf, range.clone(), true)?;
            if header(&h, "Content-Type").is_none() {
                return Err(Error::malformed(
                    range.start,
                    "the MIME message has no Content-Type (neither from the transport nor in a header block)",
                ));
            }
            (h, at)
        }
    };
    let ct = content_type
        .map(str::to_string)
        .or_else(|| header(&headers, "Content-Type").map(str::to_string))
        .unwrap_or_default();
    let body = body(buf, body_start..range.end, &ct, range.start, 0)?;
    Ok(Entity { headers, body })
}

fn body(buf: &[u8], range: Range<usize>, ct: &str, at: usize, depth: usize) -> Result<Body, Error> {
    if !is_multipart(ct) {
        return Ok(Body::Single(range));
    }
    if depth >= MAX_DEPTH {
        return Err(Error::DepthLimit {
            offset: range.start,
            limit: MAX_DEPTH,
        });
    }
    let boundary = param(ct, "boundary").ok_or_else(|| {
        Error::malformed(
            at,
            format!("the multipart Content-Type '{ct}' has no boundary parameter"),
        )
    })?;
    if boundary.is_empty() || boundary.len() > MAX_BOUNDARY {
        return Err(Error::malformed(
            at,
            format!("the boundary must be 1 to {MAX_BOUNDARY} characters long"),
        ));
    }
    multipart(buf, range, boundary.as_bytes(), depth).map(Body::Multi)
}

/// A delimiter line found in the body.
struct Delimiter {
    /// Where the line break before the delimiter starts (the end of the content before it).
    content_end: usize,
    /// The first byte after the delimiter line.
    next: usize,
    close: bool,
}

/// Find the next delimiter at or after `from`; it counts only at the start of a line.
fn next_delimiter(
    buf: &[u8],
    finder: &memmem::Finder<'_>,
    from: usize,
    range: &Range<usize>,
) -> Option<Delimiter> {
    let dlen = finder.needle().len();
    let mut pos = from;
    while pos < range.end {
        let i = pos + finder.find(&buf[pos..range.end])?;
        pos = i + 1;
        if i != range.start && buf[i - 1] != b'\n' {
            continue;
        }
        let after = i + dlen;
        let content_end = if i == range.start {
            i
        } else if i >= range.start + 2 && buf[i - 2] == b'\r' {
            i - 2
        } else {
            i - 1
        };
        if buf[after..range.end].starts_with(b"--") {
            return Some(Delimiter {
                content_end,
                next: after + 2,
                close: true,
            });
        }
        let mut j = after;
        while j < range.end && (buf[j] == b' ' || buf[j] == b'\t') {
            j += 1;
        }
        let rest = &buf[j..range.end];
        let next = if rest.starts_with(b"\r\n") {
            j + 2
        } else if rest.starts_with(b"\n") {
            j + 1
        } else {
            // `--boundaryX`: a longer line that only begins like the delimiter.
            continue;
        };
        return Some(Delimiter {
            content_end,
            next,
            close: false,
        });
    }
    None
}

/// Whether `content` holds a line the parser would take for a delimiter of `boundary`.
pub fn has_delimiter(content: &[u8], boundary: &[u8]) -> bool {
    let mut delim = Vec::with_capacity(boundary.len() + 2);
    delim.extend_from_slice(b"--");
    delim.extend_from_slice(boundary);
    let finder = memmem::Finder::new(&delim);
    next_delimiter(content, &finder, 0, &(0..content.len())).is_some()
}

fn multipart(
    buf: &[u8],
    range: Range<usize>,
    boundary: &[u8],
    depth: usize,
) -> Result<Multipart, Error> {
    let mut delim = Vec::with_capacity(boundary.len() + 2);
    delim.extend_from_slice(b"--");
    delim.extend_from_slice(boundary);
    let finder = memmem::Finder::new(&delim);
    let Some(first) = next_delimiter(buf, &finder, range.start, &range) else {
        return Err(Error::malformed(
            range.start,
            format!(
                "no boundary delimiter '--{}' in the multipart body",
                String::from_utf8_lossy(boundary)
            ),
        ));
    };
    let preamble = (first.content_end > range.start).then_some(range.start..first.content_end);
    let span_start = first.content_end;
    let mut parts = Vec::new();
    let mut d = first;
    while !d.close {
        let start = d.next;
        let Some(n) = next_delimiter(buf, &finder, start, &range) else {
            return Err(Error::malformed(
                range.end,
                format!(
                    "the multipart body ends without its close delimiter '--{}--'",
                    String::from_utf8_lossy(boundary)
                ),
            ));
        };
        // An empty part: its delimiter line's break is also the break before the next one.
        let end = n.content_end.max(start);
        parts.push((start..end, part(buf, start..end, depth)?));
        d = n;
    }
    if parts.is_empty() {
        // RFC 2046 requires a body part; without one a lone preamble and a lone epilogue
        // could not be told apart in the tree.
        return Err(Error::malformed(
            span_start,
            "the multipart body has no parts",
        ));
    }
    // Transport padding, then the line break that ends the close delimiter's line.
    let mut j = d.next;
    while j < range.end && (buf[j] == b' ' || buf[j] == b'\t') {
        j += 1;
    }
    if buf[j..range.end].starts_with(b"\r\n") {
        j += 2;
    } else if buf[j..range.end].starts_with(b"\n") {
        j += 1;
    }
    let epilogue = (j < range.end).then_some(j..range.end);
    Ok(Multipart {
        span: span_start..d.next,
        preamble,
        parts,
        epilogue,
    })
}

fn part(buf: &[u8], range: Range<usize>, depth: usize) -> Result<Entity, Error> {
    let (headers, at) = headers(buf, range.clone(), false)?;
    // RFC 2045: a part without a Content-Type is plain text.
    let ct = header(&headers, "Content-Type")
        .unwrap_or("text/plain")
        .to_string();
    let body = body(buf, at..range.end, &ct, range.start, depth + 1)?;
    Ok(Entity { headers, body })
}

/// Read a header block from the start of `range`; returns the headers and where the body starts.
/// A block needs its empty line when `need_end`; a part's block may instead run to the part's end.
fn headers(buf: &[u8], range: Range<usize>, need_end: bool) -> Result<(Vec<Header>, usize), Error> {
    let mut out: Vec<Header> = Vec::new();
    // The header a folded line continues (a repeated name joins an earlier one).
    let mut last = None;
    let mut pos = range.start;
    loop {
        if pos >= range.end {
            if need_end && pos == range.start {
                return Err(Error::malformed(pos, "the MIME message is empty"));
            }
            return Ok((out, range.end));
        }
        let line_end = memchr::memchr(b'\n', &buf[pos..range.end]).map_or(range.end, |i| pos + i);
        let next = (line_end + 1).min(range.end);
        let mut line = &buf[pos..line_end];
        if let Some(l) = line.strip_suffix(b"\r") {
            line = l;
        }
        if line.is_empty() {
            if line_end == range.end && need_end {
                return Err(Error::malformed(
                    pos,
                    "the header block is not ended by an empty line",
                ));
            }
            return Ok((out, next));
        }
        if line_end == range.end && need_end {
            return Err(Error::malformed(
                pos,
                "the header block is not ended by an empty line",
            ));
        }
        if let Some(i) = memchr::memchr(b'\r', line) {
            return Err(Error::malformed(
                pos + i,
                "a carriage return inside a header line",
            ));
        }
        let text = std::str::from_utf8(line).map_err(|e| Error::InvalidUtf8 {
            offset: pos + e.valid_up_to(),
        })?;
        if text.starts_with([' ', '\t']) {
            // A folded line continues the header above it.
            let Some(last) = last.and_then(|i: usize| out.get_mut(i)) else {
                return Err(Error::malformed(
                    pos,
                    "a continuation line before any header",
                ));
            };
            let more = text.trim();
            if !last.value.is_empty() && !more.is_empty() {
                last.value.push(' ');
            }
            last.value.push_str(more);
            pos = next;
            continue;
        }
        let Some((name, value)) = text.split_once(':') else {
            return Err(Error::malformed(pos, "a header line without a colon"));
        };
        if name.is_empty() || name.bytes().any(|b| b <= b' ' || b == 0x7F) {
            return Err(Error::malformed(
                pos,
                format!("'{name}' is not a header name"),
            ));
        }
        let value = value.trim();
        // Headers of one name are joined into one comma-separated value, as the product does.
        if let Some(i) = out.iter().position(|h| h.name.eq_ignore_ascii_case(name)) {
            last = Some(i);
            let h = &mut out[i];
            if !h.value.is_empty() && !value.is_empty() {
                h.value.push_str(", ");
            }
            h.value.push_str(value);
        } else {
            last = Some(out.len());
            out.push(Header {
                name: name.to_string(),
                value: value.to_string(),
            });
        }
        pos = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(ct: &str, body: &[u8]) -> Result<Entity, Error> {
        entity(body, 0..body.len(), Some(ct))
    }

    fn multi(e: &Entity) -> &Multipart {
        match &e.body {
            Body::Multi(m) => m,
            Body::Single(_) => panic!("expected a multipart"),
        }
    }

    #[test]
    fn param_reads_plain_and_quoted_values() {
        let ct = r#"multipart/related; type="text/xml"; boundary="a b\"c"; start=<x@y>"#;
        assert_eq!(param(ct, "type").as_deref(), Some("text/xml"));
        assert_eq!(param(ct, "BOUNDARY").as_deref(), Some("a b\"c"));
        assert_eq!(param(ct, "start").as_deref(), Some("<x@y>"));
        assert_eq!(param(ct, "charset"), None);
        assert_eq!(param("text/plain", "boundary"), None);
    }

    #[test]
    fn multipart_splits_parts_preamble_and_epilogue_when_crlf() {
        let b = b"pre\r\n--XX\r\nContent-Type: text/plain\r\n\r\none\r\n--XX\r\n\r\ntwo\r\n--XX--\r\nepi";
        let e = parse("multipart/mixed; boundary=XX", b).unwrap_or_else(|e| panic!("{e}"));
        let m = multi(&e);
        assert_eq!(m.preamble.clone().map(|r| &b[r]), Some(&b"pre"[..]));
        assert_eq!(m.epilogue.clone().map(|r| &b[r]), Some(&b"epi"[..]));
        assert_eq!(m.parts.len(), 2);
        assert_eq!(
            header(&m.parts[0].1.headers, "content-type"),
            Some("text/plain")
        );
        let Body::Single(r) = &m.parts[0].1.body else {
            panic!("single")
        };
        assert_eq!(&b[r.clone()], b"one");
        assert!(m.parts[1].1.headers.is_empty());
    }

    #[test]
    fn multipart_accepts_bare_lf_line_ends() {
        let b = b"--b\nA: 1\n\nx\n--b\n\ny\n--b--\n";
        let e = parse("multipart/form-data; boundary=b", b).unwrap_or_else(|e| panic!("{e}"));
        let m = multi(&e);
        assert_eq!(m.parts.len(), 2);
        let Body::Single(r) = &m.parts[0].1.body else {
            panic!("single")
        };
        assert_eq!(&b[r.clone()], b"x");
        assert_eq!(m.preamble, None);
        assert_eq!(m.epilogue, None);
    }

    #[test]
    fn multipart_ignores_longer_lines_starting_like_the_delimiter() {
        let b = b"--b\r\n\r\n--bc\r\n--b--";
        let e = parse("multipart/mixed; boundary=b", b).unwrap_or_else(|e| panic!("{e}"));
        let m = multi(&e);
        let Body::Single(r) = &m.parts[0].1.body else {
            panic!("single")
        };
        assert_eq!(&b[r.clone()], b"--bc");
    }

    #[test]
    fn multipart_nests_when_a_part_is_multipart() {
        let b = b"--o\r\nContent-Type: multipart/alternative; boundary=i\r\n\r\n--i\r\n\r\na\r\n--i--\r\n--o--";
        let e = parse("multipart/mixed; boundary=o", b).unwrap_or_else(|e| panic!("{e}"));
        let inner = multi(&multi(&e).parts[0].1);
        assert_eq!(inner.parts.len(), 1);
    }

    #[test]
    fn parse_fails_with_offset_when_close_delimiter_missing() {
        let b = b"--b\r\n\r\nabc";
        let err = parse("multipart/mixed; boundary=b", b).err();
        assert_eq!(err.map(|e| e.offset()), Some(b.len()));
    }

    #[test]
    fn parse_fails_when_boundary_missing_or_absent_from_body() {
        assert!(parse("multipart/mixed", b"--b\r\n--b--").is_err());
        let err = parse("multipart/mixed; boundary=zz", b"no delimiters").err();
        assert!(err.is_some_and(|e| e.to_string().contains("--zz")));
    }

    #[test]
    fn headers_unfold_and_join_duplicates() {
        let b = b"Content-Type: text/plain\r\nX-A: 1\r\n  continued\r\nx-a: 2\r\n\r\nbody";
        let e = entity(b, 0..b.len(), None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(header(&e.headers, "X-A"), Some("1 continued, 2"));
        let Body::Single(r) = &e.body else {
            panic!("single")
        };
        assert_eq!(&b[r.clone()], b"body");
    }

    #[test]
    fn headers_fail_with_offset_when_line_has_no_colon() {
        let b = b"Content-Type: text/plain\r\nbad line\r\n\r\n";
        let err = entity(b, 0..b.len(), None).err();
        assert_eq!(err.map(|e| e.offset()), Some(26));
    }

    #[test]
    fn nesting_deeper_than_limit_fails() {
        fn nest(i: usize) -> String {
            if i > MAX_DEPTH + 1 {
                return String::new();
            }
            format!(
                "--b{i}\r\nContent-Type: multipart/mixed; boundary=b{}\r\n\r\n{}\r\n--b{i}--",
                i + 1,
                nest(i + 1)
            )
        }
        let b = nest(0).into_bytes();
        let err = parse("multipart/mixed; boundary=b0", &b).err();
        assert!(matches!(err, Some(Error::DepthLimit { .. })));
    }
}
