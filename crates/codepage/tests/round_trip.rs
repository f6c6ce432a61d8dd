//! Round trips per code page, and the rule for what does not map: it fails, naming the
//! CCSID, the character or bytes, and the offset.

use proptest::prelude::*;
use sluice_codepage::{CodePage, CodepageError, supported_ccsids};

const SINGLE_BYTE: &[i64] = &[
    37, 273, 277, 278, 280, 284, 285, 297, 367, 437, 500, 813, 819, 850, 852, 855, 857, 858, 862,
    866, 870, 871, 912, 913, 914, 915, 916, 920, 923, 1025, 1026, 1047, 1140, 1141, 1142, 1143,
    1144, 1145, 1146, 1147, 1148, 1149, 1250, 1251, 1252, 1253, 1254, 1255, 1256, 1257, 1258, 5346,
    5347, 5348, 5349, 5350, 5351, 5352, 5353, 5354,
];
const UNICODE: &[i64] = &[1200, 1202, 1208, 1209, 13488, 17584];

/// Each multi-byte page with text from its repertoire: the scripts it is for, plus ASCII.
const MULTI_BYTE: &[(i64, &str)] = &[
    (932, "日本語のテキスト、カタカナとｶﾀｶﾅ。漢字：東京都"),
    (943, "日本語のテキスト、カタカナとｶﾀｶﾅ。①②Ⅰ㈱"),
    (954, "日本語のテキスト、カタカナとｶﾀｶﾅ。漢字：大阪府"),
    (5050, "日本語のテキスト、ひらがな。全角ＡＢＣ"),
    (33722, "日本語のテキスト、ひらがな。全角１２３"),
    (1381, "中文简体字：北京市，上海。"),
    (1386, "中文简体字：北京市，上海。繁體字也有"),
    (1392, "中文简体字、繁體字、𠀀😀ꀀ"),
    (5488, "中文简体字、繁體字、𠀀😀ꀀ"),
    (950, "繁體中文字：臺北市，高雄。"),
    (970, "한국어 텍스트：서울특별시。漢字"),
    (1363, "한국어 텍스트：서울특별시。똠똡"),
];

/// Pages whose decoder accepts more than their encoder writes: Shift-JIS's user-defined
/// area, Big5-HKSCS, JIS X 0212 in EUC-JP, GB18030's four-byte sequences in GBK,
/// Windows-949 in EUC-KR.
const READS_MORE_THAN_IT_WRITES: &[i64] = &[932, 943, 950, 954, 5050, 33722, 1381, 1386, 970];

fn page(ccsid: i64) -> CodePage {
    CodePage::lookup(ccsid, 785).unwrap_or_else(|e| panic!("CCSID {ccsid}: {e}"))
}

/// The bytes that decode in a single-byte page, and the characters they decode to.
fn repertoire(ccsid: i64) -> (Vec<u8>, Vec<char>) {
    let p = page(ccsid);
    (0..=255u8)
        .filter_map(|b| {
            let text = p.decode(&[b]).ok()?;
            let mut chars = text.chars();
            let c = chars.next()?;
            assert!(chars.next().is_none(), "CCSID {ccsid} byte {b:#04X}");
            Some((b, c))
        })
        .unzip()
}

#[test]
fn every_supported_ccsid_is_tested_here() {
    let tested: Vec<i64> = SINGLE_BYTE
        .iter()
        .chain(UNICODE)
        .copied()
        .chain(MULTI_BYTE.iter().map(|(c, _)| *c))
        .collect();
    for ccsid in supported_ccsids() {
        assert!(tested.contains(&i64::from(ccsid)), "CCSID {ccsid}");
    }
}

#[test]
fn single_byte_pages_round_trip_every_byte_they_define() {
    for &ccsid in SINGLE_BYTE {
        let (bytes, chars) = repertoire(ccsid);
        let text = page(ccsid).decode(&bytes).expect("defined bytes decode");
        assert_eq!(text.chars().collect::<Vec<_>>(), chars);
        assert_eq!(
            page(ccsid).encode(&text).expect("encodes"),
            bytes,
            "CCSID {ccsid}"
        );
    }
}

