//! CCSID conversions for CAST, through `sluice_codepage` (which lists the CCSIDs and says
//! what happens to a character a page cannot hold), and the hex literal CAST gives bytes
//! without a CCSID.

use crate::error::ScalarError;

pub use sluice_codepage::{DEFAULT_CCSID, ENCODING_BIG_ENDIAN, ENCODING_LITTLE_ENDIAN};

/// Encodes text into bytes of the given CCSID and ENCODING.
pub fn encode(text: &str, ccsid: i64, encoding: i64) -> Result<Vec<u8>, ScalarError> {
    Ok(sluice_codepage::encode(text, ccsid, encoding)?)
}

/// Decodes bytes of the given CCSID and ENCODING into text.
pub fn decode(bytes: &[u8], ccsid: i64, encoding: i64) -> Result<String, ScalarError> {
    Ok(sluice_codepage::decode(bytes, ccsid, encoding)?)
}

/// The ESQL hex literal for bytes: `X'0a1b'`.
pub fn hex_literal(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2 + 3);
    s.push_str("X'");
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s.push('\'');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_codepage::CodepageError;

    #[test]
    fn codepages_round_trip_their_characters() {
        let text = "Grüße, café £5";
        for ccsid in [
            1208, 1200, 1202, 819, 437, 1252, 37, 500, 1140, 1148, 273, 1047,
        ] {
            let bytes = encode(text, ccsid, ENCODING_LITTLE_ENDIAN).unwrap();
            assert_eq!(
                decode(&bytes, ccsid, ENCODING_LITTLE_ENDIAN).unwrap(),
                text,
                "CCSID {ccsid}"
            );
        }
    }

    #[test]
    fn unmappable_character_is_a_codepage_error_with_sqlstate_22021() {
        let e = encode("€", 37, ENCODING_LITTLE_ENDIAN).unwrap_err();
        assert_eq!(
            e,
            ScalarError::Codepage(CodepageError::Unmappable {
                ccsid: 37,
                character: '€',
                offset: 0
            })
        );
        assert_eq!(e.sqlstate(), "22021");
        assert!(decode(&[0xff, 0xfe, 0xfd], 1208, 546).is_err());
    }

    #[test]
    fn unknown_ccsid_keeps_its_message() {
        let e = encode("a", 9999, 546).unwrap_err();
        assert_eq!(e.to_string(), "Code page 9999 is not supported");
        assert_eq!(e.sqlstate(), "22021");
    }

    #[test]
    fn hex_literal_is_lower_case() {
        assert_eq!(hex_literal(&[0x0a, 0x1b]), "X'0a1b'");
    }
}
