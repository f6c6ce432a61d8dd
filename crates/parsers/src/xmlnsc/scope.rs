//! Namespace bindings in scope while building, and where to find them for a lazily parsed element.
//!
//! A lazily parsed element sees the declarations of its ancestors as `NamespaceDecl` children
//! in the tree. When an element was copied away from its ancestors (a subtree moved to another
//! message), the declarations are recovered by scanning the source from its start to the
//! element ([`rescan`]), which only happens when a prefix cannot otherwise be resolved.

use sluice_tree::{NodeId, Text, Tree, Value};

use super::field_type;
use super::flags;
use super::lexer::{Lexer, RawAttr, Token};
use super::text::{decode, needs_decode};

/// The namespace bound to the `xml` prefix.
pub const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";
/// The namespace of namespace declarations (`xmlns:p`), as their tree elements carry it.
pub const XMLNS_NS: &str = "http://www.w3.org/2000/xmlns/";

/// One prefix binding; `owner` is the start tag that declared it (0: an ancestor outside the
/// part being built).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Binding {
    prefix: (u32, u32),
    pub uri: Text,
    pub owner: u32,
}

/// Bindings in scope, innermost last.
#[derive(Default)]
pub(crate) struct Scope {
    pool: Vec<u8>,
    bindings: Vec<Binding>,
}

impl Scope {
    pub fn len(&self) -> usize {
        self.bindings.len()
    }

    pub fn truncate(&mut self, n: usize) {
        if let Some(b) = self.bindings.get(n) {
            self.pool.truncate(b.prefix.0 as usize);
        }
        self.bindings.truncate(n);
    }

    pub fn push(&mut self, prefix: &[u8], uri: Text, owner: u32) {
        let s = self.pool.len() as u32;
        self.pool.extend_from_slice(prefix);
        self.bindings.push(Binding {
            prefix: (s, self.pool.len() as u32),
            uri,
            owner,
        });
    }

    /// Add bindings below every existing one (they come from further out).
    fn push_outermost(&mut self, list: Vec<(Vec<u8>, Text)>) {
        let old = std::mem::take(&mut self.bindings);
        let old_pool = std::mem::take(&mut self.pool);
        for (p, u) in list {
            self.push(&p, u, 0);
        }
        for b in old {
            let p = &old_pool[b.prefix.0 as usize..b.prefix.1 as usize];
            self.push(p, b.uri, b.owner);
        }
    }

    pub fn lookup(&self, prefix: &[u8]) -> Option<Binding> {
        self.bindings
            .iter()
            .rev()
            .find(|b| &self.pool[b.prefix.0 as usize..b.prefix.1 as usize] == prefix)
            .copied()
    }
}

/// The prefix a namespace declaration element declares (`""` for the default namespace).
pub(crate) fn decl_prefix(tree: &Tree, id: NodeId) -> Vec<u8> {
    let name = tree.name_bytes(id);
    if name == b"xmlns" && tree.namespace_bytes(id).is_empty() {
        Vec::new()
    } else {
        name.to_vec()
    }
}

/// Bindings from the `NamespaceDecl` children of `id` and its ancestors that were parsed from
/// the same source buffer, outermost first.
pub(crate) fn from_ancestors(tree: &Tree, id: NodeId, buf: u32, scope: &mut Scope) {
    let mut chain = Vec::new();
    let mut at = Some(id);
    while let Some(a) = at {
        if tree.parser_flags(a) & flags::DOC != 0
            || super::build::buffer_of_element(tree, a) != Some(buf)
        {
            break;
        }
        chain.push(a);
        at = tree.parent(a);
    }
    for &a in chain.iter().rev() {
        let mut c = tree.peek_first_child(a);
        while let Some(k) = c {
            let t = tree.field_type(k);
            if !field_type::is_attribute_like(t) {
                break;
            }
            if field_type::is_namespace_decl(t) {
                let uri = match tree.value(k) {
                    Value::Character(u) => u,
                    _ => Text::EMPTY,
                };
                let p = decl_prefix(tree, k);
                scope.push(&p, uri, 0);
            }
            c = tree.peek_next_sibling(k);
        }
    }
}

type DeclSpan = (Vec<u8>, (usize, usize));

/// Recover the bindings in scope at byte `upto` of the document by scanning it from the start,
/// and add them below the existing ones. Malformed input ends the scan quietly: the caller then
/// reports the unresolved prefix.
pub(crate) fn rescan(tree: &mut Tree, bytes: &[u8], buf: u32, upto: usize, scope: &mut Scope) {
    let mut lx = Lexer::new(bytes, 0, usize::MAX);
    let mut attrs: Vec<RawAttr> = Vec::new();
    // Per open element: its declarations as (prefix, raw value span).
    let mut open: Vec<Vec<DeclSpan>> = Vec::new();
    while lx.pos < upto {
        let Ok(tok) = lx.next_token(&mut attrs) else {
            break;
        };
        match tok {
            Token::Start {
                self_closing,
                start,
                ..
            } => {
                if start >= upto {
                    break;
                }
                if self_closing {
                    continue;
                }
                let mut decls = Vec::new();
                for a in &attrs {
                    let n = &bytes[a.name.0..a.name.1];
                    if n == b"xmlns" {
                        decls.push((Vec::new(), a.value));
                    } else if let Some(p) = n.strip_prefix(b"xmlns:") {
                        decls.push((p.to_vec(), a.value));
                    }
                }
                open.push(decls);
            }
            Token::End { .. } => {
                open.pop();
            }
            Token::Eof => break,
            _ => {}
        }
    }
    let mut list = Vec::new();
    for level in open {
        for (p, v) in level {
            let raw = &bytes[v.0..v.1];
            let uri = if needs_decode(raw, true) {
                let mut out = Vec::new();
                if decode(raw, v.0, true, usize::MAX, &mut out).is_err() {
                    continue;
                }
                tree.alloc_text(&out)
            } else {
                Text::src(buf, v.0 as u32, (v.1 - v.0) as u32)
            };
            list.push((p, uri));
        }
    }
    scope.push_outermost(list);
}
