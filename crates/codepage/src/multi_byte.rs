//! Multi-byte pages (Japanese, Chinese, Korean) through `encoding_rs`, whose tables are the
//! WHATWG Encoding Standard's: no table here is written by hand.

use encoding_rs::{DecoderResult, EncoderResult, Encoding};

use crate::CodepageError;

pub(crate) fn decode_into(
    ccsid: u16,
    encoding: &'static Encoding,
    bytes: &[u8],
    out: &mut String,
) -> Result<(), CodepageError> {
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut read = 0;
    loop {
        let rest = bytes.get(read..).unwrap_or_default();
        let room = decoder
            .max_utf8_buffer_length_without_replacement(rest.len())
            .unwrap_or(rest.len());
        out.reserve(room);
        let (result, n) = decoder.decode_to_string_without_replacement(rest, out, true);
        read += n;
        match result {
            DecoderResult::InputEmpty => return Ok(()),
            DecoderResult::OutputFull => {}
            DecoderResult::Malformed(bad, after) => {
                let len = usize::from(bad);
                let offset = read.saturating_sub(usize::from(after) + len);
                return Err(CodepageError::invalid(ccsid, bytes, offset, len));
            }
        }
    }
}

pub(crate) fn encode_into(
    ccsid: u16,
    encoding: &'static Encoding,
    text: &str,
    out: &mut Vec<u8>,
) -> Result<(), CodepageError> {
    let start = out.len();
    let mut encoder = encoding.new_encoder();
    let mut read = 0;
    loop {
        let rest = text.get(read..).unwrap_or_default();
        let room = encoder
            .max_buffer_length_from_utf8_without_replacement(rest.len())
            .unwrap_or(rest.len());
        out.reserve(room);
        let (result, n) = encoder.encode_from_utf8_to_vec_without_replacement(rest, out, true);
        read += n;
        match result {
            EncoderResult::InputEmpty => break,
            EncoderResult::OutputFull => {}
            EncoderResult::Unmappable(character) => {
                return Err(CodepageError::Unmappable {
                    ccsid,
                    character,
                    offset: read.saturating_sub(character.len_utf8()),
                });
            }
        }
    }
    if ccsid == 970 {
        check_strict_euc_kr(text, out.get(start..).unwrap_or_default())?;
    }
    Ok(())
}

/// CCSID 970 is EUC-KR proper (KS X 1001, both bytes 0xA1–0xFE); `encoding_rs`'s EUC-KR is
/// Windows-949, whose extra Hangul syllables use trail bytes below 0xA1. Text with one of
/// those cannot be written in 970. The encoder writes one byte per ASCII character and two
/// for any other, so walking the output in step with the text finds the character.
fn check_strict_euc_kr(text: &str, encoded: &[u8]) -> Result<(), CodepageError> {
    let mut at = 0;
    for (offset, character) in text.char_indices() {
        if character.is_ascii() {
            at += 1;
            continue;
        }
        let lead = encoded.get(at).copied().unwrap_or(0);
        let trail = encoded.get(at + 1).copied().unwrap_or(0);
        if lead < 0xA1 || trail < 0xA1 {
            return Err(CodepageError::Unmappable {
                ccsid: 970,
                character,
                offset,
            });
        }
        at += 2;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_sequence_is_reported_at_its_offset() {
        // "A", then a Shift-JIS lead byte followed by a byte that cannot trail it.
        let bytes = [0x41, 0x82, 0x20, 0x42];
        let mut out = String::new();
        let e = decode_into(943, encoding_rs::SHIFT_JIS, &bytes, &mut out).expect_err("bad");
        match e {
            CodepageError::Invalid { ccsid, offset, .. } => {
                assert_eq!((ccsid, offset), (943, 1));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn truncated_sequence_at_the_end_is_invalid() {
        let mut out = String::new();
        let e = decode_into(950, encoding_rs::BIG5, &[0x41, 0xA4], &mut out).expect_err("cut");
        assert_eq!(e, CodepageError::invalid(950, &[0x41, 0xA4], 1, 1));
    }

    #[test]
    fn unmappable_character_is_reported_with_its_offset() {
        let mut out = Vec::new();
        let e = encode_into(954, encoding_rs::EUC_JP, "日本語€", &mut out).expect_err("euro");
        assert_eq!(
            e,
            CodepageError::Unmappable {
                ccsid: 954,
                character: '€',
                offset: 9
            }
        );
    }

    #[test]
    fn strict_euc_kr_rejects_a_windows_949_only_syllable() {
        // U+B620 is not in KS X 1001; Windows-949 gives it a trail byte below 0xA1.
        let mut uhc = Vec::new();
        encode_into(1363, encoding_rs::EUC_KR, "가\u{B620}", &mut uhc).expect("949 has it");
        assert!(uhc[2] < 0xA1 || uhc[3] < 0xA1, "{uhc:02X?}");
        let mut euc = Vec::new();
        let e = encode_into(970, encoding_rs::EUC_KR, "가\u{B620}", &mut euc).expect_err("970");
        assert_eq!(
            e,
            CodepageError::Unmappable {
                ccsid: 970,
                character: '\u{B620}',
                offset: 3
            }
        );
        let mut ok = Vec::new();
        encode_into(970, encoding_rs::EUC_KR, "a가b", &mut ok).expect("in KS X 1001");
        assert_eq!(ok, [0x61, 0xB0, 0xA1, 0x62]);
    }
}
