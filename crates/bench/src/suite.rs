//! Benchmark suites: a YAML file listing flows × message sizes × persistence
//! × instances × requesters, expanded into the individual cases to measure.
//!
//! ```yaml
//! project: samples          # the project the server runs (default: samples)
//! warmup_secs: 5            # defaults for every test
//! duration_secs: 30
//! runs: 3
//! floor: true               # also measure the floor echo server (default: true)
//! server_cores: 1           # optional: the server on this many cores, the driver on the rest
//! tests:
//!   - name: xml-echo
//!     transport: { http: { path: /samples/xml-echo } }   # or { qm: { in: Q, out: Q } }, { tcpip: { record_bytes: 2048 } } or { tcpip: { records: xml, port: 7804 } },
//!                                                      # { mqtt: { in: TOPIC, out: TOPIC } },
//!                                                      # { kafka: { in: TOPIC, out: TOPIC } },
//!                                                      # { file: { in: DIR, out: DIR, records: 10000 } } or floor
//!     format: xml           # xml | json | soap | fixed | delimited
//!     sizes: [2kB, 20kB, 200kB]
//!     persistence: [NONE]   # NONE | FULL
//!     instances: [1, 2, 4]  # optional: set through the caller's hook; absent = as deployed
//!     requesters: 20
//!     rate: 5000            # optional: total messages per second (unrated if absent)
//!     seed: { file: wmb8_part2.csv, section: HTTP Nodes, test: Reading and Writing messages over the HTTP Transport }
//!     peers: [camel]        # optional: the same cases against other servers, after Sluice's
//! peers:                    # optional: other servers doing the same jobs, started one at a time
//!   camel:
//!     command: [java, -cp, "peers/camel/target/*:peers/camel/target/lib/*", sluice.peer.CamelPeer, "{port}", "{project}"]
//!     ready_timeout_secs: 120
//! ```
//!
//! A peer's command runs in the suite's working directory with `{port}` (the port it must
//! answer HTTP or TCP/IP on), `{project}` and `{data}` (a data folder of its own) replaced, and
//! is ready when its port accepts connections or it prints a line `ready`. Its cases are named `TEST [PEER]`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use crate::error::BenchError;
use crate::message::Format;
use crate::seeds::SeedRef;
use crate::size::MessageSize;

/// A whole suite file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// The project directory the server runs, relative to the suite's
    /// working directory.
    #[serde(default = "default_project")]
    pub project: PathBuf,
    /// Default warm-up per run, in seconds.
    #[serde(default = "default_warmup")]
    pub warmup_secs: f64,
    /// Default measured interval per run, in seconds.
    #[serde(default = "default_duration")]
    pub duration_secs: f64,
    /// Default number of runs per case.
    #[serde(default = "default_runs")]
    pub runs: usize,
    /// Whether to measure the floor echo server for comparison.
    #[serde(default = "default_true")]
    pub floor: bool,
    /// Run the server on this many of the usable cores and the load driver on the others, as
    /// the reference reports measure a server on a given number of cores; absent, both share
    /// every core.
    #[serde(default)]
    pub server_cores: Option<usize>,
    /// Other servers that do the same jobs, by name.
    #[serde(default)]
    pub peers: BTreeMap<String, PeerSpec>,
    /// The tests.
    pub tests: Vec<TestSpec>,
}

/// Another server measured beside Sluice: how to start it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerSpec {
    /// The program and its arguments; `{port}`, `{project}` and `{data}` are replaced.
    pub command: Vec<String>,
    /// How long it may take to print `ready` (default 120 s: JVMs start slowly).
    #[serde(default)]
    pub ready_timeout_secs: Option<f64>,
    /// The peer prints `ready` once it serves, and only that makes it ready: its port
    /// answering does not (a server can listen before its handlers are in place). Without
    /// it, either makes the peer ready, for peers whose output cannot be made to say so.
    #[serde(default)]
    pub says_ready: bool,
}

