//! WS-Addressing (the 2005/08 recommendation, and the 2004/08 submission on input): the
//! request's MessageID, ReplyTo, FaultTo, Action and To read from the header, and the reply's
//! MessageID, RelatesTo, Action and To written into it.

use sluice_parsers::xmlnsc::{XMLNS_NS, field_type};
use sluice_tree::{NodeId, Text, Tree, TreeError, Value};

/// The WS-Addressing 1.0 namespace.
pub const WSA_NS: &str = "http://www.w3.org/2005/08/addressing";
/// The 2004/08 member submission's namespace, accepted on input.
pub const WSA_2004_NS: &str = "http://schemas.xmlsoap.org/ws/2004/08/addressing";
/// The address that means "reply on the same connection".
pub const ANONYMOUS: &str = "http://www.w3.org/2005/08/addressing/anonymous";
const ANONYMOUS_2004: &str = "http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous";
/// The address that means "send no reply".
pub const NONE: &str = "http://www.w3.org/2005/08/addressing/none";

/// The addressing properties of a request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Addressing {
    pub message_id: Option<String>,
    pub action: Option<String>,
    pub to: Option<String>,
    pub reply_to: Option<String>,
    pub fault_to: Option<String>,
    /// The MessageID of the request a reply answers.
    pub relates_to: Option<String>,
}

impl Addressing {
    /// Where the reply goes when it is not the HTTP response: a ReplyTo address that is neither
    /// anonymous nor none.
    pub fn async_reply_to(&self) -> Option<&str> {
        self.reply_to
            .as_deref()
            .filter(|a| !is_anonymous(a) && *a != NONE)
    }

    /// Whether the request asked for no reply at all.
    pub fn no_reply(&self) -> bool {
        self.reply_to.as_deref() == Some(NONE)
    }
}

fn is_anonymous(a: &str) -> bool {
    a == ANONYMOUS || a == ANONYMOUS_2004
}

fn value(tree: &mut Tree, id: NodeId) -> Result<String, TreeError> {
    if let Some(a) = tree.child_named(id, None, b"Address", 0)? {
        return value(tree, a);
    }
    Ok(tree
        .value_bytes(id)
        .map(|b| String::from_utf8_lossy(b).trim().to_string())
        .unwrap_or_default())
}

/// The addressing properties in the `Header` of the SOAP domain element `soap`; `None` when
/// the header has no WS-Addressing block.
pub fn read(tree: &mut Tree, soap: NodeId) -> Result<Option<Addressing>, TreeError> {
    let Some(h) = tree.child_named(soap, None, b"Header", 0)? else {
        return Ok(None);
    };
    let mut a = Addressing::default();
    let mut any = false;
    for c in tree.children(h)? {
        let ns = tree.namespace_bytes(c);
        if ns != WSA_NS.as_bytes() && ns != WSA_2004_NS.as_bytes() {
            continue;
        }
        any = true;
        let v = value(tree, c)?;
        match tree.name_bytes(c) {
            b"MessageID" => a.message_id = Some(v),
            b"Action" => a.action = Some(v),
            b"To" => a.to = Some(v),
            b"ReplyTo" => a.reply_to = Some(v),
            b"FaultTo" => a.fault_to = Some(v),
            b"RelatesTo" => a.relates_to = Some(v),
            _ => {}
        }
    }
    Ok(any.then_some(a))
}

/// The `Header` of the SOAP domain element `soap`, made when there is none, emptied of any
/// WS-Addressing blocks.
fn addressing_header(tree: &mut Tree, soap: NodeId) -> Result<NodeId, TreeError> {
    let header = match tree.child_named(soap, None, b"Header", 0)? {
        Some(h) => h,
        None => match tree.child_named(soap, None, b"Context", 0)? {
            Some(c) => tree.create_next_sibling(
                c,
                field_type::FOLDER,
                Text::from_static("Header"),
                Value::Null,
            )?,
            None => tree.create_first_child(
                soap,
                field_type::FOLDER,
                Text::from_static("Header"),
                Value::Null,
            )?,
        },
    };
    for c in tree.children(header)? {
        let ns = tree.namespace_bytes(c);
        if ns == WSA_NS.as_bytes() || ns == WSA_2004_NS.as_bytes() {
            tree.delete(c)?;
        }
    }
    declare_prefix(tree, soap, "wsa", WSA_NS)?;
    Ok(header)
}

/// Add `<wsa:NAME>value</wsa:NAME>` to `parent`.
fn add(tree: &mut Tree, parent: NodeId, name: &'static str, v: &str) -> Result<NodeId, TreeError> {
    let ns = tree.alloc_text(WSA_NS.as_bytes());
    let t = tree.alloc_text(v.as_bytes());
    let id = tree.create_last_child(
        parent,
        field_type::FIELD,
        Text::from_static(name),
        Value::Character(t),
    )?;
    tree.set_namespace(id, ns);
    Ok(id)
}

