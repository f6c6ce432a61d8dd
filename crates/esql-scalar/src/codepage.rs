//! Conversions between CHARACTER and bytes for the CCSIDs a CAST may name.
//!
//! Supported: 1208 (UTF-8), 1200 and 13488 (UTF-16 / UCS-2, byte order from the
//! ENCODING), 1202 (UTF-16 little-endian), 819 (ISO-8859-1), 367 (US-ASCII),
//! 437 (IBM PC), 1252 (Windows Latin-1), and the EBCDIC Latin-1 pages 37 and 500
//! with their euro variants 1140 and 1148.

use crate::error::ScalarError;

/// The ENCODING value for little-endian integers (Windows, Linux on x86).
pub const ENCODING_LITTLE_ENDIAN: i64 = 546;
/// The ENCODING value for big-endian integers (z/OS, AIX).
pub const ENCODING_BIG_ENDIAN: i64 = 785;

/// The CCSID used when a CAST names none.
pub const DEFAULT_CCSID: i64 = 1208;

/// IBM PC code page 437, bytes 0x80–0xFF.
const CP437_HIGH: &str = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐\
└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{a0}";

/// Windows-1252 bytes 0x80–0x9F (the rest is ISO-8859-1). The five bytes 1252 leaves
/// undefined (81, 8D, 8F, 90, 9D) stand for the C1 controls of the same number, as Windows
/// and the web's decoders take them, so every byte string survives a decode and encode.
const CP1252_C1: &str = "€\u{81}‚ƒ„…†‡ˆ‰Š‹Œ\u{8d}Ž\u{8f}\u{90}‘’“”•–—˜™š›œ\u{9d}žŸ";

/// EBCDIC code page 37 to ISO-8859-1, indexed by the EBCDIC byte.
const CP037_TO_LATIN1: [u8; 256] = [
    0x00, 0x01, 0x02, 0x03, 0x9C, 0x09, 0x86, 0x7F, 0x97, 0x8D, 0x8E, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,
    0x10, 0x11, 0x12, 0x13, 0x9D, 0x85, 0x08, 0x87, 0x18, 0x19, 0x92, 0x8F, 0x1C, 0x1D, 0x1E, 0x1F,
    0x80, 0x81, 0x82, 0x83, 0x84, 0x0A, 0x17, 0x1B, 0x88, 0x89, 0x8A, 0x8B, 0x8C, 0x05, 0x06, 0x07,
    0x90, 0x91, 0x16, 0x93, 0x94, 0x95, 0x96, 0x04, 0x98, 0x99, 0x9A, 0x9B, 0x14, 0x15, 0x9E, 0x1A,
    0x20, 0xA0, 0xE2, 0xE4, 0xE0, 0xE1, 0xE3, 0xE5, 0xE7, 0xF1, 0xA2, 0x2E, 0x3C, 0x28, 0x2B, 0x7C,
    0x26, 0xE9, 0xEA, 0xEB, 0xE8, 0xED, 0xEE, 0xEF, 0xEC, 0xDF, 0x21, 0x24, 0x2A, 0x29, 0x3B, 0xAC,
    0x2D, 0x2F, 0xC2, 0xC4, 0xC0, 0xC1, 0xC3, 0xC5, 0xC7, 0xD1, 0xA6, 0x2C, 0x25, 0x5F, 0x3E, 0x3F,
    0xF8, 0xC9, 0xCA, 0xCB, 0xC8, 0xCD, 0xCE, 0xCF, 0xCC, 0x60, 0x3A, 0x23, 0x40, 0x27, 0x3D, 0x22,
    0xD8, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0xAB, 0xBB, 0xF0, 0xFD, 0xFE, 0xB1,
    0xB0, 0x6A, 0x6B, 0x6C, 0x6D, 0x6E, 0x6F, 0x70, 0x71, 0x72, 0xAA, 0xBA, 0xE6, 0xB8, 0xC6, 0xA4,
    0xB5, 0x7E, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0xA1, 0xBF, 0xD0, 0xDD, 0xDE, 0xAE,
    0x5E, 0xA3, 0xA5, 0xB7, 0xA9, 0xA7, 0xB6, 0xBC, 0xBD, 0xBE, 0x5B, 0x5D, 0xAF, 0xA8, 0xB4, 0xD7,
    0x7B, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0xAD, 0xF4, 0xF6, 0xF2, 0xF3, 0xF5,
    0x7D, 0x4A, 0x4B, 0x4C, 0x4D, 0x4E, 0x4F, 0x50, 0x51, 0x52, 0xB9, 0xFB, 0xFC, 0xF9, 0xFA, 0xFF,
    0x5C, 0xF7, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0xB2, 0xD4, 0xD6, 0xD2, 0xD3, 0xD5,
    0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0xB3, 0xDB, 0xDC, 0xD9, 0xDA, 0x9F,
];

