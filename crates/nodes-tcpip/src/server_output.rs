//! TCPIPServerOutput: sends the message body, framed as a record, on a connection of a server
//! port.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
    property_enum,
};
use sluice_nodes_core::domains::serialize_body;
use sluice_nodes_core::terminals::{FailureOut, In};

use crate::TcpipError;
use crate::connection::{Connection, PortManager};
use crate::framing::{OutputFraming, OutputRecordProps};
use crate::local_env::{connection_id, write_written};
use crate::server_input::listen_addr;

pub static TCPIP_SERVER_OUTPUT: NodeSpec = NodeSpec {
    type_name: "TCPIPServerOutput",
    summary: "Sends the message body, serialised in its domain and framed per `output_record`, on a \
              connection of a server port: the one named by `LocalEnvironment.Destination.TCPIP.Output.Id`, \
              else the one the invocation's record came from, else any open connection of the port.",
    inputs: In::SPECS,
    outputs: FailureOut::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "The record is echoed on the connection it came from",
        properties: "output_record: fixed_length, output_length_bytes: 2048",
        esql: "",
        input: ExampleInput {
            domain: "BLOB",
            body: "",
            local_environment: &[],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "")]),
        runs: Runs::No("it writes to a connection a TCP/IP client opened."),
    }],
    builder: NodeBuilder::of::<ServerOutputProps>(),
};

property_enum! {
    /// What an output node closes after it sent a record.
    pub enum CloseAfterSend {
        /// Nothing.
        None = "none",
        /// The connection's input stream: nothing more is read from it.
        InputStream = "input_stream",
        /// The connection's output stream: the peer sees the end of the stream.
        OutputStream = "output_stream",
        /// The whole connection.
        Connection = "connection",
    }
}

properties! {
    /// TCPIPServerOutput's properties.
    pub struct ServerOutputProps {
        /// A port of the node's own; without it the node uses the server's TCP/IP port, shared
        /// with the other server nodes that name none.
        port: Option<u32>,
        ..record: OutputRecordProps,
        /// How long sending a record may take (the product's Timeout sending a data record);
        /// exceeded (a peer that does not read), the node raises and the connection is closed.
        write_timeout_secs: u64 = "60",
        /// What to close after the record was sent: `none`, `input_stream`, `output_stream`
        /// or `connection`.
        close_after_send: CloseAfterSend = "none",
    }
}

impl BuildNode for ServerOutputProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(ServerOutput {
            port: LazyPort::new(
                listen_addr(self.port, b.services)?,
                b.services.runtime.clone(),
            ),
            framing: OutputFraming::from_props(&self.record)?,
            write_timeout: Duration::from_secs(self.write_timeout_secs),
            close: self.close_after_send,
        })))
    }
}

/// A port's manager, acquired on first use (building a node opens no socket).
pub struct LazyPort {
    addr: Option<SocketAddr>,
    runtime: Option<tokio::runtime::Handle>,
    manager: OnceLock<Arc<PortManager>>,
}

impl LazyPort {
    pub fn new(addr: Option<SocketAddr>, runtime: Option<tokio::runtime::Handle>) -> LazyPort {
        LazyPort {
            addr,
            runtime,
            manager: OnceLock::new(),
        }
    }

    pub fn get(&self) -> Result<&Arc<PortManager>, TcpipError> {
        if let Some(m) = self.manager.get() {
            return Ok(m);
        }
        let addr = self.addr.ok_or(TcpipError::NoAddress)?;
        let rt = self.runtime.as_ref().ok_or(TcpipError::NoRuntime)?;
        let m = PortManager::acquire(addr, rt)?;
        Ok(self.manager.get_or_init(|| m))
    }

    /// The connection `id`, or when none is named (`None`) any open one.
    pub fn connection(&self, id: Option<&str>) -> Result<Arc<Connection>, TcpipError> {
        let m = self.get()?;
        let found = match id {
            Some(id) => m.connections.get(id),
            None => m.connections.any(),
        };
        found.ok_or_else(|| TcpipError::NoConnection {
            id: id.unwrap_or("(any)").to_string(),
            port: m.addr.port(),
        })
    }
}

struct ServerOutput {
    port: LazyPort,
    framing: OutputFraming,
    write_timeout: Duration,
    close: CloseAfterSend,
}

impl ServerOutput {
    fn send(&self, id: Option<&str>, data: &[u8]) -> Result<String, TcpipError> {
        let conn = self.port.connection(id)?;
        let rt = self.port.get()?.runtime();
        conn.write_blocking(rt, data, self.write_timeout)?;
        match self.close {
            CloseAfterSend::None => {}
            CloseAfterSend::InputStream => conn.close_input(),
            CloseAfterSend::OutputStream => rt.block_on(conn.close_output()),
            CloseAfterSend::Connection => rt.block_on(conn.close()),
        }
        Ok(conn.id.clone())
    }
}

impl Node for ServerOutput {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let (body, _) = serialize_body(msg)?;
        let data = self.framing.frame(body)?;
        let id = connection_id(&mut msg.local_environment, "Output")?;
        let sent = self.send(id.as_deref(), &data)?;
        if !ctx.is_wired(FailureOut::Out) {
            return Ok(());
        }
        // Only a copy that goes on says where it was sent (the input message stays as it came).
        let mut out = msg.clone();
        write_written(&mut out.local_environment, &sent)?;
        ctx.propagate(FailureOut::Out, &mut out)
    }
}
