//! A small namespace-aware element tree of a schema document, with the line of each element, so
//! that the compiler can name file:line in its errors.

use std::collections::HashMap;
use std::sync::Arc;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use crate::error::DfdlError;

pub(crate) const XSD_NS: &str = "http://www.w3.org/2001/XMLSchema";
pub(crate) const DFDL_NS: &str = "http://www.ogf.org/dfdl/dfdl-1.0/";

/// An attribute with its namespace resolved.
#[derive(Debug, Clone)]
pub(crate) struct XAttr {
    pub ns: String,
    pub local: String,
    pub value: String,
}

/// An element of a schema document.
#[derive(Debug, Clone)]
pub(crate) struct XNode {
    pub ns: String,
    pub local: String,
    pub attrs: Vec<XAttr>,
    pub children: Vec<XNode>,
    pub text: String,
    pub line: u32,
    pub file: Arc<str>,
    /// The prefixes in scope, for resolving QName values such as `type="xs:int"`.
    pub prefixes: Arc<HashMap<String, String>>,
}

impl XNode {
    pub fn is(&self, ns: &str, local: &str) -> bool {
        self.ns == ns && self.local == local
    }

    pub fn is_xs(&self, local: &str) -> bool {
        self.is(XSD_NS, local)
    }

    /// An attribute without a namespace.
    pub fn attr(&self, local: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| a.ns.is_empty() && a.local == local)
            .map(|a| a.value.as_str())
    }

    pub fn xs_children<'a>(&'a self, local: &'a str) -> impl Iterator<Item = &'a XNode> + 'a {
        self.children.iter().filter(move |c| c.is_xs(local))
    }

    /// A QName value split into its namespace and local name.
    pub fn resolve_qname(&self, q: &str) -> (String, String) {
        match q.split_once(':') {
            Some((p, l)) => (
                self.prefixes.get(p).cloned().unwrap_or_default(),
                l.to_string(),
            ),
            None => (
                self.prefixes.get("").cloned().unwrap_or_default(),
                q.to_string(),
            ),
        }
    }

    pub fn err(&self, message: impl Into<String>) -> DfdlError {
        DfdlError::schema(&self.file, self.line, message)
    }
}

struct Open {
    node: XNode,
}

/// Read a schema document into its element tree.
pub(crate) fn read(file: &str, text: &str) -> Result<XNode, DfdlError> {
    let file: Arc<str> = Arc::from(file);
    let mut reader = Reader::from_str(text);
    reader.config_mut().trim_text(true);
    let mut stack: Vec<Open> = Vec::new();
    let mut scopes: Vec<Arc<HashMap<String, String>>> = vec![Arc::new(HashMap::new())];
    let mut line = 1u32;
    let mut counted = 0usize;
    let line_at = |pos: usize, line: &mut u32, counted: &mut usize| {
        let pos = pos.min(text.len());
        if pos > *counted {
            *line += text.as_bytes()[*counted..pos]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u32;
            *counted = pos;
        }
        *line
    };
    loop {
        let mut before = reader.buffer_position() as usize;
        // Trimmed whitespace before a tag is not an event: the tag starts after it.
        before += text.as_bytes()[before.min(text.len())..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        let ev = reader.read_event().map_err(|source| DfdlError::Xml {
            file: file.to_string(),
            line: line_at(before, &mut line, &mut counted),
            source,
        })?;
        let at = line_at(before, &mut line, &mut counted);
        match ev {
            Event::Start(e) => {
                let node = start(&e, &file, at, &mut scopes)?;
                stack.push(Open { node });
            }
            Event::Empty(e) => {
                let node = start(&e, &file, at, &mut scopes)?;
                scopes.pop();
                attach(&mut stack, node);
            }
            Event::End(_) => {
                scopes.pop();
                if let Some(open) = stack.pop() {
                    if stack.is_empty() {
                        return Ok(open.node);
                    }
                    attach(&mut stack, open.node);
                }
            }
            Event::Text(t) => {
                if let Some(top) = stack.last_mut() {
                    let s = t.decode().map_err(|e| DfdlError::Xml {
                        file: file.to_string(),
                        line: at,
                        source: quick_xml::Error::Encoding(e),
                    })?;
                    top.node.text.push_str(&s);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Err(DfdlError::schema(
        &file,
        line,
        "the document has no root element",
    ))
}

fn attach(stack: &mut [Open], node: XNode) {
    if let Some(parent) = stack.last_mut() {
        parent.node.children.push(node);
    }
}

fn start(
    e: &BytesStart<'_>,
    file: &Arc<str>,
    line: u32,
    scopes: &mut Vec<Arc<HashMap<String, String>>>,
) -> Result<XNode, DfdlError> {
    let mut raw = Vec::new();
    let mut declared = Vec::new();
    for a in e.attributes() {
        let a = a.map_err(|err| DfdlError::Xml {
            file: file.to_string(),
            line,
            source: quick_xml::Error::InvalidAttr(err),
        })?;
        let key = String::from_utf8_lossy(a.key.as_ref()).into_owned();
        let value = a
            .unescape_value()
            .map_err(|source| DfdlError::Xml {
                file: file.to_string(),
                line,
                source,
            })?
            .into_owned();
        if key == "xmlns" {
            declared.push((String::new(), value));
        } else if let Some(p) = key.strip_prefix("xmlns:") {
            declared.push((p.to_string(), value));
        } else {
            raw.push((key, value));
        }
    }
    let parent = scopes.last().cloned().unwrap_or_default();
    let prefixes = if declared.is_empty() {
        parent
    } else {
        let mut m = (*parent).clone();
        m.extend(declared);
        Arc::new(m)
    };
    scopes.push(prefixes.clone());
    let qname = String::from_utf8_lossy(e.name().as_ref()).into_owned();
    let (ns, local) = split(&qname, &prefixes, true);
    let attrs = raw
        .into_iter()
        .map(|(k, value)| {
            let (ns, local) = split(&k, &prefixes, false);
            XAttr { ns, local, value }
        })
        .collect();
    Ok(XNode {
        ns,
        local,
        attrs,
        children: Vec::new(),
        text: String::new(),
        line,
        file: file.clone(),
        prefixes,
    })
}

fn split(q: &str, prefixes: &HashMap<String, String>, element: bool) -> (String, String) {
    match q.split_once(':') {
        Some((p, l)) => (prefixes.get(p).cloned().unwrap_or_default(), l.to_string()),
        None if element => (prefixes.get("").cloned().unwrap_or_default(), q.to_string()),
        None => (String::new(), q.to_string()),
    }
}
