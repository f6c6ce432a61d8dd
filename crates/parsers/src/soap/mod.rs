//! The SOAP domain: a SOAP 1.1 or 1.2 envelope in the product's tree shape.
//!
//! Tree shape (as the product builds it):
//! - the domain element `SOAP` holds `Context`, `Header` (when the envelope has one) and `Body`;
//! - `Context` holds what the envelope says about itself: `SOAP_Version` (`1.1` or `1.2`) and a
//!   `Namespace` folder with one [`field_type::NAMESPACE_DECL`] per prefix the `Envelope`
//!   element declares (named by the prefix, the URI as value). SOAPInput adds the WSDL's view as
//!   attributes: `operation`, `portType`, `portTypeNamespace`, `service`, `port`, `fileName`
//!   and `operationType`;
//! - `Header` holds each header block and `Body` each body element, as XMLNSC elements (same
//!   field types and shape as the XMLNSC domain, so flows read them the same way); a fault is
//!   the `Fault` element in `Body` (see [`fault`]).
//!
//! Parsing reads the whole envelope with the XMLNSC parser the first time the tree is navigated.
//! Serialising writes an `Envelope` in the version `Context.SOAP_Version` names (1.1 when it is
//! absent), declaring the prefixes of `Context.Namespace`; an envelope nobody changed is sent as
//! the bytes it came in.

pub mod fault;

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use sluice_tree::{Expand, NodeId, Parser, Text, Tree, TreeError, Value};

use crate::xmlnsc::{self, XmlnscParser, field_type};

/// The domain name, also the name of the domain element.
pub const DOMAIN: &str = "SOAP";

/// The SOAP 1.1 envelope namespace.
pub const ENV_11: &str = "http://schemas.xmlsoap.org/soap/envelope/";
/// The SOAP 1.2 envelope namespace.
pub const ENV_12: &str = "http://www.w3.org/2003/05/soap-envelope";

/// A SOAP version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoapVersion {
    V11,
    V12,
}

impl SoapVersion {
    /// The envelope namespace of this version.
    pub fn envelope_ns(self) -> &'static str {
        match self {
            SoapVersion::V11 => ENV_11,
            SoapVersion::V12 => ENV_12,
        }
    }

    /// `1.1` or `1.2`, as `Context.SOAP_Version` holds it.
    pub fn word(self) -> &'static str {
        match self {
            SoapVersion::V11 => "1.1",
            SoapVersion::V12 => "1.2",
        }
    }

    /// The version whose envelope namespace is `ns`.
    pub fn from_ns(ns: &[u8]) -> Option<SoapVersion> {
        match ns {
            b if b == ENV_11.as_bytes() => Some(SoapVersion::V11),
            b if b == ENV_12.as_bytes() => Some(SoapVersion::V12),
            _ => None,
        }
    }

    /// The content type of a message in this version (without the `action` parameter).
    pub fn content_type(self) -> &'static str {
        match self {
            SoapVersion::V11 => "text/xml; charset=utf-8",
            SoapVersion::V12 => "application/soap+xml; charset=utf-8",
        }
    }

    /// The prefix written for the envelope namespace when the tree declares none.
    fn default_prefix(self) -> &'static str {
        match self {
            SoapVersion::V11 => "soapenv",
            SoapVersion::V12 => "env",
        }
    }
}

/// The SOAP parser and serialiser; it has no options of its own.
#[derive(Debug, Default)]
pub struct SoapParser {
    xml: Arc<XmlnscParser>,
}

impl SoapParser {
    /// A SOAP parser that reads the XML inside with `xml` (its limits apply).
    pub fn new(xml: Arc<XmlnscParser>) -> SoapParser {
        SoapParser { xml }
    }

    /// The parser with default options, shared.
    pub fn shared() -> Arc<SoapParser> {
        static P: OnceLock<Arc<SoapParser>> = OnceLock::new();
        P.get_or_init(|| Arc::new(SoapParser::default())).clone()
    }
}

