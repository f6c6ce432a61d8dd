//! Message bodies between their CCSID and UTF-8, the form the XMLNSC and JSON parsers read
//! and their serialisers write. MQInput and PARSE … CCSID convert with [`body_to_utf8`];
//! MQOutput and ASBITSTREAM … CCSID with [`body_from_utf8`].

use std::ops::Range;

use bytes::Bytes;

use crate::{CodePage, CodepageError, ENCODING_BIG_ENDIAN, ENCODING_LITTLE_ENDIAN};

/// The CCSIDs whose bodies are UTF-8 already. 0 is "the default" (an MQMD's
/// MQCCSI_Q_MGR, or no CCSID clause), which is UTF-8 here.
pub(crate) fn is_utf8(ccsid: i64) -> bool {
    matches!(ccsid, 0 | 1208 | 1209)
}

fn is_utf16(ccsid: i64) -> bool {
    matches!(ccsid, 1200 | 1202 | 13488 | 17584)
}

/// A text body in CCSID `ccsid` as UTF-8. A UTF-16 byte-order mark picks the byte order
/// (and is dropped); without one, 1202 is little-endian and 1200, 13488 and 17584 are
/// big-endian. For an XML document (`xml`) the declaration's `encoding` is made to say
/// UTF-8, since that is what the parser now reads. A UTF-8 body (CCSID 1208, 1209, or 0,
/// the default) is returned as it is, unchecked.
pub fn body_to_utf8(bytes: Bytes, ccsid: i64, xml: bool) -> Result<Bytes, CodepageError> {
    if is_utf8(ccsid) {
        return Ok(bytes);
    }
    // Big-endian unless the CCSID (1202) or a byte-order mark says otherwise.
    let mut page = CodePage::lookup(ccsid, ENCODING_BIG_ENDIAN)?;
    let mut skip = 0;
    if is_utf16(ccsid) {
        if bytes.starts_with(&[0xFF, 0xFE]) {
            (page, skip) = (page.with_byte_order(true), 2);
        } else if bytes.starts_with(&[0xFE, 0xFF]) {
            (page, skip) = (page.with_byte_order(false), 2);
        }
    }
    let mut text = page
        .decode(bytes.get(skip..).unwrap_or_default())
        .map_err(|e| e.shifted(skip))?;
    if xml && let Some(value) = declared_encoding(&text) {
        text.replace_range(value, "UTF-8");
    }
    Ok(Bytes::from(text.into_bytes()))
}

/// A serialised text body (UTF-8) as bytes of CCSID `ccsid`; UTF-16 CCSIDs other than 1202
/// are written big-endian, without a byte-order mark. For an XML document (`xml`) the
/// declaration's `encoding`, if it has one, is made to name the CCSID's encoding. A body
/// for a UTF-8 CCSID (1208, 1209, or 0, the default) is returned as it is.
pub fn body_from_utf8(bytes: Bytes, ccsid: i64, xml: bool) -> Result<Bytes, CodepageError> {
    if is_utf8(ccsid) {
        return Ok(bytes);
    }
    let encoding = if ccsid == 1202 {
        ENCODING_LITTLE_ENDIAN
    } else {
        ENCODING_BIG_ENDIAN
    };
    let page = CodePage::lookup(ccsid, encoding)?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let len = e.error_len().unwrap_or(bytes.len() - e.valid_up_to());
        CodepageError::invalid(1208, &bytes, e.valid_up_to(), len)
    })?;
    let mut out = Vec::new();
    match declared_encoding(text).filter(|_| xml) {
        // The declaration is replaced while encoding, so that an error's offset is the
        // one in the body given.
        Some(value) => {
            page.encode_into(text.get(..value.start).unwrap_or_default(), &mut out)?;
            page.encode_into(page.name(), &mut out)?;
            page.encode_into(text.get(value.end..).unwrap_or_default(), &mut out)
                .map_err(|e| e.shifted(value.end))?;
        }
        None => page.encode_into(text, &mut out)?,
    }
    Ok(Bytes::from(out))
}

/// Where the value of the `encoding` pseudo-attribute of a leading XML declaration lies in
/// `text` (a byte-order mark may come first); `None` without a declaration or without an
/// `encoding` in it.
pub(crate) fn declared_encoding(text: &str) -> Option<Range<usize>> {
    let lead = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let body = text.get(lead..)?;
    if !body.starts_with("<?xml") {
        return None;
    }
    let decl = body.get(..body.find("?>")?)?;
    let name_end = decl.find("encoding")? + "encoding".len();
    let after_name = decl.get(name_end..)?;
    let after_eq = after_name.trim_start().strip_prefix('=')?;
    let value = after_eq.trim_start();
    let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'')?;
    let start = decl.len() - value.len() + quote.len_utf8();
    let len = decl.get(start..)?.find(quote)?;
    Some(lead + start..lead + start + len)
}

