//! Test support: a small on-demand parser for an XML-like notation (so tests need no real XML
//! parser), and shorthands for evaluating expressions against the trees it builds.

mod errors;
mod functions;
mod lazy;
mod operators;
mod paths;

use std::sync::Arc;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};

use bytes::Bytes;

use crate::xpath::tree_api::field_type::{NAME, NAME_VALUE, VALUE};
use crate::xpath::tree_api::{
    Expand, Message, NodeId, Parser, SourceSpan, Text, Tree, TreeError, Value,
};
use crate::xpath::{NodeKind, XNode, XPath, XPathContext, XValue};

/// XMLNSC.Folder, XMLNSC.Field, XMLNSC.Value, XMLNSC.Attribute, XMLNSC.Comment.
const FOLDER: u32 = NAME;
const FIELD: u32 = NAME_VALUE;
const TEXT: u32 = VALUE;
const ATTRIBUTE: u32 = 0x0300_0100;
const COMMENT: u32 = 0x0300_0400;

/// An on-demand parser for `<a x='1'><b>text</b><!--c--></a>`-style text, building elements
/// the way XMLNSC does: text-only elements are fields with a character value, elements with
/// element content are folders parsed only when navigated into, attributes come first. A name
/// may carry a namespace as `{uri}local`. It counts its `expand` calls and pushed elements.
pub(crate) struct ToyXml {
    index: AtomicU16,
    pub expands: AtomicUsize,
    pub pushed: AtomicUsize,
}

fn parse_err(offset: usize, message: &str) -> TreeError {
    TreeError::Parse {
        domain: "TOYXML",
        offset: offset as u64,
        message: message.to_owned(),
    }
}

fn find(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    if from > b.len() {
        return None;
    }
    b[from..]
        .windows(pat.len())
        .position(|w| w == pat)
        .map(|i| i + from)
}

fn name_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && !matches!(b[i], b' ' | b'>' | b'/' | b'=' | b'\'' | b'"') {
        i += 1;
    }
    i
}

impl ToyXml {
    fn text(buf: u32, start: usize, end: usize) -> Text {
        Text::src(buf, start as u32, (end - start) as u32)
    }

    /// A possibly namespaced name `{uri}local` at `start..end`: (namespace, local).
    fn qname(b: &[u8], buf: u32, start: usize, end: usize) -> (Text, Text) {
        if b.get(start) == Some(&b'{')
            && let Some(close) = find(&b[..end], start, b"}")
        {
            return (
                Self::text(buf, start + 1, close),
                Self::text(buf, close + 1, end),
            );
        }
        (Text::EMPTY, Self::text(buf, start, end))
    }

    /// The end of the element whose start tag ends at `after_start` (just past `>`), by
    /// counting nested tags: the index just past its `</name>`.
    fn element_end(b: &[u8], after_start: usize, limit: usize) -> Result<usize, TreeError> {
        let mut depth = 1usize;
        let mut i = after_start;
        while i < limit {
            if b[i] != b'<' {
                i += 1;
                continue;
            }
            if b[i..].starts_with(b"<!--") {
                i = find(b, i, b"-->").ok_or_else(|| parse_err(i, "comment not closed"))? + 3;
                continue;
            }
            let close = find(b, i, b">").ok_or_else(|| parse_err(i, "tag not closed"))?;
            if b.get(i + 1) == Some(&b'/') {
                depth -= 1;
                if depth == 0 {
                    return Ok(close + 1);
                }
            } else if b[close - 1] != b'/' {
                depth += 1;
            }
            i = close + 1;
        }
        Err(parse_err(after_start, "element not closed"))
    }

