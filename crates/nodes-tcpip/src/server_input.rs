//! TCPIPServerInput: listens on a port (the server's shared TCP/IP port, or its own), cuts
//! what each connection sends into records, and starts an invocation for each record.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, ExampleInput, ExampleOutcome, InputNode, InstanceRunner,
    Invocation, Message, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Services,
    Terminal, Terminals, properties, terminals,
};
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps, MessageModelProps};
use sluice_nodes_core::terminals::{CATCH_DOC, FAILURE_DOC};

use crate::TcpipError;
use crate::connection::{Connection, Delivery, Event, Handback, InputSink, ReadTimeouts, next_id};
use crate::framing::{Framing, RecordDetectionProps};
use crate::local_env::{Details, write_details};
use crate::port::PortManager;
use crate::server_receive::CloseAfterRecord;
use crate::tls::{ServerTls, ServerTlsProps};
use crate::turn::{TryNext, Turn};

terminals! {
    /// TCPIPServerInput's outputs.
    pub enum ServerInputOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": "Each record, its body parsed in the chosen domain, with `LocalEnvironment.TCPIP.Input.ConnectionDetails`.",
        Open = "open": "A message without a body when a connection is accepted, with its connection details.",
        Close = "close": "A message without a body when a connection has closed, with its connection details.",
        Catch = "catch": CATCH_DOC,
    }
}

pub static TCPIP_SERVER_INPUT: NodeSpec = NodeSpec {
    type_name: "TCPIPServerInput",
    summary: "Accepts TCP/IP connections on the server's TCP/IP port (or its own `port`), cuts each \
              connection's data into records (fixed length, delimited, length-prefixed or up to the \
              connection's close) and propagates each record with its connection details; records of \
              one connection are processed in order.",
    inputs: &[],
    outputs: ServerInputOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Every 2,048 bytes a client sends start the flow",
        properties: "record_detection: fixed_length, record_length_bytes: 2048",
        esql: "",
        input: ExampleInput {
            domain: "BLOB",
            body: "",
            local_environment: &[],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "")]),
        runs: Runs::No("only a client connecting to its port starts it."),
    }],
    builder: NodeBuilder::of::<ServerInputProps>(),
};

properties! {
    /// How an input node reads records and what it does to their connection.
    pub struct InputReadProps {
        ..detection: RecordDetectionProps,
        /// How long the rest of a record may take after its first byte (the product's Timeout
        /// waiting for a data record); exceeded, the bytes that came go to `failure` and the
        /// connection is closed.
        read_timeout_secs: u64 = "60",
        /// A connection on which no record starts for this long is closed (a client pool then
        /// opens another to keep `min_connections`); 0 keeps idle connections open.
        idle_timeout_secs: u64 = "0",
        /// What to close once a record was read: `none`, `input_stream` (at once) or
        /// `connection` (when the flow has finished with the record).
        close_after_record: CloseAfterRecord = "none",
        ..parsing: BodyParsingProps,
        ..model: MessageModelProps,
    }
}

properties! {
    /// TCPIPServerInput's properties.
    pub struct ServerInputProps {
        /// A port of the node's own; without it the node uses the server's TCP/IP port
        /// (`--tcpip-port`, default 7803), shared with the other server nodes that name none.
        port: Option<u32>,
        /// Connections the port keeps open at most (the product's MaximumConnections); a
        /// client connecting beyond it is closed at once, and logged.
        max_connections: u32 = "100",
        ..read: InputReadProps,
        ..tls: ServerTlsProps,
    }
}

/// The listening address of a server node: `port` on the server's TCP/IP address, or that
/// address itself. `None` where nothing runs (`sluice validate`) and no port is named.
pub fn listen_addr(
    port: Option<u32>,
    services: &Services,
) -> Result<Option<SocketAddr>, ConfigError> {
    match port {
        None => Ok(services.tcpip),
        Some(p) => {
            let p = u16::try_from(p)
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| ConfigError::property("port", format!("{p} is not a TCP port")))?;
            let ip = services
                .tcpip
                .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |a| a.ip());
            Ok(Some(SocketAddr::new(ip, p)))
        }
    }
}

