//! Diagnostics: a message at a line and column, with the source line and a caret.

use std::fmt;

use super::span::Span;

/// One problem in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based line of the problem.
    pub line: u32,
    /// 1-based column (in characters) of the problem.
    pub col: u32,
    pub message: String,
    /// The source line followed by a newline and a caret line under the problem.
    pub excerpt_with_caret: String,
    /// Where the problem is, as byte offsets.
    pub span: Span,
}

impl Diagnostic {
    /// A diagnostic for `span` of `src`.
    pub fn new(src: &str, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            line: span.line,
            col: span.col,
            message: message.into(),
            excerpt_with_caret: excerpt(src, span),
            span,
        }
    }

    /// `PATH:LINE:COL: error: MESSAGE`, then the source line and the caret line.
    pub fn render(&self, path: &str) -> String {
        let mut out = format!("{path}:{}:{}: error: {}", self.line, self.col, self.message);
        if !self.excerpt_with_caret.is_empty() {
            out.push('\n');
            out.push_str(&self.excerpt_with_caret);
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: error: {}", self.line, self.col, self.message)
    }
}

/// The line holding `span.start`, and a caret line marking the span on that line. Tabs
/// before the caret are kept so that the caret lines up in a terminal.
fn excerpt(src: &str, span: Span) -> String {
    let start = span.start.min(src.len());
    let start = floor_char_boundary(src, start);
    let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = src[start..].find('\n').map_or(src.len(), |i| start + i);
    // Very long lines (generated or minified code) are cut to a window around the caret.
    let (line_start, line_end) = if line_end - line_start > 240 {
        (
            floor_char_boundary(src, start.saturating_sub(80).max(line_start)),
            floor_char_boundary(src, (start + 160).min(line_end)),
        )
    } else {
        (line_start, line_end)
    };
    let line = src[line_start..line_end].trim_end_matches('\r');
    let prefix: String = src[line_start..start]
        .chars()
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let span_end = floor_char_boundary(src, span.end.clamp(start, line_end.max(start)));
    let width = src[start..span_end].chars().count().max(1);
    format!("{line}\n{prefix}{}", "^".repeat(width))
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_shows_line_and_caret_under_the_span() {
        let src = "SET a = 1;\n\tSET b = ?;\n";
        let span = Span {
            start: 20,
            end: 21,
            line: 2,
            col: 10,
        };
        let d = Diagnostic::new(src, span, "unexpected character `?`");
        assert_eq!(
            d.render("f.esql"),
            "f.esql:2:10: error: unexpected character `?`\n\tSET b = ?;\n\t        ^"
        );
    }

    #[test]
    fn excerpt_survives_span_at_end_of_input() {
        let src = "SET a = ";
        let span = Span {
            start: 8,
            end: 8,
            line: 1,
            col: 9,
        };
        let d = Diagnostic::new(src, span, "x");
        assert_eq!(d.excerpt_with_caret, "SET a = \n        ^");
    }
}