    /// Parse one child of `id` at `pos` (before `limit`); returns the position after it.
    fn one(
        &self,
        tree: &mut Tree,
        id: NodeId,
        buf: u32,
        b: &[u8],
        pos: usize,
        limit: usize,
    ) -> Result<usize, TreeError> {
        if b[pos..].starts_with(b"<!--") {
            let end = find(b, pos, b"-->").ok_or_else(|| parse_err(pos, "comment not closed"))?;
            let v = Value::Character(Self::text(buf, pos + 4, end));
            tree.push_parsed(id, COMMENT, Text::EMPTY, Text::EMPTY, v);
            self.pushed.fetch_add(1, Ordering::Relaxed);
            return Ok(end + 3);
        }
        if b[pos] != b'<' {
            let end = find(&b[..limit], pos, b"<").unwrap_or(limit);
            let v = Value::Character(Self::text(buf, pos, end));
            tree.push_parsed(id, TEXT, Text::EMPTY, Text::EMPTY, v);
            self.pushed.fetch_add(1, Ordering::Relaxed);
            return Ok(end);
        }
        if b.get(pos + 1) == Some(&b'/') {
            return Err(parse_err(pos, "unexpected end tag"));
        }
        let n_end = name_end(b, pos + 1);
        if n_end == pos + 1 {
            return Err(parse_err(pos, "element name missing"));
        }
        let (ns, name) = Self::qname(b, buf, pos + 1, n_end);
        // Attributes: name='value' or name="value".
        let mut attrs = Vec::new();
        let mut i = n_end;
        loop {
            while b.get(i) == Some(&b' ') {
                i += 1;
            }
            match b.get(i) {
                Some(b'>') | Some(b'/') => break,
                Some(_) => {
                    let a_end = name_end(b, i);
                    let q = *b
                        .get(a_end + 1)
                        .ok_or_else(|| parse_err(i, "attribute value missing"))?;
                    if b.get(a_end) != Some(&b'=') || !matches!(q, b'\'' | b'"') {
                        return Err(parse_err(i, "bad attribute"));
                    }
                    let v_end = find(b, a_end + 2, &[q])
                        .ok_or_else(|| parse_err(i, "attribute value not closed"))?;
                    attrs.push((
                        Self::qname(b, buf, i, a_end),
                        Self::text(buf, a_end + 2, v_end),
                    ));
                    i = v_end + 1;
                }
                None => return Err(parse_err(pos, "tag not closed")),
            }
        }
        let self_closing = b[i] == b'/';
        let after_start = if self_closing { i + 2 } else { i + 1 };
        if self_closing && b.get(i + 1) != Some(&b'>') {
            return Err(parse_err(i, "tag not closed"));
        }
        let end = if self_closing {
            after_start
        } else {
            Self::element_end(b, after_start, limit)?
        };
        let content_end = if self_closing {
            after_start
        } else {
            b[..end]
                .iter()
                .rposition(|&c| c == b'<')
                .unwrap_or(after_start)
        };
        let text_only = !b[after_start..content_end].contains(&b'<');
        let child = if text_only && content_end > after_start {
            let v = Value::Character(Self::text(buf, after_start, content_end));
            tree.push_parsed(id, FIELD, ns, name, v)
        } else {
            tree.push_parsed(id, FOLDER, ns, name, Value::Null)
        };
        self.pushed.fetch_add(1, Ordering::Relaxed);
        tree.set_source(
            child,
            SourceSpan {
                buf,
                start: pos as u32,
                end: end as u32,
            },
        );
        for ((a_ns, a_name), v) in attrs {
            tree.push_parsed(child, ATTRIBUTE, a_ns, a_name, Value::Character(v));
            self.pushed.fetch_add(1, Ordering::Relaxed);
        }
        if !text_only {
            tree.set_pending(
                child,
                self.index.load(Ordering::Relaxed),
                after_start as u32,
            );
        }
        Ok(end)
    }
}

impl Parser for ToyXml {
    fn domain(&self) -> &'static str {
        "TOYXML"
    }

    fn expand(&self, tree: &mut Tree, id: NodeId, how: Expand) -> Result<(), TreeError> {
        self.expands.fetch_add(1, Ordering::Relaxed);
        let span = tree.source(id).ok_or_else(|| parse_err(0, "no source"))?;
        let bytes: Bytes = tree.buffer(span.buf).clone();
        let b = &bytes[..];
        let whole = &b[span.start as usize..span.end as usize];
        // A folder's content ends at its end tag; the domain element's at its span's end.
        let limit = if tree.parent(id).is_some_and(|p| tree.parser_of(p).is_some()) {
            span.start as usize
                + whole
                    .iter()
                    .rposition(|&c| c == b'<')
                    .unwrap_or(whole.len())
        } else {
            span.end as usize
        };
        let mut pos = tree.resume(id) as usize;
        loop {
            while pos < limit && matches!(b[pos], b' ' | b'\n' | b'\t' | b'\r') {
                pos += 1;
            }
            if pos >= limit {
                tree.set_resume(id, pos as u32);
                tree.finish_pending(id);
                return Ok(());
            }
            pos = self.one(tree, id, span.buf, b, pos, limit)?;
            tree.set_resume(id, pos as u32);
            if how == Expand::OneMore {
                return Ok(());
            }
        }
    }

    fn serialize(&self, tree: &mut Tree, id: NodeId, out: &mut Vec<u8>) -> Result<(), TreeError> {
        let bytes = tree.original(id).ok_or(TreeError::Serialize {
            domain: "TOYXML",
            message: "only unchanged trees can be written".to_owned(),
        })?;
        out.extend_from_slice(bytes);
        Ok(())
    }
}

