//! The recursive-descent ESQL parser.
//!
//! Errors never stop the parse: a failing statement is recorded and the parser skips to
//! the next `;` (or to the `THEN`/`DO` that ends a compound statement's header), so a file
//! with several mistakes reports all of them.

mod builtin;
mod expr;
mod item;
mod path;
mod stmt;
mod tree;

use super::ast::{Ident, QualifiedName};
use super::diag::Diagnostic;
use super::lexer::lex;
use super::span::Span;
use super::token::{Token, TokenKind};

/// A syntax error before it becomes a [`Diagnostic`].
#[derive(Debug, Clone)]
pub(crate) struct ParseError {
    pub span: Span,
    pub message: String,
}

pub(crate) type PResult<T> = Result<T, ParseError>;

/// Parses a whole file.
pub fn parse_file(src: &str) -> Result<super::ast::File, Vec<Diagnostic>> {
    let (tokens, lex_errors) = lex(src);
    let mut p = Parser {
        src,
        tokens,
        pos: 0,
        errors: Vec::new(),
        closed_early: false,
        open: Vec::new(),
        depth: 0,
    };
    let file = p.file();
    // A parse error at or just after a lexical error is its echo: report the cause only.
    let tokens = &p.tokens;
    let echoes = |e: &ParseError| {
        let overlaps = |start: usize, end: usize| {
            lex_errors
                .iter()
                .any(|l| start <= l.span.end && end >= l.span.start)
        };
        let same_line = lex_errors.iter().any(|l| {
            l.span.line == e.span.line && e.span.start >= l.span.start && e.span.start <= l.span.end
        });
        let after_bad_token = Some(tokens.partition_point(|t| t.span.start < e.span.start))
            .and_then(|i| i.checked_sub(1))
            .is_some_and(|i| overlaps(tokens[i].span.start, tokens[i].span.end));
        same_line || after_bad_token
    };
    let parse_errors: Vec<ParseError> = p.errors.iter().filter(|e| !echoes(e)).cloned().collect();
    let mut diags: Vec<Diagnostic> = lex_errors
        .into_iter()
        .map(|e| Diagnostic::new(src, e.span, e.message))
        .collect();
    diags.extend(
        parse_errors
            .into_iter()
            .map(|e| Diagnostic::new(src, e.span, e.message)),
    );
    if diags.is_empty() {
        Ok(file)
    } else {
        diags.sort_by_key(|d| (d.span.start, d.span.end));
        diags.dedup_by(|a, b| a.span.start == b.span.start);
        Err(diags)
    }
}

/// Words that can never be the start of a field reference or a variable name, because
/// they end or structure the expression or statement around them.
const RESERVED: &[&str] = &[
    // The product's own reserved words.
    "ALL",
    "ASYMMETRIC",
    "BOTH",
    "CASE",
    "DISTINCT",
    "FROM",
    "ITEM",
    "LEADING",
    "NOT",
    "SYMMETRIC",
    "TRAILING",
    "WHEN",
    // Words that would make expressions and statement ends ambiguous if they could also
    // be variables. Statement keywords (SET, CALL, UPDATE, …) stay usable as names,
    // because a statement never starts with a variable.
    "AND",
    "OR",
    "IN",
    "IS",
    "LIKE",
    "BETWEEN",
    "THEN",
    "ELSE",
    "ELSEIF",
    "END",
    "DO",
    "AS",
    "WHERE",
    "CAST",
    "SELECT",
    "NULL",
    "TRUE",
    "FALSE",
    "UNKNOWN",
    "ESCAPE",
    "TO",
    "OF",
    "INTO",
    "VALUES",
    "UNTIL",
];

pub(crate) fn is_reserved(word: &str) -> bool {
    RESERVED.iter().any(|r| r.eq_ignore_ascii_case(word))
}

/// Words Sluice keeps from names where they would be ambiguous, but which the product does not
/// reserve: where a name must stand (a declaration, the start of a field reference or of an
/// operand) they are names, as in `DECLARE end INTEGER;` and `SET x = end - start;`.
const NAME_KEYWORDS: &[&str] = &["END", "ESCAPE", "TO", "OF", "INTO", "VALUES", "UNTIL", "DO"];

pub(crate) fn is_name_keyword(word: &str) -> bool {
    NAME_KEYWORDS.iter().any(|r| r.eq_ignore_ascii_case(word))
}

pub(crate) struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    errors: Vec<ParseError>,
    /// Set when a compound statement was closed by an enclosing statement's END (its own
    /// `END IF` was missing): the block then expects no `;` after it.
    closed_early: bool,
    /// The compound statements being parsed, innermost last (`"IF"`, `"WHILE"`, …).
    open: Vec<&'static str>,
    /// Current nesting of expressions and statements, bounded by [`MAX_DEPTH`].
    depth: usize,
}

