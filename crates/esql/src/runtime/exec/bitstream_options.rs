//! The OPTIONS, CCSID and ENCODING clauses of ASBITSTREAM and CREATE … PARSE.
//!
//! Domain parsers and serialisers work in UTF-8. PARSE transcodes the bytes from the CCSID
//! asked for to UTF-8 before the parser sees them; ASBITSTREAM transcodes what the serialiser
//! wrote to the CCSID asked for. Both go through the code pages of CAST … CCSID
//! (`sluice_esql_scalar::codepage`). ENCODING only changes binary numbers, which the XMLNSC,
//! JSON and BLOB domains do not have: it is accepted and has no effect there.

use bytes::Bytes;
use sluice_esql_scalar::{Value, codepage};

use super::{Exec, Frame, R, RtError};
use crate::runtime::convert;
use crate::runtime::ir::{BitstreamIr, Ex};

/// The option bits, as the compiler defines the product's constants.
const FOLDER_BIT_STREAM: i64 = 1;
const EMBEDDED_BIT_STREAM: i64 = 2;
const PARSE_COMPLETE: i64 = 0x40;
const PARSE_IMMEDIATE: i64 = 0x80;

/// The clauses of one ASBITSTREAM or PARSE, evaluated.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BitstreamOptions {
    /// The CCSID asked for (`None`: UTF-8, as the serialisers write and parsers read).
    pub ccsid: Option<i64>,
    pub options: i64,
}

impl BitstreamOptions {
    /// FolderBitStream or EmbeddedBitStream: the folder's subtree only, no document around it.
    pub fn folder(&self) -> bool {
        self.options & (FOLDER_BIT_STREAM | EMBEDDED_BIT_STREAM) != 0
    }

    /// ParseComplete or ParseImmediate: parse everything at once so that errors surface here.
    pub fn parse_now(&self) -> bool {
        self.options & (PARSE_COMPLETE | PARSE_IMMEDIATE) != 0
    }
}

/// The CCSIDs that are UTF-8 (0 is "the default", which is UTF-8 here).
pub(crate) fn is_utf8(ccsid: i64) -> bool {
    matches!(ccsid, 0 | 1208 | 1209)
}

/// The name an XML declaration gives a CCSID.
fn encoding_name(ccsid: i64) -> Option<&'static str> {
    Some(match ccsid {
        0 | 1208 | 1209 => "UTF-8",
        1200 | 13488 | 17584 => "UTF-16",
        1202 => "UTF-16LE",
        819 | 923 => "ISO-8859-1",
        367 => "US-ASCII",
        437 => "IBM437",
        1252 | 5348 => "windows-1252",
        37 => "IBM037",
        500 => "IBM500",
        1140 => "IBM01140",
        1148 => "IBM01148",
        _ => return None,
    })
}

/// Replace the `encoding` of a leading XML declaration, if it has one.
pub(crate) fn retag_xml_declaration(text: &str, name: &str) -> Option<String> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !body.starts_with("<?xml") {
        return None;
    }
    let end = body.find("?>")?;
    let decl = &body[..end];
    let at = decl.find("encoding")?;
    let rest = &decl[at + "encoding".len()..];
    let eq = rest.find('=')?;
    let after_eq = &rest[eq + 1..];
    let lead = after_eq.len() - after_eq.trim_start().len();
    let quote = after_eq.trim_start().chars().next()?;
    if quote != '"' && quote != '\'' {
        return None;
    }
    let value_start = at + "encoding".len() + eq + 1 + lead + 1;
    let value_len = decl[value_start..].find(quote)?;
    let mut out = String::with_capacity(body.len());
    out.push_str(&body[..value_start]);
    out.push_str(name);
    out.push_str(&body[value_start + value_len..]);
    Some(out)
}

fn ccsid_error(e: sluice_esql_scalar::ScalarError, what: &str) -> RtError {
    let mut r = RtError::from(e);
    r.exception.text = format!("{what}: {}", r.exception.text);
    r
}

/// Bytes of `ccsid` as UTF-8 for a parser. A byte-order mark of UTF-16 picks the byte order;
/// without one, 1200 is big-endian and 1202 little-endian.
pub(crate) fn to_utf8(bytes: Bytes, ccsid: i64, xml: bool) -> R<Bytes> {
    if is_utf8(ccsid) {
        return Ok(bytes);
    }
    let (body, encoding) = match ccsid {
        1200 | 13488 | 17584 | 1202 => {
            if bytes.starts_with(&[0xFF, 0xFE]) {
                (&bytes[2..], codepage::ENCODING_LITTLE_ENDIAN)
            } else if bytes.starts_with(&[0xFE, 0xFF]) {
                (&bytes[2..], codepage::ENCODING_BIG_ENDIAN)
            } else if ccsid == 1202 {
                (&bytes[..], codepage::ENCODING_LITTLE_ENDIAN)
            } else {
                (&bytes[..], codepage::ENCODING_BIG_ENDIAN)
            }
        }
        _ => (&bytes[..], codepage::ENCODING_LITTLE_ENDIAN),
    };
    let text = codepage::decode(body, ccsid, encoding)
        .map_err(|e| ccsid_error(e, &format!("PARSE with CCSID {ccsid}")))?;
    // The document now is UTF-8: a declaration that says otherwise would mislead the parser.
    let text = if xml {
        retag_xml_declaration(&text, "UTF-8").unwrap_or(text)
    } else {
        text
    };
    Ok(Bytes::from(text.into_bytes()))
}