/// A message whose body is `xml` under an `XMLNSC` element, unparsed, with the parser that
/// will parse it on demand.
pub(crate) fn lazy_message(xml: &str) -> (Message, Arc<ToyXml>) {
    let mut m = Message::new();
    let parser = Arc::new(ToyXml {
        index: AtomicU16::new(0),
        expands: AtomicUsize::new(0),
        pushed: AtomicUsize::new(0),
    });
    let tree = &mut m.root;
    let idx = tree.add_parser(parser.clone());
    parser.index.store(idx, Ordering::Relaxed);
    let buf = tree.add_buffer(Bytes::copy_from_slice(xml.as_bytes()));
    let r = tree.root();
    let body = tree
        .create_last_child(r, FOLDER, Text::from_static("XMLNSC"), Value::Null)
        .expect("a fresh root takes children");
    tree.set_source(
        body,
        SourceSpan {
            buf,
            start: 0,
            end: xml.len() as u32,
        },
    );
    tree.set_pending(body, idx, 0);
    (m, parser)
}

/// A message whose body is `xml`, fully parsed.
pub(crate) fn message(xml: &str) -> Message {
    let (mut m, _) = lazy_message(xml);
    let r = m.root.root();
    m.root.expand_all(r).expect("test messages are well formed");
    m
}

/// The seeds' shape of message, with two sale lists.
pub(crate) const SALE: &str = "<Parent><First>1</First>\
<SaleList><Invoice id='A1' kind=\"x\"><Initial>K</Initial><Amount>10.5</Amount></Invoice>\
<Invoice id='A2'><Initial>L</Initial><Amount>20</Amount></Invoice></SaleList>\
<SaleList><Invoice id='B1'><Amount>5</Amount></Invoice></SaleList>\
<Last>Test</Last></Parent>";

pub(crate) fn eval_in(m: &mut Message, expr: &str) -> XValue {
    let x = XPath::compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let mut env = Tree::new("Environment");
    let mut cx = XPathContext::new(m, &mut env);
    x.evaluate(&mut cx)
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
}

pub(crate) fn eval(xml: &str, expr: &str) -> XValue {
    eval_in(&mut message(xml), expr)
}

pub(crate) fn string(xml: &str, expr: &str) -> String {
    match eval(xml, &format!("string({expr})")) {
        XValue::String(s) => s,
        other => panic!("{expr}: not a string: {other:?}"),
    }
}

pub(crate) fn number(xml: &str, expr: &str) -> f64 {
    match eval(xml, &format!("number({expr})")) {
        XValue::Number(n) => n,
        other => panic!("{expr}: not a number: {other:?}"),
    }
}

pub(crate) fn truth(xml: &str, expr: &str) -> bool {
    let x = XPath::compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let mut m = message(xml);
    let mut cx = XPathContext::without_environment(&mut m);
    x.evaluate_bool(&mut cx)
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
}

/// The string values of the nodes an expression selects, in the order returned.
pub(crate) fn values(xml: &str, expr: &str) -> Vec<String> {
    let mut m = message(xml);
    let nodes = match eval_in(&mut m, expr) {
        XValue::NodeSet(ns) => ns,
        other => panic!("{expr}: not a node-set: {other:?}"),
    };
    let mut cx = XPathContext::without_environment(&mut m);
    nodes
        .into_iter()
        .map(|n| cx.string_value(n).expect("string value"))
        .collect()
}

/// The names (or `#text`, `#comment`) of the nodes an expression selects.
pub(crate) fn names(xml: &str, expr: &str) -> Vec<String> {
    let mut m = message(xml);
    let nodes = match eval_in(&mut m, expr) {
        XValue::NodeSet(ns) => ns,
        other => panic!("{expr}: not a node-set: {other:?}"),
    };
    let cx = XPathContext::without_environment(&mut m);
    nodes
        .into_iter()
        .map(|n: XNode| match n.kind {
            NodeKind::Text | NodeKind::ValueText => "#text".to_owned(),
            NodeKind::Comment => "#comment".to_owned(),
            NodeKind::Attribute => format!(
                "@{}",
                String::from_utf8_lossy(cx.local_name(n).expect("name"))
            ),
            _ => String::from_utf8_lossy(cx.local_name(n).expect("name")).into_owned(),
        })
        .collect()
}
