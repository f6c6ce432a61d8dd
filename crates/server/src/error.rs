//! The one error type of the server, for what stops it from starting or a redeploy.
//!
//! Project problems (a flow or sluice.yaml that does not load) are diagnostics with a file,
//! line and column, reported all at once; they are not variants here.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

use sluice_flow::Diagnostic;
use sluice_qm::QmError;

/// What went wrong opening the queue manager, serving it, setting up TLS or redeploying a flow.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The queue manager's folder under the data folder could not be created.
    #[error("cannot create {}: {source}", path.display())]
    CreateDataDir {
        /// The folder.
        path: PathBuf,
        /// The filesystem's error.
        #[source]
        source: io::Error,
    },
    /// The queue manager could not be opened in the data folder (its log recovered).
    #[error("cannot open the queue manager in {}: {source}", path.display())]
    OpenQueueManager {
        /// The queue manager's folder.
        path: PathBuf,
        /// The queue manager's error.
        #[source]
        source: QmError,
    },
    /// The in-memory queue manager (for `sluice validate` and the in-process bench) could
    /// not be made.
    #[error(transparent)]
    QueueManager(#[from] QmError),
    /// A queue of sluice.yaml could not be defined, or altered to match a queue the data
    /// folder already holds.
    #[error("sluice.yaml: queue {queue}: {source}{}", queue_hint(queue, source))]
    Queue {
        /// The queue's name.
        queue: String,
        /// Why the queue manager refused.
        #[source]
        source: QmError,
    },
    /// A listener (HTTP, admin, the queue manager's) could not be opened on its address.
    #[error(
        "cannot listen on {addr} ({what}): {source}{}",
        in_use_hint(source, option)
    )]
    Listen {
        /// What would have listened there.
        what: &'static str,
        /// The command-line option that sets its port.
        option: &'static str,
        /// The address asked for.
        addr: SocketAddr,
        /// The socket's error.
        #[source]
        source: io::Error,
    },
    /// A certificate or key file of the queue manager's TLS could not be read.
    #[error("queue manager TLS: cannot read {}: {source}", path.display())]
    QmTlsFile {
        /// The file, relative to the project folder.
        path: PathBuf,
        /// The filesystem's error.
        #[source]
        source: io::Error,
    },
    /// The queue manager's TLS certificate and key do not make a TLS configuration.
    #[error("queue manager {source}")]
    QmTls {
        /// The queue manager's TLS error (which part, and why).
        #[source]
        source: QmError,
    },
    /// A certificate or key file of the HTTP listener's TLS could not be opened or read.
    #[error("cannot {action} {}: {source}", path.display())]
    TlsFile {
        /// What was being done: `open`, `read certificates from`, `read the key from`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The filesystem's (or PEM reader's) error.
        #[source]
        source: io::Error,
    },
    /// The HTTP listener's key file holds no private key.
    #[error("{} holds no private key", path.display())]
    NoPrivateKey {
        /// The file.
        path: PathBuf,
    },
    /// rustls refused the protocol versions it was offered (a build without them).
    #[error("{0}")]
    TlsVersions(#[source] rustls::Error),
    /// The HTTP listener's certificate and key do not belong together, or are unusable.
    #[error("the certificate and key do not form a usable pair: {0}")]
    TlsKeyPair(#[source] rustls::Error),
    /// No deployed flow has the name given to the admin API (HTTP 404).
    #[error("no flow named '{0}'")]
    UnknownFlow(String),
    /// A flow's file no longer loads or builds, so it cannot be redeployed (HTTP 422); the
    /// running flow is left as it was.
    #[error("{}", diagnostics.iter().map(ToString::to_string).collect::<String>())]
    Flow {
        /// Every problem found.
        diagnostics: Vec<Diagnostic>,
    },
    /// A deployed archive is not a tar or tar.gz of a project, or holds an entry that could
    /// write outside it (`..`, an absolute path, a link) (HTTP 400).
    #[error("the archive cannot be deployed: {reason}")]
    BadArchive {
        /// What is wrong with it.
        reason: String,
    },
    /// A deployed archive could not be read (truncated, corrupt compression) (HTTP 400).
    #[error("cannot read the archive: {0}")]
    ArchiveRead(#[source] io::Error),
    /// A deployed archive's project does not validate; nothing was changed (HTTP 400).
    #[error(
        "the archive's project has {}; nothing was deployed:\n{}",
        sluice_flow::diag::counted(problems.len(), "problem"),
        problems.concat()
    )]
    InvalidArchive {
        /// Every problem, `file:line:col: error: text` with paths as in the archive.
        problems: Vec<String>,
    },
    /// A rollback was asked for, but no deploy has kept a previous version (HTTP 409).
    #[error(
        "there is no previous version to roll back to (none was deployed through the admin API)"
    )]
    NoPreviousVersion,
    /// A deploy needs the server's data folder to keep the previous version, and this server
    /// has none.
    #[error("this server has no data folder to keep the previous version in")]
    NoDataDir,
    /// A file or folder of a deploy or rollback could not be written, moved or removed.
    #[error("deploy: cannot {action} {}: {source}", path.display())]
    DeployIo {
        /// What was being done.
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The filesystem's error.
        #[source]
        source: io::Error,
    },
}

impl ServerError {
    /// The admin API's HTTP status for this error.
    pub fn http_status(&self) -> u16 {
        match self {
            ServerError::UnknownFlow(_) => 404,
            ServerError::Flow { .. } => 422,
            ServerError::BadArchive { .. }
            | ServerError::ArchiveRead(_)
            | ServerError::InvalidArchive { .. } => 400,
            ServerError::NoPreviousVersion => 409,
            _ => 500,
        }
    }
}

/// What to do when the data folder holds a sluice.yaml queue as another type.
fn queue_hint(queue: &str, source: &QmError) -> String {
    match source {
        QmError::WrongQueueType { .. } => format!(
            " (the data folder holds it as that type: delete it with `sluice qm delete {queue}` while the server runs, or give the new queue another name)"
        ),
        _ => String::new(),
    }
}

/// A port in use is most often another server started earlier: say so, and how to move.
fn in_use_hint(e: &io::Error, option: &str) -> String {
    if e.kind() == io::ErrorKind::AddrInUse {
        format!(
            " (another program holds the port, perhaps another `sluice run`: stop it, or choose \
             another port with {option})"
        )
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_hint_is_given_only_when_the_type_would_change() {
        let wrong = ServerError::Queue {
            queue: "Q".into(),
            source: QmError::WrongQueueType {
                queue: "Q".into(),
                kind: "alias",
                what: "cannot alter it to a local queue",
            },
        };
        assert!(wrong.to_string().ends_with(
            "(the data folder holds it as that type: delete it with `sluice qm delete Q` while the server runs, or give the new queue another name)"
        ));
        let full = ServerError::Queue {
            queue: "Q".into(),
            source: QmError::QueueExists("Q".into()),
        };
        assert_eq!(
            full.to_string(),
            "sluice.yaml: queue Q: queue 'Q' already exists"
        );
    }

    #[test]
    fn http_status_tells_an_unknown_flow_from_a_broken_one() {
        assert_eq!(ServerError::UnknownFlow("f".into()).http_status(), 404);
        assert_eq!(
            ServerError::Flow {
                diagnostics: Vec::new()
            }
            .http_status(),
            422
        );
    }
}
