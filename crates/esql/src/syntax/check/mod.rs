//! Semantic checks that need no runtime: duplicate declarations in a scope, LEAVE and
//! ITERATE of unknown labels, RETURN with a value where no RETURNS type exists, and
//! field references whose first name is plainly no correlation name or variable.
//!
//! The checks are deliberately conservative: a name that could be declared in another
//! file of the same schema (resolved at deploy) is never reported.

pub(crate) mod names;
mod scope;
mod walk;

use super::ast::File;
use super::span::Span;

/// Runs every check over `file` and returns the problems found, in source order.
pub fn check(file: &File) -> Vec<(Span, String)> {
    let mut checker = walk::Checker::default();
    checker.file(file);
    let mut problems = checker.into_problems();
    problems.sort_by_key(|(span, _)| (span.start, span.end));
    problems
}