#[test]
fn pages_that_define_every_byte_are_the_expected_ones() {
    let partial: Vec<i64> = SINGLE_BYTE
        .iter()
        .copied()
        .filter(|&c| repertoire(c).0.len() != 256)
        .collect();
    // US-ASCII, ISO-8859-7/-3/-8, DOS Turkish, and Windows Greek, Hebrew and Baltic (and
    // their euro-era CCSIDs) above 0x9F.
    assert_eq!(
        partial,
        [367, 813, 857, 913, 916, 1253, 1255, 1257, 5349, 5351, 5353]
    );
}

#[test]
fn windows_undefined_bytes_below_0xa0_are_c1_controls() {
    for (ccsid, byte) in [
        (1252, 0x81),
        (1252, 0x8D),
        (1252, 0x8F),
        (1252, 0x90),
        (1252, 0x9D),
    ]
    .into_iter()
    .chain([
        (1250, 0x81),
        (1253, 0x9F),
        (1255, 0x8A),
        (1257, 0x9F),
        (1258, 0x8E),
    ]) {
        let text = page(ccsid).decode(&[byte]).expect("C1 control");
        assert_eq!(text, char::from(byte).to_string(), "CCSID {ccsid}");
    }
}

#[test]
fn undefined_bytes_above_0x9f_fail_to_decode_at_their_offset() {
    for (ccsid, byte) in [
        (916, 0xA1),
        (913, 0xA5),
        (813, 0xFF),
        (857, 0xD5),
        (1253, 0xAA),
        (1255, 0xD9),
        (1257, 0xA1),
    ] {
        let e = page(ccsid)
            .decode(&[0x41, 0x42, byte])
            .expect_err("undefined");
        assert_eq!(
            e,
            CodepageError::Invalid {
                ccsid: u16::try_from(ccsid).expect("small"),
                offset: 2,
                bytes: vec![byte]
            },
            "CCSID {ccsid}"
        );
    }
}

#[test]
fn unmappable_characters_fail_instead_of_being_substituted() {
    for (ccsid, text, character, offset) in [
        (37, "AB€", '€', 2),
        (1047, "x\u{2013}", '\u{2013}', 1),
        (1140, "€¤", '¤', 3),
        (819, "Ā", 'Ā', 0),
        (367, "naïve", 'ï', 2),
        (1252, "ok Ж", 'Ж', 3),
        (866, "Жé", 'é', 2),
        (943, "日本€", '€', 6),
        (1386, "中😀", '😀', 3),
        (950, "中😀", '😀', 3),
        (970, "한똠", '똠', 3),
    ] {
        let e = page(ccsid).encode(text).expect_err("unmappable");
        assert_eq!(
            e,
            CodepageError::Unmappable {
                ccsid: u16::try_from(ccsid).expect("small"),
                character,
                offset
            },
            "CCSID {ccsid}"
        );
    }
}

#[test]
fn malformed_multi_byte_input_fails_to_decode() {
    for (ccsid, bytes, offset) in [
        (1208, &[0x41, 0xC3, 0x28][..], 1),
        (943, &[0x41, 0x81], 1),
        (954, &[0x41, 0xA4], 1),
        (5488, &[0x41, 0x81, 0x30], 1),
        (950, &[0x41, 0x42, 0xA4], 2),
        (1200, &[0x00, 0x41, 0xDC, 0x00], 2),
    ] {
        match page(ccsid).decode(bytes) {
            Err(CodepageError::Invalid { offset: at, .. }) => {
                assert_eq!(at, offset, "CCSID {ccsid}");
            }
            other => panic!("CCSID {ccsid}: {other:?}"),
        }
    }
}

fn text_from(chars: Vec<char>) -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(chars), 0..48)
        .prop_map(|cs| cs.into_iter().collect())
}