/// Add the `SOAP` domain element for `bytes` as the last child of `parent` (the Root),
/// unparsed: the first navigation parses the envelope.
pub fn attach(tree: &mut Tree, parent: NodeId, bytes: Bytes, parser: Arc<SoapParser>) -> NodeId {
    let empty = bytes.is_empty();
    let (id, index, _) = tree.push_domain(parent, DOMAIN, bytes, parser);
    if !empty {
        tree.set_pending(id, index, 0);
    }
    id
}

fn soap_err(offset: u64, message: impl Into<String>) -> TreeError {
    TreeError::Parse {
        domain: DOMAIN,
        offset,
        message: message.into(),
    }
}

/// The first element child of `id` (skipping attributes, declarations, comments).
fn elements(tree: &mut Tree, id: NodeId) -> Result<Vec<NodeId>, TreeError> {
    Ok(tree
        .children(id)?
        .into_iter()
        .filter(|&c| is_element(tree, c))
        .collect())
}

fn is_element(tree: &Tree, id: NodeId) -> bool {
    matches!(
        tree.field_type(id),
        field_type::FOLDER | field_type::FIELD | field_type::CDATA_FIELD | field_type::BIT_STREAM
    ) && !tree.name_bytes(id).is_empty()
}

fn offset_of(tree: &Tree, id: NodeId) -> u64 {
    tree.source_start(id).map_or(0, |(_, s)| u64::from(s))
}

impl SoapParser {
    fn build(&self, tree: &mut Tree, id: NodeId) -> Result<(), TreeError> {
        let Some(span) = tree.source(id) else {
            tree.finish_pending(id);
            return Ok(());
        };
        let bytes = tree
            .buffer(span.buf)
            .slice(span.start as usize..span.end as usize);
        // The envelope is parsed by XMLNSC in this tree, under the SOAP element, and its parts
        // are then moved into place: parsed in a tree of its own, every element would be copied
        // over once more.
        let doc = xmlnsc::attach(tree, id, bytes, Arc::clone(&self.xml));
        let built = self.take_parts(tree, id, doc);
        if built.is_err() {
            // As if nothing had been parsed: the element stays pending and fails the same way.
            tree.discard_parsed(id, None);
            return built;
        }
        tree.drop_parsed(doc);
        tree.finish_pending(id);
        Ok(())
    }

    /// Parse the XMLNSC document `doc` (a child of the SOAP element `id`) and move its envelope's
    /// namespace declarations, header blocks and body elements into `Context`, `Header` and
    /// `Body` of `id`.
    fn take_parts(&self, tree: &mut Tree, id: NodeId, doc: NodeId) -> Result<(), TreeError> {
        tree.expand_all(doc).map_err(|e| match e {
            TreeError::Parse {
                offset, message, ..
            } => soap_err(offset, message),
            other => other,
        })?;
        let envelope = elements(tree, doc)?
            .into_iter()
            .next()
            .ok_or_else(|| soap_err(0, "the body holds no XML element"))?;
        let version = SoapVersion::from_ns(tree.namespace_bytes(envelope))
            .filter(|_| tree.name_bytes(envelope) == b"Envelope")
            .ok_or_else(|| {
                soap_err(
                    offset_of(tree, envelope),
                    format!(
                        "the document element is {{{}}}{}, not a SOAP 1.1 or 1.2 Envelope",
                        tree.str(tree.namespace(envelope)),
                        tree.str(tree.name(envelope))
                    ),
                )
            })?;
        let env_ns = version.envelope_ns().as_bytes();

        let context = tree.push_parsed(
            id,
            field_type::FOLDER,
            Text::EMPTY,
            Text::from_static("Context"),
            Value::Null,
        );
        tree.push_parsed(
            context,
            field_type::FIELD,
            Text::EMPTY,
            Text::from_static("SOAP_Version"),
            Value::Character(Text::from_static(version.word())),
        );
        let ns_folder = tree.push_parsed(
            context,
            field_type::FOLDER,
            Text::EMPTY,
            Text::from_static("Namespace"),
            Value::Null,
        );
        for c in tree.children(envelope)? {
            if tree.field_type(c) == field_type::NAMESPACE_DECL
                || tree.field_type(c) == field_type::SINGLE_NAMESPACE_DECL
            {
                tree.move_parsed(c, ns_folder);
            }
        }

        let mut body_seen = false;
        for part in elements(tree, envelope)? {
            let name = tree.name_bytes(part);
            let at = offset_of(tree, part);
            if tree.namespace_bytes(part) != env_ns || body_seen {
                return Err(soap_err(
                    at,
                    format!(
                        "unexpected element {} in the Envelope (only Header and Body, in that order)",
                        tree.str(tree.name(part))
                    ),
                ));
            }
            let folder = match name {
                b"Header" => "Header",
                b"Body" => {
                    body_seen = true;
                    "Body"
                }
                _ => {
                    return Err(soap_err(
                        at,
                        format!(
                            "unexpected element {} in the Envelope",
                            tree.str(tree.name(part))
                        ),
                    ));
                }
            };
            let f = tree.push_parsed(
                id,
                field_type::FOLDER,
                Text::EMPTY,
                Text::from_static(folder),
                Value::Null,
            );
            for c in elements(tree, part)? {
                tree.move_parsed(c, f);
            }
        }
        if !body_seen {
            return Err(soap_err(
                offset_of(tree, envelope),
                "the Envelope has no Body",
            ));
        }
        Ok(())
    }
}

