//! The LocalEnvironment fields of the TCP/IP nodes: the connection details they write, and the
//! connection Id that output and receive nodes read.

use sluice_node_api::NodeError;
use sluice_tree::{NodeId, Text, Tree, Value, field_type};

use crate::connection::{Connection, now_micros};

/// The folder `name` under `parent`, created when missing.
fn folder(t: &mut Tree, parent: NodeId, name: &'static str) -> Result<NodeId, NodeError> {
    if let Some(f) = t.child_named(parent, None, name.as_bytes(), 0)? {
        return Ok(f);
    }
    Ok(t.create_last_child(
        parent,
        field_type::NAME,
        Text::from_static(name),
        Value::Null,
    )?)
}

fn field(t: &mut Tree, parent: NodeId, name: &'static str, v: Value) -> Result<(), NodeError> {
    t.create_last_child(parent, field_type::NAME_VALUE, Text::from_static(name), v)?;
    Ok(())
}

fn text(t: &mut Tree, parent: NodeId, name: &'static str, s: &str) -> Result<(), NodeError> {
    let v = t.alloc_text(s.as_bytes());
    field(t, parent, name, Value::Character(v))
}

/// What is known of a connection when a message is built for it.
pub struct Details<'a> {
    pub conn: &'a Connection,
    /// The record's sequence number on the connection (none for open and close events).
    pub sequence: Option<u64>,
    /// Whether the connection has closed (close events).
    pub closed: bool,
}

/// Write `LocalEnvironment.TCPIP.<section>.ConnectionDetails` (section `Input`, `Receive`).
pub fn write_details(le: &mut Tree, section: &'static str, d: &Details) -> Result<(), NodeError> {
    let r = le.root();
    let tcpip = folder(le, r, "TCPIP")?;
    let s = folder(le, tcpip, section)?;
    let cd = le.create_last_child(
        s,
        field_type::NAME,
        Text::from_static("ConnectionDetails"),
        Value::Null,
    )?;
    text(le, cd, "Type", d.conn.kind)?;
    text(le, cd, "Hostname", &d.conn.hostname)?;
    field(le, cd, "Port", Value::Integer(i64::from(d.conn.port)))?;
    field(
        le,
        cd,
        "RemotePort",
        Value::Integer(i64::from(d.conn.peer.port())),
    )?;
    field(
        le,
        cd,
        "OpenTimestamp",
        Value::GmtTimestamp(d.conn.opened_micros),
    )?;
    if d.closed {
        field(le, cd, "CloseTimestamp", Value::GmtTimestamp(now_micros()))?;
    }
    if let Some(n) = d.sequence {
        field(le, cd, "SequenceNumber", Value::Integer(n as i64))?;
    }
    text(le, cd, "Id", &d.conn.id)?;
    if let Some(r) = d.conn.reply_id() {
        text(le, cd, "ReplyId", &r)?;
    }
    Ok(())
}

/// The character value at `path` under LocalEnvironment, when there is a non-empty one.
pub fn read_text(le: &mut Tree, path: &[&str]) -> Result<Option<String>, NodeError> {
    let r = le.root();
    let Some(n) = le.path(r, path)? else {
        return Ok(None);
    };
    let s = match le.value(n) {
        Value::Integer(i) => Some(i.to_string()),
        _ => le
            .value_bytes(n)
            .map(|b| String::from_utf8_lossy(b).trim().to_string()),
    };
    Ok(s.filter(|s| !s.is_empty()))
}

/// The connection an output or receive node uses: the Id at `LocalEnvironment.Destination.
/// TCPIP.<section>.Id`, else that of the connection the invocation's record came from.
pub fn connection_id(le: &mut Tree, section: &str) -> Result<Option<String>, NodeError> {
    if let Some(id) = read_text(le, &["Destination", "TCPIP", section, "Id"])? {
        return Ok(Some(id));
    }
    for from in ["Input", "Receive"] {
        if let Some(id) = read_text(le, &["TCPIP", from, "ConnectionDetails", "Id"])? {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

/// Write `LocalEnvironment.WrittenDestination.TCPIP.Output.ConnectionDetails.Id` after a send.
pub fn write_written(le: &mut Tree, id: &str) -> Result<(), NodeError> {
    let r = le.root();
    let wd = folder(le, r, "WrittenDestination")?;
    let tcpip = folder(le, wd, "TCPIP")?;
    let out = folder(le, tcpip, "Output")?;
    let cd = folder(le, out, "ConnectionDetails")?;
    text(le, cd, "Id", id)
}
