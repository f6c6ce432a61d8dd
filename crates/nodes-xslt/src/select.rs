//! Which stylesheet a message is transformed with, in the product's order: the message's own
//! `xml-stylesheet` processing instruction, then the LocalEnvironment's `XSL.StyleSheetName`
//! (or the older `ComIbmXslXmltStylesheetname`), then the node's `stylesheet` property.

use std::path::{Component, Path, PathBuf};

use quick_xml::Reader;
use quick_xml::events::Event;
use sluice_tree::{Tree, TreeError, Value};

use crate::XsltError;

/// The `href` of the message's `xml-stylesheet` instruction, read from the prolog only (the
/// instruction must come before the root element). Instructions whose `type` is not an XSLT
/// one (a CSS stylesheet, say) are skipped.
pub fn stylesheet_instruction(body: &[u8]) -> Option<String> {
    // Most messages have no instruction: skip the parser unless the text is in the prolog.
    let prolog_end = first_element_start(body)?;
    let prolog = &body[..prolog_end];
    if !prolog.windows(14).any(|w| w == b"xml-stylesheet") {
        return None;
    }
    let mut reader = Reader::from_reader(prolog);
    loop {
        match reader.read_event() {
            Ok(Event::PI(pi)) if pi.target() == b"xml-stylesheet" => {
                let mut href = None;
                let mut xslt = true;
                for a in pi.attributes().flatten() {
                    let value = a.unescape_value().ok()?.into_owned();
                    match a.key.as_ref() {
                        b"href" => href = Some(value),
                        b"type" => {
                            xslt = matches!(
                                value.as_str(),
                                "text/xsl"
                                    | "text/xml"
                                    | "application/xml"
                                    | "application/xslt+xml"
                            )
                        }
                        _ => {}
                    }
                }
                if xslt && href.is_some() {
                    return href;
                }
            }
            Ok(Event::Eof) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// Where the root element starts: the first `<` not followed by `?` or `!`.
fn first_element_start(body: &[u8]) -> Option<usize> {
    let mut at = 0;
    while let Some(i) = body[at..].iter().position(|&b| b == b'<') {
        let i = at + i;
        match body.get(i + 1) {
            Some(b'?') | Some(b'!') => at = i + 1,
            Some(_) => return Some(i),
            None => return None,
        }
    }
    None
}

/// The LocalEnvironment's `XSL.<name>` as text, when set and not empty.
pub fn local_environment_value(le: &mut Tree, path: &[&str]) -> Result<Option<String>, TreeError> {
    let r = le.root();
    let Some(id) = le.path(r, path)? else {
        return Ok(None);
    };
    let text = match le.value_bytes(id) {
        Some(b) => String::from_utf8_lossy(b).into_owned(),
        None => match value_text(le, le.value(id)) {
            Some(t) => t,
            None => return Ok(None),
        },
    };
    Ok(Some(text).filter(|t| !t.is_empty()))
}

/// A scalar value as the text a stylesheet parameter or name takes; None for NULL and the
/// date and time types, which have no single text form here.
fn value_text(tree: &Tree, v: Value) -> Option<String> {
    match v {
        Value::Boolean(b) => Some(if b { "true" } else { "false" }.into()),
        Value::Integer(i) => Some(i.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Decimal(t) | Value::Character(t) | Value::Bit(t) => {
            Some(String::from_utf8_lossy(tree.bytes(t)).into_owned())
        }
        _ => None,
    }
}

/// The stylesheet named in the LocalEnvironment, the current name first.
pub fn local_environment_stylesheet(le: &mut Tree) -> Result<Option<String>, TreeError> {
    if let Some(name) = local_environment_value(le, &["XSL", "StyleSheetName"])? {
        return Ok(Some(name));
    }
    local_environment_value(le, &["ComIbmXslXmltStylesheetname"])
}

/// The parameters in `LocalEnvironment.XSL.Parameters`: each child's name and text value.
pub fn local_environment_parameters(le: &mut Tree) -> Result<Vec<(String, String)>, TreeError> {
    let r = le.root();
    let Some(folder) = le.path(r, &["XSL", "Parameters"])? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for child in le.children(folder)? {
        let name = String::from_utf8_lossy(le.name_bytes(child)).into_owned();
        let value = match le.value_bytes(child) {
            Some(b) => String::from_utf8_lossy(b).into_owned(),
            None => value_text(le, le.value(child)).unwrap_or_default(),
        };
        out.push((name, value));
    }
    Ok(out)
}

/// A stylesheet name from a message or the LocalEnvironment, resolved against the node's
/// stylesheet folder. Messages come from outside, so the name must stay inside that folder:
/// no absolute path, no `..`.
pub fn resolve_message_name(folder: &Path, name: &str) -> Result<PathBuf, XsltError> {
    let refuse = |reason| XsltError::Name {
        name: name.to_string(),
        reason,
    };
    if name.contains("://") || name.starts_with("file:") {
        return Err(refuse(
            "only names of files in the stylesheet folder are allowed, not URLs",
        ));
    }
    let path = Path::new(name);
    for c in path.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err(refuse("it leaves the stylesheet folder (`..`)")),
            Component::RootDir | Component::Prefix(_) => {
                return Err(refuse(
                    "it is absolute; name a file in the stylesheet folder",
                ));
            }
        }
    }
    Ok(folder.join(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_is_read_when_it_precedes_the_root() {
        let body = br#"<?xml version="1.0"?><!-- c --><?xml-stylesheet type="text/xsl" href="me.xsl"?><a/>"#;
        assert_eq!(stylesheet_instruction(body).as_deref(), Some("me.xsl"));
    }

    #[test]
    fn instruction_is_ignored_when_it_is_css_or_inside_the_root() {
        let css = br#"<?xml-stylesheet type="text/css" href="a.css"?><a/>"#;
        assert_eq!(stylesheet_instruction(css), None);
        let inside = br#"<a><?xml-stylesheet type="text/xsl" href="me.xsl"?></a>"#;
        assert_eq!(stylesheet_instruction(inside), None);
        assert_eq!(stylesheet_instruction(b"<a/>"), None);
    }

    #[test]
    fn message_name_is_refused_when_it_leaves_the_folder() {
        let folder = Path::new("/p/xsl");
        assert_eq!(
            resolve_message_name(folder, "sub/me.xsl").ok(),
            Some(PathBuf::from("/p/xsl/sub/me.xsl"))
        );
        assert!(resolve_message_name(folder, "../secret.xsl").is_err());
        assert!(resolve_message_name(folder, "/etc/passwd").is_err());
        assert!(resolve_message_name(folder, "http://h/x.xsl").is_err());
    }
}
