//! The one error type of the queue manager, with IBM MQ reason codes.

use std::io;

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
    #[error("log write failed, operation not done: {0}")]
    Log(String),
    /// The disk is full; the operation did not take effect (MQRC_STORAGE_MEDIUM_FULL 2192).
    #[error("disk full, operation not done: {0}")]
    DiskFull(String),
    /// The stored data failed validation in a way recovery cannot repair (MQRC_RESOURCE_PROBLEM 2102).
    #[error("queue manager data at {path} is corrupt: {detail}")]
    Corrupt {
        /// File concerned.
        path: String,
        /// What was wrong.
        detail: String,
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
    /// The unit of work was already ended, or a message was not found to commit (MQRC_BACKED_OUT 2003).
    #[error("unit of work backed out: {0}")]
    BackedOut(String),
    /// Authentication failed (MQRC_NOT_AUTHORIZED 2035).
    #[error("not authorized: {0}")]
    NotAuthorized(String),
    /// A network client lost or could not make its connection (MQRC_CONNECTION_BROKEN 2009).
    #[error("connection broken: {0}")]
    ConnectionBroken(String),
    /// The peer sent bytes that break the client protocol (MQRC_UNEXPECTED_ERROR 2195).
    #[error("protocol error: {0}")]
    Protocol(String),
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
            QmError::Invalid(_) => 2046,
            QmError::QueueNotEmpty(_) => 2055,
            QmError::InUse { .. } => 2042,
            QmError::UnknownRemoteQmgr(_) => 2087,
            QmError::BadField { reason, .. } => *reason,
            QmError::Log(_) | QmError::Corrupt { .. } | QmError::Io { .. } => 2102,
            QmError::DiskFull(_) => 2192,
            QmError::ShutDown => 2162,
            QmError::BackedOut(_) => 2003,
            QmError::NotAuthorized(_) => 2035,
            QmError::ConnectionBroken(_) => 2009,
            QmError::Protocol(_) => 2195,
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
}

/// Result alias for the crate.
pub type Result<T, E = QmError> = std::result::Result<T, E>;
