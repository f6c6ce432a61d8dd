//! The one error type of the queue manager, with IBM MQ reason codes.

use std::fmt::Display;
use std::io;
use std::sync::Arc;

/// Any error kept as the cause of another (a decoding or JSON error, a TLS library's).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Everything that can go wrong in a queue manager call.
///
/// `reason_code()` maps each variant to the MQRC value an MQ application expects, so that
/// flow nodes and clients can surface the familiar numbers.
#[derive(Debug, thiserror::Error)]
pub enum QmError {
    /// The named queue does not exist (MQRC_UNKNOWN_OBJECT_NAME 2085).
    #[error("unknown queue '{0}'")]
    UnknownQueue(String),
    /// A queue of that name is already defined (MQRC_OBJECT_ALREADY_EXISTS 4001).
    #[error("queue '{0}' already exists")]
    QueueExists(String),
    /// The queue holds `max_depth` messages already (MQRC_Q_FULL 2053).
    #[error("queue '{queue}' is full (max depth {max_depth})")]
    QueueFull {
        /// Queue that refused the put.
        queue: String,
        /// Its configured maximum depth.
        max_depth: usize,
    },
    /// The message body is longer than the queue allows (MQRC_MSG_TOO_BIG_FOR_Q 2030).
    #[error("message of {len} bytes is longer than max_msg_length {max} of queue '{queue}'")]
    MsgTooBig {
        /// Queue that refused the put.
        queue: String,
        /// Body length offered.
        len: usize,
        /// Configured limit.
        max: usize,
    },
    /// Puts are inhibited on the queue (MQRC_PUT_INHIBITED 2051).
    #[error("put inhibited on queue '{0}'")]
    PutInhibited(String),
    /// Gets are inhibited on the queue (MQRC_GET_INHIBITED 2016).
    #[error("get inhibited on queue '{0}'")]
    GetInhibited(String),
    /// The operation needs a local queue but the name is an alias or model (MQRC_WRONG_Q_TYPE... 2057 is close; MQ uses 2043 MQRC_OBJECT_TYPE_ERROR).
    #[error("queue '{queue}' is a {kind} queue: {what}")]
    WrongQueueType {
        /// Queue named.
        queue: String,
        /// Its kind.
        kind: &'static str,
        /// What was attempted.
        what: &'static str,
    },
    /// A persistent message was put to a temporary dynamic queue (MQRC_PERSISTENT_NOT_ALLOWED 2048).
    #[error("persistent messages are not allowed on temporary dynamic queue '{0}'")]
    PersistentNotAllowed(String),
    /// A queue definition or request field is invalid (MQRC_OPTIONS_ERROR-like 2046 / bad attribute 2067).
    #[error("invalid request: {0}")]
    Invalid(String),
    /// A queue with messages cannot be deleted without purge (MQRC_OBJECT_IN_USE 2042 / Q_NOT_EMPTY 2055).
    #[error("queue '{0}' is not empty")]
    QueueNotEmpty(String),
    /// A field of a request is out of range, with MQ's reason for that field
    /// (MQRC_OBJECT_NAME_ERROR 2152, MQRC_PRIORITY_ERROR 2050, MQRC_EXPIRY_ERROR 2013).
    #[error("{text}")]
    BadField {
        /// The MQ reason code.
        reason: u32,
        /// What is wrong.
        text: String,
    },
    /// A queue manager other than this one was named, and there are no channels to others
    /// (MQRC_UNKNOWN_REMOTE_Q_MGR 2087).
    #[error("queue manager '{0}' is not this one and there is no route to it")]
    UnknownRemoteQmgr(String),
    /// The queue is open for input and cannot be deleted (MQRC_OBJECT_IN_USE 2042).
    #[error("queue '{queue}' is in use by {by}")]
    InUse {
        /// The queue.
        queue: String,
        /// Who holds it open.
        by: String,
    },
    /// The log could not make the operation durable; nothing of it took effect (MQRC_RESOURCE_PROBLEM 2102).
    #[error("log write failed, operation not done: {what}: {source}")]
    Log {
        /// The step that failed (`log fdatasync`), or the state the log was left in.
        what: String,
        /// The filesystem's error; shared because every request of a group commit gets it.
        #[source]
        source: Arc<io::Error>,
    },
    /// The disk (or the user's quota) is full; the operation did not take effect
    /// (MQRC_STORAGE_MEDIUM_FULL 2192).
    #[error("disk full, operation not done: {what}: {source}")]
    DiskFull {
        /// The step or file that found no space.
        what: String,
        /// The filesystem's error (ENOSPC or EDQUOT).
        #[source]
        source: Arc<io::Error>,
    },
    /// The stored data failed validation in a way recovery cannot repair (MQRC_RESOURCE_PROBLEM 2102).
    #[error("queue manager data at {path} is corrupt: {detail}{}", cause(.source))]
    Corrupt {
        /// File concerned.
        path: String,
        /// What was wrong.
        detail: String,
        /// The decoding error that found it, if one did.
        #[source]
        source: Option<BoxError>,
    },
    /// Filesystem error outside the log's write path (opening, listing, renaming).
    #[error("I/O error on {path}: {source}")]
    Io {
        /// File or directory concerned.
        path: String,
        /// Underlying error.
        #[source]
        source: io::Error,
    },
    /// The queue manager was shut down (MQRC_Q_MGR_STOPPING 2162).
    #[error("queue manager is shut down")]
    ShutDown,
    /// The unit of work was already ended, a message was not found to commit, or the log
    /// could not record the commit (MQRC_BACKED_OUT 2003).
    #[error("unit of work backed out: {why}{}", cause(.source))]
    BackedOut {
        /// Why it was backed out.
        why: String,
        /// The error that made the commit fail, if one did.
        #[source]
        source: Option<Box<QmError>>,
    },
    /// Authentication failed (MQRC_NOT_AUTHORIZED 2035).
    #[error("not authorized: {0}")]
    NotAuthorized(String),
    /// A network client lost or could not make its connection (MQRC_CONNECTION_BROKEN 2009).
    #[error("connection broken: {why}{}", cause(.source))]
    ConnectionBroken {
        /// Where or when it broke.
        why: String,
        /// The socket's error, if there was one (not for a peer that closed cleanly).
        #[source]
        source: Option<io::Error>,
    },
    /// The peer sent bytes that break the client protocol (MQRC_UNEXPECTED_ERROR 2195).
    #[error("protocol error: {why}{}", cause(.source))]
    Protocol {
        /// What was wrong.
        why: String,
        /// The decoding error that found it, if one did.
        #[source]
        source: Option<BoxError>,
    },
    /// A queue definition sent as JSON could not be read or written
    /// (MQRC_OPTIONS_ERROR-like 2046, as [`QmError::Invalid`]).
    #[error("invalid request: queue definition: {source}")]
    Definition {
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// TLS could not be set up from the given certificates and key
    /// (2046, as [`QmError::Invalid`]: the configuration is at fault).
    #[error("invalid request: TLS {what}{}", cause(.source))]
    Tls {
        /// The part of the configuration at fault (`certificate PEM`, `key PEM`, …).
        what: String,
        /// The PEM reader's or rustls's error, if one was reported.
        #[source]
        source: Option<BoxError>,
    },
    /// An error reported by a server, carried back through the client protocol.
    #[error("server error {code}: {text}")]
    Remote {
        /// MQ reason code sent by the server.
        code: u32,
        /// The server's message.
        text: String,
    },
}

impl QmError {
    /// The IBM MQ reason code (MQRC_*) closest to this error.
    pub fn reason_code(&self) -> u32 {
        match self {
            QmError::UnknownQueue(_) => 2085,
            QmError::QueueExists(_) => 4001,
            QmError::QueueFull { .. } => 2053,
            QmError::MsgTooBig { .. } => 2030,
            QmError::PutInhibited(_) => 2051,
            QmError::GetInhibited(_) => 2016,
            QmError::WrongQueueType { .. } => 2043,
            QmError::PersistentNotAllowed(_) => 2048,
            QmError::Invalid(_) | QmError::Definition { .. } | QmError::Tls { .. } => 2046,
            QmError::QueueNotEmpty(_) => 2055,
            QmError::InUse { .. } => 2042,
            QmError::UnknownRemoteQmgr(_) => 2087,
            QmError::BadField { reason, .. } => *reason,
            QmError::Log { .. } | QmError::Corrupt { .. } | QmError::Io { .. } => 2102,
            QmError::DiskFull { .. } => 2192,
            QmError::ShutDown => 2162,
            QmError::BackedOut { .. } => 2003,
            QmError::NotAuthorized(_) => 2035,
            QmError::ConnectionBroken { .. } => 2009,
            QmError::Protocol { .. } => 2195,
            QmError::Remote { code, .. } => *code,
        }
    }

