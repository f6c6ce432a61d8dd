//! `sluice xsd validate`: documents checked against an XML Schema, as flows check them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sluice_xsd::SchemaSet;

/// The folder whose files the schema may include and import, and the schema relative to it:
/// the current folder when the schema is inside it, else the schema's own folder.
fn project_of(schema: &Path) -> (PathBuf, PathBuf) {
    let abs = schema
        .canonicalize()
        .unwrap_or_else(|_| schema.to_path_buf());
    if let Ok(cwd) = std::env::current_dir().and_then(|d| d.canonicalize())
        && let Ok(rel) = abs.strip_prefix(&cwd)
    {
        return (cwd.clone(), rel.to_path_buf());
    }
    let dir = abs.parent().map(Path::to_path_buf).unwrap_or_default();
    let name = abs.file_name().map(PathBuf::from).unwrap_or_default();
    (dir, name)
}

/// Validate each document: `DOC: valid`, or `DOC:LINE:COL: ELEMENT: MESSAGE` per violation.
/// Exit 0 when every document is valid, 1 when one is not, 2 when the schema does not load.
pub fn validate(schema: &Path, docs: &[PathBuf]) -> ExitCode {
    let (project, relative) = project_of(schema);
    let set = match SchemaSet::load(&project, &relative.to_string_lossy()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut all_valid = true;
    for doc in docs {
        let bytes = match std::fs::read(doc) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{}: cannot read: {e}", doc.display());
                all_valid = false;
                continue;
            }
        };
        match set.validate(&bytes) {
            Ok(()) => println!("{}: valid", doc.display()),
            Err(violations) => {
                all_valid = false;
                for v in violations {
                    println!("{}:{v}", doc.display());
                }
            }
        }
    }
    if all_valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
