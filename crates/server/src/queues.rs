//! The embedded queue manager as the server runs it: opened from the data folder, queues from
//! sluice.yaml defined (or altered to match), the client protocol served, and IBM MQ-style REST
//! messaging under `/ibmmq/rest/v1/` (and `v2`, `v3`, the same API) on the admin listener.

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use sluice_qm::net::{AuthConfig, Server};
use sluice_qm::{QmConfig, QmError, QueueManager};

use crate::ServerError;
use crate::admin::{AdminRoutes, RouteResponse};
use crate::settings::Settings;

fn config(settings: &Settings) -> QmConfig {
    QmConfig {
        name: settings.queue_manager.name.clone(),
        dead_letter_queue: settings.queue_manager.dead_letter_queue.clone(),
        ..QmConfig::default()
    }
}

/// Open the queue manager under `data_dir` (recovering its log) and apply the project's queues.
pub fn open(data_dir: &Path, settings: &Settings) -> Result<Arc<QueueManager>, ServerError> {
    let dir = data_dir.join("qm");
    if let Err(source) = std::fs::create_dir_all(&dir) {
        return Err(ServerError::CreateDataDir { path: dir, source });
    }
    let qm = match QueueManager::open(&dir, config(settings)) {
        Ok(qm) => qm,
        Err(source) => return Err(ServerError::OpenQueueManager { path: dir, source }),
    };
    define_queues(&qm, settings)?;
    Ok(qm)
}

/// A queue manager in memory with the project's queues, for validating flows.
pub fn open_in_memory(settings: &Settings) -> Result<Arc<QueueManager>, ServerError> {
    let qm = QueueManager::open_in_memory(config(settings))?;
    define_queues(&qm, settings)?;
    Ok(qm)
}

fn define_queues(qm: &QueueManager, settings: &Settings) -> Result<(), ServerError> {
    for def in &settings.queues {
        let r = match qm.define(def.clone()) {
            // Already in the data folder: the file's attributes win, but not another type
            // (the error's text says what to do then).
            Err(QmError::QueueExists(_)) => qm.alter(def.clone()),
            r => r,
        };
        r.map_err(|source| ServerError::Queue {
            queue: def.name.clone(),
            source,
        })?;
    }
    Ok(())
}

/// Serve the client protocol on `addr`, with TLS when the settings give a certificate (its
/// files relative to the project folder `project_dir`).
pub fn serve_tcp(
    addr: SocketAddr,
    project_dir: &Path,
    settings: &Settings,
    qm: &Arc<QueueManager>,
) -> Result<Server, ServerError> {
    let listen_err = |source| ServerError::Listen {
        what: "queue manager",
        option: "--qm-port",
        addr,
        source,
    };
    let Some(tls) = &settings.queue_manager.tls else {
        return Server::bind(&addr.to_string(), Arc::clone(qm), auth(settings)).map_err(listen_err);
    };
    let read = |p: &Path| {
        let p = project_dir.join(p);
        std::fs::read(&p).map_err(|source| ServerError::QmTlsFile { path: p, source })
    };
    let cfg = sluice_qm::net::tls::server_config(&read(&tls.cert_file)?, &read(&tls.key_file)?)
        .map_err(|source| ServerError::QmTls { source })?;
    let listener = TcpListener::bind(addr).map_err(listen_err)?;
    Server::start_tls(listener, Arc::clone(qm), auth(settings), cfg).map_err(listen_err)
}

/// Who may use the client protocol.
pub fn auth(settings: &Settings) -> AuthConfig {
    let q = &settings.queue_manager;
    AuthConfig {
        allow_anonymous: q.allow_anonymous,
        users: q.users.iter().cloned().collect(),
        tokens: q.tokens.clone(),
    }
}

/// The REST messaging API on the admin listener, open to the clients the client protocol
/// accepts.
pub struct RestMessaging {
    pub qm: Arc<QueueManager>,
    pub auth: AuthConfig,
}

impl AdminRoutes for RestMessaging {
    fn serves(&self, path: &str) -> bool {
        // The versions it serves, and the 404 for others, are `rest::handle`'s.
        path.starts_with("/ibmmq/rest/")
    }

    fn handle(
        &self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: Bytes,
    ) -> RouteResponse {
        let r = sluice_qm::rest::handle(&self.qm, &self.auth, method, path, headers, body);
        RouteResponse {
            status: r.status,
            headers: r.headers,
            body: r.body,
            retry_until: r.retry_until,
        }
    }
}