/// How many records of one connection a flow instance handles in a row before the
/// connection goes to the back of the queue.
const RECORDS_PER_TURN: usize = 32;

/// Where an input node's connections come from.
pub enum Source {
    /// Accepted on a server port.
    Port {
        addr: Option<SocketAddr>,
        runtime: Option<tokio::runtime::Handle>,
        /// TLS for the port's connections.
        tls: Option<ServerTls>,
    },
    /// Opened by a client pool.
    Pool(crate::client::LazyPool),
}

/// What an input node holds while its flow runs.
enum Held {
    Port(Arc<PortManager>),
    Pool(Arc<crate::client_pool::ClientPool>),
}

/// TCPIPServerInput and TCPIPClientInput: records of connections, one invocation each.
pub struct RecordInput {
    pub node_type: &'static str,
    pub flow: String,
    pub label: String,
    pub source: Source,
    pub framing: Framing,
    pub timeouts: ReadTimeouts,
    pub parsing: BodyParsing,
    close: CloseAfterRecord,
    /// Connections a server port keeps at most.
    max_connections: Option<usize>,
    pub owner: u64,
    pub tx: crossbeam_channel::Sender<Delivery>,
    pub rx: crossbeam_channel::Receiver<Delivery>,
    /// The port's manager or the pool while the flow runs.
    held: Mutex<Option<Held>>,
}

impl RecordInput {
    pub fn new(
        node_type: &'static str,
        b: &BuildContext,
        source: Source,
        p: &InputReadProps,
        max_connections: Option<usize>,
    ) -> Result<RecordInput, ConfigError> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let parsing = BodyParsing::with_model(&p.parsing, &p.model, b.project_dir)?;
        Ok(RecordInput {
            node_type,
            flow: b.flow.to_string(),
            label: b.label.to_string(),
            source,
            framing: Framing::from_props(&p.detection, &parsing)?,
            timeouts: ReadTimeouts {
                record: Duration::from_secs(p.read_timeout_secs),
                first_byte: (p.idle_timeout_secs > 0)
                    .then(|| Duration::from_secs(p.idle_timeout_secs)),
            },
            parsing,
            close: p.close_after_record,
            max_connections,
            owner: next_id(),
            tx,
            rx,
            held: Mutex::new(None),
        })
    }
}

impl BuildNode for ServerInputProps {
    /// Two input nodes on one port would each take some of its records.
    fn claims(&self) -> Vec<String> {
        vec![match self.port {
            Some(p) => format!("TCP/IP port {p}"),
            None => "the server's TCP/IP port (--tcpip-port)".to_string(),
        }]
    }

    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let source = Source::Port {
            addr: listen_addr(self.port, b.services)?,
            runtime: b.services.runtime.clone(),
            tls: ServerTls::from_props(&self.tls, b.project_dir)?,
        };
        if self.max_connections == 0 {
            return Err(ConfigError::property(
                "max_connections",
                "must be at least 1",
            ));
        }
        Ok(NodeImpl::Input(Arc::new(RecordInput::new(
            "TCPIPServerInput",
            b,
            source,
            &self.read,
            Some(self.max_connections as usize),
        )?)))
    }
}

impl RecordInput {
    fn open(&self, sink: Arc<InputSink>) -> Result<Held, TcpipError> {
        match &self.source {
            Source::Port { addr, runtime, .. } => {
                let addr = addr.ok_or(TcpipError::NoAddress)?;
                let rt = runtime.as_ref().ok_or(TcpipError::NoRuntime)?;
                let m = PortManager::acquire(addr, rt)?;
                m.serve(sink);
                tracing::info!(flow = %self.flow, node = %self.label, address = %m.addr, "Listening for TCP/IP connections.");
                Ok(Held::Port(m))
            }
            Source::Pool(p) => {
                let pool = p.get()?;
                pool.serve(sink);
                Ok(Held::Pool(Arc::clone(pool)))
            }
        }
    }