proptest! {
    #[test]
    fn single_byte_defined_bytes_survive_decode_then_encode(
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..64),
        which in any::<prop::sample::Index>(),
    ) {
        let ccsid = *which.get(SINGLE_BYTE);
        let (defined, _) = repertoire(ccsid);
        let bytes: Vec<u8> = picks.iter().map(|i| *i.get(&defined)).collect();
        let text = page(ccsid).decode(&bytes).expect("defined bytes");
        prop_assert_eq!(page(ccsid).encode(&text).expect("encodes"), bytes, "CCSID {}", ccsid);
    }

    #[test]
    fn single_byte_repertoire_survives_encode_then_decode(
        which in any::<prop::sample::Index>(),
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..64),
    ) {
        let ccsid = *which.get(SINGLE_BYTE);
        let (_, chars) = repertoire(ccsid);
        let text: String = picks.iter().map(|i| *i.get(&chars)).collect();
        let bytes = page(ccsid).encode(&text).expect("repertoire encodes");
        prop_assert_eq!(bytes.len(), text.chars().count());
        prop_assert_eq!(page(ccsid).decode(&bytes).expect("decodes"), text, "CCSID {}", ccsid);
    }

    #[test]
    fn latin1_and_1252_decode_any_bytes_and_encode_them_back(bytes in any::<Vec<u8>>()) {
        for ccsid in [819, 1252, 37, 500, 1047, 437] {
            let text = page(ccsid).decode(&bytes).expect("every byte defined");
            prop_assert_eq!(&page(ccsid).encode(&text).expect("encodes"), &bytes);
        }
    }

    #[test]
    fn unicode_pages_round_trip_any_text(text in any::<String>(), encoding in prop_oneof![Just(546i64), Just(785i64)]) {
        for &ccsid in UNICODE {
            let p = CodePage::lookup(ccsid, encoding).expect("unicode page");
            let bytes = p.encode(&text).expect("unicode encodes everything");
            prop_assert_eq!(p.decode(&bytes).expect("decodes"), text.clone(), "CCSID {}", ccsid);
        }
    }

    #[test]
    fn gb18030_round_trips_any_text(text in any::<String>()) {
        for ccsid in [1392, 5488] {
            let bytes = page(ccsid).encode(&text).expect("GB18030 encodes everything");
            prop_assert_eq!(page(ccsid).decode(&bytes).expect("decodes"), text.clone());
        }
    }

    #[test]
    fn multi_byte_repertoire_samples_round_trip(
        which in any::<prop::sample::Index>(),
        text in text_from(MULTI_BYTE.iter().flat_map(|(_, s)| s.chars()).chain("ABC xyz 0123<>/&".chars()).collect()),
    ) {
        let (ccsid, sample) = *which.get(MULTI_BYTE);
        // Only the characters of this page's sample (and ASCII) are in its repertoire.
        let text: String = text.chars().filter(|c| c.is_ascii() || sample.contains(*c)).collect();
        let bytes = page(ccsid).encode(&text).expect("sample encodes");
        prop_assert_eq!(page(ccsid).decode(&bytes).expect("decodes"), text, "CCSID {}", ccsid);
    }

    #[test]
    fn decoding_never_panics_and_valid_output_reencodes(bytes in any::<Vec<u8>>()) {
        for ccsid in supported_ccsids() {
            let p = page(i64::from(ccsid));
            let decoded = p.decode(&bytes);
            if READS_MORE_THAN_IT_WRITES.contains(&i64::from(ccsid)) {
                continue;
            }
            if let Ok(text) = decoded {
                // The bytes may differ (a page can have two spellings of a character), but
                // what decoded must encode.
                prop_assert!(p.encode(&text).is_ok(), "CCSID {}", ccsid);
            }
        }
    }
}

#[test]
fn multi_byte_samples_round_trip_whole() {
    for &(ccsid, sample) in MULTI_BYTE {
        let bytes = page(ccsid).encode(sample).expect("sample encodes");
        assert_eq!(
            page(ccsid).decode(&bytes).expect("decodes"),
            sample,
            "CCSID {ccsid}"
        );
    }
}
