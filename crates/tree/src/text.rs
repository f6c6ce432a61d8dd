//! Strings held by a tree without owning a heap allocation each.
//!
//! A [`Text`] is a small `Copy` handle: either a slice of one of the byte buffers the message arrived
//! in, or a slice of the tree's own byte heap (for strings made while the flow runs), or a static
//! string. Copying a tree therefore copies handles, never string data one by one.

/// A string owned by a [`crate::Tree`]: resolve it with [`crate::Tree::text`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Text {
    /// The empty string.
    #[default]
    Empty,
    /// `len` bytes at `start` in source buffer `buf` of the tree.
    Src { buf: u32, start: u32, len: u32 },
    /// `len` bytes at `start` in the tree's heap.
    Heap { start: u32, len: u32 },
    /// A string known when the program was built (names such as `Properties`).
    Static(&'static str),
}

impl Text {
    /// Whether this is the empty string (without resolving it).
    pub fn is_empty(&self) -> bool {
        match *self {
            Text::Empty => true,
            Text::Src { len, .. } | Text::Heap { len, .. } => len == 0,
            Text::Static(s) => s.is_empty(),
        }
    }
}
