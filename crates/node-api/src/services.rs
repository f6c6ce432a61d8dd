//! What the server offers nodes while they are built: shared listeners and managers that more
//! than one node family uses. A family's own connections (a Kafka client, say) stay in the
//! family.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
}

/// Where a named datasource's data is.
#[derive(Clone, Debug, PartialEq)]
pub enum DatasourceDef {
    /// An SQLite database file (its path already resolved against the project folder).
    Sqlite { path: PathBuf },
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

    /// The async runtime, for client nodes.
    pub fn runtime(&self) -> Result<tokio::runtime::Handle, ConfigError> {
        self.runtime.clone().ok_or_else(|| {
            ConfigError::node(
                "the server's async runtime is not available (this is a bug, please report it)",
            )
        })
    }
}
