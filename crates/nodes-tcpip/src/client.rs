//! TCPIPClientInput, TCPIPClientOutput and TCPIPClientReceive: the client side, on the
//! connection pool of the remote `host:port` their connection details name.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
};
use sluice_nodes_core::domains::{
    BodyParsing, BodyParsingProps, MessageModelProps, serialize_body,
};
use sluice_nodes_core::terminals::{FailureOut, In};

use crate::TcpipError;
use crate::client_pool::{ClientPool, Lease, PoolLimits, parse_details};
use crate::connection::Connection;
use crate::framing::{Framing, OutputFraming, OutputRecordProps, RecordDetectionProps};
use crate::local_env::{read_text, write_written};
use crate::server_input::{RecordInput, ServerInputOutput, Source, read_timeouts};
use crate::server_output::CloseAfterSend;
use crate::server_receive::{Receiver, ServerReceiveOutput};
use crate::tls::{ClientTlsFiles, ClientTlsProps};

properties! {
    /// The connection pool a client node uses.
    pub struct ClientConnectionProps {
        /// The server to connect to: `host:port`, or a port alone for localhost (the
        /// product's Connection details).
        connection_details: String,
        /// Connections the pool keeps open while a TCPIPClientInput on it runs.
        min_connections: u32 = "1",
        /// Connections the pool opens at most; a flow that needs one more waits up to
        /// `connect_timeout_secs` for one to come free.
        max_connections: u32 = "10",
        /// How long a connect (and a wait for a free connection) may take.
        connect_timeout_secs: u64 = "10",
        /// Further connect attempts after a failed one.
        retry_attempts: u32 = "3",
        /// The wait between connect attempts.
        retry_interval_ms: u64 = "1000",
        ..tls: ClientTlsProps,
    }
}

/// A client pool, opened on first use (building a node connects nowhere).
pub struct LazyPool {
    host: String,
    port: u16,
    limits: PoolLimits,
    tls: Option<ClientTlsFiles>,
    runtime: Option<tokio::runtime::Handle>,
    pool: OnceLock<Arc<ClientPool>>,
}

impl LazyPool {
    fn from_props(p: &ClientConnectionProps, b: &BuildContext) -> Result<LazyPool, ConfigError> {
        let (host, port) = parse_details(&p.connection_details).ok_or_else(|| {
            ConfigError::property(
                "connection_details",
                format!("`{}` is not `host:port` or a port", p.connection_details),
            )
        })?;
        if p.max_connections == 0 || p.min_connections > p.max_connections {
            return Err(ConfigError::property(
                "max_connections",
                "must be at least 1 and at least `min_connections`",
            ));
        }
        Ok(LazyPool {
            tls: ClientTlsFiles::from_props(&p.tls, &host, b.project_dir)?,
            host,
            port,
            limits: PoolLimits {
                min: p.min_connections as usize,
                max: p.max_connections as usize,
                connect_timeout: Duration::from_secs(p.connect_timeout_secs.max(1)),
                retries: p.retry_attempts,
                retry_interval: Duration::from_millis(p.retry_interval_ms),
            },
            runtime: b.services.runtime.clone(),
            pool: OnceLock::new(),
        })
    }

    pub fn get(&self) -> Result<&Arc<ClientPool>, TcpipError> {
        if let Some(p) = self.pool.get() {
            return Ok(p);
        }
        let rt = self.runtime.as_ref().ok_or(TcpipError::NoRuntime)?;
        let tls = self.tls.as_ref().map(ClientTlsFiles::load).transpose()?;
        let p = ClientPool::acquire(&self.host, self.port, self.limits, tls, rt);
        Ok(self.pool.get_or_init(|| p))
    }

    /// The connection `LocalEnvironment.Destination.TCPIP.<section>.Id` names, else the one
    /// the invocation holds from this pool (leased now when it holds none).
    fn connection(
        &self,
        ctx: &mut Ctx<'_>,
        msg: &mut Message,
        section: &str,
    ) -> Result<Arc<Connection>, NodeError> {
        let pool = self.get()?;
        if let Some(id) = read_text(
            &mut msg.local_environment,
            &["Destination", "TCPIP", section, "Id"],
        )? {
            return pool.connections.get(&id).ok_or_else(|| {
                TcpipError::NoConnection {
                    id,
                    port: pool.port,
                }
                .into()
            });
        }
        let lease = ctx
            .inv
            .unit_of_work
            .get_or_join(&pool.key(), || Lease::take(pool))?;
        Ok(Arc::clone(&lease.conn))
    }
}

const CLIENT_EXAMPLE_INPUT: ExampleInput = ExampleInput {
    domain: "BLOB",
    body: "",
    local_environment: &[],
};

pub static TCPIP_CLIENT_INPUT: NodeSpec = NodeSpec {
    type_name: "TCPIPClientInput",
    summary: "Opens connections to a remote server (a pool per `connection_details`, keeping \
              `min_connections` open) and propagates each record the server sends unasked, with its \
              connection details; connections a flow holds for a request are left to it.",
    inputs: &[],
    outputs: ServerInputOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Each line a remote server sends starts the flow",
        properties: "connection_details: 'quotes.example.com:7000', record_detection: delimited",
        esql: "",
        input: CLIENT_EXAMPLE_INPUT,
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "")]),
        runs: Runs::No("only a remote server sending data starts it."),
    }],
    builder: NodeBuilder::of::<ClientInputProps>(),
};

