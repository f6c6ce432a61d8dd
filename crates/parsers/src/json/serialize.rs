//! Writing a JSON domain tree as JSON text.
//!
//! Unchanged parts are copied from the message's bytes (`Tree::original`), whether parsed or not;
//! changed parts are written element by element: [`field_type::ARRAY`] elements as arrays (item
//! names ignored), elements with children as objects (members in tree order, repeated names
//! kept), childless `Name` folders as `{}`, and values as the product maps them (see
//! `format.rs`). Elements that ESQL created without a JSON type follow the same rules, so plain
//! folders and name/value fields become objects and members. The walk keeps its own stack, so
//! deep trees cannot overflow the thread's stack.

use sluice_tree::{NodeId, Tree, TreeError, Value};

use crate::json::field_type;
use crate::json::format::{write_string, write_value};
use crate::json::parse::{CONTAINER, container_end};

/// Serialise the `JSON` domain element `id` (its `Data`, wrapped by `Padding` when present).
pub(crate) fn serialize_domain(
    tree: &mut Tree,
    id: NodeId,
    max_depth: u32,
    out: &mut Vec<u8>,
) -> Result<(), TreeError> {
    if let Some(orig) = tree.original(id) {
        out.extend_from_slice(orig);
        return Ok(());
    }
    if let Some(span) = tree.source(id) {
        // A changed message is usually about as long as it was.
        out.reserve((span.end - span.start) as usize + 64);
    }
    let mut data = None;
    let mut padding = None;
    let mut c = tree.first_child(id)?;
    while let Some(n) = c {
        match tree.name_bytes(n) {
            b"Data" if data.is_none() => data = Some(n),
            b"Padding" if padding.is_none() => padding = Some(n),
            _ => {}
        }
        c = tree.next_sibling(n)?;
    }
    let Some(data) = data else {
        // A JSON element without Data writes nothing.
        return Ok(());
    };
    let padded = match padding.map(|p| tree.value(p)) {
        Some(Value::Character(t)) if !t.is_empty() => {
            // The JSONP function name is written as it is (it is script, not a JSON string).
            out.extend_from_slice(tree.bytes(t));
            out.push(b'(');
            true
        }
        _ => false,
    };
    write_tree(tree, data, max_depth, out)?;
    if padded {
        out.push(b')');
    }
    Ok(())
}

struct Frame {
    parent: NodeId,
    last: Option<NodeId>,
    array: bool,
}

/// Write the value of element `top` (an object or array) as JSON.
pub(crate) fn write_tree(
    tree: &mut Tree,
    top: NodeId,
    max_depth: u32,
    out: &mut Vec<u8>,
) -> Result<(), TreeError> {
    let mut frames: Vec<Frame> = Vec::new();
    match emit(tree, top, max_depth, true, out)? {
        None => return Ok(()),
        Some(array) => {
            out.push(if array { b'[' } else { b'{' });
            frames.push(Frame {
                parent: top,
                last: None,
                array,
            });
        }
    }
    while let Some(f) = frames.last_mut() {
        let next = match f.last {
            None => tree.first_child(f.parent)?,
            Some(prev) => tree.next_sibling(prev)?,
        };
        let Some(c) = next else {
            out.push(if f.array { b']' } else { b'}' });
            frames.pop();
            continue;
        };
        if f.last.is_some() {
            out.push(b',');
        }
        f.last = Some(c);
        if !f.array {
            write_string(out, tree.name_bytes(c))?;
            out.push(b':');
        }
        if let Some(array) = emit(tree, c, max_depth, false, out)? {
            out.push(if array { b'[' } else { b'{' });
            frames.push(Frame {
                parent: c,
                last: None,
                array,
            });
        }
    }
    Ok(())
}

/// Whether element `id` was built by a JSON parser (so its source bytes are JSON).
fn is_json(tree: &Tree, id: NodeId) -> bool {
    tree.parser_of(id)
        .is_some_and(|p| p.domain() == crate::json::DOMAIN)
}

/// Write element `id` when it is copied or a scalar (returns `None`), or tell the caller to open
/// an array (`Some(true)`) or object (`Some(false)`) for its children.
fn emit(
    tree: &mut Tree,
    id: NodeId,
    max_depth: u32,
    top: bool,
    out: &mut Vec<u8>,
) -> Result<Option<bool>, TreeError> {
    if !tree.is_dirty(id) && is_json(tree, id) {
        if tree.parser_flags(id) & CONTAINER != 0 && tree.source(id).is_none() {
            container_end(tree, id, max_depth).map_err(|e| *e)?;
        }
        if let Some(orig) = tree.original(id) {
            out.extend_from_slice(orig);
            return Ok(None);
        }
    }
    let ft = tree.field_type(id);
    if ft == field_type::ARRAY {
        return Ok(Some(true));
    }
    if tree.first_child(id)?.is_some() {
        return Ok(Some(false));
    }
    let v = tree.value(id);
    // A `Data` folder nobody filled is an empty object; a `Data` holding a value (a top-level
    // scalar, `null` included) is written as that value.
    if v.is_null() && (ft == field_type::OBJECT || (top && ft != field_type::NAME_VALUE)) {
        out.extend_from_slice(b"{}");
        return Ok(None);
    }
    write_value(tree, v, out)?;
    Ok(None)
}
