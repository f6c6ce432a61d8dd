//! XML Schema 1.0 validation through the system's libxml2.
//!
//! A [`SchemaSet`] is an XSD file of a project with everything it includes and imports,
//! compiled once (when a flow is deployed) and shared by every thread that validates: a compiled
//! libxml2 schema is only read while documents are validated, and each validation runs with a
//! validation context and a parser of its own, which is how libxml2 lets threads share a schema.
//! Documents are validated as they stream through libxml2's parser, without building a tree.

mod ffi;
mod locations;

use std::fmt;
use std::path::{Path, PathBuf};

/// What can go wrong loading a schema set.
#[derive(Debug, thiserror::Error)]
pub enum XsdError {
    /// The schema file (or one it includes or imports) cannot be read.
    #[error("{}: cannot read the schema: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An `xs:include`, `xs:import` or `xs:redefine` names a file outside the project folder,
    /// a URL, or a file that does not exist.
    #[error("{file}:{line}: schemaLocation `{location}`: {reason}")]
    Location {
        file: String,
        line: u32,
        location: String,
        reason: &'static str,
    },
    /// The schema is not well-formed XML or not a valid XML Schema (libxml2's diagnostics, the
    /// first one's file and line first).
    #[error("{file}:{line}: {message}")]
    Compile {
        file: String,
        line: u32,
        message: String,
    },
}

/// Whether a violation is of XML itself or of the schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViolationKind {
    /// The document is not well-formed XML.
    NotWellFormed,
    /// The document is well-formed but breaks the schema.
    Invalid,
}

/// One violation found in a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    pub kind: ViolationKind,
    /// Where the parser stood when it found the violation (1-based; 0 when unknown).
    pub line: u32,
    pub column: u32,
    /// The open elements, outermost first (`/Parent/SaleList/Invoice`); empty before the root.
    pub path: String,
    /// libxml2's message, on one line.
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.line, self.column)?;
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ValidationError {}

/// At most this many violations are kept per document: a document that breaks the schema
/// everywhere would otherwise cost as much memory in diagnostics as it has elements.
pub const MAX_VIOLATIONS: usize = 100;

/// A compiled XML Schema with its includes and imports.
pub struct SchemaSet {
    schema: ffi::Schema,
    path: PathBuf,
    files: Vec<PathBuf>,
}

impl fmt::Debug for SchemaSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaSet")
            .field("path", &self.path)
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

impl SchemaSet {
    /// Compile the schema `relative` (such as `models/order.xsd`) of the project in
    /// `project_dir`. Its `xs:include`, `xs:import` and `xs:redefine` must name files of the
    /// project, relative to the including file: nothing is read from elsewhere or the network.
    pub fn load(project_dir: &Path, relative: &str) -> Result<SchemaSet, XsdError> {
        let path = project_dir.join(relative);
        let files = locations::check(project_dir, &path)?;
        let schema = ffi::Schema::compile(&path)?;
        Ok(SchemaSet {
            schema,
            path,
            files,
        })
    }

    /// The schema file this set was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every file of the set: the schema first, then what it includes and imports.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Validate a document's bytes: every violation (up to [`MAX_VIOLATIONS`]) with its line,
    /// column and element path.
    pub fn validate(&self, document: &[u8]) -> Result<(), Vec<ValidationError>> {
        self.schema.validate(document)
    }
}

/// Validate `document` against `schema` (as [`SchemaSet::validate`]).
pub fn validate(schema: &SchemaSet, document: &[u8]) -> Result<(), Vec<ValidationError>> {
    schema.validate(document)
}

#[cfg(test)]
mod tests;
