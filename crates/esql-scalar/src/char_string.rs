//! The text of a CHARACTER value.
//!
//! Most text a flow computes is short: a code, a quantity, a FLOAT as the product prints it, a
//! few initials. Such text is held in place, so that computing it costs no heap allocation;
//! longer text is shared behind a reference count, so that copying a value never copies it.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

/// How many bytes of UTF-8 are held in place: the most that keeps a [`CharString`] no larger
/// than the BLOB handle beside it in [`crate::Value`], so that values do not grow.
pub const INLINE_BYTES: usize = 30;

/// CHARACTER text: held in place up to [`INLINE_BYTES`] bytes, shared beyond.
#[derive(Clone)]
pub struct CharString(Repr);

#[derive(Clone)]
enum Repr {
    /// `bytes[..len]` is UTF-8: it is only ever written from whole `&str`s.
    Inline {
        len: u8,
        bytes: [u8; INLINE_BYTES],
    },
    Shared(Arc<str>),
}

impl CharString {
    /// The empty string.
    pub const EMPTY: CharString = CharString(Repr::Inline {
        len: 0,
        bytes: [0; INLINE_BYTES],
    });

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline { len, bytes } => {
                let b = &bytes[..usize::from(*len)];
                // SAFETY: inline bytes are copied from whole `&str`s only (see `Repr::Inline`),
                // so `b` is valid UTF-8.
                unsafe { std::str::from_utf8_unchecked(b) }
            }
            Repr::Shared(s) => s,
        }
    }

    /// `a` followed by `b`.
    pub fn concat(a: &str, b: &str) -> CharString {
        let mut w = CharWriter::new();
        w.push_str(a);
        w.push_str(b);
        w.finish()
    }

    /// Whether the text is held in place (no heap allocation behind it).
    pub fn is_inline(&self) -> bool {
        matches!(self.0, Repr::Inline { .. })
    }
}

impl Default for CharString {
    fn default() -> Self {
        CharString::EMPTY
    }
}

impl From<&str> for CharString {
    fn from(s: &str) -> CharString {
        if s.len() <= INLINE_BYTES {
            let mut bytes = [0; INLINE_BYTES];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            CharString(Repr::Inline {
                len: s.len() as u8,
                bytes,
            })
        } else {
            CharString(Repr::Shared(Arc::from(s)))
        }
    }
}

impl From<String> for CharString {
    fn from(s: String) -> CharString {
        if s.len() <= INLINE_BYTES {
            CharString::from(s.as_str())
        } else {
            CharString(Repr::Shared(Arc::from(s)))
        }
    }
}

impl From<Arc<str>> for CharString {
    fn from(s: Arc<str>) -> CharString {
        CharString(Repr::Shared(s))
    }
}

impl Deref for CharString {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for CharString {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for CharString {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for CharString {
    fn eq(&self, other: &CharString) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for CharString {}

impl PartialEq<str> for CharString {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for CharString {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialOrd for CharString {
    fn partial_cmp(&self, other: &CharString) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CharString {
    fn cmp(&self, other: &CharString) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for CharString {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Debug for CharString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for CharString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Builds a [`CharString`] piece by piece (concatenation, formatting), in place while the text
/// fits and on the heap only once it does not.
pub struct CharWriter {
    len: usize,
    inline: [u8; INLINE_BYTES],
    spilled: String,
}

impl CharWriter {
    pub fn new() -> CharWriter {
        CharWriter {
            len: 0,
            inline: [0; INLINE_BYTES],
            spilled: String::new(),
        }
    }

    pub fn push_str(&mut self, s: &str) {
        if self.spilled.is_empty() {
            let end = self.len + s.len();
            if end <= INLINE_BYTES {
                self.inline[self.len..end].copy_from_slice(s.as_bytes());
                self.len = end;
                return;
            }
            // The prefix is whole `&str`s, so it is UTF-8.
            let prefix = std::str::from_utf8(&self.inline[..self.len]).unwrap_or_default();
            self.spilled.reserve(end.max(2 * INLINE_BYTES));
            self.spilled.push_str(prefix);
        }
        self.spilled.push_str(s);
    }

    pub fn push(&mut self, c: char) {
        self.push_str(c.encode_utf8(&mut [0; 4]));
    }

    pub fn finish(self) -> CharString {
        if self.spilled.is_empty() {
            CharString(Repr::Inline {
                len: self.len as u8,
                bytes: self.inline,
            })
        } else {
            CharString(Repr::Shared(Arc::from(self.spilled)))
        }
    }
}

impl Default for CharWriter {
    fn default() -> Self {
        CharWriter::new()
    }
}

impl fmt::Write for CharWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_string_is_no_larger_than_a_blob_handle() {
        assert!(std::mem::size_of::<CharString>() <= std::mem::size_of::<bytes::Bytes>());
    }

    #[test]
    fn short_text_stays_inline_and_long_text_is_shared() {
        let short = CharString::from("4.8E-1");
        assert!(short.is_inline());
        assert_eq!(short, "4.8E-1");
        let long = CharString::from("x".repeat(INLINE_BYTES + 1));
        assert!(!long.is_inline());
        assert_eq!(long.len(), INLINE_BYTES + 1);
        assert_eq!(
            CharString::from("é".repeat(15).as_str()).chars().count(),
            15
        );
    }

    #[test]
    fn writer_spills_to_the_heap_only_past_the_inline_size() {
        let mut w = CharWriter::new();
        for _ in 0..INLINE_BYTES {
            w.push('a');
        }
        let s = w.finish();
        assert!(s.is_inline());
        assert_eq!(s.len(), INLINE_BYTES);
        let mut w = CharWriter::new();
        w.push_str("abc");
        w.push_str(&"é".repeat(20));
        w.push('!');
        let s = w.finish();
        assert!(!s.is_inline());
        assert_eq!(s.as_str(), format!("abc{}!", "é".repeat(20)));
        assert_eq!(CharString::concat("ab", "cd"), "abcd");
    }
}
