//! What the server offers nodes while they are built: shared listeners and managers that more
//! than one node family uses. A family's own connections (a Kafka client, say) stay in the
//! family.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sluice_cache::GlobalCache;
use sluice_qm::QueueManager;

use crate::config::ConfigError;
use crate::http_listener::HttpRouter;

/// The server's services, given to every node's builder.
pub struct Services {
    /// The server's HTTP listener: paths served by input nodes.
    pub http: Arc<HttpRouter>,
    /// The runtime for nodes that call async clients from flow threads.
    pub runtime: Option<tokio::runtime::Handle>,
    /// The embedded queue manager, when the server runs one.
    pub queues: Option<Arc<QueueManager>>,
    /// The server's data folder (`--data-dir`): relative folders of file nodes resolve against
    /// it. None when nothing runs (`sluice validate`).
    pub data_dir: Option<PathBuf>,
    /// The address TCP/IP server nodes that name no port of their own listen on
    /// (`--bind`, `--tcpip-port`). None when nothing runs.
    pub tcpip: Option<SocketAddr>,
    /// The datasources sluice.yaml names (`datasources:`), which nodes' `datasource`
    /// properties refer to by name.
    pub datasources: BTreeMap<String, DatasourceDef>,
    /// The message brokers sluice.yaml names (`brokers:`), which nodes' `broker` properties
    /// refer to by name.
    pub brokers: BTreeMap<String, BrokerDef>,
    /// The global cache: named maps every flow of the server shares (ESQL's `CACHE_*`).
    pub cache: Arc<GlobalCache>,
}

/// Where a named datasource's data is.
#[derive(Clone, Debug, PartialEq)]
pub enum DatasourceDef {
    /// An SQLite database file (its path already resolved against the project folder).
    Sqlite { path: PathBuf },
    /// A PostgreSQL server: `conninfo` is a `postgresql://user@host:port/db` URL or
    /// `key=value` pairs; the password, when not in `conninfo`, comes from the environment
    /// variable `password_env` names, read when the datasource is opened.
    Postgres {
        conninfo: String,
        password_env: Option<String>,
    },
}

/// Where a named broker is and how to reach it. One variant per protocol: AMQP endpoints take
/// their place beside MQTT and Kafka when their nodes exist.
#[derive(Clone, Debug, PartialEq)]
pub enum BrokerDef {
    /// An MQTT server (3.1.1 or 5; the node chooses the protocol level).
    Mqtt(MqttBroker),
    /// A Kafka cluster, reached through its bootstrap servers.
    Kafka(KafkaBroker),
}

impl BrokerDef {
    /// The protocol's name, as sluice.yaml spells its key (`mqtt`, `kafka`).
    pub fn protocol(&self) -> &'static str {
        match self {
            BrokerDef::Mqtt(_) => "mqtt",
            BrokerDef::Kafka(_) => "kafka",
        }
    }
}

/// A Kafka cluster as sluice.yaml describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct KafkaBroker {
    /// The bootstrap servers as written: `host:port`, comma-separated.
    pub bootstrap_servers: String,
    /// The client id nodes use unless they set their own; None lets the node derive one from
    /// the flow and node names.
    pub client_id: Option<String>,
    /// The SASL user; None connects without SASL.
    pub username: Option<String>,
    /// The environment variable that holds the SASL password, read when a node connects.
    pub password_env: Option<String>,
    /// The SASL mechanism, when `username` is set.
    pub sasl_mechanism: KafkaSasl,
    /// TLS, when a `tls:` map is given (an empty one trusts the system's authorities).
    pub tls: Option<BrokerTls>,
}

/// The SASL mechanisms Kafka nodes offer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KafkaSasl {
    #[default]
    Plain,
    ScramSha256,
    ScramSha512,
}

impl KafkaSasl {
    /// The mechanism's name as Kafka (and sluice.yaml) spells it.
    pub fn name(self) -> &'static str {
        match self {
            KafkaSasl::Plain => "PLAIN",
            KafkaSasl::ScramSha256 => "SCRAM-SHA-256",
            KafkaSasl::ScramSha512 => "SCRAM-SHA-512",
        }
    }

    /// The mechanism named `s` (case-insensitive), if Kafka nodes offer it.
    pub fn from_name(s: &str) -> Option<KafkaSasl> {
        [
            KafkaSasl::Plain,
            KafkaSasl::ScramSha256,
            KafkaSasl::ScramSha512,
        ]
        .into_iter()
        .find(|m| m.name().eq_ignore_ascii_case(s))
    }
}

/// An MQTT server as sluice.yaml describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct MqttBroker {
    /// The URL as written (`tcp://host:1883`, `ssl://host:8883`), for messages.
    pub url: String,
    pub host: String,
    pub port: u16,
    /// The client id nodes use unless they set their own; None lets the node derive one from
    /// the flow and node names.
    pub client_id: Option<String>,
    pub username: Option<String>,
    /// The environment variable that holds the password, read when a node connects, so that
    /// the password is never written in the project.
    pub password_env: Option<String>,
    /// TLS, when the URL's scheme is `ssl`/`mqtts` or a `tls:` map is given.
    pub tls: Option<BrokerTls>,
    pub keep_alive_secs: u16,
}

/// TLS towards a broker; paths already resolved against the project folder. MQTT uses rustls,
/// Kafka librdkafka's OpenSSL: with no `ca_file` the first trusts the public web roots, the
/// second the system's authorities.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BrokerTls {
    /// PEM certificates of the authorities to trust; the public web roots when None.
    pub ca_file: Option<PathBuf>,
    /// A client certificate (PEM) and its key, for brokers that authenticate clients by
    /// certificate.
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
}

impl Services {
    /// No runtime and no queue manager: what nodes that need neither are built with (tests, the
    /// checks of `sluice validate`).
    pub fn none() -> Services {
        Services {
            http: Arc::new(HttpRouter::new()),
            runtime: None,
            queues: None,
            data_dir: None,
            tcpip: None,
            datasources: BTreeMap::new(),
            brokers: BTreeMap::new(),
            cache: Arc::new(GlobalCache::in_memory()),
        }
    }

    /// `path` as a file node uses it: a relative path resolves against the data folder, or
    /// against the current folder when there is none.
    pub fn data_path(&self, path: &Path) -> PathBuf {
        match &self.data_dir {
            Some(d) if path.is_relative() => d.join(path),
            _ => path.to_path_buf(),
        }
    }

    /// The queue manager, for queue nodes.
    pub fn queue_manager(&self) -> Result<Arc<QueueManager>, ConfigError> {
        self.queues
            .clone()
            .ok_or_else(|| ConfigError::node("this server runs without a queue manager"))
    }

    /// The broker named `name`, for a node's `broker` property.
    pub fn broker(&self, name: &str) -> Result<&BrokerDef, ConfigError> {
        self.brokers.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.brokers.keys().map(String::as_str).collect();
            let hint = if known.is_empty() {
                "sluice.yaml names no broker: add one under `brokers:`".to_string()
            } else {
                format!("sluice.yaml names {}", known.join(", "))
            };
            ConfigError::property("broker", format!("no broker `{name}` in sluice.yaml"))
                .with_hint(hint)
        })
    }

    /// The async runtime, for client nodes.
    pub fn runtime(&self) -> Result<tokio::runtime::Handle, ConfigError> {
        self.runtime.clone().ok_or_else(|| {
            ConfigError::node(
                "the server's async runtime is not available (this is a bug, please report it)",
            )
        })
    }
}
