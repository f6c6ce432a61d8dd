//! ASBITSTREAM, CREATE … PARSE and DOMAIN: between trees and the bytes of a domain.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use sluice_esql_scalar::Value;
use sluice_parsers::{blob, mime, xmlnsc};
use sluice_tree::{NodeId, Parser, Position, Tree};

use super::bitstream_options::{from_utf8, to_utf8};
use super::{Exec, Frame, Loc, R, RtError};
use crate::runtime::ir::{BitstreamIr, Ex};

fn xml() -> Arc<xmlnsc::XmlnscParser> {
    static P: OnceLock<Arc<xmlnsc::XmlnscParser>> = OnceLock::new();
    P.get_or_init(|| Arc::new(xmlnsc::XmlnscParser::default()))
        .clone()
}

fn json() -> Arc<sluice_parsers::json::JsonParser> {
    static P: OnceLock<Arc<sluice_parsers::json::JsonParser>> = OnceLock::new();
    P.get_or_init(|| Arc::new(sluice_parsers::json::JsonParser::default()))
        .clone()
}

fn mime_parser() -> Arc<mime::MimeParser> {
    static P: OnceLock<Arc<mime::MimeParser>> = OnceLock::new();
    P.get_or_init(|| Arc::new(mime::MimeParser::default()))
        .clone()
}

/// The parser of a domain name, for DOMAIN clauses and serialising built trees.
/// Header domains: folders the nodes read by name, with no parser of their own.
const HEADER_DOMAINS: &[&str] = &[
    "MQMD",
    "MQRFH2",
    "HTTPInputHeader",
    "HTTPRequestHeader",
    "HTTPReplyHeader",
    "HTTPResponseHeader",
];

pub(crate) fn parser_for(domain: &str) -> Option<Arc<dyn Parser>> {
    let is = |name: &str| domain.eq_ignore_ascii_case(name);
    if is("XMLNSC") || is("XMLNS") || is("XML") {
        Some(xml())
    } else if is("JSON") {
        Some(json())
    } else if is("BLOB") {
        Some(Arc::new(blob::BlobParser))
    } else if is("MIME") {
        Some(mime_parser())
    } else if is("SOAP") {
        Some(sluice_parsers::soap::SoapParser::shared())
    } else {
        None
    }
}

/// The domain element above `id` (the child of the tree's root on its path), if any.
fn domain_element(t: &Tree, id: NodeId) -> NodeId {
    let mut at = id;
    while let Some(p) = t.parent(at) {
        if p == NodeId(0) {
            return at;
        }
        at = p;
    }
    at
}

impl<'a> Exec<'a> {
    /// The bytes of the subtree at `l` in its domain's format, per the OPTIONS and CCSID.
    pub fn bitstream_of(&mut self, l: Loc, opts: &BitstreamIr, frame: &mut Frame) -> R<Value> {
        let o = self.bitstream_options(frame, opts)?;
        let t = self.tree(l.tree)?;
        let dom = domain_element(t, l.node);
        let dom_name = String::from_utf8_lossy(t.name_bytes(dom)).into_owned();
        let parser = t.parser_of(dom).or_else(|| parser_for(&dom_name));
        let mut out = Vec::new();
        let xml = match parser {
            Some(p) if p.domain() == xmlnsc::DOMAIN => {
                t.expand_all(l.node)?;
                if o.folder() && l.node == dom {
                    // The folder's content without the document around it: no XML declaration.
                    let mut c = t.first_child(l.node)?;
                    while let Some(id) = c {
                        if t.field_type(id) != xmlnsc::field_type::XML_DECLARATION {
                            xmlnsc::serialize_to(t, id, &mut out)?;
                        }
                        c = t.next_sibling(id)?;
                    }
                } else {
                    xmlnsc::serialize_to(t, l.node, &mut out)?;
                }
                true
            }
            Some(p) if l.node == dom => {
                p.serialize(t, l.node, &mut out)?;
                false
            }
            Some(p) => {
                return Err(RtError::general(format!(
                    "ASBITSTREAM of a field inside the {} domain is not supported; pass the domain element",
                    p.domain()
                )));
            }
            None => {
                t.expand_all(l.node)?;
                xmlnsc::serialize_to(t, l.node, &mut out)?;
                true
            }
        };
        let out = Bytes::from(out);
        Ok(Value::Blob(match o.ccsid {
            Some(c) => from_utf8(out, c, xml)?,
            None => out,
        }))
    }