properties! {
    /// TCPIPClientInput's properties.
    pub struct ClientInputProps {
        ..connection: ClientConnectionProps,
        ..detection: RecordDetectionProps,
        /// How long the rest of a record may take after its first byte; exceeded, the bytes
        /// that came go to `failure` and the connection is closed.
        read_timeout_secs: u64 = "60",
        /// A connection on which no record starts for this long is closed (the pool opens
        /// another to keep `min_connections`); 0 keeps idle connections open.
        idle_timeout_secs: u64 = "0",
        ..parsing: BodyParsingProps,
        ..model: MessageModelProps,
    }
}

impl BuildNode for ClientInputProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let pool = LazyPool::from_props(&self.connection, b)?;
        let parsing = BodyParsing::with_model(&self.parsing, &self.model, b.project_dir)?;
        Ok(NodeImpl::Input(Arc::new(RecordInput::new(
            "TCPIPClientInput",
            b,
            Source::Pool(pool),
            Framing::from_props(&self.detection, &parsing)?,
            read_timeouts(self.read_timeout_secs, self.idle_timeout_secs),
            parsing,
        ))))
    }
}

pub static TCPIP_CLIENT_OUTPUT: NodeSpec = NodeSpec {
    type_name: "TCPIPClientOutput",
    summary: "Sends the message body, framed per `output_record`, to a remote server on a connection of \
              the pool of `connection_details`: the one `LocalEnvironment.Destination.TCPIP.Output.Id` \
              names, else one the invocation holds until it ends (so a TCPIPClientReceive after it reads \
              the reply on the same connection).",
    inputs: In::SPECS,
    outputs: FailureOut::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "The body is sent as a line to a remote server",
        properties: "connection_details: 'orders.example.com:7000', output_record: delimited",
        esql: "",
        input: CLIENT_EXAMPLE_INPUT,
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "")]),
        runs: Runs::No("it needs a remote server to connect to."),
    }],
    builder: NodeBuilder::of::<ClientOutputProps>(),
};

properties! {
    /// TCPIPClientOutput's properties.
    pub struct ClientOutputProps {
        ..connection: ClientConnectionProps,
        ..record: OutputRecordProps,
        /// How long sending a record may take; exceeded, the node raises and the connection
        /// is closed.
        write_timeout_secs: u64 = "60",
        /// What to close after the record was sent: `none`, `input_stream`, `output_stream`
        /// or `connection`.
        close_after_send: CloseAfterSend = "none",
    }
}

impl BuildNode for ClientOutputProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(ClientOutput {
            pool: LazyPool::from_props(&self.connection, b)?,
            framing: OutputFraming::from_props(&self.record)?,
            write_timeout: Duration::from_secs(self.write_timeout_secs),
            close: self.close_after_send,
        })))
    }
}

struct ClientOutput {
    pool: LazyPool,
    framing: OutputFraming,
    write_timeout: Duration,
    close: CloseAfterSend,
}

impl Node for ClientOutput {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let (body, _) = serialize_body(msg)?;
        let data = self.framing.frame(body)?;
        let conn = self.pool.connection(ctx, msg, "Output")?;
        let rt = self.pool.get()?.runtime();
        rt.block_on(async {
            conn.write(&data, self.write_timeout).await?;
            match self.close {
                CloseAfterSend::None => {}
                CloseAfterSend::InputStream => conn.close_input(),
                CloseAfterSend::OutputStream => conn.close_output().await,
                CloseAfterSend::Connection => conn.close().await,
            }
            Ok::<_, TcpipError>(())
        })?;
        if !ctx.is_wired(FailureOut::Out) {
            return Ok(());
        }
        let mut out = msg.clone();
        write_written(&mut out.local_environment, &conn.id)?;
        ctx.propagate(FailureOut::Out, &mut out)
    }
}

pub static TCPIP_CLIENT_RECEIVE: NodeSpec = NodeSpec {
    type_name: "TCPIPClientReceive",
    summary: "Waits for a record from a remote server on a connection of the pool of \
              `connection_details` — the one `LocalEnvironment.Destination.TCPIP.Receive.Id` names, \
              else the one the invocation holds (after a TCPIPClientOutput: the reply to its request) — \
              and propagates it; `timeout` when none arrives in time.",
    inputs: In::SPECS,
    outputs: ServerReceiveOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "The reply to the request just sent is read",
        properties: "connection_details: 'orders.example.com:7000', record_detection: delimited",
        esql: "",
        input: CLIENT_EXAMPLE_INPUT,
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "")]),
        runs: Runs::No("it needs a remote server to connect to."),
    }],
    builder: NodeBuilder::of::<ClientReceiveProps>(),
};

properties! {
    /// TCPIPClientReceive's properties.
    pub struct ClientReceiveProps {
        ..connection: ClientConnectionProps,
        ..detection: RecordDetectionProps,
        /// How long to wait for a whole record: with nothing received, the input message goes
        /// to `timeout`; with part of a record received, the node raises and the connection
        /// is closed.
        read_timeout_secs: u64 = "60",
        ..parsing: BodyParsingProps,
    }
}

impl BuildNode for ClientReceiveProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(ClientReceive {
            pool: LazyPool::from_props(&self.connection, b)?,
            receiver: Receiver::from_props(&self.detection, self.read_timeout_secs, &self.parsing)?,
        })))
    }
}

struct ClientReceive {
    pool: LazyPool,
    receiver: Receiver,
}

impl Node for ClientReceive {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let conn = self.pool.connection(ctx, msg, "Receive")?;
        let rt = self.pool.get()?.runtime();
        self.receiver.receive(ctx, msg, &conn, rt)
    }
}
