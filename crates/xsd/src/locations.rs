//! The files a schema includes and imports, checked to be files of the project before libxml2
//! reads them: libxml2 would otherwise follow absolute paths and fetch URLs.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use quick_xml::Reader;
use quick_xml::events::Event;

use crate::XsdError;

/// Every file of the schema set rooted at `schema`, the schema first.
pub(crate) fn check(project_dir: &Path, schema: &Path) -> Result<Vec<PathBuf>, XsdError> {
    let first = schema.canonicalize().map_err(|source| XsdError::Read {
        path: schema.to_path_buf(),
        source,
    })?;
    check_all(project_dir, &[(first, None)])
}

/// Every file the schemas `roots` include and import, the roots first. A root is a file of the
/// project, or a document held in memory (such as a schema inside a WSDL) given with the path
/// its relative locations are resolved against.
pub(crate) fn check_all(
    project_dir: &Path,
    roots: &[(PathBuf, Option<&str>)],
) -> Result<Vec<PathBuf>, XsdError> {
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|source| XsdError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    let root = project_dir
        .canonicalize()
        .map_err(|source| XsdError::Read {
            path: project_dir.to_path_buf(),
            source,
        })?;
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut files = Vec::new();
    let mut texts: Vec<Option<&str>> = Vec::new();
    for (path, text) in roots {
        if !path.starts_with(&root) {
            return Err(XsdError::Location {
                file: project_dir.display().to_string(),
                line: 0,
                location: path.display().to_string(),
                reason: "the schema is outside the project folder",
            });
        }
        if seen.insert(path.clone()) {
            files.push(path.clone());
            texts.push(*text);
        }
    }
    let mut at = 0;
    while at < files.len() {
        let file = files[at].clone();
        let text = match texts.get(at).copied().flatten() {
            Some(t) => t.to_string(),
            None => read(&file)?,
        };
        at += 1;
        for (line, location) in references(&text) {
            let fail = |reason| XsdError::Location {
                file: file.display().to_string(),
                line,
                location: location.clone(),
                reason,
            };
            if location.contains("://") || location.starts_with('/') || location.contains('\\') {
                return Err(fail(
                    "only files of the project, relative to the including schema, are read",
                ));
            }
            let dir = file.parent().unwrap_or(&root);
            let target = dir
                .join(&location)
                .canonicalize()
                .map_err(|_| fail("no such file"))?;
            if !target.starts_with(&root) {
                return Err(fail("the file is outside the project folder"));
            }
            if seen.insert(target.clone()) {
                files.push(target);
            }
        }
    }
    Ok(files)
}

/// The `schemaLocation` of each `xs:include`, `xs:import` and `xs:redefine` in a schema, with
/// its line. A document that does not parse yields what was found before the fault: libxml2
/// reports the fault itself, with its line.
fn references(text: &str) -> Vec<(u32, String)> {
    let mut reader = Reader::from_str(text);
    let mut out = Vec::new();
    loop {
        let pos = reader.buffer_position();
        let e = match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) => e,
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => continue,
        };
        if !matches!(
            e.local_name().as_ref(),
            b"include" | b"import" | b"redefine"
        ) {
            continue;
        }
        for a in e.attributes().flatten() {
            if a.key.local_name().as_ref() == b"schemaLocation"
                && let Ok(v) = a.unescape_value()
            {
                let upto = usize::try_from(pos).unwrap_or(0).min(text.len());
                let line = 1 + text.as_bytes()[..upto]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
                out.push((
                    u32::try_from(line).unwrap_or(u32::MAX),
                    v.trim().to_string(),
                ));
            }
        }
    }
    out
}