    fn handle(&self, runner: &mut dyn InstanceRunner, d: Delivery) {
        let Delivery { conn, event, done } = d;
        let read_on = conn.read_by_flows()
            && matches!(event, Event::Open | Event::Record(..) | Event::Resume);
        if !matches!(event, Event::Resume) {
            self.process(runner, &conn, event);
        }
        if read_on {
            self.read_on(runner, conn, done);
        } else {
            let _ = done.send(Handback::Read);
        }
    }

    /// Go on reading a plain connection on this thread after one of its events, until it has
    /// nothing more (then it is parked on its socket) or its task must take over.
    fn read_on(
        &self,
        runner: &mut dyn InstanceRunner,
        conn: Arc<Connection>,
        mut done: oneshot::Sender<Handback>,
    ) {
        for _ in 0..RECORDS_PER_TURN {
            let handback = match conn.try_next_record(&self.framing) {
                TryNext::Record(rec, seq) => {
                    self.process(runner, &conn, Event::Record(rec, seq));
                    continue;
                }
                TryNext::Idle if self.timeouts.first_byte.is_none() => {
                    match conn.park(Turn {
                        tx: self.tx.clone(),
                        done,
                    }) {
                        Ok(()) => return,
                        Err(turn) => {
                            done = turn.done;
                            continue;
                        }
                    }
                }
                // An idle timeout runs on the task.
                TryNext::Idle | TryNext::Wait => Handback::Read,
                TryNext::Ended => Handback::End,
                TryNext::Failed(e) => {
                    self.process(runner, &conn, Event::Failed(e));
                    Handback::End
                }
            };
            let _ = done.send(handback);
            return;
        }
        // A connection that keeps sending goes to the back of the queue, so that the other
        // connections' records are not held up behind it.
        let _ = self.tx.send(Delivery {
            conn,
            event: Event::Resume,
            done,
        });
    }

    /// The runtime the node's connections live on.
    fn runtime(&self) -> Option<&tokio::runtime::Handle> {
        match &self.source {
            Source::Port { runtime, .. } => runtime.as_ref(),
            Source::Pool(p) => p.get().ok().map(|p| p.runtime()),
        }
    }

    /// Run the flow for one event of `conn`, closing what `close_after_record` says.
    fn process(&self, runner: &mut dyn InstanceRunner, conn: &Arc<Connection>, event: Event) {
        let record = matches!(event, Event::Record(..));
        if record && self.close == CloseAfterRecord::InputStream {
            conn.close_input();
        }
        self.invoke(runner, conn, event);
        if record
            && self.close == CloseAfterRecord::Connection
            && let Some(rt) = self.runtime()
        {
            rt.block_on(conn.close());
        }
    }

