//! The context tree of an invocation (ACE 12's `Context`): what the flow is, which input node
//! started the invocation, and what each node propagated, for ESQL's `Context`,
//! `CONTEXTREFERENCE` and `CONTEXTINVOCATIONNODE`.
//!
//! ```text
//! Context
//!   Flow        Name, Application, IntegrationServer, HostName, ProcessId
//!   Invocation  Node (the input node's label)
//!   Nodes
//!     <label>   Payload (the body's children), PayloadDetails (Domain),
//!               Headers (Root's headers), Metadata (the LocalEnvironment)
//! ```
//!
//! A node's section holds the message it propagated last. Copies share the bytes of parts
//! nobody parsed yet, so capturing a body nobody reads costs no parse.

use sluice_tree::{Message, NodeId, Position, Text, Tree, TreeError, Value, field_type};

/// What the flow section says, fixed for the flow's life.
pub(crate) struct FlowDetails {
    pub name: String,
    pub application: String,
    pub host: String,
}

impl FlowDetails {
    pub fn new(name: &str, application: String) -> FlowDetails {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_default();
        FlowDetails {
            name: name.to_string(),
            application,
            host,
        }
    }
}

/// A new context tree for an invocation that node `input` starts.
pub(crate) fn begin(flow: &FlowDetails, input: &str) -> Result<Tree, TreeError> {
    let mut t = Tree::new("Context");
    let root = t.root();
    let f = folder(&mut t, root, "Flow")?;
    text_field(&mut t, f, "Name", &flow.name)?;
    text_field(&mut t, f, "Application", &flow.application)?;
    text_field(&mut t, f, "IntegrationServer", &flow.application)?;
    text_field(&mut t, f, "HostName", &flow.host)?;
    let pid = Value::Integer(i64::from(std::process::id()));
    t.create_last_child(
        f,
        field_type::NAME_VALUE,
        Text::from_static("ProcessId"),
        pid,
    )?;
    let inv = folder(&mut t, root, "Invocation")?;
    text_field(&mut t, inv, "Node", input)?;
    folder(&mut t, root, "Nodes")?;
    Ok(t)
}

/// Record `msg` as what node `label` propagated, replacing what it propagated before.
pub(crate) fn capture(ctx: &mut Tree, label: &str, msg: &mut Message) -> Result<(), TreeError> {
    let root = ctx.root();
    let nodes = match ctx.child_named(root, None, b"Nodes", 0)? {
        Some(n) => n,
        None => folder(ctx, root, "Nodes")?,
    };
    if let Some(old) = ctx.child_named(nodes, None, label.as_bytes(), 0)? {
        ctx.delete(old)?;
    }
    let section = folder(ctx, nodes, label)?;
    let body = msg.body()?;
    let details = folder(ctx, section, "PayloadDetails")?;
    let headers = folder(ctx, section, "Headers")?;
    let r = msg.root.root();
    let mut c = msg.root.first_child(r)?;
    while let Some(id) = c {
        if Some(id) != body && !msg.root.name_is(id, b"Properties") {
            ctx.copy_from(&msg.root, id, headers, Position::LastChild)?;
        }
        c = msg.root.next_sibling(id)?;
    }
    match body {
        // The body element itself, renamed: its children are what the payload holds, and
        // they stay unparsed until someone reads them.
        Some(b) => {
            let domain = String::from_utf8_lossy(msg.root.name_bytes(b)).into_owned();
            text_field(ctx, details, "Domain", &domain)?;
            let payload = ctx.copy_detached(&msg.root, b);
            ctx.set_name(payload, Text::from_static("Payload"));
            ctx.attach(payload, details, Position::PrevSibling)?;
        }
        None => {
            folder_before(ctx, details, "Payload")?;
        }
    }
    let le = msg.local_environment.root();
    let metadata = ctx.copy_detached(&msg.local_environment, le);
    ctx.set_name(metadata, Text::from_static("Metadata"));
    ctx.attach(metadata, section, Position::LastChild)?;
    Ok(())
}

fn folder(t: &mut Tree, parent: NodeId, name: &str) -> Result<NodeId, TreeError> {
    let name = t.alloc_text(name.as_bytes());
    t.create_last_child(parent, field_type::NAME, name, Value::Null)
}

fn folder_before(t: &mut Tree, sibling: NodeId, name: &'static str) -> Result<NodeId, TreeError> {
    t.create_prev_sibling(
        sibling,
        field_type::NAME,
        Text::from_static(name),
        Value::Null,
    )
}

fn text_field(t: &mut Tree, parent: NodeId, name: &'static str, v: &str) -> Result<(), TreeError> {
    let v = Value::Character(t.alloc_text(v.as_bytes()));
    t.create_last_child(parent, field_type::NAME_VALUE, Text::from_static(name), v)?;
    Ok(())
}
