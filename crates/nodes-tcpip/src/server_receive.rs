//! TCPIPServerReceive: waits, inside a flow, for the next record on a connection of a server
//! port.

use std::sync::Arc;
use std::time::Duration;

use tokio::runtime::Handle;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
    terminals,
};
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps};
use sluice_nodes_core::terminals::{FAILURE_DOC, In};

use crate::TcpipError;
use crate::connection::{Connection, ReadTimeouts};
use crate::framing::{Framing, RecordDetectionProps};
use crate::local_env::{Details, connection_id, write_details};
use crate::server_input::listen_addr;
use crate::server_output::LazyPort;

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

properties! {
    /// TCPIPServerReceive's properties.
    pub struct ServerReceiveProps {
        /// A port of the node's own; without it the node uses the server's TCP/IP port.
        port: Option<u32>,
        ..detection: RecordDetectionProps,
        /// How long to wait for a whole record (the product's Timeout waiting for a data
        /// record): with nothing received, the input message goes to `timeout`; with part
        /// of a record received, the node raises and the connection is closed.
        read_timeout_secs: u64 = "60",
        ..parsing: BodyParsingProps,
    }
}

impl BuildNode for ServerReceiveProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(ServerReceive {
            port: LazyPort::new(
                listen_addr(self.port, b.services)?,
                b.services.runtime.clone(),
            ),
            receiver: Receiver::from_props(&self.detection, self.read_timeout_secs, &self.parsing)?,
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
    pub framing: Framing,
    pub timeouts: ReadTimeouts,
    pub parsing: BodyParsing,
}

impl Receiver {
    /// The framing, timeouts and parsing of a receive node's properties.
    pub fn from_props(
        detection: &RecordDetectionProps,
        read_timeout_secs: u64,
        parsing: &BodyParsingProps,
    ) -> Result<Receiver, ConfigError> {
        let wait = Duration::from_secs(read_timeout_secs);
        let parsing = BodyParsing::from_props(parsing)?;
        Ok(Receiver {
            framing: Framing::from_props(detection, &parsing)?,
            timeouts: ReadTimeouts {
                record: wait,
                first_byte: Some(wait),
            },
            parsing,
        })
    }

    pub fn receive(
        &self,
        ctx: &mut Ctx<'_>,
        msg: &mut Message,
        conn: &Arc<Connection>,
        rt: &Handle,
    ) -> Result<(), NodeError> {
        let got = rt.block_on(conn.read_record(&self.framing, self.timeouts, false));
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
                return ctx.propagate(ServerReceiveOutput::Timeout, msg);
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
        self.parsing.attach(&mut out.root, record)?;
        ctx.propagate(ServerReceiveOutput::Out, &mut out)
    }
}
