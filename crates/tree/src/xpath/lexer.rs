//! Splitting an XPath 1.0 expression into tokens, with the character position of each.
//!
//! The lexical disambiguation rules are those of XPath 1.0 §3.7: after a token that can end an
//! operand, `*` is multiplication and `and`/`or`/`mod`/`div` are operators; a name followed by
//! `(` is a function or node type, and a name followed by `::` is an axis.

use crate::xpath::error::XPathError;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    LParen,
    RParen,
    LBracket,
    RBracket,
    Dot,
    DotDot,
    At,
    Comma,
    ColonColon,
    Slash,
    DoubleSlash,
    Pipe,
    Plus,
    Minus,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Multiply,
    And,
    Or,
    Mod,
    Div,
    /// A name test; `local: None` is `*` (or `prefix:*`).
    NameTest {
        prefix: Option<String>,
        local: Option<String>,
    },
    /// `comment`, `text`, `processing-instruction` or `node`, before `(`.
    NodeType(String),
    /// A function name, before `(`.
    Function(String),
    /// An axis name, before `::`.
    Axis(String),
    Literal(String),
    Number(f64),
    /// `$name` or `$prefix:name`, kept as written.
    Variable(String),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub pos: usize,
}

/// Longest expression accepted, in characters; Route rules are short, and a bound keeps
/// compilation cost predictable.
const MAX_CHARS: usize = 16 * 1024;

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '\u{B7}')
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// Whether a token before `*` or a name makes it an operator (XPath 1.0 §3.7).
fn operand_ended(prev: Option<&Tok>) -> bool {
    match prev {
        None => false,
        Some(t) => !matches!(
            t,
            Tok::At
                | Tok::ColonColon
                | Tok::LParen
                | Tok::LBracket
                | Tok::Comma
                | Tok::And
                | Tok::Or
                | Tok::Mod
                | Tok::Div
                | Tok::Multiply
                | Tok::Slash
                | Tok::DoubleSlash
                | Tok::Pipe
                | Tok::Plus
                | Tok::Minus
                | Tok::Eq
                | Tok::Ne
                | Tok::Lt
                | Tok::Le
                | Tok::Gt
                | Tok::Ge
        ),
    }
}

pub(crate) fn tokenize(src: &str) -> Result<Vec<Token>, XPathError> {
    let chars: Vec<char> = src.chars().collect();
    if chars.len() > MAX_CHARS {
        return Err(XPathError::syntax(
            MAX_CHARS,
            format!("the expression is longer than {MAX_CHARS} characters"),
        ));
    }
    let mut out: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if is_space(c) {
            i += 1;
            continue;
        }
        let pos = i;
        let next = chars.get(i + 1).copied();
        let prev = out.last().map(|t| &t.tok);
        let tok = match c {
            '(' => {
                i += 1;
                Tok::LParen
            }
            ')' => {
                i += 1;
                Tok::RParen
            }
            '[' => {
                i += 1;
                Tok::LBracket
            }
            ']' => {
                i += 1;
                Tok::RBracket
            }
            '@' => {
                i += 1;
                Tok::At
            }
            ',' => {
                i += 1;
                Tok::Comma
            }
            '|' => {
                i += 1;
                Tok::Pipe
            }
            '+' => {
                i += 1;
                Tok::Plus
            }
            '-' => {
                i += 1;
                Tok::Minus
            }
            '=' => {
                i += 1;
                Tok::Eq
            }
            '!' if next == Some('=') => {
                i += 2;
                Tok::Ne
            }
            '<' if next == Some('=') => {
                i += 2;
                Tok::Le
            }
            '<' => {
                i += 1;
                Tok::Lt
            }
            '>' if next == Some('=') => {
                i += 2;
                Tok::Ge
            }
            '>' => {
                i += 1;
                Tok::Gt
            }
            '/' if next == Some('/') => {
                i += 2;
                Tok::DoubleSlash
            }
            '/' => {
                i += 1;
                Tok::Slash
            }
            ':' if next == Some(':') => {
                i += 2;
                Tok::ColonColon
            }
            '*' => {
                i += 1;
                if operand_ended(prev) {
                    Tok::Multiply
                } else {
                    Tok::NameTest {
                        prefix: None,
                        local: None,
                    }
                }
            }
            '.' if next == Some('.') => {
                i += 2;
                Tok::DotDot
            }
            '.' if next.is_some_and(|d| d.is_ascii_digit()) => {
                let (n, end) = number(&chars, i);
                i = end;
                Tok::Number(n)
            }
            '.' => {
                i += 1;
                Tok::Dot
            }
            '0'..='9' => {
                let (n, end) = number(&chars, i);
                i = end;
                Tok::Number(n)
            }
            '"' | '\'' => {
                let close = chars[i + 1..]
                    .iter()
                    .position(|&d| d == c)
                    .ok_or_else(|| XPathError::syntax(pos, "string literal is not closed"))?;
                let s: String = chars[i + 1..i + 1 + close].iter().collect();
                i += close + 2;
                Tok::Literal(s)
            }
            '$' => {
                let (name, end) = qname(&chars, i + 1)
                    .ok_or_else(|| XPathError::syntax(pos, "a variable name must follow `$`"))?;
                i = end;
                Tok::Variable(name)
            }
            c if is_name_start(c) => {
                let end = ncname_end(&chars, i);
                let first: String = chars[i..end].iter().collect();
                let ended = operand_ended(prev);
                i = end;
                if ended {
                    match first.as_str() {
                        "and" => Tok::And,
                        "or" => Tok::Or,
                        "mod" => Tok::Mod,
                        "div" => Tok::Div,
                        _ => {
                            return Err(XPathError::syntax(
                                pos,
                                format!("expected an operator, found `{first}`"),
                            ));
                        }
                    }
                } else {
                    name_token(&chars, &mut i, first)
                }
            }
            other => {
                return Err(XPathError::syntax(
                    pos,
                    format!("unexpected character `{other}`"),
                ));
            }
        };
        out.push(Token { tok, pos });
    }
    Ok(out)
}