    /// Run the flow for one event of `conn`.
    fn invoke(&self, runner: &mut dyn InstanceRunner, conn: &Arc<Connection>, event: Event) {
        let (terminal, details, body, failure) = match event {
            Event::Resume => return,
            Event::Open => (ServerInputOutput::Open, (None, false), None, None),
            Event::Close => (ServerInputOutput::Close, (None, true), None, None),
            Event::Record(bytes, seq) => (
                ServerInputOutput::Out,
                (Some(seq), false),
                Some(bytes),
                None,
            ),
            Event::Failed(e) => {
                let partial = e.partial().cloned();
                (ServerInputOutput::Failure, (None, false), partial, Some(e))
            }
        };
        let t: Terminal = terminal.into();
        if !runner.is_wired(t) {
            if let Some(error) = failure {
                tracing::warn!(%error, flow = %self.flow, node = %self.label, connection = %conn.id, peer = %conn.peer, "Failed to read a TCP/IP record; the connection is closed.");
            }
            return;
        }
        if let Some(b) = &body {
            runner.record_input_bytes(b.len() as u64);
        }
        let mut inv = Invocation::new();
        let mut msg = Message::new();
        let built = write_details(
            &mut msg.local_environment,
            "Input",
            &Details {
                conn,
                sequence: details.0,
                closed: details.1,
            },
        );
        let result = match (built, failure) {
            (Err(e), _) => self.fail(runner, &mut inv, &mut msg, e),
            (Ok(()), Some(e)) => {
                if let Some(b) = body {
                    let _ = BodyParsing::blob().attach(&mut msg.root, b);
                }
                self.fail(runner, &mut inv, &mut msg, e.into())
            }
            (Ok(()), None) => {
                let parsed = match body {
                    Some(b) => self
                        .parsing
                        .attach(&mut msg.root, b.clone())
                        .map(|_| ())
                        .map_err(|e| (e, b)),
                    None => Ok(()),
                };
                match parsed {
                    Err((e, b)) => {
                        let mut blob = Message::new();
                        std::mem::swap(&mut blob.local_environment, &mut msg.local_environment);
                        let _ = BodyParsing::blob().attach(&mut blob.root, b);
                        msg = blob;
                        self.fail(runner, &mut inv, &mut msg, e.into())
                    }
                    Ok(()) => match runner.invoke(&mut inv, t, &mut msg) {
                        Err(e) if runner.is_wired(ServerInputOutput::Catch.into()) => e
                            .exception
                            .write_to(&mut msg.exception_list)
                            .map_err(NodeError::from)
                            .and_then(|_| {
                                runner.invoke(&mut inv, ServerInputOutput::Catch.into(), &mut msg)
                            }),
                        r => r,
                    },
                }
            }
        };
        match result {
            Ok(()) => {
                if let Err(error) = inv.unit_of_work.commit() {
                    tracing::error!(%error, flow = %self.flow, "Failed to commit the invocation's resources.");
                }
            }
            Err(error) => {
                inv.unit_of_work.rollback();
                tracing::warn!(%error, flow = %self.flow, node = %self.label, connection = %conn.id, "Message processing failed.");
            }
        }
    }

    /// This node's own failure: to `failure` with the exception when wired, else the error.
    fn fail(
        &self,
        runner: &mut dyn InstanceRunner,
        inv: &mut Invocation,
        msg: &mut Message,
        mut e: NodeError,
    ) -> Result<(), NodeError> {
        e.exception.label.clone_from(&self.label);
        e.exception.node_type = self.node_type.into();
        if !runner.is_wired(ServerInputOutput::Failure.into()) {
            return Err(e);
        }
        e.exception.write_to(&mut msg.exception_list)?;
        runner.invoke(inv, ServerInputOutput::Failure.into(), msg)
    }
}

impl InputNode for RecordInput {
    fn start(&self) {
        let tls = match &self.source {
            Source::Port { tls: Some(t), .. } => match t.acceptor() {
                Ok(a) => Some(a),
                Err(error) => {
                    tracing::error!(%error, flow = %self.flow, node = %self.label, "The TCP/IP input node cannot start; it receives nothing.");
                    return;
                }
            },
            _ => None,
        };
        let sink = Arc::new(InputSink {
            owner: self.owner,
            tls,
            framing: self.framing.clone(),
            timeouts: self.timeouts,
            max_connections: self.max_connections,
            tx: self.tx.clone(),
        });
        match self.open(sink) {
            Ok(h) => {
                if let Ok(mut g) = self.held.lock() {
                    *g = Some(h);
                }
            }
            Err(error) => {
                tracing::error!(%error, flow = %self.flow, node = %self.label, "The TCP/IP input node cannot start; it receives nothing.");
            }
        }
    }

    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        loop {
            match self.rx.recv_timeout(Duration::from_millis(100)) {
                Ok(d) => self.handle(runner, d),
                Err(_) if runner.stop().is_stopped() => return,
                Err(_) => {}
            }
        }
    }

    fn stopped(&self) {
        match self.held.lock().ok().and_then(|mut g| g.take()) {
            Some(Held::Port(m)) => {
                m.unserve(self.owner);
                m.connections.unpark_all();
            }
            Some(Held::Pool(p)) => p.unserve(self.owner),
            None => {}
        }
        // Records handed over after the instances ended are let go: their connections go on
        // (with the flow's next version, after a redeploy).
        while self.rx.try_recv().is_ok() {}
    }
}
