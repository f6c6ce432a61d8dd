//! Errors of the domain parsers. Each converts into [`sluice_tree::TreeError::Parse`], which is
//! what tree navigation reports when parsing on demand fails.

use sluice_tree::TreeError;

/// What can be wrong with a message body, with the byte offset in the body where it was found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The XML is not well formed: the cause names what was expected or found.
    #[error("{cause} at byte offset {offset}")]
    Malformed { offset: usize, cause: String },
    /// An end tag does not match the start tag it closes.
    #[error("end tag </{found}> does not match start tag <{expected}> at byte offset {offset}")]
    MismatchedEndTag {
        offset: usize,
        expected: String,
        found: String,
    },
    /// A name, text or attribute value is not valid UTF-8.
    #[error("invalid UTF-8 at byte offset {offset}")]
    InvalidUtf8 { offset: usize },
    /// A namespace prefix is used without a declaration in scope.
    #[error("namespace prefix '{prefix}' is not declared at byte offset {offset}")]
    UndeclaredPrefix { offset: usize, prefix: String },
    /// An entity reference names an entity other than the five XML predefines (no DTD is read).
    #[error("undefined entity '&{name};' at byte offset {offset}")]
    UndefinedEntity { offset: usize, name: String },
    /// A DOCTYPE declares entities; DTD processing is never done, so they are refused.
    #[error(
        "DOCTYPE declares entities, which are not supported (no DTD processing) at byte offset {offset}"
    )]
    DtdEntities { offset: usize },
    /// The body is in an encoding the parser does not read (only UTF-8 is).
    #[error("unsupported encoding {encoding} at byte offset {offset}; convert the body to UTF-8")]
    UnsupportedEncoding { offset: usize, encoding: String },
    /// Elements nest deeper than `Limits::max_depth`.
    #[error("element nesting deeper than the limit of {limit} at byte offset {offset}")]
    DepthLimit { offset: usize, limit: usize },
    /// An element has more attributes than `Limits::max_attributes`.
    #[error("more than {limit} attributes on one element at byte offset {offset}")]
    AttributeLimit { offset: usize, limit: usize },
    /// The body is larger than `Limits::max_size_bytes`.
    #[error("message of {size} bytes is larger than the limit of {limit} bytes")]
    SizeLimit { size: usize, limit: usize },
    /// A broken invariant of the parser.
    #[error("internal error: {0} (this is a bug, please report it)")]
    Internal(String),
    /// One value holds more entity and character references than `Limits::max_entity_expansion`.
    #[error("more than {limit} entity references in one value at byte offset {offset}")]
    EntityLimit { offset: usize, limit: usize },
}

impl Error {
    /// Shorthand for [`Error::Malformed`].
    pub(crate) fn malformed(offset: usize, cause: impl Into<String>) -> Error {
        Error::Malformed {
            offset,
            cause: cause.into(),
        }
    }

    /// The byte offset in the body where the problem was found.
    pub fn offset(&self) -> usize {
        match self {
            Error::Malformed { offset, .. }
            | Error::MismatchedEndTag { offset, .. }
            | Error::InvalidUtf8 { offset }
            | Error::UndeclaredPrefix { offset, .. }
            | Error::UndefinedEntity { offset, .. }
            | Error::DtdEntities { offset }
            | Error::UnsupportedEncoding { offset, .. }
            | Error::DepthLimit { offset, .. }
            | Error::AttributeLimit { offset, .. }
            | Error::EntityLimit { offset, .. } => *offset,
            Error::SizeLimit { .. } | Error::Internal(_) => 0,
        }
    }

    /// The error as the tree reports it, for the given domain.
    pub fn into_tree_error(self, domain: &'static str) -> TreeError {
        if let Error::Internal(m) = self {
            return TreeError::Internal(format!("{domain} parser: {m}"));
        }
        let offset = self.offset() as u64;
        let message = match &self {
            Error::Malformed { cause, .. } => cause.clone(),
            Error::MismatchedEndTag {
                expected, found, ..
            } => format!("end tag </{found}> does not match start tag <{expected}>"),
            Error::InvalidUtf8 { .. } => "invalid UTF-8".to_string(),
            Error::UndeclaredPrefix { prefix, .. } => {
                format!("namespace prefix '{prefix}' is not declared")
            }
            Error::UndefinedEntity { name, .. } => format!("undefined entity '&{name};'"),
            Error::DtdEntities { .. } => {
                "DOCTYPE declares entities, which are not supported (no DTD processing)".to_string()
            }
            Error::UnsupportedEncoding { encoding, .. } => {
                format!("unsupported encoding {encoding}; convert the body to UTF-8")
            }
            Error::DepthLimit { limit, .. } => {
                format!("element nesting deeper than the limit of {limit}")
            }
            Error::AttributeLimit { limit, .. } => {
                format!("more than {limit} attributes on one element")
            }
            Error::SizeLimit { size, limit } => {
                format!("message of {size} bytes is larger than the limit of {limit} bytes")
            }
            Error::EntityLimit { limit, .. } => {
                format!("more than {limit} entity references in one value")
            }
            Error::Internal(m) => m.clone(),
        };
        TreeError::Parse {
            domain,
            offset,
            message,
        }
    }
}
