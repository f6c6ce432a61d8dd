//! The one error type of code page conversion.

use std::fmt;

use thiserror::Error;

/// A conversion that cannot be done. The product raises a recoverable exception in these
/// cases rather than substituting (see the crate documentation), so each carries what a user
/// needs to find the culprit: the CCSID and where in the input it failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CodepageError {
    /// The CCSID names no code page this crate converts (or is not a CCSID at all).
    #[error("Code page {ccsid} is not supported")]
    UnknownCcsid {
        /// The CCSID asked for.
        ccsid: i64,
    },
    /// Encoding text: a character has no byte sequence in the target code page.
    #[error(
        "the character '{}' (U+{:04X}) at byte {offset} of the text cannot be represented in CCSID {ccsid}",
        character.escape_debug(),
        u32::from(*character)
    )]
    Unmappable {
        /// The target code page.
        ccsid: u16,
        /// The character that has no mapping.
        character: char,
        /// Its byte offset in the (UTF-8) text.
        offset: usize,
    },
    /// Decoding bytes: a byte the code page leaves undefined, a malformed multi-byte or
    /// UTF-8 sequence, an unpaired UTF-16 surrogate, or a sequence cut off at the end.
    #[error(
        "the bytes {} at offset {offset} are not valid in CCSID {ccsid}",
        Hex(bytes)
    )]
    Invalid {
        /// The source code page.
        ccsid: u16,
        /// The offset of the first bad byte in the input.
        offset: usize,
        /// The bad bytes (at most four).
        bytes: Vec<u8>,
    },
}

impl CodepageError {
    /// An [`CodepageError::Invalid`] for `input[offset..offset + len]`, keeping at most four bytes.
    pub(crate) fn invalid(ccsid: u16, input: &[u8], offset: usize, len: usize) -> Self {
        let end = offset.saturating_add(len.clamp(1, 4)).min(input.len());
        CodepageError::Invalid {
            ccsid,
            offset,
            bytes: input.get(offset..end).unwrap_or_default().to_vec(),
        }
    }
}

/// Bytes written as `X'c1f0'`, as ESQL and the product's messages show them.
struct Hex<'a>(&'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("X'")?;
        for b in self.0 {
            write!(f, "{b:02X}")?;
        }
        f.write_str("'")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmappable_message_names_character_offset_and_ccsid() {
        let e = CodepageError::Unmappable {
            ccsid: 819,
            character: '€',
            offset: 3,
        };
        assert_eq!(
            e.to_string(),
            "the character '€' (U+20AC) at byte 3 of the text cannot be represented in CCSID 819"
        );
    }

    #[test]
    fn invalid_keeps_at_most_four_bytes_when_the_input_is_long() {
        let e = CodepageError::invalid(1208, &[0x41, 0xFF, 0xFE, 0xFD, 0xFC, 0xFB], 1, 9);
        assert_eq!(
            e.to_string(),
            "the bytes X'FFFEFDFC' at offset 1 are not valid in CCSID 1208"
        );
    }

    #[test]
    fn invalid_clips_to_the_input_when_the_sequence_is_cut_off() {
        let e = CodepageError::invalid(943, &[0x82], 0, 2);
        assert_eq!(
            e,
            CodepageError::Invalid {
                ccsid: 943,
                offset: 0,
                bytes: vec![0x82]
            }
        );
    }
}
