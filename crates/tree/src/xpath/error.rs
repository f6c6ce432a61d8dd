//! Errors of compiling and evaluating XPath expressions.

use crate::xpath::tree_api::TreeError;

/// What can go wrong with an XPath expression. Positions count characters from 0.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum XPathError {
    /// The expression text is not valid in the supported XPath subset (bad syntax, unknown
    /// function, variable or namespace prefix, wrong number of arguments, too deeply nested).
    #[error("XPath syntax error at character {}: {message}", position + 1)]
    Syntax { position: usize, message: String },
    /// A value that is not a node-set was used where a node-set is required at run time.
    #[error("XPath type error at character {}: {message}", position + 1)]
    Type { position: usize, message: String },
    /// Navigating the message tree failed, typically because parsing part of the message on
    /// demand found malformed input.
    #[error(transparent)]
    Tree(#[from] TreeError),
    /// A node from another message, or one whose element was deleted, was given to a context.
    #[error("the node does not belong to this message (it was deleted or comes from another one)")]
    StaleNode,
    /// A broken invariant of the evaluator.
    #[error("internal XPath error: {0} (this is a bug, please report it)")]
    Internal(String),
}

impl XPathError {
    pub(crate) fn syntax(position: usize, message: impl Into<String>) -> XPathError {
        XPathError::Syntax {
            position,
            message: message.into(),
        }
    }
}