impl PeerSpec {
    /// How long to wait for `ready`.
    pub fn ready_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.ready_timeout_secs.unwrap_or(120.0))
    }
}

/// One test: a flow reached through a transport, and the values to vary.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestSpec {
    /// A short name for reports.
    pub name: String,
    /// How requests reach the flow.
    pub transport: TransportSpec,
    /// The message representation.
    #[serde(default = "default_format")]
    pub format: Format,
    /// Message sizes.
    pub sizes: Vec<MessageSize>,
    /// NONE and/or FULL.
    #[serde(default = "default_persistence")]
    pub persistence: Vec<Persistence>,
    /// Flow instances to run (a scaling run when more than one); absent:
    /// the flow runs as deployed and nothing is changed.
    #[serde(default)]
    pub instances: Option<Vec<u32>>,
    /// Requester threads.
    #[serde(default = "default_requesters")]
    pub requesters: usize,
    /// Total messages per second; unrated when absent.
    #[serde(default)]
    pub rate: Option<f64>,
    /// HTTP connections are recycled after this many requests.
    #[serde(default = "default_reconnect")]
    pub reconnect_after: Option<u64>,
    /// The seed row this test re-creates.
    #[serde(default)]
    pub seed: Option<SeedRef>,
    /// Overrides the suite's warm-up.
    #[serde(default)]
    pub warmup_secs: Option<f64>,
    /// Overrides the suite's measured interval.
    #[serde(default)]
    pub duration_secs: Option<f64>,
    /// Overrides the suite's number of runs.
    #[serde(default)]
    pub runs: Option<usize>,
    /// Peers (named in the suite's `peers`) that run the same cases after Sluice.
    #[serde(default)]
    pub peers: Vec<String>,
}

/// How a test reaches its flow.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum TransportSpec {
    /// HTTP POST to a path on the server's HTTP port.
    Http {
        /// The URL path, for example `/samples/xml-echo`.
        path: String,
    },
    /// Put to an input queue, get the reply from an output queue.
    Qm {
        /// The input queue.
        #[serde(rename = "in")]
        input: String,
        /// The output queue.
        #[serde(rename = "out")]
        output: String,
        /// Take any reply from the output queue rather than the requester's own (matched by
        /// CorrelId): the seeds' PerfHarness does either.
        #[serde(default)]
        any_reply: bool,
    },
    /// The flow's HTTPInput path, called inside the harness's own process without a socket,
    /// to isolate the flow's own cost.
    #[serde(rename = "inprocess")]
    InProcess {
        /// The URL path, for example `/samples/xml-echo`.
        path: String,
    },
    /// Records over a TCP connection to the server's TCP/IP port (a TCPIPServerInput echoed
    /// by TCPIPServerOutput). With `records: fixed` (the default) each message is padded with
    /// spaces or cut to `record_bytes`, and the echo read back; with `records: xml` each XML
    /// message is sent as it is (a parsed record sequence) and the echo read back followed by
    /// a line end.
    Tcpip {
        /// The record length the flow expects (`records: fixed`).
        #[serde(default)]
        record_bytes: usize,
        /// How the flow finds records: `fixed` or `xml`.
        #[serde(default)]
        records: TcpipRecords,
        /// A port of the flow's own; absent, the server's TCP/IP port (`--tcpip-port`).
        #[serde(default)]
        port: Option<u16>,
    },
    /// MQTT through a broker that is already running: each requester publishes at QoS 1 on
    /// `in` and takes the next message on `out` (any reply), as a bridge flow
    /// (MQTTSubscribe to MQTTPublish) republishes it.
    Mqtt {
        /// The broker's host.
        #[serde(default = "default_mqtt_host")]
        host: String,
        /// The broker's port.
        #[serde(default = "default_mqtt_port")]
        port: u16,
        /// The topic the flow subscribes to.
        #[serde(rename = "in")]
        input: String,
        /// The topic the flow publishes on.
        #[serde(rename = "out")]
        output: String,
    },
    /// Kafka through a cluster that is already running: each requester sends to `in` and takes
    /// the next message on `out` (any reply), as a bridge flow (KafkaConsumer to
    /// KafkaProducer) sends it on. Needs the harness built with the `kafka` feature.
    Kafka {
        /// The bootstrap servers, `HOST:PORT` separated by commas.
        #[serde(default = "default_kafka_bootstrap")]
        bootstrap: String,
        /// The topic the flow consumes.
        #[serde(rename = "in")]
        input: String,
        /// The topic the flow sends to.
        #[serde(rename = "out")]
        output: String,
    },
    /// Files through a FileInput → FileOutput flow: each requester writes its message as a
    /// file into `in` and waits for the file of the same name in `out` (both relative to the
    /// server's or peer's data folder). With `records: N`, each file holds N line-delimited
    /// records of the test's size, the reply is the same name in `out` holding N lines, and
    /// rates and CPU are per record.
    File {
        /// The flow's FileInput directory.
        #[serde(rename = "in")]
        input: String,
        /// The flow's FileOutput directory.
        #[serde(rename = "out")]
        output: String,
        /// Records per file; absent, each file is one message.
        #[serde(default)]
        records: Option<usize>,
    },
    /// The floor echo server inside the harness (no Sluice server needed).
    Floor,
}

