//! TCPIPServerOutput: sends the message body, framed as a record, on a connection of a server
//! port.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::runtime::Handle;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, UnitOfWork,
    properties, property_enum, terminals,
};
use sluice_nodes_core::domains::serialize_body;
use sluice_nodes_core::terminals::FailureOut;

use crate::TcpipError;
use crate::connection::Connection;
use crate::framing::{OutputFraming, OutputRecordProps};
use crate::local_env::{connection_id, read_text, write_written};
use crate::port::PortManager;
use crate::server_input::listen_addr;
use crate::streams::{Stream, StreamModification};

terminals! {
    /// The inputs of TCPIPServerOutput and TCPIPClientOutput.
    pub enum OutputInput {
        In = "in": "The message whose body is sent as a record.",
        Close = "close": "Close the connection the node would send on (every one with `send_to: all`); the message then goes on to `out`.",
    }
}

pub static TCPIP_SERVER_OUTPUT: NodeSpec = NodeSpec {
    type_name: "TCPIPServerOutput",
    summary: "Sends the message body, serialised in its domain and framed per `output_record`, on a \
              connection of a server port: the one named by `LocalEnvironment.Destination.TCPIP.Output.Id`, \
              else the one the invocation's record came from, else any open connection of the port \
              (or every one, with `send_to: all`); its `close` terminal closes connections instead.",
    inputs: OutputInput::SPECS,
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

property_enum! {
    /// Which connections a server output node sends to.
    pub enum SendTo {
        /// One: the connection named, the invocation's own, or any open one.
        One = "one",
        /// Every open connection of the port whose output stream no other flow thread
        /// reserved (a broadcast).
        All = "all",
    }
}

properties! {
    /// How an output node sends: its record, its time limit, and what it does to the
    /// connection's streams.
    pub struct SendProps {
        ..record: OutputRecordProps,
        /// How long sending a record may take (the product's Timeout sending a data record);
        /// exceeded (a peer that does not read), the node raises and the connection is closed.
        /// A stream reserved by another flow thread is waited for as long.
        write_timeout_secs: u64 = "60",
        /// What to close after the record was sent: `none`, `input_stream`, `output_stream`
        /// or `connection`.
        close_after_send: CloseAfterSend = "none",
        /// The output stream's reservation: `none`, `reserve` (for this flow thread until a
        /// node of it releases it), `reserve_and_release_at_end` (for this invocation) or
        /// `release` (after sending).
        output_stream_modification: StreamModification = "none",
        /// The input stream's reservation, taken before sending so that the reply is left to
        /// this flow's receive node rather than read by an input node: the same values.
        input_stream_modification: StreamModification = "none",
    }
}

properties! {
    /// TCPIPServerOutput's properties.
    pub struct ServerOutputProps {
        /// A port of the node's own; without it the node uses the server's TCP/IP port, shared
        /// with the other server nodes that name none.
        port: Option<u32>,
        ..send: SendProps,
        /// `one` connection (default) or `all` of the port's (a broadcast).
        send_to: SendTo = "one",
    }
}

impl BuildNode for ServerOutputProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(ServerOutput {
            port: LazyPort::new(
                listen_addr(self.port, b.services)?,
                b.services.runtime.clone(),
            ),
            sender: Sender::from_props(&self.send)?,
            send_to: self.send_to,
        })))
    }
}

/// What an output node does once it has its connection: reserve what it is asked to, send the
/// framed record, close what it is asked to. TCPIPServerOutput and TCPIPClientOutput differ
/// only in where the connection comes from.
pub(crate) struct Sender {
    framing: OutputFraming,
    pub write_timeout: Duration,
    close: CloseAfterSend,
    output_mod: StreamModification,
    input_mod: StreamModification,
}

impl Sender {
    pub fn from_props(p: &SendProps) -> Result<Sender, ConfigError> {
        Ok(Sender {
            framing: OutputFraming::from_props(&p.record)?,
            write_timeout: Duration::from_secs(p.write_timeout_secs),
            close: p.close_after_send,
            output_mod: p.output_stream_modification,
            input_mod: p.input_stream_modification,
        })
    }

    /// The message's body framed as this node's record.
    pub fn record(&self, msg: &mut Message) -> Result<bytes::Bytes, NodeError> {
        let (body, _) = serialize_body(msg)?;
        Ok(self.framing.frame(body)?)
    }

    /// Send `data` on `conn`, storing `reply_id` on it first when there is one.
    pub fn send(
        &self,
        conn: &Arc<Connection>,
        rt: &Handle,
        data: &[u8],
        reply_id: Option<String>,
        uow: &mut UnitOfWork,
    ) -> Result<(), TcpipError> {
        conn.claim(Stream::Output, self.output_mod, self.write_timeout, uow)?;
        conn.claim(Stream::Input, self.input_mod, self.write_timeout, uow)?;
        if reply_id.is_some() {
            conn.set_reply_id(reply_id);
        }
        conn.write_blocking(rt, data, self.write_timeout)?;
        match self.close {
            CloseAfterSend::None => {}
            CloseAfterSend::InputStream => conn.close_input(),
            CloseAfterSend::OutputStream => rt.block_on(conn.close_output()),
            CloseAfterSend::Connection => rt.block_on(conn.close()),
        }
        conn.after_use(Stream::Output, self.output_mod);
        conn.after_use(Stream::Input, self.input_mod);
        Ok(())
    }

    /// Evaluate an output node: close `conns` (the close terminal), or send the message on
    /// them; then propagate a copy that says where it went.
    pub fn evaluate(
        &self,
        ctx: &mut Ctx<'_>,
        input: Terminal,
        msg: &mut Message,
        conns: &[Arc<Connection>],
        rt: &Handle,
    ) -> Result<(), NodeError> {
        if OutputInput::from_terminal(input) == Some(OutputInput::Close) {
            for c in conns {
                rt.block_on(c.close());
            }
            return ctx.propagate(FailureOut::Out, msg);
        }
        let data = self.record(msg)?;
        let reply_id = read_text(
            &mut msg.local_environment,
            &["Destination", "TCPIP", "Output", "ReplyId"],
        )?;
        let mut sent = None;
        for c in conns {
            let r = self.send(c, rt, &data, reply_id.clone(), &mut ctx.inv.unit_of_work);
            match r {
                Ok(()) => sent = Some(c),
                // One connection failing does not stop a broadcast.
                Err(error) if conns.len() > 1 => {
                    tracing::warn!(%error, connection = %c.id, "A broadcast record could not be sent on one connection.");
                }
                Err(e) => return Err(e.into()),
            }
        }
        if !ctx.is_wired(FailureOut::Out) {
            return Ok(());
        }
        // Only a copy that goes on says where it was sent (the input message stays as it came).
        let mut out = msg.clone();
        if let (Some(c), 1) = (sent, conns.len()) {
            write_written(&mut out.local_environment, &c.id)?;
        }
        ctx.propagate(FailureOut::Out, &mut out)
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
    sender: Sender,
    send_to: SendTo,
}

impl Node for ServerOutput {
    fn evaluate(
        &self,
        ctx: &mut Ctx<'_>,
        input: Terminal,
        msg: &mut Message,
    ) -> Result<(), NodeError> {
        let conns = match self.send_to {
            SendTo::All => self.port.get()?.connections.all_writable(),
            SendTo::One => {
                let id = connection_id(&mut msg.local_environment, "Output")?;
                vec![self.port.connection(id.as_deref())?]
            }
        };
        let rt = self.port.get()?.runtime();
        self.sender.evaluate(ctx, input, msg, &conns, rt)
    }
}
