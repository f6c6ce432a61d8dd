//! A namespace-aware element tree of a WSDL or XSD file, each element with its line and the
//! byte offset of its start tag, so that the loader names file:line in its errors and can
//! rewrite an address in the served text.

use std::collections::HashMap;
use std::sync::Arc;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use crate::error::WsdlError;

/// An element of a WSDL or XSD document.
#[derive(Debug, Clone, Default)]
pub(crate) struct Element {
    pub ns: String,
    pub local: String,
    /// Attributes without a namespace prefix, by local name (namespace-qualified ones are kept
    /// under their `prefix:local` name).
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
    pub line: u32,
    /// Byte offset of the `<` of the start tag in the file.
    pub start: usize,
    /// Byte offset just past the element's end tag (or its empty-element tag).
    pub end: usize,
    /// The prefixes this element declares itself (`""` for a default namespace).
    pub declares: Vec<String>,
    /// Prefix bindings in scope, to resolve QName attribute values.
    pub scope: Arc<HashMap<String, String>>,
}

impl Element {
    pub fn is(&self, ns: &str, local: &str) -> bool {
        self.ns == ns && self.local == local
    }

    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn children_named<'a>(
        &'a self,
        ns: &'a str,
        local: &'a str,
    ) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.is(ns, local))
    }

    /// The child elements in the namespace `ns`.
    pub fn children_in<'a>(&'a self, ns: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.ns == ns)
    }

    /// A QName value as (namespace, local name); `None` when its prefix is not declared.
    pub fn qname(&self, value: &str) -> Option<(String, String)> {
        let (prefix, local) = value.split_once(':').unwrap_or(("", value));
        let ns = match self.scope.get(prefix) {
            Some(ns) => ns.clone(),
            None if prefix.is_empty() => String::new(),
            None => return None,
        };
        Some((ns, local.to_string()))
    }
}

fn line_of(text: &str, pos: usize) -> u32 {
    let end = pos.min(text.len());
    1 + text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u32
}

/// Read `text` (the file `file`) into its element tree.
pub(crate) fn read(file: &str, text: &str) -> Result<Element, WsdlError> {
    let mut reader = Reader::from_str(text);
    reader.config_mut().trim_text(true);
    let mut stack: Vec<Element> = Vec::new();
    let root_scope: Arc<HashMap<String, String>> = Arc::new(HashMap::from([(
        "xml".to_string(),
        "http://www.w3.org/XML/1998/namespace".to_string(),
    )]));
    let xml_err = |pos: usize, message: String| WsdlError::Invalid {
        file: file.to_string(),
        line: line_of(text, pos),
        message,
    };
    loop {
        let before = reader.buffer_position() as usize;
        let ev = reader.read_event().map_err(|e| {
            xml_err(
                reader.error_position() as usize,
                format!("not well-formed XML: {e}"),
            )
        })?;
        // The tag starts after any white space the reader trimmed.
        let start = before
            + text.as_bytes()[before.min(text.len())..]
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
        match ev {
            Event::Start(e) => {
                let scope = stack.last().map_or(&root_scope, |p| &p.scope);
                let el = element(&e, scope, start, text).map_err(|m| xml_err(start, m))?;
                stack.push(el);
            }
            Event::Empty(e) => {
                let scope = stack.last().map_or(&root_scope, |p| &p.scope);
                let mut el = element(&e, scope, start, text).map_err(|m| xml_err(start, m))?;
                el.end = reader.buffer_position() as usize;
                match stack.last_mut() {
                    Some(p) => p.children.push(el),
                    None => return Ok(el),
                }
            }
            Event::End(_) => {
                let Some(mut done) = stack.pop() else {
                    return Err(xml_err(start, "an end tag without a start tag".into()));
                };
                done.end = reader.buffer_position() as usize;
                match stack.last_mut() {
                    Some(p) => p.children.push(done),
                    None => return Ok(done),
                }
            }
            Event::DocType(_) => {
                return Err(xml_err(
                    start,
                    "a DOCTYPE is not allowed (no DTD processing)".into(),
                ));
            }
            Event::Eof => {
                return Err(xml_err(
                    text.len(),
                    "the file ends before its root element does".into(),
                ));
            }
            _ => {}
        }
    }
}

fn element(
    e: &BytesStart<'_>,
    parent: &Arc<HashMap<String, String>>,
    start: usize,
    text: &str,
) -> Result<Element, String> {
    let mut attrs = Vec::new();
    let mut declared = Vec::new();
    for a in e.attributes() {
        let a = a.map_err(|err| format!("bad attribute: {err}"))?;
        let key = String::from_utf8_lossy(a.key.as_ref()).into_owned();
        let value = a
            .unescape_value()
            .map_err(|err| format!("bad attribute value: {err}"))?
            .into_owned();
        if key == "xmlns" {
            declared.push((String::new(), value));
        } else if let Some(p) = key.strip_prefix("xmlns:") {
            declared.push((p.to_string(), value));
        } else {
            attrs.push((key, value));
        }
    }
    let declares = declared.iter().map(|(p, _)| p.clone()).collect();
    let scope = if declared.is_empty() {
        Arc::clone(parent)
    } else {
        let mut m = (**parent).clone();
        m.extend(declared);
        Arc::new(m)
    };
    let qname = String::from_utf8_lossy(e.name().as_ref()).into_owned();
    let (prefix, local) = qname.split_once(':').unwrap_or(("", &qname));
    let ns = match scope.get(prefix) {
        Some(ns) => ns.clone(),
        None if prefix.is_empty() => String::new(),
        None => return Err(format!("namespace prefix `{prefix}` is not declared")),
    };
    Ok(Element {
        ns,
        local: local.to_string(),
        attrs,
        children: Vec::new(),
        line: line_of(text, start),
        start,
        end: start,
        declares,
        scope,
    })
}

/// The `xsd:schema` element `schema` of `types` as a document of its own: its text where the
/// file has it, with the namespace declarations it inherits written on it, after as many line
/// ends as put it on its line of the file (so that a schema error names the file's line).
pub(super) fn inline_schema(text: &str, types: &Element, schema: &Element) -> String {
    let raw = &text[schema.start.min(text.len())..schema.end.min(text.len())];
    let name_end = raw
        .find(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/')
        .unwrap_or(raw.len());
    let mut inherited: Vec<(&String, &String)> = types
        .scope
        .iter()
        .filter(|(p, _)| p.as_str() != "xml" && !schema.declares.contains(*p))
        .collect();
    inherited.sort();
    let mut out = "\n".repeat(schema.line.saturating_sub(1) as usize);
    out.push_str(&raw[..name_end]);
    for (prefix, uri) in inherited {
        let uri = uri
            .replace('&', "&amp;")
            .replace('"', "&quot;")
            .replace('<', "&lt;");
        if prefix.is_empty() {
            out.push_str(&format!(" xmlns=\"{uri}\""));
        } else {
            out.push_str(&format!(" xmlns:{prefix}=\"{uri}\""));
        }
    }
    out.push_str(&raw[name_end..]);
    out
}

pub(super) fn is_schema(text: &str) -> bool {
    let head = &text[..text.len().min(2048)];
    head.contains("XMLSchema") && !head.contains("schemas.xmlsoap.org/wsdl/\"")
}