fn default_kafka_bootstrap() -> String {
    "127.0.0.1:9092".into()
}

fn default_mqtt_host() -> String {
    "127.0.0.1".into()
}

fn default_mqtt_port() -> u16 {
    1883
}

impl TransportSpec {
    /// Whether the Sluice server must run for this transport.
    pub fn needs_server(&self) -> bool {
        !matches!(self, TransportSpec::Floor)
    }

    /// Whether another server can answer it: the queue manager and in-process transports are
    /// Sluice's own.
    pub fn reaches_peers(&self) -> bool {
        matches!(
            self,
            TransportSpec::Http { .. }
                | TransportSpec::Tcpip { .. }
                | TransportSpec::Mqtt { .. }
                | TransportSpec::Kafka { .. }
                | TransportSpec::File { .. }
        )
    }
}

/// How the tcpip transport frames its records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TcpipRecords {
    /// Fixed-length records of `record_bytes`.
    #[default]
    Fixed,
    /// Each XML message as it is, for parsed record sequence; the echo ends with a line end.
    Xml,
}

impl fmt::Display for TransportSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportSpec::Http { path } => write!(f, "http {path}"),
            TransportSpec::Qm {
                input,
                output,
                any_reply,
            } => {
                write!(
                    f,
                    "qm {input}->{output}{}",
                    if *any_reply { " (any reply)" } else { "" }
                )
            }
            TransportSpec::InProcess { path } => write!(f, "in-process {path}"),
            TransportSpec::Tcpip {
                record_bytes,
                records,
                port,
            } => {
                let what = match records {
                    TcpipRecords::Fixed => format!("{record_bytes}-byte records"),
                    TcpipRecords::Xml => "parsed XML records".to_string(),
                };
                match port {
                    Some(p) => write!(f, "tcpip :{p} {what}"),
                    None => write!(f, "tcpip {what}"),
                }
            }
            TransportSpec::Mqtt {
                host,
                port,
                input,
                output,
            } => write!(f, "mqtt {host}:{port} {input}->{output} (any reply)"),
            TransportSpec::Kafka {
                bootstrap,
                input,
                output,
            } => write!(f, "kafka {bootstrap} {input}->{output} (any reply)"),
            TransportSpec::File {
                input,
                output,
                records: None,
            } => write!(f, "files {input}->{output}"),
            TransportSpec::File {
                input,
                output,
                records: Some(n),
            } => write!(f, "files {input}->{output}, {n} records a file"),
            TransportSpec::Floor => f.write_str("floor"),
        }
    }
}

/// Message persistence, as the seeds' tables print it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persistence {
    /// Non-persistent.
    None,
    /// Persistent, committed per message.
    Full,
}