/// The SOAP version `Context.SOAP_Version` of the domain element `id` names (1.1 when absent).
pub fn version_of(tree: &mut Tree, id: NodeId) -> Result<SoapVersion, TreeError> {
    let Some(v) = tree.path(id, &["Context", "SOAP_Version"])? else {
        return Ok(SoapVersion::V11);
    };
    Ok(match tree.value_bytes(v) {
        Some(b) if b.trim_ascii() == b"1.2" => SoapVersion::V12,
        _ => SoapVersion::V11,
    })
}

/// Write the SOAP domain element `id` as an envelope.
pub fn serialize_to(tree: &mut Tree, id: NodeId, out: &mut Vec<u8>) -> Result<(), TreeError> {
    if let Some(o) = tree.original(id)
        && !o.is_empty()
    {
        out.extend_from_slice(o);
        return Ok(());
    }
    let version = version_of(tree, id)?;
    let env_ns = version.envelope_ns();
    // The envelope is written around the Header and Body folders as they are, so that XMLNSC's
    // writer declares the prefixes and copies unchanged header blocks and body elements as they
    // came, without the tree being copied first.
    let mut decls = Vec::new();
    let mut env_declared = false;
    if let Some(ns) = tree.path(id, &["Context", "Namespace"])? {
        for d in tree.children(ns)? {
            let t = tree.field_type(d);
            if t != field_type::NAMESPACE_DECL && t != field_type::SINGLE_NAMESPACE_DECL {
                continue;
            }
            env_declared |= tree.value_bytes(d) == Some(env_ns.as_bytes());
            decls.push(d);
        }
    }
    let default_decl = [(version.default_prefix().as_bytes(), env_ns.as_bytes())];
    let extra: &[(&[u8], &[u8])] = if env_declared { &[] } else { &default_decl };
    let mut parts: Vec<(&[u8], Option<NodeId>)> = Vec::with_capacity(2);
    let mut body_written = false;
    for part in tree.children(id)? {
        let name: &[u8] = match tree.name_bytes(part) {
            b"Header" => b"Header",
            b"Body" => b"Body",
            _ => continue,
        };
        if name == b"Header" && tree.first_child(part)?.is_none() {
            continue;
        }
        body_written |= name == b"Body";
        parts.push((name, Some(part)));
    }
    if !body_written {
        parts.push((b"Body", None));
    }
    xmlnsc::serialize_wrapped(
        tree,
        (env_ns.as_bytes(), b"Envelope"),
        &decls,
        extra,
        &parts,
        out,
    )
}

impl Parser for SoapParser {
    fn domain(&self) -> &'static str {
        DOMAIN
    }

    fn expand(&self, tree: &mut Tree, id: NodeId, _how: Expand) -> Result<(), TreeError> {
        self.build(tree, id)
    }

    fn serialize(&self, tree: &mut Tree, id: NodeId, out: &mut Vec<u8>) -> Result<(), TreeError> {
        serialize_to(tree, id, out)
    }
}

#[cfg(test)]
mod tests;
