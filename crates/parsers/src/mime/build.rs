//! Building the MIME tree from a parsed entity.

use bytes::Bytes;
use sluice_tree::field_type::{NAME, NAME_VALUE, VALUE};
use sluice_tree::{NodeId, SourceSpan, Text, Tree, TreeError, Value};

use super::codec::{self, Encoding};
use super::parse::{self, Body, Entity, Header};
use super::{DOMAIN, FROM_TRANSPORT, MimeParser, PartDomains};
use crate::{blob, json, xmlnsc};

/// Parse the pending domain element `id` and build its whole structure.
pub(super) fn expand(p: &MimeParser, tree: &mut Tree, id: NodeId) -> Result<(), TreeError> {
    let Some(span) = tree.source(id) else {
        tree.finish_pending(id);
        return Ok(());
    };
    let bytes = tree.buffer(span.buf).clone();
    let range = span.start as usize..span.end as usize;
    let transport = if tree.parser_flags(id) & FROM_TRANSPORT != 0 {
        let c = tree.peek_first_child(id);
        Some(
            c.and_then(|c| tree.value_bytes(c))
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .unwrap_or_default(),
        )
    } else {
        None
    };
    let entity = parse::entity(&bytes, range, transport.as_deref())
        .map_err(|e| e.into_tree_error(DOMAIN))?;
    // Every body is decoded before the first element is added, so that a bad one leaves the
    // element pending and unchanged (the error repeats on the next navigation).
    let mut bodies = Vec::new();
    decode_all(&bytes, &entity, &mut bodies).map_err(|e| e.into_tree_error(DOMAIN))?;
    let mut b = Builder {
        p,
        buf: span.buf,
        bodies: bodies.into_iter(),
    };
    headers(tree, id, &entity.headers);
    b.body(tree, id, &entity.headers, &entity.body)?;
    tree.finish_pending(id);
    Ok(())
}

fn encoding(headers: &[Header]) -> Encoding {
    Encoding::from_header(parse::header(headers, "Content-Transfer-Encoding"))
}

fn decode_all(bytes: &Bytes, e: &Entity, out: &mut Vec<Bytes>) -> Result<(), crate::Error> {
    match &e.body {
        Body::Single(r) => {
            let body = match encoding(&e.headers) {
                // Zero-copy: the part is a slice of the message.
                Encoding::Identity => bytes.slice(r.clone()),
                enc => Bytes::from(codec::decode(enc, &bytes[r.clone()], r.start)?),
            };
            out.push(body);
        }
        Body::Multi(m) => {
            for (_, part) in &m.parts {
                decode_all(bytes, part, out)?;
            }
        }
    }
    Ok(())
}

fn headers(tree: &mut Tree, parent: NodeId, headers: &[Header]) {
    for h in headers {
        let name = tree.intern_name(h.name.as_bytes());
        let value = tree.alloc_text(h.value.as_bytes());
        tree.push_parsed(
            parent,
            NAME_VALUE,
            Text::EMPTY,
            name,
            Value::Character(value),
        );
    }
}

struct Builder<'a> {
    p: &'a MimeParser,
    buf: u32,
    bodies: std::vec::IntoIter<Bytes>,
}

impl Builder<'_> {
    fn span(&self, r: &std::ops::Range<usize>) -> SourceSpan {
        SourceSpan {
            buf: self.buf,
            start: r.start as u32,
            end: r.end as u32,
        }
    }

    fn blob_value(&self, r: &std::ops::Range<usize>) -> Value {
        Value::Blob(Text::src_or_empty(
            self.buf,
            r.start as u32,
            (r.end - r.start) as u32,
        ))
    }

    fn body(
        &mut self,
        tree: &mut Tree,
        parent: NodeId,
        headers: &[Header],
        body: &Body,
    ) -> Result<(), TreeError> {
        match body {
            Body::Single(r) => {
                let data = tree.push_parsed(
                    parent,
                    NAME,
                    Text::EMPTY,
                    Text::from_static("Data"),
                    Value::Null,
                );
                tree.set_source(data, self.span(r));
                let content = self.bodies.next().ok_or_else(|| {
                    TreeError::Internal("MIME parser: a part body was not decoded".into())
                })?;
                let ct = parse::header(headers, "Content-Type");
                self.part_domain(tree, data, content, ct)?;
            }
            Body::Multi(m) => {
                let parts = tree.push_parsed(
                    parent,
                    NAME,
                    Text::EMPTY,
                    Text::from_static("Parts"),
                    Value::Null,
                );
                if let Some(r) = &m.preamble {
                    let v = self.blob_value(r);
                    tree.push_parsed(parts, VALUE, Text::EMPTY, Text::EMPTY, v);
                }
                for (r, e) in &m.parts {
                    let part = tree.push_parsed(
                        parts,
                        NAME,
                        Text::EMPTY,
                        Text::from_static("Part"),
                        Value::Null,
                    );
                    tree.set_source(part, self.span(r));
                    self::headers(tree, part, &e.headers);
                    self.body(tree, part, &e.headers, &e.body)?;
                }
                if let Some(r) = &m.epilogue {
                    let v = self.blob_value(r);
                    tree.push_parsed(parts, VALUE, Text::EMPTY, Text::EMPTY, v);
                }
            }
        }
        Ok(())
    }

    fn part_domain(
        &self,
        tree: &mut Tree,
        data: NodeId,
        content: Bytes,
        ct: Option<&str>,
    ) -> Result<NodeId, TreeError> {
        if self.p.parts == PartDomains::ByContentType
            && let Some(ct) = ct
        {
            let media = ct
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            if media == "text/xml" || media == "application/xml" || media.ends_with("+xml") {
                return Ok(xmlnsc::attach(tree, data, content, self.p.xml.clone()));
            }
            if media == "application/json" || media.ends_with("+json") {
                return json::attach(tree, data, content, &self.p.json);
            }
        }
        Ok(blob::attach(tree, data, content))
    }
}
