//! Building and reading the name and name-value fields that transport nodes write into the
//! LocalEnvironment and headers.

use sluice_node_api::NodeError;
use sluice_tree::{NodeId, Text, Tree, Value, field_type};

/// A new folder `name`, the last child of `parent`.
pub fn folder(t: &mut Tree, parent: NodeId, name: &'static str) -> Result<NodeId, NodeError> {
    Ok(t.create_last_child(
        parent,
        field_type::NAME,
        Text::from_static(name),
        Value::Null,
    )?)
}

/// A new field `name` with value `v`, the last child of `parent`.
pub fn field(t: &mut Tree, parent: NodeId, name: &'static str, v: Value) -> Result<(), NodeError> {
    t.create_last_child(parent, field_type::NAME_VALUE, Text::from_static(name), v)?;
    Ok(())
}

/// A field's value as text, whatever its type; None for NULL.
pub fn text(t: &Tree, id: NodeId) -> Option<String> {
    match t.value(id) {
        Value::Character(s) => Some(t.str(s).into_owned()),
        Value::Integer(i) => Some(i.to_string()),
        Value::Boolean(b) => Some(if b { "TRUE" } else { "FALSE" }.to_string()),
        Value::Null => None,
        _ => t
            .value_bytes(id)
            .map(|b| String::from_utf8_lossy(b).into_owned()),
    }
}