#[derive(Clone, Copy)]
enum Codec {
    Utf8,
    Utf16 {
        little_endian: bool,
    },
    Latin1,
    Ascii,
    Cp437,
    Cp1252,
    Ebcdic {
        /// CCSID 500 (international) rather than 37 (US).
        international: bool,
        /// 1140 / 1148: the euro sign replaces the currency sign at 0x9F.
        euro: bool,
    },
}

/// The bytes where EBCDIC 500 differs from 37, with the Latin-1 code it holds.
const CP500_CHANGES: [(u8, u8); 7] = [
    (0x4A, b'['),
    (0x4F, b'!'),
    (0x5A, b']'),
    (0x5F, b'^'),
    (0xB0, 0xA2),
    (0xBA, 0xAC),
    (0xBB, b'|'),
];

fn ebcdic_char(byte: u8, international: bool, euro: bool) -> char {
    if euro && byte == 0x9F {
        return '€';
    }
    if international && let Some((_, latin)) = CP500_CHANGES.iter().find(|(b, _)| *b == byte) {
        return char::from(*latin);
    }
    char::from(CP037_TO_LATIN1[usize::from(byte)])
}

fn codec(ccsid: i64, encoding: i64) -> Result<Codec, ScalarError> {
    Ok(match ccsid {
        1208 | 1209 => Codec::Utf8,
        1200 | 13488 | 17584 => Codec::Utf16 {
            // ENCODING 546 (and other values with the low nibble 2) is little-endian.
            little_endian: encoding & 0x0F == 2,
        },
        1202 => Codec::Utf16 {
            little_endian: true,
        },
        819 | 923 => Codec::Latin1,
        367 => Codec::Ascii,
        437 => Codec::Cp437,
        1252 | 5348 => Codec::Cp1252,
        37 => Codec::Ebcdic {
            international: false,
            euro: false,
        },
        1140 => Codec::Ebcdic {
            international: false,
            euro: true,
        },
        500 => Codec::Ebcdic {
            international: true,
            euro: false,
        },
        1148 => Codec::Ebcdic {
            international: true,
            euro: true,
        },
        other => return Err(ScalarError::UnsupportedCcsid(other)),
    })
}

fn unmappable(c: char, ccsid: i64) -> ScalarError {
    ScalarError::cast_because(
        c.to_string(),
        "BLOB",
        format!("the character cannot be represented in CCSID {ccsid}"),
    )
}

/// Encodes text into bytes of the given CCSID and ENCODING.
pub fn encode(text: &str, ccsid: i64, encoding: i64) -> Result<Vec<u8>, ScalarError> {
    let single = |map: &dyn Fn(char) -> Option<u8>| -> Result<Vec<u8>, ScalarError> {
        text.chars()
            .map(|c| map(c).ok_or_else(|| unmappable(c, ccsid)))
            .collect()
    };
    match codec(ccsid, encoding)? {
        Codec::Utf8 => Ok(text.as_bytes().to_vec()),
        Codec::Utf16 { little_endian } => Ok(text
            .encode_utf16()
            .flat_map(|u| {
                if little_endian {
                    u.to_le_bytes()
                } else {
                    u.to_be_bytes()
                }
            })
            .collect()),
        Codec::Latin1 => single(&|c| u8::try_from(u32::from(c)).ok()),
        Codec::Ascii => single(&|c| if c.is_ascii() { Some(c as u8) } else { None }),
        Codec::Cp437 => single(&|c| {
            if c.is_ascii() {
                return Some(c as u8);
            }
            CP437_HIGH
                .chars()
                .position(|h| h == c)
                .map(|i| 0x80 + i as u8)
        }),
        Codec::Cp1252 => single(&|c| {
            let code = u32::from(c);
            if code < 0x80 || (0xA0..=0xFF).contains(&code) {
                return Some(code as u8);
            }
            CP1252_C1
                .chars()
                .position(|h| h == c && h != '\u{fffd}')
                .map(|i| 0x80 + i as u8)
        }),
        Codec::Ebcdic {
            international,
            euro,
        } => single(&|c| (0..=255u8).find(|&b| ebcdic_char(b, international, euro) == c)),
    }
}

