//! Writing an XMLNSC tree as XML.
//!
//! An unchanged element is written by copying its original bytes when they mean the same in the
//! output: they must not rely on namespace declarations outside the element (parser flags), and
//! unprefixed names in no namespace must not land under a default namespace. Everything else is
//! written from the tree. Prefixes come from the `NamespaceDecl` elements in scope; a namespace
//! without one gets a generated prefix `NS1`, `NS2`, … declared where it is first needed, as the
//! product does.

use sluice_tree::{NodeId, Tree, TreeError, Value};

use super::DOMAIN;
use super::field_type as ft;
use super::flags;
use super::scope::decl_prefix;
use super::text::{escape_attr, escape_text, write_cdata};
use sluice_tree::text_form::write_value as value_text;

/// Deepest tree the writer descends (parsed trees are limited far below this).
const MAX_WRITE_DEPTH: usize = 2000;

/// Write the XMLNSC subtree `id` as XML to `out`. For the domain element this is the whole
/// document; for any other element, that element.
pub fn serialize_to(tree: &mut Tree, id: NodeId, out: &mut Vec<u8>) -> Result<(), TreeError> {
    let mut w = Writer::default();
    let is_domain =
        tree.parser_flags(id) & flags::DOC != 0 || tree.name_bytes(id) == DOMAIN.as_bytes();
    if is_domain {
        if let Some(o) = tree.original(id)
            && is_xmlnsc(tree, id)
        {
            out.extend_from_slice(o);
            return Ok(());
        }
        w.children(tree, id, out, 0)
    } else {
        w.node(tree, id, out, 0)
    }
}

/// Write a document element the tree does not hold around parts it does: `<P:local>` in
/// namespace `ns`, declaring the prefixes of `decls` (namespace declaration elements of `tree`)
/// and then `extra` ((prefix, URI) pairs), with each of `parts` as an element `name` in `ns`
/// whose content is the children of the given element (the element's own name, namespace and
/// value are not written; `None`: an empty element). A domain whose envelope the tree holds as
/// folders (SOAP) is written without first copying its content into an XMLNSC tree.
pub fn serialize_wrapped(
    tree: &mut Tree,
    (ns, local): (&[u8], &[u8]),
    decls: &[NodeId],
    extra: &[(&[u8], &[u8])],
    parts: &[(&[u8], Option<NodeId>)],
    out: &mut Vec<u8>,
) -> Result<(), TreeError> {
    let mut w = Writer::default();
    let mut declared: Vec<(Vec<u8>, Vec<u8>, bool)> = Vec::with_capacity(decls.len() + extra.len());
    for &k in decls {
        let p = decl_prefix(tree, k);
        let mut u = Vec::new();
        value_text(tree, tree.value(k), &mut u);
        w.bindings.push((p.clone(), u.clone()));
        declared.push((p, u, tree.field_type(k) == ft::SINGLE_NAMESPACE_DECL));
    }
    for &(p, u) in extra {
        w.bindings.push((p.to_vec(), u.to_vec()));
        declared.push((p.to_vec(), u.to_vec(), false));
    }
    let mut generated = Vec::new();
    let mut prefix = if ns.is_empty() {
        Vec::new()
    } else {
        match w.prefix_for(ns, true) {
            Some(p) => p,
            None => w.generate(ns, &mut generated),
        }
    };
    declared.extend(generated.into_iter().map(|(p, u)| (p, u, false)));
    if !prefix.is_empty() {
        prefix.push(b':');
    }
    out.push(b'<');
    out.extend_from_slice(&prefix);
    out.extend_from_slice(local);
    for (p, u, single) in &declared {
        out.extend_from_slice(b" xmlns");
        if !p.is_empty() {
            out.push(b':');
            out.extend_from_slice(p);
        }
        out.extend_from_slice(if *single { b"='" } else { b"=\"" });
        escape_attr(u, *single, out);
        out.push(if *single { b'\'' } else { b'"' });
    }
    out.push(b'>');
    for &(name, part) in parts {
        match part {
            Some(id) => w.element_as(tree, id, out, 1, Some((ns, name)))?,
            None => {
                out.push(b'<');
                out.extend_from_slice(&prefix);
                out.extend_from_slice(name);
                out.extend_from_slice(b"/>");
            }
        }
    }
    out.extend_from_slice(b"</");
    out.extend_from_slice(&prefix);
    out.extend_from_slice(local);
    out.push(b'>');
    Ok(())
}