/// A name not in operator position: a name test, function, node type or axis.
fn name_token(chars: &[char], i: &mut usize, first: String) -> Tok {
    // `prefix:local` or `prefix:*` (no spaces around the colon).
    let mut prefix = None;
    let mut local = Some(first);
    if chars.get(*i) == Some(&':') && chars.get(*i + 1) != Some(&':') {
        if chars.get(*i + 1) == Some(&'*') {
            prefix = local.take();
            *i += 2;
        } else if chars.get(*i + 1).is_some_and(|&c| is_name_start(c)) {
            let end = ncname_end(chars, *i + 1);
            prefix = local.take();
            local = Some(chars[*i + 1..end].iter().collect());
            *i = end;
        }
    }
    let mut j = *i;
    while chars.get(j).is_some_and(|&c| is_space(c)) {
        j += 1;
    }
    match (prefix, local) {
        (None, Some(name)) if chars.get(j) == Some(&'(') => match name.as_str() {
            "comment" | "text" | "processing-instruction" | "node" => Tok::NodeType(name),
            _ => Tok::Function(name),
        },
        (Some(p), Some(l)) if chars.get(j) == Some(&'(') => Tok::Function(format!("{p}:{l}")),
        (None, Some(name)) if chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') => {
            Tok::Axis(name)
        }
        (prefix, local) => Tok::NameTest { prefix, local },
    }
}

fn ncname_end(chars: &[char], start: usize) -> usize {
    let mut end = start + 1;
    while chars.get(end).is_some_and(|&c| is_name_char(c)) {
        end += 1;
    }
    end
}

/// A QName at `start`, returned as written, and the index after it.
fn qname(chars: &[char], start: usize) -> Option<(String, usize)> {
    if !chars.get(start).is_some_and(|&c| is_name_start(c)) {
        return None;
    }
    let mut end = ncname_end(chars, start);
    if chars.get(end) == Some(&':') && chars.get(end + 1).is_some_and(|&c| is_name_start(c)) {
        end = ncname_end(chars, end + 1);
    }
    Some((chars[start..end].iter().collect(), end))
}

/// `Digits ('.' Digits?)? | '.' Digits` at `start`.
fn number(chars: &[char], start: usize) -> (f64, usize) {
    let mut end = start;
    while chars.get(end).is_some_and(|c| c.is_ascii_digit()) {
        end += 1;
    }
    if chars.get(end) == Some(&'.') {
        end += 1;
        while chars.get(end).is_some_and(|c| c.is_ascii_digit()) {
            end += 1;
        }
    }
    let text: String = chars[start..end].iter().collect();
    // Digits with at most one dot always parse; NaN would only hide a bug, never panic.
    (text.parse::<f64>().unwrap_or(f64::NAN), end)
}