impl CodepageError {
    /// The error with its offset moved by `by` bytes, for input converted without its
    /// first `by` bytes.
    fn shifted(self, by: usize) -> Self {
        match self {
            CodepageError::Invalid {
                ccsid,
                offset,
                bytes,
            } => CodepageError::Invalid {
                ccsid,
                offset: offset + by,
                bytes,
            },
            CodepageError::Unmappable {
                ccsid,
                character,
                offset,
            } => CodepageError::Unmappable {
                ccsid,
                character,
                offset: offset + by,
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(text: &str, little_endian: bool) -> Vec<u8> {
        text.encode_utf16()
            .flat_map(|u| {
                if little_endian {
                    u.to_le_bytes()
                } else {
                    u.to_be_bytes()
                }
            })
            .collect()
    }

    #[test]
    fn declared_encoding_finds_the_value_only() {
        let text = "<?xml version=\"1.0\" encoding = 'UTF-16'?><a encoding=\"x\"/>";
        let at = declared_encoding(text).expect("declared");
        assert_eq!(&text[at], "UTF-16");
        assert_eq!(declared_encoding("<a/>"), None);
        assert_eq!(declared_encoding("<?xml version=\"1.0\"?><a/>"), None);
        assert_eq!(declared_encoding("<?xml encoding=UTF-8?>"), None);
        assert_eq!(declared_encoding("<?xml encoding='UTF-8"), None);
    }

    #[test]
    fn declared_encoding_looks_past_a_byte_order_mark() {
        let text = "\u{feff}<?xml version='1.0' encoding='x'?><a/>";
        let at = declared_encoding(text).expect("declared");
        assert_eq!(&text[at], "x");
    }

    #[test]
    fn utf16_with_and_without_bom_reads_as_utf8() {
        let be = utf16("<a>é</a>", false);
        let le = utf16("<a>é</a>", true);
        let mut le_bom = vec![0xFF, 0xFE];
        le_bom.extend_from_slice(&le);
        let mut be_bom = vec![0xFE, 0xFF];
        be_bom.extend_from_slice(&be);
        for (bytes, ccsid) in [(be, 1200), (le, 1202), (le_bom, 1200), (be_bom, 1202)] {
            let got = body_to_utf8(Bytes::from(bytes), ccsid, true).expect("transcodes");
            assert_eq!(&got[..], "<a>é</a>".as_bytes(), "ccsid {ccsid}");
        }
    }

    #[test]
    fn to_utf8_retags_an_xml_declaration_only_for_xml() {
        let doc = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>é</a>";
        let latin1 = Bytes::from(encoding_rs::mem::encode_latin1_lossy(doc).into_owned());
        let xml = body_to_utf8(latin1.clone(), 819, true).expect("xml");
        assert_eq!(
            std::str::from_utf8(&xml).expect("utf-8"),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a>é</a>"
        );
        let json = body_to_utf8(latin1, 819, false).expect("not xml");
        assert_eq!(std::str::from_utf8(&json).expect("utf-8"), doc);
    }

    #[test]
    fn from_utf8_names_the_target_encoding_in_the_declaration() {
        let doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><a>é</a>";
        let ebcdic = body_from_utf8(Bytes::from(doc), 1140, true).expect("1140");
        let back = CodePage::lookup(1140, 785)
            .and_then(|p| p.decode(&ebcdic))
            .expect("decodes");
        assert_eq!(
            back,
            "<?xml version=\"1.0\" encoding=\"IBM01140\"?><a>é</a>"
        );
        let sjis = body_from_utf8(
            Bytes::from("<?xml version='1.0' encoding='UTF-8'?><a/>"),
            943,
            true,
        )
        .expect("943");
        assert_eq!(&sjis[..], b"<?xml version='1.0' encoding='Shift_JIS'?><a/>");
    }

    #[test]
    fn utf8_bodies_pass_through_untouched() {
        let bytes = Bytes::from_static(b"\xFF not even UTF-8");
        for ccsid in [0, 1208, 1209] {
            assert_eq!(
                body_to_utf8(bytes.clone(), ccsid, true).expect("as is"),
                bytes
            );
            assert_eq!(
                body_from_utf8(bytes.clone(), ccsid, true).expect("as is"),
                bytes
            );
        }
    }

    #[test]
    fn unknown_ccsid_is_an_error_both_ways() {
        let unknown = CodepageError::UnknownCcsid { ccsid: 4242 };
        assert_eq!(
            body_to_utf8(Bytes::from_static(b"x"), 4242, false).unwrap_err(),
            unknown
        );
        assert_eq!(
            body_from_utf8(Bytes::from_static(b"x"), 4242, false).unwrap_err(),
            unknown
        );
    }

    #[test]
    fn errors_point_into_the_body_as_given() {
        // A lone high surrogate after "a", behind a little-endian byte-order mark.
        let bytes = Bytes::from_static(&[0xFF, 0xFE, 0x61, 0x00, 0x00, 0xD8]);
        match body_to_utf8(bytes, 1200, false) {
            Err(CodepageError::Invalid { offset, .. }) => assert_eq!(offset, 4),
            other => panic!("unexpected {other:?}"),
        }
        match body_from_utf8(Bytes::from_static(b"ab\xFF"), 819, false) {
            Err(CodepageError::Invalid { ccsid, offset, .. }) => {
                assert_eq!((ccsid, offset), (1208, 2));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn unmappable_offset_counts_in_the_body_given_when_the_declaration_is_renamed() {
        let doc = "<?xml version='1.0' encoding='UTF-8'?><a>€</a>";
        match body_from_utf8(Bytes::from(doc), 923, true) {
            Ok(bytes) => assert_eq!(bytes.len(), doc.len() - 5 + "ISO-8859-15".len() - 2),
            other => panic!("923 has the euro sign: {other:?}"),
        }
        let e = body_from_utf8(Bytes::from(doc), 819, true).expect_err("no euro");
        assert_eq!(
            e,
            CodepageError::Unmappable {
                ccsid: 819,
                character: '€',
                offset: doc.find('€').expect("euro")
            }
        );
    }

    #[test]
    fn unmappable_character_fails_the_conversion() {
        let e = body_from_utf8(Bytes::from("<a>€</a>"), 819, true).expect_err("no euro");
        assert_eq!(
            e,
            CodepageError::Unmappable {
                ccsid: 819,
                character: '€',
                offset: 3
            }
        );
    }
}
