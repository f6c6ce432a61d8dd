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

/// One schema of a set compiled with [`SchemaSet::from_parts`].
#[derive(Clone, Debug)]
pub struct SchemaPart {
    /// The schema's targetNamespace; empty for none.
    pub namespace: String,
    /// The schema's file; for a schema held in `text`, the file it is part of (a WSDL), whose
    /// folder its relative locations resolve against.
    pub path: PathBuf,
    /// The schema document itself when it is not the whole of `path` (a WSDL's `xsd:schema`,
    /// with the namespace declarations it inherits).
    pub text: Option<String>,
}

/// `s` escaped for a double-quoted attribute value.
fn attr(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

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

    /// Compile several schemas as one set whose global declarations are every part's, as a
    /// WSDL's types are: each part is imported by its namespace (parts that share a namespace
    /// are included into one schema of that namespace first). Locations inside the parts are
    /// checked as [`SchemaSet::load`] checks them. Compile errors name the part's `path`.
    pub fn from_parts(project_dir: &Path, parts: &[SchemaPart]) -> Result<SchemaSet, XsdError> {
        let Some(first) = parts.first() else {
            return Err(XsdError::Compile {
                file: project_dir.display().to_string(),
                line: 0,
                message: "no schema to compile".into(),
            });
        };
        let canonical = |p: &Path| {
            p.canonicalize().map_err(|source| XsdError::Read {
                path: p.to_path_buf(),
                source,
            })
        };
        // A part held in memory is served under a made-up name beside the file it came from,
        // so that its relative locations resolve as they would in that file.
        let mut urls = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            let path = canonical(&part.path)?;
            urls.push(match part.text {
                Some(_) => PathBuf::from(format!("{}.schema-{}.xsd", path.display(), i + 1)),
                None => path,
            });
        }
        let roots: Vec<(PathBuf, Option<&str>)> = urls
            .iter()
            .zip(parts)
            .map(|(u, p)| (u.clone(), p.text.as_deref()))
            .collect();
        let mut files = locations::check_all(project_dir, &roots)?;
        // The made-up names of the parts held in memory are no files.
        files.retain(|f| !roots.iter().any(|(u, t)| t.is_some() && u == f));

        let mut memory: Vec<(PathBuf, String)> = Vec::new();
        let base = PathBuf::from(format!("{}.schema-set", urls[0].display()));
        let mut top = String::from(
            "<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\" \
             targetNamespace=\"urn:sluice:schema-set\">",
        );
        let mut namespaces: Vec<&str> = parts.iter().map(|p| p.namespace.as_str()).collect();
        namespaces.sort_unstable();
        namespaces.dedup();
        for (n, ns) in namespaces.iter().enumerate() {
            let members: Vec<&PathBuf> = urls
                .iter()
                .zip(parts)
                .filter(|(_, p)| p.namespace == *ns)
                .map(|(u, _)| u)
                .collect();
            let location = match members.as_slice() {
                [one] => (*one).clone(),
                many => {
                    let group = PathBuf::from(format!("{}-{}.xsd", base.display(), n + 1));
                    let mut text =
                        String::from("<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\"");
                    if !ns.is_empty() {
                        text.push_str(&format!(" targetNamespace=\"{}\"", attr(ns)));
                    }
                    text.push('>');
                    for m in many {
                        text.push_str(&format!(
                            "<xs:include schemaLocation=\"{}\"/>",
                            attr(&m.display().to_string())
                        ));
                    }
                    text.push_str("</xs:schema>");
                    memory.push((group.clone(), text));
                    group
                }
            };
            top.push_str("<xs:import");
            if !ns.is_empty() {
                top.push_str(&format!(" namespace=\"{}\"", attr(ns)));
            }
            top.push_str(&format!(
                " schemaLocation=\"{}\"/>",
                attr(&location.display().to_string())
            ));
        }
        top.push_str("</xs:schema>");
        let top_url = PathBuf::from(format!("{}.xsd", base.display()));
        memory.push((top_url.clone(), top));
        for (u, p) in urls.iter().zip(parts) {
            if let Some(t) = &p.text {
                memory.push((u.clone(), t.clone()));
            }
        }
        let served: Vec<(&Path, &str)> = memory
            .iter()
            .map(|(u, t)| (u.as_path(), t.as_str()))
            .collect();
        let schema = ffi::Schema::compile_with(&top_url, &served).map_err(|e| {
            // Name the file a part came from rather than the name it was served under.
            let mut e = e;
            if let XsdError::Compile { file, message, .. } = &mut e {
                for (u, p) in urls.iter().zip(parts) {
                    let shown = p.path.display().to_string();
                    let served = u.display().to_string();
                    *file = file.replace(&served, &shown);
                    *message = message.replace(&served, &shown);
                }
            }
            e
        })?;
        Ok(SchemaSet {
            schema,
            path: first.path.clone(),
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