fn is_xmlnsc(tree: &Tree, id: NodeId) -> bool {
    tree.parser_domain(id) == Some(DOMAIN)
}

fn ser_err(message: impl Into<String>) -> TreeError {
    TreeError::Serialize {
        domain: DOMAIN,
        message: message.into(),
    }
}

/// Prefix bindings written so far (innermost last) and the generated-prefix counter.
#[derive(Default)]
struct Writer {
    bindings: Vec<(Vec<u8>, Vec<u8>)>,
    generated: u32,
    scratch: Vec<u8>,
    /// An element's attributes while its start tag is written, kept for the next element so
    /// that a message of many attributed elements allocates these lists once.
    attrs: Vec<NodeId>,
    written_attrs: Vec<(Vec<u8>, NodeId, bool)>,
}

impl Writer {
    fn default_ns(&self) -> &[u8] {
        self.bindings
            .iter()
            .rev()
            .find(|(p, _)| p.is_empty())
            .map_or(&b""[..], |(_, u)| u.as_slice())
    }

    /// A prefix currently bound to `uri` (`allow_default`: the empty prefix counts).
    fn prefix_for(&self, uri: &[u8], allow_default: bool) -> Option<Vec<u8>> {
        for (i, (p, u)) in self.bindings.iter().enumerate().rev() {
            if u.as_slice() != uri || (p.is_empty() && !allow_default) {
                continue;
            }
            let shadowed = self.bindings[i + 1..].iter().any(|(q, _)| q == p);
            if !shadowed {
                return Some(p.clone());
            }
        }
        None
    }

    fn generate(&mut self, uri: &[u8], decls: &mut Vec<(Vec<u8>, Vec<u8>)>) -> Vec<u8> {
        loop {
            self.generated += 1;
            let p = format!("NS{}", self.generated).into_bytes();
            if !self.bindings.iter().any(|(q, _)| *q == p) {
                self.bindings.push((p.clone(), uri.to_vec()));
                decls.push((p.clone(), uri.to_vec()));
                return p;
            }
        }
    }

