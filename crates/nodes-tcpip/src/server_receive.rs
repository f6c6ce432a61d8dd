//! TCPIPServerReceive: waits, inside a flow, for the next record on a connection of a server
//! port.

use std::sync::Arc;
use std::time::Duration;

use tokio::runtime::Handle;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
    property_enum, terminals,
};
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps};
use sluice_nodes_core::terminals::{FAILURE_DOC, In};

use crate::TcpipError;
use crate::connection::{Connection, ReadTimeouts};
use crate::framing::{Framing, RecordDetectionProps};
use crate::local_env::{Details, connection_id, read_text, write_details};
use crate::server_input::listen_addr;
use crate::server_output::LazyPort;
use crate::streams::{Stream, StreamModification};

terminals! {
    /// TCPIPServerReceive's outputs.
    pub enum ServerReceiveOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": "The record received, its body parsed in the chosen domain, with `LocalEnvironment.TCPIP.Receive.ConnectionDetails`.",
        Timeout = "timeout": "The input message, when no record arrived within `read_timeout_secs`.",
    }
}

pub static TCPIP_SERVER_RECEIVE: NodeSpec = NodeSpec {
    type_name: "TCPIPServerReceive",
    summary: "Waits for the next record on a connection of a server port (the one named by \
              `LocalEnvironment.Destination.TCPIP.Receive.Id`, else the invocation's own) and propagates \
              it; `timeout` when none arrives in time.",
    inputs: In::SPECS,
    outputs: ServerReceiveOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "The client's next line is read after its first one",
        properties: "record_detection: delimited, read_timeout_secs: 5",
        esql: "",
        input: ExampleInput {
            domain: "BLOB",
            body: "",
            local_environment: &[],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "")]),
        runs: Runs::No("it reads from a connection a TCP/IP client opened."),
    }],
    builder: NodeBuilder::of::<ServerReceiveProps>(),
};

property_enum! {
    /// What an input or receive node closes once it has a record.
    pub enum CloseAfterRecord {
        /// Nothing.
        None = "none",
        /// The connection's input stream, as soon as the record is read: nothing more is read
        /// from it, and the flow can still answer on the output stream.
        InputStream = "input_stream",
        /// The whole connection, once the flow has finished with the record.
        Connection = "connection",
    }
}

properties! {
    /// How a receive node waits for a record and what it does to the connection.
    pub struct ReceiveProps {
        ..detection: RecordDetectionProps,
        /// How long to wait for a whole record (the product's Timeout waiting for a data
        /// record): with nothing received, the input message goes to `timeout`; with part
        /// of a record received, the node raises and the connection is closed. An input
        /// stream reserved by another flow thread is waited for as long.
        read_timeout_secs: u64 = "60",
        /// What to close once a record was received: `none`, `input_stream` or `connection`.
        close_after_record: CloseAfterRecord = "none",
        /// Close the connection when no record arrived in time (before the input message goes
        /// to `timeout`).
        close_on_timeout: bool = "false",
        /// The input stream's reservation: `none`, `reserve` (for this flow thread until a
        /// node of it releases it), `reserve_and_release_at_end` (for this invocation) or
        /// `release` (after receiving).
        input_stream_modification: StreamModification = "none",
        ..parsing: BodyParsingProps,
    }
}

properties! {
    /// TCPIPServerReceive's properties.
    pub struct ServerReceiveProps {
        /// A port of the node's own; without it the node uses the server's TCP/IP port.
        port: Option<u32>,
        ..receive: ReceiveProps,
    }
}

impl BuildNode for ServerReceiveProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(ServerReceive {
            port: LazyPort::new(
                listen_addr(self.port, b.services)?,
                b.services.runtime.clone(),
            ),
            receiver: Receiver::from_props(&self.receive)?,
        })))
    }
}

struct ServerReceive {
    port: LazyPort,
    receiver: Receiver,
}

impl Node for ServerReceive {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let id = connection_id(&mut msg.local_environment, "Receive")?;
        let conn = self.port.connection(id.as_deref())?;
        let rt = self.port.get()?.runtime();
        self.receiver.receive(ctx, msg, &conn, rt)
    }
}

/// What a receive node does once it has its connection: wait for one record and propagate it
/// with `LocalEnvironment.TCPIP.Receive.ConnectionDetails`, or the input message to `timeout`
/// when none came. TCPIPServerReceive and TCPIPClientReceive differ only in where the
/// connection comes from.
pub(crate) struct Receiver {
    framing: Framing,
    timeouts: ReadTimeouts,
    parsing: BodyParsing,
    close: CloseAfterRecord,
    close_on_timeout: bool,
    input_mod: StreamModification,
}

impl Receiver {
    pub fn from_props(p: &ReceiveProps) -> Result<Receiver, ConfigError> {
        let wait = Duration::from_secs(p.read_timeout_secs);
        let parsing = BodyParsing::from_props(&p.parsing)?;
        Ok(Receiver {
            framing: Framing::from_props(&p.detection, &parsing)?,
            timeouts: ReadTimeouts {
                record: wait,
                first_byte: Some(wait),
            },
            parsing,
            close: p.close_after_record,
            close_on_timeout: p.close_on_timeout,
            input_mod: p.input_stream_modification,
        })
    }

    pub fn receive(
        &self,
        ctx: &mut Ctx<'_>,
        msg: &mut Message,
        conn: &Arc<Connection>,
        rt: &Handle,
    ) -> Result<(), NodeError> {
        conn.claim(
            Stream::Input,
            self.input_mod,
            self.timeouts.record,
            &mut ctx.inv.unit_of_work,
        )?;
        if let Some(r) = read_text(
            &mut msg.local_environment,
            &["Destination", "TCPIP", "Receive", "ReplyId"],
        )? {
            conn.set_reply_id(Some(r));
        }
        let got = rt.block_on(conn.read_record(&self.framing, self.timeouts, false));
        conn.after_use(Stream::Input, self.input_mod);
        let (record, seq) = match got {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => {
                return Err(TcpipError::StreamClosed {
                    id: conn.id.clone(),
                    stream: "input",
                }
                .into());
            }
            Err(TcpipError::NoRecord { .. }) if ctx.is_wired(ServerReceiveOutput::Timeout) => {
                if self.close_on_timeout {
                    rt.block_on(conn.close());
                }
                return ctx.propagate(ServerReceiveOutput::Timeout, msg);
            }
            Err(e @ TcpipError::NoRecord { .. }) => {
                if self.close_on_timeout {
                    rt.block_on(conn.close());
                }
                return Err(e.into());
            }
            Err(e) => {
                // Part of a record was read: the stream is no longer at a record boundary.
                if e.partial().is_some() {
                    rt.block_on(conn.close());
                }
                return Err(e.into());
            }
        };
        let mut out = Message::new();
        out.local_environment = msg.local_environment.clone();
        write_details(
            &mut out.local_environment,
            "Receive",
            &Details {
                conn,
                sequence: Some(seq),
                closed: false,
            },
        )?;
        if self.close == CloseAfterRecord::InputStream {
            conn.close_input();
        }
        let r = self
            .parsing
            .attach(&mut out.root, record)
            .map_err(NodeError::from)
            .and_then(|_| ctx.propagate(ServerReceiveOutput::Out, &mut out));
        if self.close == CloseAfterRecord::Connection {
            rt.block_on(conn.close());
        }
        r
    }
}