impl Persistence {
    /// `NONE` or `FULL`.
    pub fn label(self) -> &'static str {
        match self {
            Persistence::None => "NONE",
            Persistence::Full => "FULL",
        }
    }

    /// Whether messages are persistent.
    pub fn is_persistent(self) -> bool {
        self == Persistence::Full
    }
}

/// One measurement to make: a test with every varied value fixed.
#[derive(Debug, Clone)]
pub struct Case {
    /// The test's name.
    pub name: String,
    /// How requests reach the flow.
    pub transport: TransportSpec,
    /// The message representation.
    pub format: Format,
    /// The message size.
    pub size: MessageSize,
    /// NONE or FULL.
    pub persistence: Persistence,
    /// Flow instances to set, or `None` to leave the flow as deployed.
    pub instances: Option<u32>,
    /// Requester threads.
    pub requesters: usize,
    /// Total rate, or unrated.
    pub rate: Option<f64>,
    /// HTTP recycling.
    pub reconnect_after: Option<u64>,
    /// The seed row.
    pub seed: Option<SeedRef>,
    /// Warm-up per run.
    pub warmup: Duration,
    /// Measured interval per run.
    pub measure: Duration,
    /// Runs.
    pub runs: usize,
    /// Whether the test varies instances (its rows make a scaling chart).
    pub scaling: bool,
    /// The peer that answers this case instead of Sluice.
    pub peer: Option<String>,
}

impl Case {
    /// A single measurement outside a suite (`bench http`, `bench qm`):
    /// one instance, no seed row, timings taken from the driver settings.
    pub fn one_off(
        name: &str,
        transport: TransportSpec,
        format: Format,
        size: MessageSize,
        persistence: Persistence,
        requesters: usize,
    ) -> Case {
        Case {
            name: name.to_string(),
            transport,
            format,
            size,
            persistence,
            instances: None,
            requesters,
            rate: None,
            reconnect_after: None,
            seed: None,
            warmup: Duration::ZERO,
            measure: Duration::ZERO,
            runs: 1,
            scaling: false,
            peer: None,
        }
    }
}

