//! Errors of the DFDL schema compiler, parser and serialiser.

use std::path::PathBuf;

/// What can go wrong compiling a DFDL schema or reading and writing data with one.
#[derive(Debug, thiserror::Error)]
pub enum DfdlError {
    /// A schema file (or an included one) could not be read.
    #[error("{}: cannot read the schema: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A schema file is not well-formed XML.
    #[error("{file}:{line}: the schema is not well-formed XML: {source}")]
    Xml {
        file: String,
        line: u32,
        #[source]
        source: quick_xml::Error,
    },
    /// The schema uses a construct or property this implementation does not support, sets a
    /// property to a value it does not accept, or is inconsistent (an unknown type, a missing
    /// root element, recursion).
    #[error("{file}:{line}: {message}")]
    Schema {
        file: String,
        line: u32,
        message: String,
    },
    /// The data does not match the schema.
    #[error(
        "ParserException: DFDL parse error at offset {offset} for schema component '{component}': {message}"
    )]
    Parse {
        offset: usize,
        component: String,
        message: String,
    },
    /// The tree cannot be written with the schema.
    #[error("DFDL serialisation error for schema component '{component}': {message}")]
    Unparse { component: String, message: String },
}

impl DfdlError {
    pub(crate) fn schema(file: &str, line: u32, message: impl Into<String>) -> DfdlError {
        DfdlError::Schema {
            file: file.to_string(),
            line,
            message: message.into(),
        }
    }
}
