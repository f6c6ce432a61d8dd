//! Character data: decoding references and line ends when parsing, escaping when writing.

use memchr::{memchr, memchr3};

use crate::error::Error;

/// Check `raw` (at `offset` in the body) is UTF-8.
#[inline]
pub(crate) fn check_utf8(raw: &[u8], offset: usize) -> Result<(), Error> {
    // Most markup and data is ASCII: check that inline before the full validation.
    if raw.is_ascii() {
        return Ok(());
    }
    match std::str::from_utf8(raw) {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::InvalidUtf8 {
            offset: offset + e.valid_up_to(),
        }),
    }
}

/// Whether decoding `raw` would change it (it holds a reference, a CR, or — in attribute values
/// — white space that normalises to a space).
pub(crate) fn needs_decode(raw: &[u8], attribute: bool) -> bool {
    if attribute {
        memchr3(b'&', b'\r', b'\n', raw).is_some() || memchr(b'\t', raw).is_some()
    } else {
        memchr::memchr2(b'&', b'\r', raw).is_some()
    }
}

/// Decode `raw` (at `offset` in the body) into `out`: the five predefined entities, character
/// references, CR LF / CR to LF, and in attribute values tab and line ends to spaces.
pub(crate) fn decode(
    raw: &[u8],
    offset: usize,
    attribute: bool,
    max_refs: usize,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let mut refs = 0usize;
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        match b {
            b'&' => {
                refs += 1;
                if refs > max_refs {
                    return Err(Error::EntityLimit {
                        offset: offset + i,
                        limit: max_refs,
                    });
                }
                let end = memchr(b';', &raw[i..])
                    .map(|j| i + j)
                    .filter(|&e| e - i <= 12)
                    .ok_or_else(|| {
                        Error::malformed(
                            offset + i,
                            "'&' not followed by a reference ending in ';'",
                        )
                    })?;
                let name = &raw[i + 1..end];
                decode_reference(name, offset + i, out)?;
                i = end + 1;
                continue;
            }
            b'\r' => {
                out.push(if attribute { b' ' } else { b'\n' });
                if raw.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            b'\n' | b'\t' if attribute => out.push(b' '),
            _ => out.push(b),
        }
        i += 1;
    }
    Ok(())
}

fn decode_reference(name: &[u8], offset: usize, out: &mut Vec<u8>) -> Result<(), Error> {
    let lit: &[u8] = match name {
        b"amp" => b"&",
        b"lt" => b"<",
        b"gt" => b">",
        b"quot" => b"\"",
        b"apos" => b"'",
        [b'#', b'x', hex @ ..] => return push_char(parse_num(hex, 16), offset, out),
        [b'#', dec @ ..] => return push_char(parse_num(dec, 10), offset, out),
        _ => {
            return Err(Error::UndefinedEntity {
                offset,
                name: String::from_utf8_lossy(name).into_owned(),
            });
        }
    };
    out.extend_from_slice(lit);
    Ok(())
}

fn parse_num(digits: &[u8], radix: u32) -> Option<u32> {
    if digits.is_empty() {
        return None;
    }
    let s = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(s, radix).ok()
}

fn push_char(code: Option<u32>, offset: usize, out: &mut Vec<u8>) -> Result<(), Error> {
    let c = code
        .and_then(char::from_u32)
        .filter(|&c| is_xml_char(c))
        .ok_or_else(|| Error::malformed(offset, "invalid character reference"))?;
    let mut b = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
    Ok(())
}

fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Append `s` escaped for element content.
pub(crate) fn escape_text(s: &[u8], out: &mut Vec<u8>) {
    // Most text needs no escaping: two vector scans find that out, and it is copied whole.
    if memchr::memchr3(b'&', b'<', b'>', s).is_none() && memchr::memchr(b'\r', s).is_none() {
        out.extend_from_slice(s);
        return;
    }
    escape(s, out, |b| match b {
        b'&' => Some(b"&amp;"),
        b'<' => Some(b"&lt;"),
        b'>' => Some(b"&gt;"),
        b'\r' => Some(b"&#xD;"),
        _ => None,
    });
}

/// Append `s` escaped for an attribute value in the given quote.
pub(crate) fn escape_attr(s: &[u8], single: bool, out: &mut Vec<u8>) {
    escape(s, out, |b| match b {
        b'&' => Some(b"&amp;"),
        b'<' => Some(b"&lt;"),
        b'"' if !single => Some(b"&quot;"),
        b'\'' if single => Some(b"&apos;"),
        b'\t' => Some(b"&#x9;"),
        b'\n' => Some(b"&#xA;"),
        b'\r' => Some(b"&#xD;"),
        _ => None,
    });
}

fn escape(s: &[u8], out: &mut Vec<u8>, map: impl Fn(u8) -> Option<&'static [u8]>) {
    let mut from = 0;
    for (i, &b) in s.iter().enumerate() {
        if let Some(rep) = map(b) {
            out.extend_from_slice(&s[from..i]);
            out.extend_from_slice(rep);
            from = i + 1;
        }
    }
    out.extend_from_slice(&s[from..]);
}

/// Append `s` as CDATA, splitting any `]]>` across two sections.
pub(crate) fn write_cdata(s: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(b"<![CDATA[");
    let mut rest = s;
    while let Some(i) = memchr::memmem::find(rest, b"]]>") {
        out.extend_from_slice(&rest[..i + 2]);
        out.extend_from_slice(b"]]><![CDATA[");
        rest = &rest[i + 2..];
    }
    out.extend_from_slice(rest);
    out.extend_from_slice(b"]]>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str, attr: bool) -> Result<String, Error> {
        let mut out = Vec::new();
        decode(s.as_bytes(), 0, attr, 1000, &mut out)?;
        Ok(String::from_utf8(out).unwrap_or_default())
    }

    #[test]
    fn decode_expands_predefined_and_numeric_references() {
        assert_eq!(
            dec("a&amp;b&lt;&gt;&quot;&apos;&#x41;&#66;", false)
                .ok()
                .as_deref(),
            Some("a&b<>\"'AB")
        );
    }

    #[test]
    fn decode_normalises_line_ends() {
        assert_eq!(dec("a\r\nb\rc", false).ok().as_deref(), Some("a\nb\nc"));
        assert_eq!(dec("a\r\nb\tc\n", true).ok().as_deref(), Some("a b c "));
    }

    #[test]
    fn decode_rejects_unknown_entity_and_bad_refs() {
        assert!(matches!(
            dec("x&foo;", false),
            Err(Error::UndefinedEntity { offset: 1, .. })
        ));
        assert!(matches!(
            dec("x&#0;", false),
            Err(Error::Malformed { offset: 1, .. })
        ));
        assert!(matches!(
            dec("x & y", false),
            Err(Error::Malformed { offset: 2, .. })
        ));
    }

    #[test]
    fn decode_enforces_reference_limit() {
        let mut out = Vec::new();
        let r = decode(b"&amp;&amp;&amp;", 10, false, 2, &mut out);
        assert!(matches!(
            r,
            Err(Error::EntityLimit {
                offset: 20,
                limit: 2
            })
        ));
    }

    #[test]
    fn cdata_splits_terminator() {
        let mut out = Vec::new();
        write_cdata(b"a]]>b", &mut out);
        assert_eq!(out, b"<![CDATA[a]]]]><![CDATA[>b]]>");
    }
}