/// A new MessageID: a UUID URN.
pub fn new_message_id() -> String {
    format!("urn:uuid:{}", uuid::Uuid::new_v4())
}

/// Put the reply's addressing headers in the `Header` of the SOAP domain element `soap`
/// (replacing any WS-Addressing blocks there): a new MessageID, RelatesTo the request's
/// MessageID, the Action and the To address.
pub fn write_reply(
    tree: &mut Tree,
    soap: NodeId,
    request: &Addressing,
    action: &str,
) -> Result<(), TreeError> {
    let header = addressing_header(tree, soap)?;
    add(tree, header, "MessageID", &new_message_id())?;
    if let Some(m) = &request.message_id {
        add(tree, header, "RelatesTo", m)?;
    }
    add(tree, header, "Action", action)?;
    let to = request.async_reply_to().unwrap_or(ANONYMOUS).to_string();
    add(tree, header, "To", &to)?;
    Ok(())
}

/// Put a request's addressing headers in the `Header` of the SOAP domain element `soap`
/// (replacing any WS-Addressing blocks there): MessageID, To, Action, and ReplyTo and FaultTo
/// as endpoint references, from the fields of `a` that are set.
pub fn write_request(tree: &mut Tree, soap: NodeId, a: &Addressing) -> Result<(), TreeError> {
    let header = addressing_header(tree, soap)?;
    for (name, v) in [
        ("MessageID", &a.message_id),
        ("To", &a.to),
        ("Action", &a.action),
    ] {
        if let Some(v) = v {
            add(tree, header, name, v)?;
        }
    }
    for (name, v) in [("ReplyTo", &a.reply_to), ("FaultTo", &a.fault_to)] {
        if let Some(v) = v {
            let ns = tree.alloc_text(WSA_NS.as_bytes());
            let epr = tree.create_last_child(
                header,
                field_type::FOLDER,
                Text::from_static(name),
                Value::Null,
            )?;
            tree.set_namespace(epr, ns);
            add(tree, epr, "Address", v)?;
        }
    }
    Ok(())
}

/// Declare `prefix` for `uri` on the envelope (in `Context.Namespace`), unless a prefix is
/// declared for it already, so that blocks added in that namespace read well.
pub(crate) fn declare_prefix(
    tree: &mut Tree,
    soap: NodeId,
    prefix: &'static str,
    uri: &str,
) -> Result<(), TreeError> {
    let Some(ctx) = tree.child_named(soap, None, b"Context", 0)? else {
        return Ok(());
    };
    let ns = match tree.child_named(ctx, None, b"Namespace", 0)? {
        Some(n) => n,
        None => tree.create_last_child(
            ctx,
            field_type::FOLDER,
            Text::from_static("Namespace"),
            Value::Null,
        )?,
    };
    for c in tree.children(ns)? {
        if tree.value_bytes(c) == Some(uri.as_bytes()) {
            return Ok(());
        }
    }
    let v = tree.alloc_text(uri.as_bytes());
    let d = tree.create_last_child(
        ns,
        field_type::NAMESPACE_DECL,
        Text::from_static(prefix),
        Value::Character(v),
    )?;
    let x = tree.alloc_text(XMLNS_NS.as_bytes());
    tree.set_namespace(d, x);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use sluice_parsers::soap::{self, SoapParser};

    fn envelope() -> (Tree, NodeId) {
        let mut t = Tree::new("Root");
        let r = t.root();
        let doc = concat!(
            r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/">"#,
            "<s:Body><echo><text>hi</text></echo></s:Body></s:Envelope>"
        );
        let id = soap::attach(
            &mut t,
            r,
            Bytes::from_static(doc.as_bytes()),
            SoapParser::shared(),
        );
        t.expand_all(id).expect("parse");
        (t, id)
    }

    #[test]
    fn write_request_headers_read_back_when_the_envelope_had_no_header() {
        let (mut t, id) = envelope();
        let a = Addressing {
            message_id: Some("urn:uuid:1".into()),
            action: Some("urn:echo".into()),
            to: Some("http://svc/echo".into()),
            reply_to: Some("http://me/soap-async/x".into()),
            ..Addressing::default()
        };
        write_request(&mut t, id, &a).expect("write");
        assert_eq!(read(&mut t, id).expect("read"), Some(a));
    }

    #[test]
    fn read_gives_relates_to_when_a_reply_carries_it() {
        let (mut t, id) = envelope();
        let request = Addressing {
            message_id: Some("urn:uuid:req".into()),
            ..Addressing::default()
        };
        write_reply(&mut t, id, &request, "urn:echoResponse").expect("write");
        let back = read(&mut t, id).expect("read").expect("addressing");
        assert_eq!(back.relates_to.as_deref(), Some("urn:uuid:req"));
        assert_eq!(back.action.as_deref(), Some("urn:echoResponse"));
    }
}
