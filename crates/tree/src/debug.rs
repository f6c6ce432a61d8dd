//! A readable rendering of a tree, for traces and test failures. It shows only what is parsed.

use std::fmt::Write;

use crate::tree::Tree;
use crate::value::Value;

/// Render every materialised element, one per line, indented by depth.
pub fn render(tree: &Tree) -> String {
    let mut out = String::new();
    let mut stack = vec![(tree.root(), 0usize)];
    while let Some((id, depth)) = stack.pop() {
        let _ = write!(out, "{:indent$}", "", indent = depth * 2);
        let ns = tree.namespace_bytes(id);
        if !ns.is_empty() {
            let _ = write!(out, "{{{}}}", String::from_utf8_lossy(ns));
        }
        let _ = write!(
            out,
            "{} (0x{:08X})",
            String::from_utf8_lossy(tree.name_bytes(id)),
            tree.field_type(id)
        );
        let v = tree.value(id);
        if !v.is_null() {
            let _ = write!(out, " = {}", display_value(tree, v));
        }
        if tree.is_pending(id) {
            out.push_str(" …");
        }
        out.push('\n');
        let mut kids = Vec::new();
        let mut c = tree.peek_first_child(id);
        while let Some(k) = c {
            kids.push((k, depth + 1));
            c = tree.peek_next_sibling(k);
        }
        stack.extend(kids.into_iter().rev());
    }
    out
}

/// A value as literal-like text: strings quoted, numbers bare.
pub fn display_value(tree: &Tree, v: Value) -> String {
    match v {
        Value::Character(t) => format!("'{}'", tree.str(t)),
        Value::Decimal(t) => tree.str(t).into_owned(),
        Value::Blob(t) => {
            let mut s = String::from("X'");
            for b in tree.bytes(t) {
                let _ = write!(s, "{b:02x}");
            }
            s.push('\'');
            s
        }
        Value::Bit(t) => format!("B'{}'", tree.str(t)),
        other => format!("{other:?}"),
    }
}