/// UTF-8 from a serialiser as bytes of `ccsid` (an XML declaration names the new encoding).
pub(crate) fn from_utf8(bytes: Vec<u8>, ccsid: i64, xml: bool) -> R<Vec<u8>> {
    if is_utf8(ccsid) {
        return Ok(bytes);
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        RtError::general(format!(
            "ASBITSTREAM with CCSID {ccsid}: the serialised message is not valid UTF-8"
        ))
    })?;
    let text = match (xml, encoding_name(ccsid)) {
        (true, Some(name)) => retag_xml_declaration(&text, name).unwrap_or(text),
        _ => text,
    };
    let encoding = if ccsid == 1202 {
        codepage::ENCODING_LITTLE_ENDIAN
    } else {
        codepage::ENCODING_BIG_ENDIAN
    };
    codepage::encode(&text, ccsid, encoding)
        .map_err(|e| ccsid_error(e, &format!("ASBITSTREAM with CCSID {ccsid}")))
}

impl Exec<'_> {
    fn int_clause(&mut self, frame: &mut Frame, e: Option<&Ex>, what: &str) -> R<Option<i64>> {
        let Some(e) = e else { return Ok(None) };
        match self.scalar(frame, e)? {
            Value::Null => Ok(None),
            Value::Integer(i) => Ok(Some(i)),
            other => {
                match sluice_esql_scalar::cast(&other, sluice_esql_scalar::DataType::Integer) {
                    Ok(Value::Integer(i)) => Ok(Some(i)),
                    _ => Err(RtError::general(format!(
                        "{what} must be an INTEGER, not {}",
                        convert::text(&other)
                    ))),
                }
            }
        }
    }

    /// Evaluate the clauses. ENCODING, SET, TYPE and FORMAT are evaluated (their errors
    /// count) but change nothing in the domains this runtime has.
    pub(crate) fn bitstream_options(
        &mut self,
        frame: &mut Frame,
        o: &BitstreamIr,
    ) -> R<BitstreamOptions> {
        let options = self
            .int_clause(frame, o.options.as_ref(), "OPTIONS")?
            .unwrap_or(0);
        let ccsid = self.int_clause(frame, o.ccsid.as_ref(), "CCSID")?;
        self.int_clause(frame, o.encoding.as_ref(), "ENCODING")?;
        for e in [&o.set, &o.ty, &o.format].into_iter().flatten() {
            self.scalar(frame, e)?;
        }
        Ok(BitstreamOptions { ccsid, options })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retag_replaces_the_declared_encoding_only() {
        let got = retag_xml_declaration(
            "<?xml version=\"1.0\" encoding='UTF-16'?><a encoding=\"x\"/>",
            "UTF-8",
        );
        assert_eq!(
            got.as_deref(),
            Some("<?xml version=\"1.0\" encoding='UTF-8'?><a encoding=\"x\"/>")
        );
        assert_eq!(retag_xml_declaration("<a/>", "UTF-8"), None);
        assert_eq!(
            retag_xml_declaration("<?xml version=\"1.0\"?><a/>", "UTF-8"),
            None
        );
    }

    #[test]
    fn utf16_with_and_without_bom_reads_as_utf8() {
        let be: Vec<u8> = "<a>é</a>"
            .encode_utf16()
            .flat_map(u16::to_be_bytes)
            .collect();
        let le: Vec<u8> = "<a>é</a>"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let mut le_bom = vec![0xFF, 0xFE];
        le_bom.extend_from_slice(&le);
        for (bytes, ccsid) in [(be, 1200), (le.clone(), 1202), (le_bom, 1200)] {
            let got = to_utf8(Bytes::from(bytes), ccsid, true).expect("transcodes");
            assert_eq!(&got[..], "<a>é</a>".as_bytes(), "ccsid {ccsid}");
        }
    }

    #[test]
    fn unknown_ccsid_is_an_error() {
        let e = to_utf8(Bytes::from_static(b"x"), 4242, false).expect_err("unknown");
        assert!(e.exception.text.contains("4242"), "{}", e.exception.text);
        let e = from_utf8(b"x".to_vec(), 4242, false).expect_err("unknown");
        assert!(e.exception.text.contains("4242"), "{}", e.exception.text);
    }
}