impl Suite {
    /// Reads and checks a suite file.
    pub fn load(path: &Path) -> Result<Suite, BenchError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| BenchError::io(format!("reading suite {}", path.display()), e))?;
        Suite::parse(&text, path)
    }

    /// Parses and checks suite text; `path` is used in messages only.
    pub fn parse(text: &str, path: &Path) -> Result<Suite, BenchError> {
        let suite: Suite =
            serde_saphyr::from_str(text).map_err(|source| BenchError::SuiteFormat {
                path: path.to_path_buf(),
                source: Box::new(source),
            })?;
        suite.check(path)?;
        Ok(suite)
    }

    /// What serde cannot check: values that are wrong together or out of range.
    fn check(&self, path: &Path) -> Result<(), BenchError> {
        let invalid = |reason: String| BenchError::Suite {
            path: path.to_path_buf(),
            reason,
        };
        if !seconds(self.warmup_secs) || !seconds(self.duration_secs) || self.duration_secs == 0.0 {
            return Err(invalid(
                "warmup_secs must be >= 0 and duration_secs > 0 seconds".into(),
            ));
        }
        if self.tests.is_empty() {
            return Err(invalid("the suite has no tests".into()));
        }
        let mut names = std::collections::HashSet::new();
        for test in &self.tests {
            let t = &test.name;
            if !names.insert(t.as_str()) {
                return Err(invalid(format!("two tests are named `{t}`")));
            }
            if test.sizes.is_empty()
                || test.persistence.is_empty()
                || test.instances.as_ref().is_some_and(Vec::is_empty)
            {
                return Err(invalid(format!(
                    "test `{t}`: sizes, persistence and instances must not be empty"
                )));
            }
            if test.requesters == 0 || test.instances.as_ref().is_some_and(|i| i.contains(&0)) {
                return Err(invalid(format!(
                    "test `{t}`: requesters and instances must be at least 1"
                )));
            }
            if test.rate.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
                return Err(invalid(format!(
                    "test `{t}`: rate must be a positive number"
                )));
            }
            for peer in &test.peers {
                if !self.peers.contains_key(peer) {
                    return Err(invalid(format!(
                        "test `{t}`: peer `{peer}` is not one of the suite's `peers`"
                    )));
                }
                if !test.transport.reaches_peers() || test.instances.is_some() {
                    return Err(invalid(format!(
                        "test `{t}`: peers answer the http, tcpip, mqtt, kafka and file \
                         transports of a flow as deployed (no instances)"
                    )));
                }
            }
            if let TransportSpec::File {
                records: Some(n), ..
            } = test.transport
                && (n == 0 || test.sizes.iter().any(|s| s.bytes() < 2))
            {
                return Err(invalid(format!(
                    "test `{t}`: records must be at least 1, and each record 2 bytes or more \
                     (its text and a line end)"
                )));
            }
            if test.runs == Some(0)
                || test.duration_secs.is_some_and(|d| !(d > 0.0 && seconds(d)))
                || test.warmup_secs.is_some_and(|w| !seconds(w))
            {
                return Err(invalid(format!(
                    "test `{t}`: runs and duration_secs must be above zero, warmup_secs at least zero"
                )));
            }
        }
        for (name, peer) in &self.peers {
            if peer.command.is_empty()
                || peer
                    .ready_timeout_secs
                    .is_some_and(|t| !(t > 0.0 && seconds(t)))
            {
                return Err(invalid(format!(
                    "peer `{name}`: command must not be empty and ready_timeout_secs above zero"
                )));
            }
        }
        Ok(())
    }

    /// Expands every test into its cases, in file order; `duration`
    /// overrides every measured interval when given.
    pub fn cases(&self, duration: Option<Duration>) -> Vec<Case> {
        let mut cases = Vec::new();
        for test in &self.tests {
            let warmup = Duration::from_secs_f64(test.warmup_secs.unwrap_or(self.warmup_secs));
            let measure = duration.unwrap_or_else(|| {
                Duration::from_secs_f64(test.duration_secs.unwrap_or(self.duration_secs))
            });
            let instance_counts: Vec<Option<u32>> = match &test.instances {
                Some(list) => list.iter().copied().map(Some).collect(),
                None => vec![None],
            };
            let answerers = std::iter::once(None).chain(test.peers.iter().map(Some));
            for peer in answerers {
                for size in &test.sizes {
                    for &persistence in &test.persistence {
                        for &instances in &instance_counts {
                            cases.push(Case {
                                name: match peer {
                                    Some(p) => format!("{} [{p}]", test.name),
                                    None => test.name.clone(),
                                },
                                transport: test.transport.clone(),
                                format: test.format,
                                size: size.clone(),
                                persistence,
                                instances,
                                requesters: test.requesters,
                                rate: test.rate,
                                reconnect_after: test.reconnect_after,
                                seed: test.seed.clone(),
                                warmup,
                                measure,
                                runs: test.runs.unwrap_or(self.runs),
                                scaling: instance_counts.len() > 1,
                                peer: peer.cloned(),
                            });
                        }
                    }
                }
            }
        }
        cases
    }

    /// Whether any test needs the Sluice server.
    pub fn needs_server(&self) -> bool {
        self.tests.iter().any(|t| t.transport.needs_server())
    }
}

/// Whether `v` is a usable number of seconds (finite, not negative, not absurdly large).
fn seconds(v: f64) -> bool {
    Duration::try_from_secs_f64(v).is_ok()
}

fn default_project() -> PathBuf {
    PathBuf::from("samples")
}
fn default_warmup() -> f64 {
    5.0
}
fn default_duration() -> f64 {
    30.0
}
fn default_runs() -> usize {
    3
}
fn default_true() -> bool {
    true
}
fn default_format() -> Format {
    Format::Xml
}
fn default_persistence() -> Vec<Persistence> {
    vec![Persistence::None]
}
fn default_requesters() -> usize {
    20
}
fn default_reconnect() -> Option<u64> {
    Some(5_000)
}

