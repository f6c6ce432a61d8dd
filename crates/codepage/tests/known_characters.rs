//! Every page checked against characters whose bytes are known from the code page charts,
//! independently of the reference the tables were generated from.

use sluice_codepage::{CodePage, CodepageError, decode, encode};

fn page(ccsid: i64) -> CodePage {
    CodePage::lookup(ccsid, 785).unwrap_or_else(|e| panic!("CCSID {ccsid}: {e}"))
}

fn assert_byte(ccsid: i64, byte: u8, expected: char) {
    let text = page(ccsid)
        .decode(&[byte])
        .unwrap_or_else(|e| panic!("CCSID {ccsid} byte {byte:#04X}: {e}"));
    assert_eq!(
        text,
        expected.to_string(),
        "CCSID {ccsid} byte {byte:#04X} decodes"
    );
    let bytes = page(ccsid)
        .encode(&text)
        .unwrap_or_else(|e| panic!("CCSID {ccsid} {expected:?}: {e}"));
    assert_eq!(bytes, [byte], "CCSID {ccsid} {expected:?} encodes");
}

const EBCDIC: [i64; 24] = [
    37, 273, 277, 278, 280, 284, 285, 297, 500, 870, 871, 1025, 1026, 1047, 1140, 1141, 1142, 1143,
    1144, 1145, 1146, 1147, 1148, 1149,
];

#[test]
fn ebcdic_pages_share_letters_digits_space_and_controls() {
    for ccsid in EBCDIC {
        for (byte, c) in [
            (0xC1, 'A'),
            (0xC9, 'I'),
            (0xD1, 'J'),
            (0xE2, 'S'),
            (0xE9, 'Z'),
            (0xF0, '0'),
            (0xF9, '9'),
            (0x40, ' '),
            (0x4B, '.'),
            (0x25, '\n'),
            (0x15, '\u{85}'),
            (0x0D, '\r'),
            (0x05, '\t'),
        ] {
            assert_byte(ccsid, byte, c);
        }
    }
}

#[test]
fn ebcdic_national_variants_sit_where_the_charts_put_them() {
    for (ccsid, byte, c) in [
        (37, 0x5B, '$'),
        (37, 0x7B, '#'),
        (37, 0x7C, '@'),
        (37, 0x4A, '¢'),
        (37, 0xBA, '['),
        (273, 0x4A, 'Ä'),
        (273, 0x5A, 'Ü'),
        (273, 0x7C, '§'),
        (273, 0xA1, 'ß'),
        (277, 0x5B, 'Å'),
        (277, 0x7B, 'Æ'),
        (277, 0x7C, 'Ø'),
        (278, 0x5B, 'Å'),
        (278, 0x7B, 'Ä'),
        (278, 0x7C, 'Ö'),
        (280, 0x7B, '£'),
        (280, 0x5A, 'é'),
        (284, 0x7B, 'Ñ'),
        (284, 0x4A, '['),
        (285, 0x5B, '£'),
        (285, 0x4A, '$'),
        (297, 0x7B, '£'),
        (297, 0x7C, 'à'),
        (297, 0xC0, 'é'),
        (500, 0x4A, '['),
        (500, 0x5A, ']'),
        (500, 0x4F, '!'),
        (871, 0x4A, 'Þ'),
        (871, 0x7C, 'Ð'),
        (1047, 0xAD, '['),
        (1047, 0xBD, ']'),
        (1047, 0x5F, '^'),
        (1025, 0xAD, 'у'),
        (1026, 0x5B, 'İ'),
        (1026, 0x7B, 'Ö'),
        (1026, 0x4A, 'Ç'),
        (870, 0x4A, '['),
    ] {
        assert_byte(ccsid, byte, c);
    }
}

#[test]
fn euro_pages_put_the_euro_sign_in_place_of_the_currency_sign() {
    for (euro, base, byte) in [
        (1140, 37, 0x9F),
        (1141, 273, 0x9F),
        (1142, 277, 0x5A),
        (1143, 278, 0x5A),
        (1144, 280, 0x9F),
        (1145, 284, 0x9F),
        (1146, 285, 0x9F),
        (1147, 297, 0x9F),
        (1148, 500, 0x9F),
        (1149, 871, 0x9F),
    ] {
        assert_byte(euro, byte, '€');
        assert_byte(base, byte, '¤');
        assert!(page(base).encode("€").is_err(), "CCSID {base} has no euro");
        assert!(page(euro).encode("¤").is_err(), "CCSID {euro} has no ¤");
        let all: Vec<u8> = (0..=255).collect();
        let (a, b) = (page(euro).decode(&all), page(base).decode(&all));
        let differ = a
            .expect("euro page")
            .chars()
            .zip(b.expect("base page").chars())
            .filter(|(x, y)| x != y)
            .count();
        assert_eq!(differ, 1, "CCSID {euro} is {base} but for the euro sign");
    }
}

