//! Errors of tree navigation and change.

/// What can go wrong while navigating or changing a message tree.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TreeError {
    /// A parser found malformed input while materialising part of the tree on demand.
    #[error("{domain} parser: {message} at byte offset {offset}")]
    Parse {
        domain: &'static str,
        offset: u64,
        message: String,
    },
    /// A body does not match its XML Schema (validation when a body is parsed or written, or
    /// by a Validate node); `violations` holds every violation kept, in document order.
    #[error(
        "{domain} validation against {schema}: {}",
        first_violation(violations)
    )]
    Validation {
        domain: &'static str,
        schema: String,
        violations: Vec<Violation>,
    },
    /// A serialiser could not write the tree in its domain's format.
    #[error("{domain} serialiser: {message}")]
    Serialize {
        domain: &'static str,
        message: String,
    },
    /// An operation that needs a parent was applied to a root or detached element.
    #[error("the element has no parent")]
    NoParent,
    /// ATTACH of an element that is still attached.
    #[error("the element is already attached; detach it first")]
    Attached,
    /// ATTACH would make an element its own ancestor.
    #[error("an element cannot be attached below itself")]
    Cycle,
    /// A broken invariant.
    #[error("internal error: {0} (this is a bug, please report it)")]
    Internal(String),
}

/// One place where a document breaks its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where the parser stood (1-based; 0 when unknown).
    pub line: u32,
    pub column: u32,
    /// The open elements, outermost first (`/Order/Item/Code`).
    pub path: String,
    /// The validator's message.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {} column {}", self.line, self.column)?;
        if !self.path.is_empty() {
            write!(f, " element {}", self.path)?;
        }
        write!(f, ": {}", self.message)
    }
}

fn first_violation(v: &[Violation]) -> String {
    match v {
        [] => "the document does not match".into(),
        [only] => only.to_string(),
        [first, rest @ ..] => format!("{first} (and {} more)", rest.len()),
    }
}
