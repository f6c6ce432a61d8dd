//! The pages that need no table: UTF-8, UTF-16 in either byte order, ISO-8859-1 and
//! US-ASCII. These are the hot ones (every XML and JSON body passes through one of them), so
//! they avoid per-character work where they can.

use crate::CodepageError;

pub(crate) fn decode_utf8_into(
    ccsid: u16,
    bytes: &[u8],
    out: &mut String,
) -> Result<(), CodepageError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            out.push_str(text);
            Ok(())
        }
        Err(e) => Err(CodepageError::invalid(
            ccsid,
            bytes,
            e.valid_up_to(),
            e.error_len().unwrap_or(bytes.len() - e.valid_up_to()),
        )),
    }
}

/// Valid UTF-8 becomes the `String` without a copy.
pub(crate) fn decode_utf8_vec(ccsid: u16, bytes: Vec<u8>) -> Result<String, CodepageError> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let u = e.utf8_error();
        CodepageError::invalid(
            ccsid,
            bytes,
            u.valid_up_to(),
            u.error_len().unwrap_or(bytes.len() - u.valid_up_to()),
        )
    })
}

pub(crate) fn decode_utf16_into(
    ccsid: u16,
    little_endian: bool,
    bytes: &[u8],
    out: &mut String,
) -> Result<(), CodepageError> {
    let pairs = bytes.chunks_exact(2);
    let odd = pairs.remainder().len();
    let units = pairs.map(|p| {
        let pair = [p[0], p[1]];
        if little_endian {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        }
    });
    out.reserve(bytes.len() / 2);
    let mut offset = 0;
    for c in char::decode_utf16(units) {
        match c {
            Ok(c) => {
                out.push(c);
                offset += c.len_utf16() * 2;
            }
            Err(_) => return Err(CodepageError::invalid(ccsid, bytes, offset, 2)),
        }
    }
    if odd != 0 {
        return Err(CodepageError::invalid(ccsid, bytes, bytes.len() - 1, 1));
    }
    Ok(())
}

pub(crate) fn encode_utf16_into(little_endian: bool, text: &str, out: &mut Vec<u8>) {
    out.reserve(text.len() * 2);
    for unit in text.encode_utf16() {
        out.extend_from_slice(&if little_endian {
            unit.to_le_bytes()
        } else {
            unit.to_be_bytes()
        });
    }
}

pub(crate) fn decode_latin1_into(bytes: &[u8], out: &mut String) {
    out.push_str(&encoding_rs::mem::decode_latin1(bytes));
}

pub(crate) fn encode_latin1_into(
    ccsid: u16,
    text: &str,
    out: &mut Vec<u8>,
) -> Result<(), CodepageError> {
    let fits = encoding_rs::mem::utf8_latin1_up_to(text.as_bytes());
    if let Some(character) = text.get(fits..).and_then(|rest| rest.chars().next()) {
        return Err(CodepageError::Unmappable {
            ccsid,
            character,
            offset: fits,
        });
    }
    out.extend_from_slice(&encoding_rs::mem::encode_latin1_lossy(text));
    Ok(())
}

pub(crate) fn decode_ascii_into(
    ccsid: u16,
    bytes: &[u8],
    out: &mut String,
) -> Result<(), CodepageError> {
    let ascii = encoding_rs::Encoding::ascii_valid_up_to(bytes);
    match bytes.get(..ascii).map(std::str::from_utf8) {
        Some(Ok(text)) if ascii == bytes.len() => {
            out.push_str(text);
            Ok(())
        }
        _ => Err(CodepageError::invalid(ccsid, bytes, ascii, 1)),
    }
}

pub(crate) fn encode_ascii_into(
    ccsid: u16,
    text: &str,
    out: &mut Vec<u8>,
) -> Result<(), CodepageError> {
    let ascii = encoding_rs::Encoding::ascii_valid_up_to(text.as_bytes());
    if let Some(character) = text.get(ascii..).and_then(|rest| rest.chars().next()) {
        return Err(CodepageError::Unmappable {
            ccsid,
            character,
            offset: ascii,
        });
    }
    out.extend_from_slice(text.as_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_error_points_at_the_first_bad_byte() {
        let mut out = String::new();
        let e = decode_utf8_into(1208, b"ab\xFFc", &mut out).expect_err("invalid");
        assert_eq!(e, CodepageError::invalid(1208, b"ab\xFFc", 2, 1));
    }

    #[test]
    fn utf8_error_covers_a_sequence_cut_off_at_the_end() {
        let e = decode_utf8_vec(1208, b"a\xE2\x82".to_vec()).expect_err("truncated");
        assert_eq!(
            e,
            CodepageError::Invalid {
                ccsid: 1208,
                offset: 1,
                bytes: vec![0xE2, 0x82]
            }
        );
    }

    #[test]
    fn utf16_reports_an_unpaired_surrogate_at_its_offset() {
        // "a" then a lone high surrogate then "b", big-endian.
        let bytes = [0x00, 0x61, 0xD8, 0x00, 0x00, 0x62];
        let mut out = String::new();
        let e = decode_utf16_into(1200, false, &bytes, &mut out).expect_err("lone surrogate");
        assert_eq!(e, CodepageError::invalid(1200, &bytes, 2, 2));
    }

    #[test]
    fn utf16_reports_an_odd_trailing_byte() {
        let mut out = String::new();
        let e = decode_utf16_into(1202, true, &[0x61, 0x00, 0x62], &mut out).expect_err("odd");
        assert_eq!(e, CodepageError::invalid(1202, &[0x61, 0x00, 0x62], 2, 1));
    }

    #[test]
    fn utf16_decodes_a_supplementary_character() {
        let mut bytes = Vec::new();
        encode_utf16_into(true, "a😀", &mut bytes);
        assert_eq!(bytes, [0x61, 0x00, 0x3D, 0xD8, 0x00, 0xDE]);
        let mut out = String::new();
        decode_utf16_into(1202, true, &bytes, &mut out).expect("valid");
        assert_eq!(out, "a😀");
    }

    #[test]
    fn latin1_rejects_the_first_character_above_u00ff() {
        let mut out = Vec::new();
        let e = encode_latin1_into(819, "é€x", &mut out).expect_err("euro");
        assert_eq!(
            e,
            CodepageError::Unmappable {
                ccsid: 819,
                character: '€',
                offset: 2
            }
        );
    }

    #[test]
    fn ascii_rejects_a_byte_above_7f_at_its_offset() {
        let mut out = String::new();
        let e = decode_ascii_into(367, b"abc\xE9", &mut out).expect_err("high byte");
        assert_eq!(e, CodepageError::invalid(367, b"abc\xE9", 3, 1));
        let mut bytes = Vec::new();
        let e = encode_ascii_into(367, "café", &mut bytes).expect_err("é");
        assert_eq!(
            e,
            CodepageError::Unmappable {
                ccsid: 367,
                character: 'é',
                offset: 3
            }
        );
    }
}