#[test]
fn iso8859_pages_hold_their_scripts() {
    for (ccsid, byte, c) in [
        (819, 0xE9, 'é'),
        (819, 0xA4, '¤'),
        (912, 0xA3, 'Ł'),
        (913, 0xA6, 'Ĥ'),
        (914, 0xA2, 'ĸ'),
        (915, 0xB0, 'А'),
        (813, 0xC1, 'Α'),
        (916, 0xE0, 'א'),
        (920, 0xDD, 'İ'),
        (923, 0xA4, '€'),
        (923, 0xE9, 'é'),
        (367, 0x41, 'A'),
    ] {
        assert_byte(ccsid, byte, c);
    }
}

#[test]
fn windows_and_dos_pages_hold_their_scripts() {
    for (ccsid, byte, c) in [
        (1250, 0x8A, 'Š'),
        (1251, 0xC0, 'А'),
        (1252, 0x80, '€'),
        (1252, 0x99, '™'),
        (1253, 0xC1, 'Α'),
        (1254, 0xD0, 'Ğ'),
        (1255, 0xE0, 'א'),
        (1256, 0xC7, 'ا'),
        (1257, 0xC0, 'Ą'),
        (1258, 0x80, '€'),
        (5348, 0x80, '€'),
        (437, 0x82, 'é'),
        (437, 0xB0, '░'),
        (850, 0xD5, 'ı'),
        (858, 0xD5, '€'),
        (852, 0xA5, 'ą'),
        (855, 0x80, 'ђ'),
        (857, 0x8D, 'ı'),
        (862, 0x80, 'א'),
        (866, 0x80, 'А'),
    ] {
        assert_byte(ccsid, byte, c);
    }
}

#[test]
fn multi_byte_pages_encode_known_sequences() {
    for (ccsid, text, bytes) in [
        (943, "日本", &[0x93, 0xFA, 0x96, 0x7B][..]),
        (932, "ｱ", &[0xB1]),
        (954, "日本", &[0xC6, 0xFC, 0xCB, 0xDC]),
        (5050, "ｱ", &[0x8E, 0xB1]),
        (33722, "A", &[0x41]),
        (1386, "中文", &[0xD6, 0xD0, 0xCE, 0xC4]),
        (1381, "中", &[0xD6, 0xD0]),
        (5488, "😀", &[0x94, 0x39, 0xFC, 0x36]),
        (1392, "中", &[0xD6, 0xD0]),
        (950, "中文", &[0xA4, 0xA4, 0xA4, 0xE5]),
        (970, "한", &[0xC7, 0xD1]),
        (1363, "한", &[0xC7, 0xD1]),
    ] {
        assert_eq!(
            encode(text, ccsid, 546).expect("encodes"),
            bytes,
            "CCSID {ccsid}"
        );
        assert_eq!(
            decode(bytes, ccsid, 546).expect("decodes"),
            text,
            "CCSID {ccsid}"
        );
    }
}

#[test]
fn shift_jis_reads_0x5c_as_backslash_and_writes_the_yen_sign_there() {
    assert_eq!(decode(b"\\", 943, 546).expect("decodes"), "\\");
    assert_eq!(encode("¥", 943, 546).expect("fallback"), b"\\");
}

#[test]
fn unicode_pages_encode_known_sequences() {
    assert_eq!(encode("é€", 1208, 546).expect("utf-8"), "é€".as_bytes());
    assert_eq!(encode("é", 1200, 785).expect("be"), [0x00, 0xE9]);
    assert_eq!(encode("é", 1200, 546).expect("le"), [0xE9, 0x00]);
    assert_eq!(encode("é", 1202, 785).expect("le"), [0xE9, 0x00]);
    assert_eq!(encode("é", 17584, 785).expect("be"), [0x00, 0xE9]);
    assert_eq!(
        decode(&[0xD8, 0x3D, 0xDE, 0x00], 1200, 785).expect("be"),
        "😀"
    );
}

#[test]
fn names_are_what_an_xml_declaration_says() {
    for (ccsid, name) in [
        (37, "IBM037"),
        (1047, "IBM1047"),
        (1140, "IBM01140"),
        (819, "ISO-8859-1"),
        (923, "ISO-8859-15"),
        (1252, "windows-1252"),
        (437, "IBM437"),
        (943, "Shift_JIS"),
        (5488, "GB18030"),
        (1208, "UTF-8"),
        (1202, "UTF-16LE"),
    ] {
        assert_eq!(page(ccsid).name(), name, "CCSID {ccsid}");
    }
}

#[test]
fn unknown_ccsid_is_reported_with_its_number() {
    assert_eq!(
        encode("a", 9999, 546).unwrap_err(),
        CodepageError::UnknownCcsid { ccsid: 9999 }
    );
    assert_eq!(
        encode("a", 9999, 546).unwrap_err().to_string(),
        "Code page 9999 is not supported"
    );
}
