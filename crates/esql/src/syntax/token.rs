//! Tokens produced by the lexer.
//!
//! Keywords are not a separate token kind: ESQL has many non-reserved keywords that are
//! also common field names (`Name`, `Type`, `Value`, `Data`), so every bare word is a
//! [`TokenKind::Word`] and the parser decides, case-insensitively, whether it is a keyword
//! in the position where it appears.

use super::span::Span;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenKind {
    /// A bare word: identifier or keyword, as written.
    Word(String),
    /// A `"quoted identifier"`, with `""` unescaped.
    QuotedIdent(String),
    /// A `'string'` literal, with `''` unescaped.
    Str(String),
    /// An integer literal, digits as written.
    Int(String),
    /// A decimal literal such as `1.5`, as written.
    Decimal(String),
    /// A float literal such as `1.5e3`, as written.
    Float(String),
    /// A hex (blob) literal `X'0A1B'`: the hex digits.
    Hex(String),
    /// A bit literal `B'0101'`: the binary digits.
    Bit(String),
    Concat,
    Ne,
    Le,
    Ge,
    Eq,
    Lt,
    Gt,
    Plus,
    Minus,
    Star,
    Slash,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Dot,
    Colon,
    /// `*:` — any namespace.
    StarColon,
    /// A character no token starts with; the lexer has already reported it.
    Error,
    Eof,
}

impl TokenKind {
    /// How the token is named in an error message.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Word(w) => format!("`{w}`"),
            TokenKind::QuotedIdent(w) => format!("identifier \"{w}\""),
            TokenKind::Str(_) => "string literal".to_string(),
            TokenKind::Int(n) | TokenKind::Decimal(n) | TokenKind::Float(n) => {
                format!("number `{n}`")
            }
            TokenKind::Hex(_) => "hex literal".to_string(),
            TokenKind::Bit(_) => "bit literal".to_string(),
            TokenKind::Eof => "end of file".to_string(),
            TokenKind::Error => "an invalid character".to_string(),
            other => format!("`{}`", other.symbol()),
        }
    }

    fn symbol(&self) -> &'static str {
        match self {
            TokenKind::Concat => "||",
            TokenKind::Ne => "<>",
            TokenKind::Le => "<=",
            TokenKind::Ge => ">=",
            TokenKind::Eq => "=",
            TokenKind::Lt => "<",
            TokenKind::Gt => ">",
            TokenKind::Plus => "+",
            TokenKind::Minus => "-",
            TokenKind::Star => "*",
            TokenKind::Slash => "/",
            TokenKind::LParen => "(",
            TokenKind::RParen => ")",
            TokenKind::LBracket => "[",
            TokenKind::RBracket => "]",
            TokenKind::LBrace => "{",
            TokenKind::RBrace => "}",
            TokenKind::Comma => ",",
            TokenKind::Semi => ";",
            TokenKind::Dot => ".",
            TokenKind::Colon => ":",
            TokenKind::StarColon => "*:",
            _ => "?",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

impl Token {
    /// True when the token is the word `kw`, compared case-insensitively.
    pub fn is_kw(&self, kw: &str) -> bool {
        matches!(&self.kind, TokenKind::Word(w) if w.eq_ignore_ascii_case(kw))
    }
}
