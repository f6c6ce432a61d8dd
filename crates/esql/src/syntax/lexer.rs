//! The ESQL lexer: source text to [`Token`]s with byte offset, line and column.
//!
//! Lexing never stops at the first problem: a bad character or an unterminated literal is
//! recorded as a [`LexError`] and scanning goes on, so that every error in a file can be
//! reported in one pass.

use super::span::Span;
use super::token::{Token, TokenKind};

/// A problem found while lexing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexError {
    pub span: Span,
    pub message: String,
}

/// Splits `src` into tokens, ending with [`TokenKind::Eof`].
pub fn lex(src: &str) -> (Vec<Token>, Vec<LexError>) {
    let mut lexer = Lexer {
        src,
        bytes: src.as_bytes(),
        pos: 0,
        line: 1,
        line_start: 0,
        tokens: Vec::new(),
        errors: Vec::new(),
        col_cache: (0, 1),
    };
    lexer.run();
    (lexer.tokens, lexer.errors)
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
    tokens: Vec<Token>,
    errors: Vec<LexError>,
    /// A byte offset on the current line and its column.
    col_cache: (usize, u32),
}

/// Where a token starts, captured before scanning it.
#[derive(Clone, Copy)]
struct Mark {
    pos: usize,
    line: u32,
    col: u32,
}

impl<'a> Lexer<'a> {
    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn mark(&mut self) -> Mark {
        // Columns count characters; continue from the last mark on the same line so that
        // a very long line costs linear, not quadratic, time.
        if self.col_cache.0 < self.line_start || self.col_cache.0 > self.pos {
            self.col_cache = (self.line_start, 1);
        }
        let (from, col_at) = self.col_cache;
        let col = col_at + self.src[from..self.pos].chars().count() as u32;
        self.col_cache = (self.pos, col);
        Mark {
            pos: self.pos,
            line: self.line,
            col,
        }
    }

    fn span_from(&self, m: Mark) -> Span {
        Span {
            start: m.pos,
            end: self.pos,
            line: m.line,
            col: m.col,
        }
    }

    /// Advances one byte, keeping line bookkeeping.
    fn bump(&mut self) {
        if self.peek(0) == b'\n' {
            self.line += 1;
            self.line_start = self.pos + 1;
        }
        self.pos += 1;
    }

    /// Advances over one whole UTF-8 character.
    fn bump_char(&mut self) {
        let len = self.src[self.pos..]
            .chars()
            .next()
            .map_or(1, char::len_utf8);
        for _ in 0..len {
            self.bump();
        }
    }

    fn push(&mut self, kind: TokenKind, m: Mark) {
        let span = self.span_from(m);
        self.tokens.push(Token { kind, span });
    }

    fn error(&mut self, m: Mark, message: impl Into<String>) {
        let span = self.span_from(m);
        self.errors.push(LexError {
            span,
            message: message.into(),
        });
    }

    fn run(&mut self) {
        loop {
            self.skip_trivia();
            let m = self.mark();
            let c = self.peek(0);
            if self.pos >= self.bytes.len() {
                self.push(TokenKind::Eof, m);
                return;
            }
            match c {
                b'\'' => {
                    let s = self.quoted(b'\'', m, "string literal");
                    self.push(TokenKind::Str(s), m);
                }
                b'"' => {
                    let s = self.quoted(b'"', m, "quoted identifier");
                    self.push(TokenKind::QuotedIdent(s), m);
                }
                b'0'..=b'9' => self.number(m),
                b'.' if self.peek(1).is_ascii_digit() && !self.after_name() => self.number(m),
                c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => self.word(m),
                _ => self.operator(m),
            }
        }
    }

    /// True when the previous token ends a name, so that `.5` after it is a path step,
    /// not a number (`a.5` never occurs, but `x[1].5` must not become a decimal).
    fn after_name(&self) -> bool {
        self.tokens.last().is_some_and(|t| {
            t.span.end == self.pos
                && matches!(
                    t.kind,
                    TokenKind::Word(_)
                        | TokenKind::QuotedIdent(_)
                        | TokenKind::RBracket
                        | TokenKind::RParen
                        | TokenKind::RBrace
                )
        })
    }

    fn skip_trivia(&mut self) {
        loop {
            let c = self.peek(0);
            if c == b' ' || c == b'\t' || c == b'\r' || c == b'\n' || c == 0x0c {
                self.bump();
            } else if c == b'-' && self.peek(1) == b'-' {
                while self.pos < self.bytes.len() && self.peek(0) != b'\n' {
                    self.bump();
                }
            } else if c == b'/' && self.peek(1) == b'*' {
                let m = self.mark();
                self.bump();
                self.bump();
                loop {
                    if self.pos >= self.bytes.len() {
                        self.error(m, "unterminated comment: `/*` has no closing `*/`");
                        return;
                    }
                    if self.peek(0) == b'*' && self.peek(1) == b'/' {
                        self.bump();
                        self.bump();
                        break;
                    }
                    self.bump();
                }
            } else if self.pos < self.bytes.len()
                && c >= 0x80
                && self.src[self.pos..].starts_with('\u{feff}')
            {
                // A byte-order mark at the start of files saved by Windows editors.
                self.pos += '\u{feff}'.len_utf8();
            } else {
                return;
            }
        }
    }

