//! OpenAPI 3.0/3.1 and Swagger 2.0 documents as REST API projects use them: loaded with
//! `file:line` diagnostics, operations matched by method and path template, parameters typed per
//! their schemas, JSON values checked against the document's JSON Schemas, and the document
//! rendered for serving with the real endpoint in it.

mod document;
mod path;
mod render;
mod schema;

pub use document::{
    Api, ApiOptions, Cors, Location, Operation, Parameter, PathValues, SpecVersion, load,
    load_partly,
};
pub use path::{PathTemplate, Segment, percent_decode};
pub use render::{render_json, render_yaml};
pub use schema::{Failure, coerce, validate};

use sluice_flow::Diagnostic;

/// Why an OpenAPI document cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OpenApiError {
    /// The document is not valid YAML/JSON or not an OpenAPI document the loader understands;
    /// every problem found is listed with its place.
    #[error("{}", render_all(.diagnostics))]
    Invalid { diagnostics: Vec<Diagnostic> },
    /// The document file could not be read.
    #[error("cannot read {file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
}

fn render_all(d: &[Diagnostic]) -> String {
    d.iter().map(ToString::to_string).collect()
}

impl OpenApiError {
    /// The problems as diagnostics, for project loading.
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        match self {
            OpenApiError::Invalid { diagnostics } => diagnostics,
            e @ OpenApiError::Read { .. } => {
                let file = match &e {
                    OpenApiError::Read { file, .. } => file.clone(),
                    OpenApiError::Invalid { .. } => String::new(),
                };
                vec![Diagnostic::whole(&file, e.to_string())]
            }
        }
    }
}

/// Read and load the document at `path`, named `file` in messages.
pub fn load_file(file: &str, path: &std::path::Path) -> Result<Api, OpenApiError> {
    let src = std::fs::read_to_string(path).map_err(|source| OpenApiError::Read {
        file: file.to_string(),
        source,
    })?;
    load(file, &src).map_err(|diagnostics| OpenApiError::Invalid { diagnostics })
}