    /// Write the content children of `id` (not its attributes), parsing them as needed.
    fn children(
        &mut self,
        tree: &mut Tree,
        id: NodeId,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<(), TreeError> {
        let mut c = tree.first_child(id)?;
        while let Some(n) = c {
            // Asking for the next sibling first lets the parser find where `n` ends, so an
            // unchanged `n` can be copied.
            let next = tree.next_sibling(n)?;
            if !ft::is_attribute_like(tree.field_type(n)) {
                self.node(tree, n, out, depth)?;
            }
            c = next;
        }
        Ok(())
    }

    fn node(
        &mut self,
        tree: &mut Tree,
        id: NodeId,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<(), TreeError> {
        if depth > MAX_WRITE_DEPTH {
            return Err(ser_err(format!(
                "tree deeper than {MAX_WRITE_DEPTH} levels"
            )));
        }
        let t = tree.field_type(id);
        match t {
            ft::COMMENT => {
                out.extend_from_slice(b"<!--");
                self.value(tree, id, out);
                out.extend_from_slice(b"-->");
            }
            ft::PROCESSING_INSTRUCTION => {
                out.extend_from_slice(b"<?");
                out.extend_from_slice(tree.name_bytes(id));
                if !matches!(tree.value(id), Value::Null) {
                    out.push(b' ');
                    self.value(tree, id, out);
                }
                out.extend_from_slice(b"?>");
            }
            ft::XML_DECLARATION => self.xml_declaration(tree, id, out)?,
            ft::DOCUMENT_TYPE => {}
            ft::BIT_STREAM | ft::ASIS_ELEMENT_CONTENT => {
                if let Value::Blob(b) | Value::Character(b) = tree.value(id) {
                    out.extend_from_slice(tree.bytes(b));
                } else {
                    self.value(tree, id, out);
                }
            }
            ft::ENTITY_REFERENCE => {
                out.push(b'&');
                out.extend_from_slice(tree.name_bytes(id));
                out.push(b';');
            }
            ft::CDATA_VALUE => {
                self.scratch.clear();
                value_text(tree, tree.value(id), &mut self.scratch);
                write_cdata(&self.scratch, out);
            }
            _ if tree.name_bytes(id).is_empty()
                && t & 0xFF00_0000 == sluice_tree::field_type::VALUE =>
            {
                self.scratch.clear();
                value_text(tree, tree.value(id), &mut self.scratch);
                escape_text(&self.scratch, out);
            }
            _ => self.element(tree, id, out, depth)?,
        }
        Ok(())
    }

    /// The value as escaped text (comment and PI bodies are written as they are).
    fn value(&mut self, tree: &Tree, id: NodeId, out: &mut Vec<u8>) {
        self.scratch.clear();
        value_text(tree, tree.value(id), &mut self.scratch);
        out.extend_from_slice(&self.scratch);
    }

    fn xml_declaration(
        &mut self,
        tree: &mut Tree,
        id: NodeId,
        out: &mut Vec<u8>,
    ) -> Result<(), TreeError> {
        let mut version = b"1.0".to_vec();
        let mut encoding = None;
        let mut standalone = None;
        for k in tree.children(id)? {
            let mut v = Vec::new();
            value_text(tree, tree.value(k), &mut v);
            let n = tree.name_bytes(k).to_ascii_lowercase();
            match n.as_slice() {
                b"version" => version = v,
                b"encoding" => encoding = Some(v),
                b"standalone" => standalone = Some(v),
                _ => {}
            }
        }
        out.extend_from_slice(b"<?xml version=\"");
        escape_attr(&version, false, out);
        if let Some(e) = encoding {
            out.extend_from_slice(b"\" encoding=\"");
            escape_attr(&e, false, out);
        }
        if let Some(s) = standalone {
            out.extend_from_slice(b"\" standalone=\"");
            escape_attr(&s, false, out);
        }
        out.extend_from_slice(b"\"?>");
        Ok(())
    }

    fn element(
        &mut self,
        tree: &mut Tree,
        id: NodeId,
        out: &mut Vec<u8>,
        depth: usize,
    ) -> Result<(), TreeError> {
        self.element_as(tree, id, out, depth, None)
    }

    /// Write element `id`; with `as_name`, as an element of that namespace and name whose
    /// content is only its children (a folder of another domain written as XML).
    fn element_as(
        &mut self,
        tree: &mut Tree,
        id: NodeId,
        out: &mut Vec<u8>,
        depth: usize,
        as_name: Option<(&[u8], &[u8])>,
    ) -> Result<(), TreeError> {
        if as_name.is_none()
            && let Some(o) = tree.original(id)
            && is_xmlnsc(tree, id)
        {
            let f = tree.parser_flags(id);
            let safe = f & flags::NEEDS_OUTER == 0
                && (f & flags::NEEDS_EMPTY_DEFAULT == 0 || self.default_ns().is_empty());
            if safe {
                out.extend_from_slice(o);
                return Ok(());
            }
        }
        if as_name.is_none() && tree.name_bytes(id).is_empty() {
            return Err(ser_err(format!(
                "an element of field type 0x{:08X} has no name",
                tree.field_type(id)
            )));
        }
        let mark = self.bindings.len();
        // Attributes and declarations: a pending element has only its parsed ones, which come
        // first; a complete one may have them anywhere.
        let mut attrs = std::mem::take(&mut self.attrs);
        attrs.clear();
        let pending = tree.is_pending(id);
        let mut c = tree.peek_first_child(id);
        while let Some(k) = c {
            let t = tree.field_type(k);
            if ft::is_attribute_like(t) {
                attrs.push(k);
            } else if pending {
                break;
            }
            c = tree.peek_next_sibling(k);
        }
        let mut decls: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut decl_quotes = Vec::new();
        for &k in &attrs {
            let t = tree.field_type(k);
            if ft::is_namespace_decl(t) {
                let p = decl_prefix(tree, k);
                let mut u = Vec::new();
                value_text(tree, tree.value(k), &mut u);
                self.bindings.push((p.clone(), u.clone()));
                decls.push((p, u));
                decl_quotes.push(t == ft::SINGLE_NAMESPACE_DECL);
            }
        }
        let ns = match as_name {
            Some((ns, _)) => ns,
            None => tree.namespace_bytes(id),
        };
        let prefix = if ns.is_empty() {
            if !self.default_ns().is_empty() {
                self.bindings.push((Vec::new(), Vec::new()));
                decls.push((Vec::new(), Vec::new()));
            }
            Vec::new()
        } else {
            match self.prefix_for(ns, true) {
                Some(p) => p,
                None => self.generate(ns, &mut decls),
            }
        };
        let mut written_attrs = std::mem::take(&mut self.written_attrs);
        written_attrs.clear();
        for &k in &attrs {
            let t = tree.field_type(k);
            if ft::is_namespace_decl(t) {
                continue;
            }
            let ans = tree.namespace_bytes(k);
            let ap = if ans.is_empty() {
                Vec::new()
            } else {
                match self.prefix_for(ans, false) {
                    Some(p) => p,
                    None => self.generate(ans, &mut decls),
                }
            };
            written_attrs.push((ap, k, t == ft::SINGLE_ATTRIBUTE));
        }
        // The qualified name is written from the prefix and the tree's name (no allocation).
        let mut prefix = prefix;
        if !prefix.is_empty() {
            prefix.push(b':');
        }
        out.push(b'<');
        out.extend_from_slice(&prefix);
        out.extend_from_slice(as_name.map_or_else(|| tree.name_bytes(id), |(_, n)| n));
        for (i, (p, u)) in decls.iter().enumerate() {
            let single = decl_quotes.get(i).copied().unwrap_or(false);
            out.extend_from_slice(b" xmlns");
            if !p.is_empty() {
                out.push(b':');
                out.extend_from_slice(p);
            }
            out.extend_from_slice(if single { b"='" } else { b"=\"" });
            escape_attr(u, single, out);
            out.push(if single { b'\'' } else { b'"' });
        }
        for &(ref p, k, single) in &written_attrs {
            out.push(b' ');
            if !p.is_empty() {
                out.extend_from_slice(p);
                out.push(b':');
            }
            out.extend_from_slice(tree.name_bytes(k));
            out.extend_from_slice(if single { b"='" } else { b"=\"" });
            self.scratch.clear();
            value_text(tree, tree.value(k), &mut self.scratch);
            escape_attr(&self.scratch, single, out);
            out.push(if single { b'\'' } else { b'"' });
        }
        self.attrs = attrs;
        self.written_attrs = written_attrs;
        // Content: the element's own value, then its content children.
        let before = out.len();
        out.push(b'>');
        let mut has_content = false;
        let value = if as_name.is_some() {
            Value::Null
        } else {
            tree.value(id)
        };
        let cdata = tree.field_type(id) == ft::CDATA_FIELD;
        if let (Value::Character(text), false) = (value, cdata) {
            // Character data is escaped straight from where it lies.
            let bytes = tree.bytes(text);
            has_content = !bytes.is_empty();
            escape_text(bytes, out);
        } else {
            self.scratch.clear();
            let has_value = value_text(tree, value, &mut self.scratch);
            if has_value && cdata {
                // Even an empty CDATA section is written, so the field type survives a re-parse.
                has_content = true;
                write_cdata(&self.scratch, out);
            } else if has_value && !self.scratch.is_empty() {
                has_content = true;
                escape_text(&self.scratch, out);
            }
        }
        let after_value = out.len();
        self.close(
            tree,
            id,
            out,
            depth,
            (&prefix, as_name.map(|(_, n)| n)),
            before,
            after_value,
            has_content,
            mark,
        )
    }

    /// The content children of `id` and its end tag (or `/>` when it has no content at all).
    #[allow(clippy::too_many_arguments)]
    fn close(
        &mut self,
        tree: &mut Tree,
        id: NodeId,
        out: &mut Vec<u8>,
        depth: usize,
        (prefix, name): (&[u8], Option<&[u8]>),
        before: usize,
        after_value: usize,
        has_content: bool,
        mark: usize,
    ) -> Result<(), TreeError> {
        self.children(tree, id, out, depth + 1)?;
        if has_content || out.len() > after_value {
            out.extend_from_slice(b"</");
            out.extend_from_slice(prefix);
            out.extend_from_slice(name.unwrap_or_else(|| tree.name_bytes(id)));
            out.push(b'>');
        } else {
            out.truncate(before);
            out.extend_from_slice(b"/>");
        }
        self.bindings.truncate(mark);
        Ok(())
    }
}
