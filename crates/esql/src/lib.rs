//! sluice-esql: the ESQL language of the integration broker.
//!
//! [`syntax`] is the front end: source text to a typed AST with source positions, plus
//! diagnostics and the semantic checks that need no runtime. The compiler and runtime
//! build on that AST.

mod error;
pub mod runtime;
pub mod syntax;

pub use error::EsqlError;
pub use syntax::{check_file, check_path, check_source, parse};
