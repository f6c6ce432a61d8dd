//! Source positions carried by every token and AST node.

/// A region of source text: byte offsets `start..end`, and the 1-based line and column
/// (in characters) of `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub line: u32,
    pub col: u32,
}

impl Span {
    /// The span from the start of `self` to the end of `other`.
    pub fn to(self, other: Span) -> Span {
        if other.end >= self.end {
            Span {
                end: other.end,
                ..self
            }
        } else {
            self
        }
    }
}
