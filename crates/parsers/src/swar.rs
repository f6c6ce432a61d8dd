//! Byte classes of eight bytes at once in a `u64` ("SIMD within a register"): text runs in
//! messages are mostly a few words long, too short for a vector search to pay for its set-up,
//! and a byte-at-a-time loop pays a compare and a branch per byte.
//!
//! Each function answers 0x80 in the bytes of `w` that are in the class and 0 in the others.
//! The answers are exact: every addition stays within its byte, so no carry or borrow marks a
//! neighbour, and the lowest marked byte is the first in memory order (`from_le_bytes`).

pub(crate) const LANES: u64 = 0x0101_0101_0101_0101;
pub(crate) const HIGH: u64 = 0x8080_8080_8080_8080;

/// The eight bytes at `i`, when there are eight.
#[inline(always)]
pub(crate) fn word_at(buf: &[u8], i: usize) -> Option<u64> {
    buf.get(i..)
        .and_then(<[u8]>::first_chunk::<8>)
        .map(|c| u64::from_le_bytes(*c))
}

/// Bytes equal to `b`.
#[inline(always)]
pub(crate) fn equal(w: u64, b: u8) -> u64 {
    let x = w ^ (LANES * u64::from(b));
    !(((x & !HIGH) + !HIGH) | x) & HIGH
}

/// Bytes below 0x20 (control characters).
#[inline(always)]
pub(crate) fn control(w: u64) -> u64 {
    !((w & !HIGH) + LANES * 0x60) & !w & HIGH
}

/// Bytes 0x7F (DEL).
#[inline(always)]
pub(crate) fn del(w: u64) -> u64 {
    ((w & !HIGH) + LANES) & !w & HIGH
}

/// Bytes of 0x80 and above (parts of multi-byte UTF-8 characters).
#[inline(always)]
pub(crate) fn non_ascii(w: u64) -> u64 {
    w & HIGH
}

/// The index of the first marked byte of a class answer, if any.
#[inline(always)]
pub(crate) fn first(mask: u64) -> Option<usize> {
    (mask != 0).then(|| (mask.trailing_zeros() / 8) as usize)
}

/// The marks of the bytes before the first byte marked in `stop` (all bits when none is).
#[inline(always)]
pub(crate) fn before_first(stop: u64) -> u64 {
    (stop & stop.wrapping_neg()).wrapping_sub(1)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn marks(w: u64, f: impl Fn(u8) -> bool) -> u64 {
        w.to_le_bytes()
            .iter()
            .enumerate()
            .filter(|(_, b)| f(**b))
            .map(|(i, _)| 0x80u64 << (8 * i))
            .sum()
    }

    #[test]
    fn classes_are_exact_at_their_edges() {
        for b in 0..=255u8 {
            for fill in [0u8, 0x1f, 0x20, 0x7f, 0x80, 0xff, b'<'] {
                let mut bytes = [fill; 8];
                bytes[3] = b;
                let w = u64::from_le_bytes(bytes);
                assert_eq!(equal(w, b'<'), marks(w, |c| c == b'<'), "{b:#x} {fill:#x}");
                assert_eq!(control(w), marks(w, |c| c < 0x20), "{b:#x} {fill:#x}");
                assert_eq!(del(w), marks(w, |c| c == 0x7f), "{b:#x} {fill:#x}");
                assert_eq!(non_ascii(w), marks(w, |c| c >= 0x80), "{b:#x} {fill:#x}");
            }
        }
    }

    #[test]
    fn before_first_marks_the_lower_bytes() {
        assert_eq!(before_first(0), u64::MAX);
        assert_eq!(before_first(0x80), 0x7f);
        assert_eq!(before_first(0x8000_0000_0080_0000), 0x7f_ffff);
        assert_eq!(first(0x8000_0000_0080_0000), Some(2));
        assert_eq!(first(0), None);
    }

    proptest! {
        #[test]
        fn classes_agree_with_byte_tests(w in any::<u64>(), b in any::<u8>()) {
            prop_assert_eq!(equal(w, b), marks(w, |c| c == b));
            prop_assert_eq!(control(w), marks(w, |c| c < 0x20));
            prop_assert_eq!(del(w), marks(w, |c| c == 0x7f));
        }
    }
}
