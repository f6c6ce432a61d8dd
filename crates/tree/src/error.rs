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
