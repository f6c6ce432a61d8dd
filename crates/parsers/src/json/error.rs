//! The causes of JSON parse and serialisation errors.
//!
//! Navigation reports them as [`TreeError::Parse`] (with the byte offset in the message) or
//! [`TreeError::Serialize`]; this enum gives each cause one wording.

use sluice_tree::TreeError;

use crate::json::DOMAIN;

/// Why a JSON bit stream could not be parsed, or a tree could not be written as JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonErrorKind {
    /// A byte that the JSON grammar does not allow at this place.
    #[error("unexpected {found}; expected {expected}")]
    UnexpectedToken {
        found: String,
        expected: &'static str,
    },
    /// The data ended inside an object, an array or a value.
    #[error("unexpected end of data; expected {0}")]
    UnexpectedEnd(&'static str),
    /// A string without its closing quote.
    #[error("unterminated string")]
    UnterminatedString,
    /// A raw control character (below U+0020) inside a string; JSON requires it escaped.
    #[error("unescaped control character 0x{0:02X} in a string")]
    ControlCharacter(u8),
    /// A backslash escape that JSON does not define, or a malformed `\u` escape.
    #[error("bad escape sequence: {0}")]
    BadEscape(&'static str),
    /// String bytes that are not UTF-8.
    #[error("invalid UTF-8 in a string")]
    InvalidUtf8,
    /// A number that does not follow the JSON number grammar or does not fit a FLOAT.
    #[error("bad number: {0}")]
    BadNumber(&'static str),
    /// Bytes other than white space after the top-level object or array.
    #[error("trailing data after the top-level value")]
    TrailingData,
    /// A closing bracket that does not match the innermost open object or array.
    #[error("mismatched closing bracket {found}; expected '{expected}'")]
    MismatchedBracket { found: char, expected: char },
    /// Objects and arrays nested deeper than the parser's limit.
    #[error("nesting deeper than the limit of {0} levels")]
    DepthLimit(u32),
    /// A message larger than the parser's size limit.
    #[error("message of {size} bytes exceeds the limit of {limit} bytes")]
    SizeLimit { size: usize, limit: usize },
}

/// A parse error as the parsing code passes it around: boxed, so that the hot paths return
/// results that fit in registers.
pub(crate) type Fail = Box<TreeError>;

/// A parse error at byte `offset` of the message.
#[cold]
pub(crate) fn parse_error(offset: usize, kind: JsonErrorKind) -> Fail {
    Box::new(TreeError::Parse {
        domain: DOMAIN,
        offset: offset as u64,
        message: kind.to_string(),
    })
}

/// A description of the byte at `pos` for error messages (`end of data` past the end).
pub(crate) fn describe(src: &[u8], pos: usize) -> String {
    match src.get(pos) {
        None => "end of data".to_owned(),
        Some(&b) if b.is_ascii_graphic() => format!("'{}'", b as char),
        Some(&b) => format!("byte 0x{b:02X}"),
    }
}

/// An unexpected-token (or unexpected-end) error at `pos`.
#[cold]
pub(crate) fn unexpected(src: &[u8], pos: usize, expected: &'static str) -> Fail {
    if pos >= src.len() {
        parse_error(pos, JsonErrorKind::UnexpectedEnd(expected))
    } else {
        parse_error(
            pos,
            JsonErrorKind::UnexpectedToken {
                found: describe(src, pos),
                expected,
            },
        )
    }
}

/// A serialisation error.
pub(crate) fn serialize_error(message: String) -> TreeError {
    TreeError::Serialize {
        domain: DOMAIN,
        message,
    }
}