/// How deeply expressions and statements may nest. Real ESQL stays far below; the bound
/// keeps hostile input from exhausting the stack of the parser, the checker or `Drop`.
pub(crate) const MAX_DEPTH: usize = 100;

impl Parser<'_> {
    // ----- token cursor -------------------------------------------------------------

    pub(crate) fn peek(&self) -> &Token {
        self.peek_at(0)
    }

    pub(crate) fn peek_at(&self, n: usize) -> &Token {
        let i = (self.pos + n).min(self.tokens.len().saturating_sub(1));
        &self.tokens[i]
    }

    pub(crate) fn kind(&self) -> &TokenKind {
        &self.peek().kind
    }

    pub(crate) fn span(&self) -> Span {
        self.peek().span
    }

    /// The span of the last consumed token.
    pub(crate) fn prev_span(&self) -> Span {
        if self.pos == 0 {
            self.span()
        } else {
            self.tokens[(self.pos - 1).min(self.tokens.len() - 1)].span
        }
    }

    /// A span from `start` to the end of the last consumed token.
    pub(crate) fn since(&self, start: Span) -> Span {
        start.to(self.prev_span())
    }

    pub(crate) fn at_eof(&self) -> bool {
        matches!(self.kind(), TokenKind::Eof)
    }

    pub(crate) fn advance(&mut self) -> Token {
        let t = self.peek().clone();
        if !self.at_eof() {
            self.pos += 1;
        }
        t
    }

    pub(crate) fn at(&self, kind: &TokenKind) -> bool {
        self.kind() == kind
    }

    pub(crate) fn at_kw(&self, kw: &str) -> bool {
        self.peek().is_kw(kw)
    }

    pub(crate) fn at_kw_at(&self, n: usize, kw: &str) -> bool {
        self.peek_at(n).is_kw(kw)
    }

    /// The current token's word, upper-cased, when it is a bare word.
    pub(crate) fn word_upper(&self) -> Option<String> {
        match self.kind() {
            TokenKind::Word(w) => Some(w.to_ascii_uppercase()),
            _ => None,
        }
    }

    pub(crate) fn eat(&mut self, kind: &TokenKind) -> bool {
        if self.at(kind) {
            self.advance();
            true
        } else {
            false
        }
    }

    pub(crate) fn eat_kw(&mut self, kw: &str) -> bool {
        if self.at_kw(kw) {
            self.advance();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect(&mut self, kind: &TokenKind) -> PResult<Span> {
        if self.at(kind) {
            Ok(self.advance().span)
        } else if *kind == TokenKind::Semi
            && self.pos > 0
            && self.span().line > self.prev_span().line
        {
            // A forgotten `;` at the end of a line: point just after the statement rather
            // than at the next line's first word.
            let prev = self.prev_span();
            let end = prev.end.min(self.src.len());
            let width = self
                .src
                .get(prev.start..end)
                .map_or(1, |t| t.chars().count() as u32);
            Err(self.error_at(
                Span {
                    start: end,
                    end,
                    line: prev.line,
                    col: prev.col + width,
                },
                format!("expected `;`, found {}", self.kind().describe()),
            ))
        } else {
            let what = kind.describe();
            Err(self.unexpected(&what))
        }
    }

    pub(crate) fn expect_kw(&mut self, kw: &str) -> PResult<Span> {
        if self.at_kw(kw) {
            Ok(self.advance().span)
        } else {
            Err(self.unexpected(&format!("`{kw}`")))
        }
    }

    /// "expected X, found Y" at the current token.
    pub(crate) fn unexpected(&self, expected: &str) -> ParseError {
        ParseError {
            span: self.span(),
            message: format!("expected {expected}, found {}", self.kind().describe()),
        }
    }

    pub(crate) fn error_at(&self, span: Span, message: impl Into<String>) -> ParseError {
        ParseError {
            span,
            message: message.into(),
        }
    }

    pub(crate) fn record(&mut self, e: ParseError) {
        self.errors.push(e);
    }

    // ----- names --------------------------------------------------------------------

    /// An identifier: a non-reserved word or a quoted identifier.
    pub(crate) fn ident(&mut self) -> PResult<Ident> {
        match self.kind().clone() {
            TokenKind::Word(w) if !is_reserved(&w) => {
                let span = self.advance().span;
                Ok(Ident {
                    name: w,
                    quoted: false,
                    span,
                })
            }
            TokenKind::QuotedIdent(w) => {
                let span = self.advance().span;
                Ok(Ident {
                    name: w,
                    quoted: true,
                    span,
                })
            }
            _ => Err(self.unexpected("a name")),
        }
    }

    /// Any word or quoted identifier, reserved or not: a name after `.` in a path.
    pub(crate) fn any_name(&mut self) -> PResult<Ident> {
        match self.kind().clone() {
            TokenKind::Word(w) => {
                let span = self.advance().span;
                Ok(Ident {
                    name: w,
                    quoted: false,
                    span,
                })
            }
            TokenKind::QuotedIdent(w) => {
                let span = self.advance().span;
                Ok(Ident {
                    name: w,
                    quoted: true,
                    span,
                })
            }
            _ => Err(self.unexpected("a name")),
        }
    }

    /// A name where nothing else can stand: also the keywords the product leaves unreserved.
    pub(crate) fn name_ident(&mut self) -> PResult<Ident> {
        match self.kind().clone() {
            TokenKind::Word(w) if is_name_keyword(&w) => {
                let span = self.advance().span;
                Ok(Ident {
                    name: w,
                    quoted: false,
                    span,
                })
            }
            _ => self.ident(),
        }
    }

    pub(crate) fn at_ident(&self) -> bool {
        match self.kind() {
            TokenKind::Word(w) => !is_reserved(w),
            TokenKind::QuotedIdent(_) => true,
            _ => false,
        }
    }

    /// `a.b.c`.
    pub(crate) fn qualified_name(&mut self) -> PResult<QualifiedName> {
        let first = self.name_ident()?;
        let start = first.span;
        let mut parts = vec![first];
        while self.at(&TokenKind::Dot) {
            self.advance();
            parts.push(self.any_name()?);
        }
        Ok(QualifiedName {
            parts,
            span: self.since(start),
        })
    }

    /// A non-negative integer literal, such as a precision.
    pub(crate) fn small_int(&mut self) -> PResult<u32> {
        if let TokenKind::Int(n) = self.kind().clone() {
            let span = self.advance().span;
            n.parse::<u32>()
                .map_err(|_| self.error_at(span, format!("number `{n}` is too large here")))
        } else {
            Err(self.unexpected("an integer"))
        }
    }

    /// Enters one level of nesting; fails past [`MAX_DEPTH`].
    pub(crate) fn enter(&mut self) -> PResult<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error_at(
                self.span(),
                format!("nesting is deeper than {MAX_DEPTH} levels"),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    // ----- recovery -----------------------------------------------------------------

    /// Skips the rest of a broken statement: up to and including the next `;`, or up to
    /// (not including) an `END`, `ELSE`, `ELSEIF`, `WHEN` or `UNTIL` that closes the
    /// enclosing block. `CASE … END` and brackets inside are skipped whole.
    pub(crate) fn skip_statement(&mut self) {
        let mut depth = 0usize;
        let start = self.pos;
        loop {
            match self.kind() {
                TokenKind::Eof => return,
                TokenKind::Semi if depth == 0 => {
                    self.advance();
                    return;
                }
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => depth += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    depth = depth.saturating_sub(1)
                }
                TokenKind::Word(w) => {
                    let w = w.to_ascii_uppercase();
                    if w == "CASE" {
                        depth += 1;
                    } else if w == "END" {
                        if depth == 0 {
                            if self.pos == start {
                                // A stray END that no block wants: consume it to make progress.
                                self.advance();
                                continue;
                            }
                            return;
                        }
                        depth -= 1;
                    } else if depth == 0
                        && self.pos != start
                        && matches!(w.as_str(), "ELSE" | "ELSEIF" | "WHEN" | "UNTIL")
                    {
                        return;
                    }
                }
                _ => {}
            }
            self.advance();
        }
    }

    /// After an error in a compound statement's header, skips to the keyword `kw` that
    /// ends the header (`THEN`, `DO`) and consumes it, without crossing a `;`. Returns
    /// true when found.
    pub(crate) fn recover_to(&mut self, kw: &str) -> bool {
        let mut depth = 0usize;
        loop {
            match self.kind() {
                TokenKind::Eof | TokenKind::Semi => return false,
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => depth += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    depth = depth.saturating_sub(1)
                }
                TokenKind::Word(w) if depth == 0 && w.eq_ignore_ascii_case(kw) => {
                    self.advance();
                    return true;
                }
                TokenKind::Word(w) if w.eq_ignore_ascii_case("END") && depth == 0 => return false,
                _ => {}
            }
            self.advance();
        }
    }
}

#[cfg(test)]
mod tests;
