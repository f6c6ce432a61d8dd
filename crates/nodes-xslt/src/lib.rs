//! XSLTransform: transforms an XML message with an XSLT 1.0 stylesheet through the system's
//! libxslt (the engine xsltproc uses). docs/transformation.md explains the choice of engine and
//! how instances share compiled stylesheets.

mod cache;
mod engine;
mod node;
mod select;

use std::path::Path;

use sluice_node_api::NodeSpec;

pub use engine::{OutputMethod, Stylesheet};
pub use node::{EXAMPLE_STYLESHEET, EXAMPLE_STYLESHEET_PATH, XSL_TRANSFORM, XslTransformProps};

/// Register the XSLTransform node type.
pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    r(&XSL_TRANSFORM);
}

/// What went wrong with a stylesheet or a transformation.
#[derive(Debug, thiserror::Error)]
pub enum XsltError {
    /// A stylesheet is not well-formed XML or not valid XSLT (deploying fails with this, or the
    /// message goes to failure when a message chose the stylesheet).
    #[error("stylesheet {}: {message}", location(file, *line))]
    Compile {
        file: String,
        /// The first line a diagnostic names, when one does.
        line: Option<u32>,
        message: String,
    },
    /// A stylesheet file cannot be read.
    #[error("cannot read stylesheet {file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// A stylesheet name from the message or the LocalEnvironment is absolute or leaves the
    /// project's stylesheet folder.
    #[error("stylesheet name `{name}` is not allowed: {reason}")]
    Name { name: String, reason: &'static str },
    /// No stylesheet: none in the message, the LocalEnvironment or the node's properties.
    #[error(
        "no stylesheet: the message has no xml-stylesheet instruction, LocalEnvironment no XSL.StyleSheetName and the node no `stylesheet`"
    )]
    NoStylesheet,
    /// The message body is not well-formed XML.
    #[error("the message is not well-formed XML: {}", first_lines(diagnostics))]
    Input { diagnostics: String },
    /// The stylesheet failed while it ran (xsl:message terminate="yes", an undefined variable,
    /// a function it cannot call …).
    #[error("the transformation failed: {}", first_lines(diagnostics))]
    Transform { diagnostics: String },
    /// A stylesheet parameter cannot be passed (its name or value).
    #[error("stylesheet parameter `{name}`: {message}")]
    Parameter { name: String, message: String },
}

impl XsltError {
    /// A compile failure of the stylesheet at `path`, from libxml2's and libxslt's diagnostics.
    pub(crate) fn compile(path: &Path, diagnostics: String) -> XsltError {
        let message = if diagnostics.trim().is_empty() {
            "it does not compile".to_string()
        } else {
            first_lines(&diagnostics)
        };
        XsltError::Compile {
            file: path.display().to_string(),
            line: first_line_number(&diagnostics),
            message,
        }
    }
}

fn location(file: &str, line: Option<u32>) -> String {
    match line {
        Some(l) => format!("{file}:{l}"),
        None => file.to_string(),
    }
}

/// The diagnostics on one line each, without the source excerpts and carets libxml2 adds.
fn first_lines(diagnostics: &str) -> String {
    let lines: Vec<&str> = diagnostics
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.chars().all(|c| c == '^' || c.is_whitespace()))
        .take(6)
        .collect();
    if lines.is_empty() {
        "no diagnostic".into()
    } else {
        lines.join("; ")
    }
}

/// The first line number in libxml2's (`FILE:LINE: parser error`) or libxslt's
/// (`file FILE line LINE`) diagnostics.
fn first_line_number(diagnostics: &str) -> Option<u32> {
    for l in diagnostics.lines() {
        if let Some(at) = l.find(" line ") {
            let digits: String = l[at + 6..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(n) = digits.parse() {
                return Some(n);
            }
        }
        if let Some(at) = l.find(": parser error") {
            let head = &l[..at];
            if let Some(colon) = head.rfind(':')
                && let Ok(n) = head[colon + 1..].parse()
            {
                return Some(n);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_number_is_found_in_parser_diagnostics() {
        let d = "/p/xsl/bad.xsl:7: parser error : Opening and ending tag mismatch\n<x>\n ^\n";
        assert_eq!(first_line_number(d), Some(7));
        assert_eq!(
            first_lines(d),
            "/p/xsl/bad.xsl:7: parser error : Opening and ending tag mismatch; <x>"
        );
    }

    #[test]
    fn line_number_is_found_in_compilation_diagnostics() {
        let d = "compilation error: file /p/xsl/bad.xsl line 12 element foo\nunknown element\n";
        assert_eq!(first_line_number(d), Some(12));
        assert_eq!(first_line_number("nothing here"), None);
    }
}