/// Accepts a string (`2kB`) or a plain number of bytes.
struct SizeVisitor;

impl Visitor<'_> for SizeVisitor {
    type Value = MessageSize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message size such as 2kB, 20MB or 6543")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<MessageSize, E> {
        MessageSize::parse(v).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<MessageSize, E> {
        let bytes = usize::try_from(v).map_err(E::custom)?;
        if bytes == 0 {
            return Err(E::custom("a message size must be above zero"));
        }
        Ok(MessageSize::from_bytes(bytes))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<MessageSize, E> {
        let v = u64::try_from(v).map_err(E::custom)?;
        self.visit_u64(v)
    }
}

impl<'de> Deserialize<'de> for MessageSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SizeVisitor)
    }
}

impl<'de> Deserialize<'de> for Format {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for Persistence {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        match name.to_ascii_uppercase().as_str() {
            "NONE" | "NON-PERSISTENT" | "NONPERSISTENT" => Ok(Persistence::None),
            "FULL" | "PERSISTENT" => Ok(Persistence::Full),
            _ => Err(de::Error::custom(format!(
                "unknown persistence `{name}`: expected NONE or FULL"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
project: samples
duration_secs: 10
runs: 2
tests:
  - name: xml-echo
    transport: { http: { path: /samples/xml-echo } }
    format: xml
    sizes: [2kB, 20kB, 6543]
    persistence: [NONE, FULL]
    instances: [1, 2]
    requesters: 8
    seed: { file: wmb8_part2.csv, section: HTTP Nodes, test: Reading and Writing messages over the HTTP Transport }
  - name: queue
    transport:
      qm: { in: IN.Q, out: OUT.Q }
    sizes: [2kB]
  - name: floor
    transport: floor
    format: json
    sizes: [2kB]
    runs: 1
"#;

    #[test]
    fn parse_reads_transports_sizes_and_seed() {
        let suite = Suite::parse(SAMPLE, Path::new("s.yaml")).expect("valid suite");
        assert_eq!(suite.tests.len(), 3);
        assert_eq!(
            suite.tests[0].transport,
            TransportSpec::Http {
                path: "/samples/xml-echo".into()
            }
        );
        assert_eq!(
            suite.tests[1].transport,
            TransportSpec::Qm {
                input: "IN.Q".into(),
                output: "OUT.Q".into(),
                any_reply: false
            }
        );
        assert_eq!(suite.tests[2].transport, TransportSpec::Floor);
        assert_eq!(suite.tests[0].sizes[2].bytes(), 6_543);
        let seed = suite.tests[0].seed.as_ref().expect("seed");
        assert_eq!(
            seed.columns.get("section").map(String::as_str),
            Some("HTTP Nodes")
        );
        assert!(suite.needs_server());
    }

    #[test]
    fn parse_reads_the_kafka_transport_with_the_cluster_defaulted_when_absent() {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/bench/kafka.yaml"),
        )
        .expect("samples/bench/kafka.yaml");
        let suite = Suite::parse(&text, Path::new("kafka.yaml")).expect("valid suite");
        assert_eq!(
            suite.tests[0].transport,
            TransportSpec::Kafka {
                bootstrap: "127.0.0.1:9092".into(),
                input: "sluice-bench-in".into(),
                output: "sluice-bench-out".into(),
            }
        );
    }

    #[test]
    fn parse_reads_the_mqtt_transport_with_the_broker_defaulted_when_absent() {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/bench/mqtt.yaml"),
        )
        .expect("samples/bench/mqtt.yaml");
        let suite = Suite::parse(&text, Path::new("mqtt.yaml")).expect("valid suite");
        assert_eq!(
            suite.tests[0].transport,
            TransportSpec::Mqtt {
                host: "127.0.0.1".into(),
                port: 1883,
                input: "sluice/in/bench".into(),
                output: "sluice/out".into(),
            }
        );
    }

    #[test]
    fn parse_reads_fixed_and_parsed_xml_tcpip_transports() {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/bench/tcpip-fixed.yaml"),
        )
        .expect("samples/bench/tcpip-fixed.yaml");
        let suite = Suite::parse(&text, Path::new("tcpip-fixed.yaml")).expect("valid suite");
        assert_eq!(
            suite.tests[0].transport,
            TransportSpec::Tcpip {
                record_bytes: 2048,
                records: TcpipRecords::Fixed,
                port: None,
            }
        );
        assert_eq!(
            suite.tests[1].transport,
            TransportSpec::Tcpip {
                record_bytes: 0,
                records: TcpipRecords::Xml,
                port: Some(7804),
            }
        );
    }