    /// Scans a literal delimited by `quote`, where a doubled quote stands for one.
    fn quoted(&mut self, quote: u8, m: Mark, what: &str) -> String {
        self.bump();
        let mut out = String::new();
        // Where the first line of the literal ends, to resume there when the literal is
        // never closed: a forgotten quote should not swallow the rest of the file.
        let mut first_eol: Option<(usize, usize)> = None;
        loop {
            if self.pos >= self.bytes.len() {
                if let Some((pos, len)) = first_eol {
                    self.pos = pos;
                    self.line = m.line;
                    self.line_start = self.src[..m.pos].rfind('\n').map_or(0, |i| i + 1);
                    out.truncate(len);
                }
                self.error(m, format!("unterminated {what}"));
                return out;
            }
            if self.peek(0) == b'\n' && first_eol.is_none() {
                first_eol = Some((self.pos, out.len()));
            }
            if self.peek(0) == quote {
                if self.peek(1) == quote {
                    out.push(quote as char);
                    self.bump();
                    self.bump();
                    continue;
                }
                self.bump();
                return out;
            }
            let start = self.pos;
            self.bump_char();
            out.push_str(&self.src[start..self.pos]);
        }
    }

    fn number(&mut self, m: Mark) {
        // `0xFF00000000`: a hexadecimal INTEGER, up to 64 bits.
        if self.peek(0) == b'0'
            && matches!(self.peek(1), b'x' | b'X')
            && self.peek(2).is_ascii_hexdigit()
        {
            self.bump();
            self.bump();
            while self.peek(0).is_ascii_hexdigit() {
                self.bump();
            }
            let text = self.src[m.pos..self.pos].to_string();
            if text.len() > 18 || self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' {
                while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' {
                    self.bump();
                }
                let text = self.src[m.pos..self.pos].to_string();
                self.error(
                    m,
                    format!("malformed number `{text}`: a hexadecimal INTEGER has up to 16 digits"),
                );
                self.push(TokenKind::Int("0".to_string()), m);
                return;
            }
            self.push(TokenKind::Int(text), m);
            return;
        }
        while self.peek(0).is_ascii_digit() {
            self.bump();
        }
        let mut kind = 0; // 0 int, 1 decimal, 2 float
        if self.peek(0) == b'.' && self.peek(1).is_ascii_digit() {
            kind = 1;
            self.bump();
            while self.peek(0).is_ascii_digit() {
                self.bump();
            }
        } else if self.peek(0) == b'.'
            && !self.peek(1).is_ascii_alphabetic()
            && self.peek(1) != b'_'
        {
            // `1.` is a decimal; `1.e` would be ambiguous with a path and never occurs.
            kind = 1;
            self.bump();
        }
        let e = self.peek(0);
        if e == b'e' || e == b'E' {
            let sign = matches!(self.peek(1), b'+' | b'-');
            let digit_at = if sign { 2 } else { 1 };
            if self.peek(digit_at).is_ascii_digit() {
                kind = 2;
                for _ in 0..digit_at {
                    self.bump();
                }
                while self.peek(0).is_ascii_digit() {
                    self.bump();
                }
            }
        }
        if self.peek(0).is_ascii_alphabetic() || self.peek(0) == b'_' {
            while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' {
                self.bump();
            }
            let text = self.src[m.pos..self.pos].to_string();
            self.error(m, format!("malformed number `{text}`"));
            self.push(TokenKind::Int("0".to_string()), m);
            return;
        }
        let text = self.src[m.pos..self.pos].to_string();
        let kind = match kind {
            0 => TokenKind::Int(text),
            1 => TokenKind::Decimal(text),
            _ => TokenKind::Float(text),
        };
        self.push(kind, m);
    }

    fn word(&mut self, m: Mark) {
        let first = self.peek(0);
        // X'0A1B' and B'0101' are literals, not words.
        if self.peek(1) == b'\'' && matches!(first, b'x' | b'X' | b'b' | b'B') {
            self.bump();
            let body = self.quoted(b'\'', m, "literal");
            if first.eq_ignore_ascii_case(&b'x') {
                if !body.bytes().all(|b| b.is_ascii_hexdigit()) {
                    self.error(m, "hex literal may contain only the digits 0-9 and A-F");
                } else if !body.len().is_multiple_of(2) {
                    self.error(m, "hex literal must have an even number of digits");
                }
                self.push(TokenKind::Hex(body), m);
            } else {
                if !body.bytes().all(|b| b == b'0' || b == b'1') {
                    self.error(m, "bit literal may contain only the digits 0 and 1");
                }
                self.push(TokenKind::Bit(body), m);
            }
            return;
        }
        loop {
            let c = self.peek(0);
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'#' || c == b'@' {
                self.bump();
            } else if c >= 0x80
                && self.src[self.pos..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphanumeric)
            {
                self.bump_char();
            } else {
                break;
            }
        }
        if self.pos == m.pos {
            // A non-alphanumeric non-ASCII character.
            self.bump_char();
            let text = self.src[m.pos..self.pos].to_string();
            self.error(m, format!("unexpected character `{text}`"));
            self.push(TokenKind::Error, m);
            return;
        }
        let text = self.src[m.pos..self.pos].to_string();
        self.push(TokenKind::Word(text), m);
    }

    fn operator(&mut self, m: Mark) {
        let c = self.peek(0);
        let n = self.peek(1);
        let (kind, len) = match (c, n) {
            (b'|', b'|') => (TokenKind::Concat, 2),
            (b'<', b'>') => (TokenKind::Ne, 2),
            (b'<', b'=') => (TokenKind::Le, 2),
            (b'>', b'=') => (TokenKind::Ge, 2),
            (b'*', b':') => (TokenKind::StarColon, 2),
            (b'=', _) => (TokenKind::Eq, 1),
            (b'<', _) => (TokenKind::Lt, 1),
            (b'>', _) => (TokenKind::Gt, 1),
            (b'+', _) => (TokenKind::Plus, 1),
            (b'-', _) => (TokenKind::Minus, 1),
            (b'*', _) => (TokenKind::Star, 1),
            (b'/', _) => (TokenKind::Slash, 1),
            (b'(', _) => (TokenKind::LParen, 1),
            (b')', _) => (TokenKind::RParen, 1),
            (b'[', _) => (TokenKind::LBracket, 1),
            (b']', _) => (TokenKind::RBracket, 1),
            (b'{', _) => (TokenKind::LBrace, 1),
            (b'}', _) => (TokenKind::RBrace, 1),
            (b',', _) => (TokenKind::Comma, 1),
            (b';', _) => (TokenKind::Semi, 1),
            (b'.', _) => (TokenKind::Dot, 1),
            (b':', _) => (TokenKind::Colon, 1),
            _ => {
                self.bump_char();
                let text = self.src[m.pos..self.pos].to_string();
                self.error(m, format!("unexpected character `{text}`"));
                self.push(TokenKind::Error, m);
                return;
            }
        };
        for _ in 0..len {
            self.bump();
        }
        self.push(kind, m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        let (t, e) = lex(src);
        assert!(e.is_empty(), "{e:?}");
        t.into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn lex_reads_literals_and_operators() {
        use TokenKind::*;
        assert_eq!(
            kinds("'it''s' X'0A1b' B'01' 12 1.5 1.5e3 2E-2 \"a\"\"b\" <> || *: <= >="),
            vec![
                Str("it's".into()),
                Hex("0A1b".into()),
                Bit("01".into()),
                Int("12".into()),
                Decimal("1.5".into()),
                Float("1.5e3".into()),
                Float("2E-2".into()),
                QuotedIdent("a\"b".into()),
                Ne,
                Concat,
                StarColon,
                Le,
                Ge,
                Eof
            ]
        );
    }

    #[test]
    fn lex_skips_comments_and_tracks_positions() {
        let (t, e) = lex("-- c\n  /* x\n y */ SET a");
        assert!(e.is_empty());
        assert_eq!(t[0].span.line, 3);
        assert_eq!(t[0].span.col, 7);
        assert_eq!(t[1].span.col, 11);
        assert_eq!(
            &"-- c\n  /* x\n y */ SET a"[t[0].span.start..t[0].span.end],
            "SET"
        );
    }

    #[test]
    fn lex_reports_every_error_when_input_is_bad() {
        let (_, e) = lex("SET a = 'x' ? X'0G' ;\n 'open");
        assert_eq!(e.len(), 3, "{e:?}");
        assert_eq!(e[0].message, "unexpected character `?`");
        assert_eq!(e[2].span.line, 2);
        assert_eq!(e[2].message, "unterminated string literal");
    }

    #[test]
    fn lex_keeps_index_then_dot_apart() {
        use TokenKind::*;
        assert_eq!(
            kinds("a[1].b"),
            vec![
                Word("a".into()),
                LBracket,
                Int("1".into()),
                RBracket,
                Dot,
                Word("b".into()),
                Eof
            ]
        );
    }
}
