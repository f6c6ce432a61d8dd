//! Strings held by a tree without owning a heap allocation each.
//!
//! A [`Text`] is a 12-byte `Copy` handle: either a slice of one of the byte buffers the message
//! arrived in, or a slice of the tree's own byte heap (for strings made while the flow runs), or a
//! static string. Copying a tree therefore copies handles, never string data one by one, and an
//! element carrying a name and a value stays small enough for a cache line.

/// A string owned by a [`crate::Tree`]: resolve it with [`crate::Tree::text`].
///
/// Equality compares handles, not the bytes they stand for.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Text {
    /// The kind in the top two bits; below them the buffer index (source text) or the length
    /// (static text).
    head: u32,
    /// Start (source and heap text) or the low half of the address (static text).
    b: u32,
    /// Length (source and heap text) or the high half of the address (static text).
    c: u32,
}

const KIND_SHIFT: u32 = 30;
const LOW: u32 = (1 << KIND_SHIFT) - 1;
const SRC: u32 = 1 << KIND_SHIFT;
const HEAP: u32 = 2 << KIND_SHIFT;
const STATIC: u32 = 3 << KIND_SHIFT;

/// What a [`Text`] handle refers to, for code that resolves or re-homes handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextRef {
    /// The empty string.
    Empty,
    /// `len` bytes at `start` in source buffer `buf` of the tree.
    Src { buf: u32, start: u32, len: u32 },
    /// `len` bytes at `start` in the tree's heap.
    Heap { start: u32, len: u32 },
    /// A string known when the program was built (names such as `Properties`).
    Static(&'static str),
}

impl Text {
    /// The empty string.
    pub const EMPTY: Text = Text {
        head: 0,
        b: 0,
        c: 0,
    };

    /// `len` bytes at `start` of the tree's source buffer `buf` (fewer than 2³⁰ buffers).
    #[inline]
    pub const fn src(buf: u32, start: u32, len: u32) -> Text {
        Text {
            head: SRC | (buf & LOW),
            b: start,
            c: len,
        }
    }

    /// [`Text::src`], or [`Text::EMPTY`] when `len` is 0, chosen without a branch: a handle
    /// picked by a branch is merged through memory, and the wide load that then copies it
    /// into an element waits for the narrow stores that wrote it.
    #[inline(always)]
    pub const fn src_or_empty(buf: u32, start: u32, len: u32) -> Text {
        let keep = 0u32.wrapping_sub((len != 0) as u32);
        Text {
            head: (SRC | (buf & LOW)) & keep,
            b: start & keep,
            c: len,
        }
    }

    /// `len` bytes at `start` of the tree's heap.
    #[inline]
    pub(crate) const fn heap(start: u32, len: u32) -> Text {
        Text {
            head: HEAP,
            b: start,
            c: len,
        }
    }

    /// A string that lives as long as the program.
    #[inline]
    pub fn from_static(s: &'static str) -> Text {
        if s.len() > LOW as usize {
            // No name or constant is a gigabyte long; refuse rather than truncate.
            return Text::EMPTY;
        }
        let addr = s.as_ptr().expose_provenance() as u64;
        Text {
            head: STATIC | s.len() as u32,
            b: addr as u32,
            c: (addr >> 32) as u32,
        }
    }

    /// What this handle refers to.
    #[inline]
    pub fn get(self) -> TextRef {
        match self.head & !LOW {
            SRC => TextRef::Src {
                buf: self.head & LOW,
                start: self.b,
                len: self.c,
            },
            HEAP => TextRef::Heap {
                start: self.b,
                len: self.c,
            },
            STATIC => TextRef::Static(self.static_str()),
            _ => TextRef::Empty,
        }
    }

    #[inline]
    fn static_str(self) -> &'static str {
        let addr = (u64::from(self.c) << 32 | u64::from(self.b)) as usize;
        let ptr = std::ptr::with_exposed_provenance::<u8>(addr);
        let len = (self.head & LOW) as usize;
        // SAFETY: `head` says STATIC only for handles made by `from_static`, whose `b` and `c`
        // hold the address (with exposed provenance) and `head` the length of a `&'static str`;
        // fields are private, so no other code can forge such a handle.
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len)) }
    }

    /// The handle's three words, for storing it packed beside other data.
    #[inline]
    pub(crate) const fn to_raw(self) -> [u32; 3] {
        [self.head, self.b, self.c]
    }

    /// A handle from [`Text::to_raw`]'s words.
    #[inline]
    pub(crate) const fn from_raw(w: [u32; 3]) -> Text {
        Text {
            head: w[0],
            b: w[1],
            c: w[2],
        }
    }

    /// The source buffer and range of a source text.
    #[inline]
    pub fn as_src(self) -> Option<(u32, u32, u32)> {
        (self.head & !LOW == SRC).then_some((self.head & LOW, self.b, self.c))
    }

    /// Whether the handle is a slice of the tree's heap.
    #[inline]
    pub fn is_heap(self) -> bool {
        self.head & !LOW == HEAP
    }

    /// Whether this is the empty string (without resolving it).
    #[inline]
    pub fn is_empty(&self) -> bool {
        match self.head & !LOW {
            SRC | HEAP => self.c == 0,
            STATIC => self.head & LOW == 0,
            _ => true,
        }
    }
}

/// Whether two byte strings are equal. Names and short values compare here without a library
/// call: overlapping word loads cover every length, where `==` on slices calls `memcmp`, whose
/// call costs more than the comparison of an element name.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
        let mut w = [0u8; N];
        w.copy_from_slice(&s[at..at + N]);
        w
    }
    match n {
        0 => true,
        1 => a[0] == b[0],
        2..=3 => word::<2>(a, 0) == word::<2>(b, 0) && word::<2>(a, n - 2) == word::<2>(b, n - 2),
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        _ => a == b,
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_agrees_with_slice_equality_at_every_length() {
        let base: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for n in 0..40 {
            let a = &base[..n];
            assert!(same_bytes(a, a));
            for i in 0..n {
                let mut b = a.to_vec();
                b[i] ^= 1;
                assert!(!same_bytes(a, &b), "length {n}, byte {i}");
            }
            assert!(!same_bytes(a, &base[..n + 1]));
        }
    }

    #[test]
    fn handles_round_trip_what_they_were_made_from() {
        assert_eq!(std::mem::size_of::<Text>(), 12);
        assert_eq!(Text::EMPTY.get(), TextRef::Empty);
        assert_eq!(
            Text::src(7, 100, 5).get(),
            TextRef::Src {
                buf: 7,
                start: 100,
                len: 5
            }
        );
        assert_eq!(Text::heap(3, 4).get(), TextRef::Heap { start: 3, len: 4 });
        let name = String::from("LocalEnvironment").leak();
        assert_eq!(Text::from_static(name).get(), TextRef::Static(name));
        assert!(Text::from_static("").is_empty());
        assert!(Text::src(1, 9, 0).is_empty());
        assert!(!Text::from_static("x").is_empty());
        assert_eq!(Text::src(2, 9, 0).as_src(), Some((2, 9, 0)));
        assert_eq!(Text::heap(1, 1).as_src(), None);
    }
}
