//! FINALIZE DEFAULT: the message tree made ready to leave the node, as the product's parsers
//! finalise it before propagation — the header chain in order and the Properties folder
//! matching the headers.

use sluice_tree::assembly::is_domain;
use sluice_tree::{NodeId, Position, Text, Tree, TreeError, Value, field_type};

/// Properties fields that transport headers (the queue message descriptor) also carry.
const SHARED_WITH_HEADERS: [&[u8]; 2] = [b"CodedCharSetId", b"Encoding"];

/// Finalise the Root tree `root`:
/// - a `Properties` folder exists and is Root's first child;
/// - the body (the last child named for a message domain) is Root's last child, after every
///   header;
/// - `Properties.CodedCharSetId` and `Properties.Encoding`, when absent or NULL, take the
///   value of the first header that has one.
pub(crate) fn finalize(root: &mut Tree) -> Result<(), TreeError> {
    let r = root.root();
    let props = match root.child_named(r, None, b"Properties", 0)? {
        Some(p) => {
            if root.first_child(r)? != Some(p) {
                root.detach(p)?;
                root.attach(p, r, Position::FirstChild)?;
            }
            p
        }
        None => root.create_first_child(
            r,
            field_type::NAME,
            Text::from_static("Properties"),
            Value::Null,
        )?,
    };
    let children = root.children(r)?;
    if let Some(&body) = children
        .iter()
        .rev()
        .find(|&&c| c != props && is_domain(root.name_bytes(c)))
        && children.last() != Some(&body)
    {
        root.detach(body)?;
        root.attach(body, r, Position::LastChild)?;
    }
    let headers: Vec<NodeId> = children
        .into_iter()
        .filter(|&c| c != props && !is_domain(root.name_bytes(c)))
        .collect();
    if headers.is_empty() {
        return Ok(());
    }
    for name in SHARED_WITH_HEADERS {
        fill_from_headers(root, &headers, props, name)?;
    }
    Ok(())
}

fn fill_from_headers(
    root: &mut Tree,
    headers: &[NodeId],
    props: NodeId,
    name: &'static [u8],
) -> Result<(), TreeError> {
    let own = root.child_named(props, None, name, 0)?;
    if own.is_some_and(|f| !matches!(root.value(f), Value::Null)) {
        return Ok(());
    }
    let mut value = None;
    for &header in headers {
        if let Some(f) = root.child_named(header, None, name, 0)?
            && !matches!(root.value(f), Value::Null)
        {
            value = Some(root.value(f));
            break;
        }
    }
    let Some(v) = value else { return Ok(()) };
    match own {
        Some(f) => root.set_value(f, v),
        None => {
            let n = root.alloc_text(name);
            root.create_last_child(props, field_type::NAME_VALUE, n, v)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(t: &mut Tree, id: NodeId) -> Vec<String> {
        t.children(id)
            .expect("children")
            .into_iter()
            .map(|c| String::from_utf8_lossy(t.name_bytes(c)).into_owned())
            .collect()
    }

    fn child(t: &mut Tree, parent: NodeId, name: &'static str, v: Value) -> NodeId {
        t.create_last_child(parent, field_type::NAME_VALUE, Text::from_static(name), v)
            .expect("create")
    }

    #[test]
    fn finalize_puts_properties_first_and_body_last() {
        let mut t = Tree::new("Root");
        let r = t.root();
        child(&mut t, r, "XMLNSC", Value::Null);
        let mqmd = child(&mut t, r, "MQMD", Value::Null);
        child(&mut t, mqmd, "CodedCharSetId", Value::Integer(819));
        finalize(&mut t).expect("finalize");
        assert_eq!(names(&mut t, r), ["Properties", "MQMD", "XMLNSC"]);
        let p = t.first_child(r).expect("read").expect("properties");
        let ccsid = t
            .child_named(p, None, b"CodedCharSetId", 0)
            .expect("read")
            .expect("filled from MQMD");
        assert_eq!(t.value(ccsid), Value::Integer(819));
        assert!(
            t.child_named(p, None, b"Encoding", 0)
                .expect("read")
                .is_none(),
            "no header has an Encoding"
        );
    }

    #[test]
    fn finalize_keeps_values_properties_already_has() {
        let mut t = Tree::new("Root");
        let r = t.root();
        let mqmd = child(&mut t, r, "MQMD", Value::Null);
        child(&mut t, mqmd, "Encoding", Value::Integer(785));
        let p = child(&mut t, r, "Properties", Value::Null);
        child(&mut t, p, "Encoding", Value::Integer(546));
        finalize(&mut t).expect("finalize");
        assert_eq!(names(&mut t, r), ["Properties", "MQMD"]);
        let e = t
            .child_named(p, None, b"Encoding", 0)
            .expect("read")
            .expect("kept");
        assert_eq!(t.value(e), Value::Integer(546));
    }
}
