//! TCPIPClientInput, TCPIPClientOutput and TCPIPClientReceive: the client side, on the
//! connection pool of the remote `host:port` their connection details name.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, ExceptionKind,
    Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal,
    Terminals, properties,
};
use sluice_nodes_core::terminals::{FailureOut, In};

use crate::TcpipError;
use crate::client_pool::{ClientPool, Lease, PoolLimits, parse_details};
use crate::connection::Connection;
use crate::local_env::read_text;
use crate::server_input::{InputReadProps, RecordInput, ServerInputOutput, Source};
use crate::server_output::{OutputInput, SendProps, Sender};
use crate::server_receive::{ReceiveProps, Receiver, ServerReceiveOutput};
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
    /// Pools of the servers LocalEnvironment named instead, kept for the next message.
    overrides: Mutex<HashMap<(String, u16), Arc<ClientPool>>>,
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
            overrides: Mutex::default(),
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

    /// The pool of the server `LocalEnvironment.Destination.TCPIP.<section>.Hostname` and
    /// `Port` name (either defaults to the node's own), else the node's own pool.
    fn pool_for(&self, msg: &mut Message, section: &str) -> Result<Arc<ClientPool>, NodeError> {
        let le = &mut msg.local_environment;
        let host = read_text(le, &["Destination", "TCPIP", section, "Hostname"])?;
        let port = read_text(le, &["Destination", "TCPIP", section, "Port"])?;
        if host.is_none() && port.is_none() {
            return Ok(Arc::clone(self.get()?));
        }
        let port = match port {
            None => self.port,
            Some(p) => p.parse().ok().filter(|p| *p != 0).ok_or_else(|| {
                NodeError::new(
                    ExceptionKind::Recoverable,
                    3162,
                    format!(
                        "LocalEnvironment.Destination.TCPIP.{section}.Port `{p}` is not a TCP port"
                    ),
                )
            })?,
        };
        let host = host.unwrap_or_else(|| self.host.clone());
        let mut overrides = self.overrides.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = overrides.get(&(host.clone(), port)) {
            return Ok(Arc::clone(p));
        }
        let rt = self.runtime.as_ref().ok_or(TcpipError::NoRuntime)?;
        let tls = self.tls.as_ref().map(ClientTlsFiles::load).transpose()?;
        let p = ClientPool::acquire(&host, port, self.limits, tls, rt);
        overrides.insert((host, port), Arc::clone(&p));
        Ok(p)
    }

    /// The connection `LocalEnvironment.Destination.TCPIP.<section>.Id` names, else one whose
    /// stream this flow thread reserved, else the one the invocation holds from the pool
    /// (leased now when it holds none).
    fn connection(
        &self,
        ctx: &mut Ctx<'_>,
        msg: &mut Message,
        section: &str,
    ) -> Result<(Arc<ClientPool>, Arc<Connection>), NodeError> {
        let pool = self.pool_for(msg, section)?;
        if let Some(id) = read_text(
            &mut msg.local_environment,
            &["Destination", "TCPIP", section, "Id"],
        )? {
            let c = pool
                .connections
                .get(&id)
                .ok_or_else(|| TcpipError::NoConnection {
                    id,
                    port: pool.port,
                })?;
            return Ok((pool, c));
        }
        if let Some(c) = pool.connections.held_by_me() {
            return Ok((pool, c));
        }
        let lease = ctx
            .inv
            .unit_of_work
            .get_or_join(&pool.key(), || Lease::take(&pool))?;
        let c = Arc::clone(&lease.conn);
        Ok((pool, c))
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
        ..read: InputReadProps,
    }
}

impl BuildNode for ClientInputProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let pool = LazyPool::from_props(&self.connection, b)?;
        Ok(NodeImpl::Input(Arc::new(RecordInput::new(
            "TCPIPClientInput",
            b,
            Source::Pool(pool),
            &self.read,
            None,
        )?)))
    }
}

pub static TCPIP_CLIENT_OUTPUT: NodeSpec = NodeSpec {
    type_name: "TCPIPClientOutput",
    summary: "Sends the message body, framed per `output_record`, to a remote server on a connection of \
              the pool of `connection_details`: the one `LocalEnvironment.Destination.TCPIP.Output.Id` \
              names, else one the invocation holds until it ends (so a TCPIPClientReceive after it reads \
              the reply on the same connection); its `close` terminal closes that connection instead.",
    inputs: OutputInput::SPECS,
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
        ..send: SendProps,
    }
}

impl BuildNode for ClientOutputProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(ClientOutput {
            pool: LazyPool::from_props(&self.connection, b)?,
            sender: Sender::from_props(&self.send)?,
        })))
    }
}

struct ClientOutput {
    pool: LazyPool,
    sender: Sender,
}

impl Node for ClientOutput {
    fn evaluate(
        &self,
        ctx: &mut Ctx<'_>,
        input: Terminal,
        msg: &mut Message,
    ) -> Result<(), NodeError> {
        let (pool, conn) = self.pool.connection(ctx, msg, "Output")?;
        self.sender
            .evaluate(ctx, input, msg, &[conn], pool.runtime())
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
        ..receive: ReceiveProps,
    }
}

impl BuildNode for ClientReceiveProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(ClientReceive {
            pool: LazyPool::from_props(&self.connection, b)?,
            receiver: Receiver::from_props(&self.receive)?,
        })))
    }
}

struct ClientReceive {
    pool: LazyPool,
    receiver: Receiver,
}

impl Node for ClientReceive {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let (pool, conn) = self.pool.connection(ctx, msg, "Receive")?;
        self.receiver.receive(ctx, msg, &conn, pool.runtime())
    }
}