    /// Make the element at `l` the root of `domain`, so serialisers recognise it. A header
    /// domain (`MQMD`, `MQRFH2`, the HTTP headers) is a plain folder here, which the nodes read
    /// by its name: `CREATE … DOMAIN('MQMD') NAME 'MQMD'` builds one as in the product.
    pub fn mark_domain(&mut self, l: Loc, domain: &str) -> R<()> {
        if HEADER_DOMAINS.contains(&domain) {
            return Ok(());
        }
        let Some(p) = parser_for(domain) else {
            return Err(RtError::general(format!(
                "unknown domain '{domain}' (XMLNSC, JSON, BLOB, MIME, SOAP and the headers {} are known)",
                HEADER_DOMAINS.join(", ")
            )));
        };
        let t = self.tree(l.tree)?;
        let i = t.add_parser(p);
        t.set_parser(l.node, i);
        Ok(())
    }

    /// CREATE … DOMAIN(d) PARSE(bytes): a domain element holding the parsed bytes (parsed on demand).
    pub fn parse_into(
        &mut self,
        frame: &mut Frame,
        at: Loc,
        pos: Position,
        domain: &str,
        source: &Ex,
        opts: &crate::runtime::ir::BitstreamIr,
    ) -> R<Loc> {
        let o = self.bitstream_options(frame, opts)?;
        let upper = domain.to_ascii_uppercase();
        let is_xml = matches!(upper.as_str(), "XMLNSC" | "XMLNS" | "XML");
        // The model first: a PARSE that names no usable model fails before reading anything.
        let dfdl = if upper == "DFDL" {
            Some(self.models.dfdl(&o.set, &o.ty)?)
        } else {
            None
        };
        let bytes = match self.scalar(frame, source)? {
            // A BLOB is bytes in the CCSID given; BLOB domain content stays as it is.
            Value::Blob(b) => match o.ccsid {
                // DFDL models name their own encodings: their bytes are read as they are.
                Some(c) if upper != "BLOB" && dfdl.is_none() => to_utf8(b, c, is_xml)?,
                _ => b,
            },
            Value::Character(s) => Bytes::copy_from_slice(s.as_bytes()),
            Value::Null => Bytes::new(),
            other => {
                return Err(RtError::general(format!(
                    "PARSE needs a BLOB or CHARACTER value, not {}",
                    other.type_name()
                )));
            }
        };
        let t = self.tree(at.tree)?;
        let parent = match pos {
            Position::FirstChild | Position::LastChild => at.node,
            _ => t
                .parent(at.node)
                .ok_or_else(|| RtError::general("PARSE beside a field without a parent"))?,
        };
        t.expand_children(parent)?;
        let id = match upper.as_str() {
            "XMLNSC" | "XMLNS" | "XML" => xmlnsc::attach(t, parent, bytes, xml()),
            "JSON" => sluice_parsers::json::attach(t, parent, bytes, &json())?,
            "BLOB" => blob::attach(t, parent, bytes),
            "DFDL" => match &dfdl {
                Some(p) => sluice_dfdl::attach(t, parent, bytes, p),
                None => return Err(RtError::general("PARSE with DOMAIN 'DFDL' has no model")),
            },
            "MIME" => mime::attach(t, parent, bytes, &mime_parser()),
            "SOAP" => sluice_parsers::soap::attach(
                t,
                parent,
                bytes,
                sluice_parsers::soap::SoapParser::shared(),
            ),
            other => {
                return Err(RtError::general(format!(
                    "unknown domain '{other}' for PARSE"
                )));
            }
        };
        t.touch(parent);
        if o.parse_now() {
            // ParseComplete / ParseImmediate: the whole bit stream now, so that a malformed one
            // fails this statement (where a handler can catch it) rather than a later reference.
            if let Err(e) = t.expand_all(id) {
                let _ = t.delete(id);
                return Err(e.into());
            }
        }
        if pos != Position::LastChild {
            t.detach(id)?;
            t.attach(id, at.node, pos)?;
        }
        Ok(Loc {
            tree: at.tree,
            node: id,
        })
    }
}