    /// Rebuild an error from a reason code sent over the wire, keeping the common ones typed.
    pub fn from_remote(code: u32, text: String) -> QmError {
        QmError::Remote { code, text }
    }

    pub(crate) fn io(path: impl Into<String>, source: io::Error) -> QmError {
        QmError::Io {
            path: path.into(),
            source,
        }
    }

    /// A failed write of stored data: [`QmError::DiskFull`] when the filesystem is out of
    /// space or quota, else [`QmError::Log`].
    pub(crate) fn write_failed(what: impl Into<String>, source: Arc<io::Error>) -> QmError {
        let what = what.into();
        if is_disk_full(&source) {
            QmError::DiskFull { what, source }
        } else {
            QmError::Log { what, source }
        }
    }

    /// [`QmError::BackedOut`] with no error behind it.
    pub(crate) fn backed_out(why: impl Into<String>) -> QmError {
        QmError::BackedOut {
            why: why.into(),
            source: None,
        }
    }

    /// [`QmError::ConnectionBroken`] with no socket error behind it.
    pub(crate) fn broken(why: impl Into<String>) -> QmError {
        QmError::ConnectionBroken {
            why: why.into(),
            source: None,
        }
    }

    /// [`QmError::Protocol`] with no decoding error behind it.
    pub(crate) fn protocol(why: impl Into<String>) -> QmError {
        QmError::Protocol {
            why: why.into(),
            source: None,
        }
    }
}

/// Whether a filesystem error means no space is left (ENOSPC, or EDQUOT for a quota).
pub(crate) fn is_disk_full(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    )
}

