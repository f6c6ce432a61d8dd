//! Single-byte code pages: a 256-entry table from byte to character, generated from a
//! reference by `scripts/gen_codepage_tables.py`, and its reverse, built on first use.

use std::sync::OnceLock;

use crate::CodepageError;

#[rustfmt::skip]
mod dos;
#[rustfmt::skip]
mod ebcdic;
#[rustfmt::skip]
mod iso8859;
#[rustfmt::skip]
mod windows;

pub(crate) use dos::*;
pub(crate) use ebcdic::*;
pub(crate) use iso8859::*;
pub(crate) use windows::*;

/// A byte the page leaves undefined. U+FFFF is a noncharacter that no page maps.
pub(crate) const UNDEFINED: char = '\u{FFFF}';

/// One single-byte code page.
pub(crate) struct SingleByteTable {
    pub(crate) ccsid: u16,
    /// Bytes 0x00–0x7F are ASCII, so ASCII text needs no lookup.
    ascii: bool,
    pub(crate) decode: [char; 256],
    /// The reverse of `decode`, built from it on first use so that the two cannot disagree.
    encode: OnceLock<Reverse>,
}

/// Byte for character: direct for U+0000–U+00FF (most of the text of Latin pages), by
/// binary search above.
struct Reverse {
    /// The byte of each character below U+0100, or `NONE`.
    low: [u16; 256],
    /// The characters from U+0100 up with their bytes, sorted by character.
    high: Box<[(char, u8)]>,
}

const NONE: u16 = u16::MAX;

impl SingleByteTable {
    pub(crate) const fn new(ccsid: u16, decode: [char; 256]) -> Self {
        let mut ascii = true;
        let mut b = 0;
        while b < 0x80 {
            if decode[b] as u32 != b as u32 {
                ascii = false;
            }
            b += 1;
        }
        SingleByteTable {
            ccsid,
            ascii,
            decode,
            encode: OnceLock::new(),
        }
    }

    fn reverse(&self) -> &Reverse {
        self.encode.get_or_init(|| {
            let mut low = [NONE; 256];
            let mut high = Vec::new();
            for (b, &c) in (0..=255u8).zip(self.decode.iter()) {
                match usize::try_from(u32::from(c)) {
                    _ if c == UNDEFINED => {}
                    Ok(i) if i < low.len() => low[i] = u16::from(b),
                    _ => high.push((c, b)),
                }
            }
            high.sort_unstable();
            Reverse {
                low,
                high: high.into_boxed_slice(),
            }
        })
    }

    /// The byte for `c`, if the page has one.
    pub(crate) fn byte_for(&self, c: char) -> Option<u8> {
        if self.ascii && c.is_ascii() {
            return Some(c as u8);
        }
        let reverse = self.reverse();
        match reverse.low.get(c as usize) {
            Some(&b) => u8::try_from(b).ok(),
            None => reverse
                .high
                .binary_search_by_key(&c, |&(k, _)| k)
                .ok()
                .and_then(|i| reverse.high.get(i))
                .map(|&(_, b)| b),
        }
    }

    pub(crate) fn decode_into(&self, bytes: &[u8], out: &mut String) -> Result<(), CodepageError> {
        out.reserve(bytes.len());
        for (offset, &b) in bytes.iter().enumerate() {
            let c = self.decode[usize::from(b)];
            if c == UNDEFINED {
                return Err(CodepageError::invalid(self.ccsid, bytes, offset, 1));
            }
            out.push(c);
        }
        Ok(())
    }

    pub(crate) fn encode_into(&self, text: &str, out: &mut Vec<u8>) -> Result<(), CodepageError> {
        out.reserve(text.len());
        for (offset, c) in text.char_indices() {
            let b = self.byte_for(c).ok_or(CodepageError::Unmappable {
                ccsid: self.ccsid,
                character: c,
                offset,
            })?;
            out.push(b);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_flag_is_set_for_ascii_based_pages_only() {
        assert!(CCSID_1252.ascii);
        assert!(CCSID_437.ascii);
        assert!(CCSID_912.ascii);
        assert!(!CCSID_37.ascii);
        assert!(!CCSID_1047.ascii);
    }

    #[test]
    fn encode_table_reverses_every_defined_byte() {
        for b in 0..=255u8 {
            let c = CCSID_916.decode[usize::from(b)];
            if c != UNDEFINED {
                assert_eq!(CCSID_916.byte_for(c), Some(b), "byte {b:#04x}");
            }
        }
        assert_eq!(CCSID_916.byte_for(UNDEFINED), None);
    }
}