/// Decodes bytes of the given CCSID and ENCODING into text.
pub fn decode(bytes: &[u8], ccsid: i64, encoding: i64) -> Result<String, ScalarError> {
    let bad = |why: &str| {
        ScalarError::cast_because(
            hex_literal(bytes),
            "CHARACTER",
            format!("{why} for CCSID {ccsid}"),
        )
    };
    match codec(ccsid, encoding)? {
        Codec::Utf8 => String::from_utf8(bytes.to_vec()).map_err(|_| bad("invalid UTF-8")),
        Codec::Utf16 { little_endian } => {
            if !bytes.len().is_multiple_of(2) {
                return Err(bad("odd byte count"));
            }
            let units: Vec<u16> = bytes
                .chunks(2)
                .map(|p| {
                    let pair = [p[0], p[1]];
                    if little_endian {
                        u16::from_le_bytes(pair)
                    } else {
                        u16::from_be_bytes(pair)
                    }
                })
                .collect();
            String::from_utf16(&units).map_err(|_| bad("invalid UTF-16"))
        }
        Codec::Latin1 => Ok(bytes.iter().map(|&b| char::from(b)).collect()),
        Codec::Ascii => bytes
            .iter()
            .map(|&b| {
                if b.is_ascii() {
                    Ok(char::from(b))
                } else {
                    Err(bad("a byte above 0x7F"))
                }
            })
            .collect(),
        Codec::Cp437 => Ok(bytes
            .iter()
            .map(|&b| {
                if b < 0x80 {
                    char::from(b)
                } else {
                    CP437_HIGH
                        .chars()
                        .nth(usize::from(b - 0x80))
                        .unwrap_or('\u{fffd}')
                }
            })
            .collect()),
        Codec::Cp1252 => Ok(bytes
            .iter()
            .map(|&b| {
                if (0x80..0xA0).contains(&b) {
                    CP1252_C1
                        .chars()
                        .nth(usize::from(b - 0x80))
                        .unwrap_or('\u{fffd}')
                } else {
                    char::from(b)
                }
            })
            .collect()),
        Codec::Ebcdic {
            international,
            euro,
        } => Ok(bytes
            .iter()
            .map(|&b| ebcdic_char(b, international, euro))
            .collect()),
    }
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

    #[test]
    fn codepages_round_trip_their_characters() {
        let text = "Grüße, café £5";
        for ccsid in [1208, 1200, 1202, 819, 437, 1252, 37, 500, 1140, 1148] {
            let bytes = encode(text, ccsid, ENCODING_LITTLE_ENDIAN).unwrap();
            assert_eq!(
                decode(&bytes, ccsid, ENCODING_LITTLE_ENDIAN).unwrap(),
                text,
                "CCSID {ccsid}"
            );
        }
    }

    #[test]
    fn every_byte_of_the_single_byte_pages_survives_a_decode_and_encode() {
        let all: Vec<u8> = (0..=255).collect();
        for ccsid in [819, 437, 1252, 37, 500, 1140, 1148] {
            let text = decode(&all, ccsid, ENCODING_LITTLE_ENDIAN).unwrap();
            assert_eq!(
                encode(&text, ccsid, ENCODING_LITTLE_ENDIAN).unwrap(),
                all,
                "CCSID {ccsid}"
            );
        }
    }

    #[test]
    fn codepages_encode_known_bytes() {
        assert_eq!(
            encode("A", 1200, ENCODING_BIG_ENDIAN).unwrap(),
            vec![0x00, 0x41]
        );
        assert_eq!(
            encode("A", 1200, ENCODING_LITTLE_ENDIAN).unwrap(),
            vec![0x41, 0x00]
        );
        assert_eq!(encode("é", 819, 546).unwrap(), vec![0xE9]);
        assert_eq!(encode("é", 437, 546).unwrap(), vec![0x82]);
        assert_eq!(encode("A1 ", 37, 546).unwrap(), vec![0xC1, 0xF1, 0x40]);
        assert_eq!(encode("€", 1252, 546).unwrap(), vec![0x80]);
        assert_eq!(encode("[!]", 37, 546).unwrap(), vec![0xBA, 0x5A, 0xBB]);
        assert_eq!(encode("[!]", 500, 546).unwrap(), vec![0x4A, 0x4F, 0x5A]);
        assert_eq!(encode("€", 1140, 546).unwrap(), vec![0x9F]);
        assert!(encode("€", 37, 546).is_err());
    }

    #[test]
    fn codepages_report_failures() {
        assert!(encode("€", 819, 546).is_err());
        assert!(encode("é", 367, 546).is_err());
        assert!(decode(&[0xff, 0xfe, 0xfd], 1208, 546).is_err());
        assert!(decode(&[0x00], 1200, 546).is_err());
        assert!(matches!(
            encode("a", 9999, 546),
            Err(ScalarError::UnsupportedCcsid(9999))
        ));
    }

    #[test]
    fn hex_literal_is_lower_case() {
        assert_eq!(hex_literal(&[0x0a, 0x1b]), "X'0a1b'");
    }
}