/// `": cause"` for an optional cause, so that messages read the same whether the cause is
/// printed on its own (MQ clients and REST callers see only this text) or not.
fn cause<E: Display>(source: &Option<E>) -> String {
    source
        .as_ref()
        .map(|e| format!(": {e}"))
        .unwrap_or_default()
}

/// Result alias for the crate.
pub type Result<T, E = QmError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn write_failed_is_disk_full_when_the_quota_is_exceeded() {
        let e = QmError::write_failed(
            "log write",
            Arc::new(io::Error::from_raw_os_error(libc::EDQUOT)),
        );
        assert!(matches!(e, QmError::DiskFull { .. }), "{e}");
        assert_eq!(e.reason_code(), 2192);
    }

    #[test]
    fn write_failed_is_a_log_error_when_the_filesystem_is_read_only() {
        let e = QmError::write_failed(
            "log write",
            Arc::new(io::Error::from_raw_os_error(libc::EROFS)),
        );
        assert!(matches!(e, QmError::Log { .. }), "{e}");
        assert_eq!(e.reason_code(), 2102);
    }

    #[test]
    fn connection_broken_keeps_the_socket_error_as_source_and_in_its_text() {
        let io = io::Error::from(io::ErrorKind::ConnectionReset);
        let text = io.to_string();
        let e = QmError::ConnectionBroken {
            why: "reading a response".into(),
            source: Some(io),
        };
        assert_eq!(
            e.to_string(),
            format!("connection broken: reading a response: {text}")
        );
        let source = e.source().and_then(|s| s.downcast_ref::<io::Error>());
        assert_eq!(
            source.map(io::Error::kind),
            Some(io::ErrorKind::ConnectionReset)
        );
    }

    #[test]
    fn connection_broken_text_has_no_dangling_colon_when_there_is_no_source() {
        assert_eq!(
            QmError::broken("not connected").to_string(),
            "connection broken: not connected"
        );
    }
}