    #[test]
    fn cases_expand_every_combination_with_overrides() {
        let suite = Suite::parse(SAMPLE, Path::new("s.yaml")).expect("valid suite");
        let cases = suite.cases(Some(Duration::from_secs(1)));
        assert_eq!(cases.len(), 3 * 2 * 2 + 1 + 1);
        assert!(cases.iter().all(|c| c.measure == Duration::from_secs(1)));
        assert!(cases[0].scaling);
        assert_eq!(cases[12].requesters, 20);
        assert_eq!(cases[13].runs, 1);
    }

    #[test]
    fn parse_reports_bad_values_with_the_file() {
        let bad = [
            "tests: []",
            "tests: [{name: a, transport: floor, sizes: [2parsecs]}]",
            "tests: [{name: a, transport: floor, sizes: [2kB], persistence: [MAYBE]}]",
            "tests: [{name: a, transport: carrier-pigeon, sizes: [2kB]}]",
            "tests: [{name: a, transport: floor, sizes: [2kB], colour: red}]",
            "tests: [{name: a, transport: floor, sizes: [2kB], requesters: 0}]",
            "tests: [{name: a, transport: floor, sizes: [2kB], warmup_secs: -1}]",
            "duration_secs: 1e300\ntests: [{name: a, transport: floor, sizes: [2kB]}]",
            "tests: [{name: a, transport: floor, sizes: [2kB]}, {name: a, transport: floor, sizes: [2kB]}]",
            "tests: [{name: a, transport: {http: {path: /x}}, sizes: [2kB], peers: [nobody]}]",
            "peers: {p: {command: [x]}}\ntests: [{name: a, transport: {qm: {in: A, out: B}}, sizes: [2kB], peers: [p]}]",
            "peers: {p: {command: []}}\ntests: [{name: a, transport: floor, sizes: [2kB]}]",
        ];
        for text in bad {
            let err = Suite::parse(text, Path::new("bad.yaml"));
            assert!(
                matches!(
                    &err,
                    Err(BenchError::Suite { path, .. } | BenchError::SuiteFormat { path, .. })
                        if path == Path::new("bad.yaml")
                ),
                "{text}: {err:?}"
            );
        }
    }

    #[test]
    fn cases_add_each_peer_after_sluice() {
        let text = r#"
peers:
  camel: { command: [java, Peer, "{port}"] }
  cxf: { command: [java, CxfPeer, "{port}"], says_ready: true }
tests:
  - name: echo
    transport: { http: { path: /samples/xml-echo } }
    sizes: [2kB, 20kB]
    peers: [camel]
"#;
        let suite = Suite::parse(text, Path::new("s.yaml")).expect("valid suite");
        let cases = suite.cases(None);
        let names: Vec<_> = cases
            .iter()
            .map(|c| (c.name.as_str(), c.size.bytes(), c.peer.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                ("echo", 2000, None),
                ("echo", 20000, None),
                ("echo [camel]", 2000, Some("camel")),
                ("echo [camel]", 20000, Some("camel")),
            ]
        );
        assert_eq!(
            suite.peers["camel"].ready_timeout(),
            Duration::from_secs(120)
        );
        assert!(!suite.peers["camel"].says_ready && suite.peers["cxf"].says_ready);
    }
}
