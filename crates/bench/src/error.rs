//! The one error type of the benchmark harness.

use std::fmt::Display;
use std::path::PathBuf;

/// Any error kept as the cause of another (a queue manager's, a JSON parser's…).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Everything that can go wrong while generating messages, driving load,
/// reading /proc or writing reports.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A size such as `20kB` could not be understood.
    #[error(
        "invalid message size `{0}`: expected a number with an optional unit b, kB, MB (for example 2kB, 20MB or 6543)"
    )]
    InvalidSize(String),

    /// A message format name is not one the generator knows.
    #[error(
        "unknown message format `{0}`: expected xml, json, soap, fixed, delimited, hl7 or swift"
    )]
    UnknownFormat(String),

    /// The requested size is smaller than the smallest message of that format.
    #[error(
        "a {format} message cannot be as small as {target} bytes; the smallest is {minimum} bytes"
    )]
    SizeTooSmall {
        /// The format asked for.
        format: String,
        /// The size asked for.
        target: usize,
        /// The size of one SaleList repetition plus its envelope.
        minimum: usize,
    },

    /// A URL given to the HTTP transport is not `http://host:port/path`.
    #[error("invalid URL `{url}`: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// A network or file operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },

    /// The server answered with a status other than 200.
    #[error("HTTP status {0} (expected 200)")]
    HttpStatus(u16),

    /// The server's reply was not valid HTTP/1.1.
    #[error("malformed HTTP response: {0}")]
    HttpProtocol(&'static str),

    /// The server closed the connection in the middle of a reply.
    #[error("connection closed by the server before the reply was complete")]
    ConnectionClosed,

    /// A /proc file could not be read (for a process: it has ended).
    #[error("cannot read {}: {source}", path.display())]
    ProcfsRead {
        /// The file read.
        path: PathBuf,
        /// The filesystem's error.
        #[source]
        source: std::io::Error,
    },

    /// A /proc file was missing a field or held something unexpected.
    #[error("cannot read {}: {reason}{}", path.display(), cause(.source))]
    Procfs {
        /// The file read.
        path: PathBuf,
        /// What was wrong.
        reason: String,
        /// The error that found it (parsing a counter), if one did.
        #[source]
        source: Option<BoxError>,
    },

    /// A suite file's values are invalid together (no tests, two tests of one name…).
    #[error("suite {}: {reason}", path.display())]
    Suite {
        /// The suite file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },

    /// A suite file is not YAML of a suite's shape (an unknown key, a bad size or name…).
    #[error("suite {}: {source}", path.display())]
    SuiteFormat {
        /// The suite file.
        path: PathBuf,
        /// The YAML reader's error, with its line and column (boxed: it is large, and
        /// every result of the harness would carry its size).
        #[source]
        source: Box<serde_saphyr::Error>,
    },

    /// A suite names a seed figures file that is not embedded.
    #[error("unknown seed figures file `{0}`")]
    UnknownSeedFile(String),

    /// The server under test did not start or print its `ready` line.
    #[error("server {} did not become ready: {reason}{}", binary.display(), cause(.source))]
    ServerStart {
        /// The binary started.
        binary: PathBuf,
        /// What happened instead.
        reason: String,
        /// The error that stopped it (starting the process), if there was one.
        #[source]
        source: Option<std::io::Error>,
    },

    /// The server under test exited while a suite was running.
    #[error("the server under test exited: {0}")]
    ServerExited(String),

    /// A test needs something the caller did not supply (for example the
    /// queue-manager transport, or a way to set flow instances).
    #[error("not available: {0}")]
    Unsupported(String),

    /// A request through a caller-supplied transport or the server's admin API failed.
    #[error("{what}{}", cause(.source))]
    Transport {
        /// What failed, and where (`put to ORDERS.IN failed`).
        what: String,
        /// The transport's error, if it reported one.
        #[source]
        source: Option<BoxError>,
    },

    /// A configuration value is out of range (zero requesters, zero duration…).
    #[error("invalid setting: {0}")]
    InvalidSetting(String),

    /// A broken invariant inside the harness.
    #[error("internal error: {0}; this is a bug, please report it")]
    Internal(String),

    /// A latency histogram could not be made or merged: its bounds are the harness's own,
    /// so this is a broken invariant too.
    #[error("internal error: {what}: {source}; this is a bug, please report it")]
    Histogram {
        /// What was being done (`merging latency histograms`).
        what: &'static str,
        /// hdrhistogram's error.
        #[source]
        source: BoxError,
    },
}

impl BenchError {
    /// Wraps an I/O error with a description of what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        BenchError::Io {
            context: context.into(),
            source,
        }
    }

    /// A transport failure with no error behind it (no reply, a malformed answer).
    pub fn transport(what: impl Into<String>) -> Self {
        BenchError::Transport {
            what: what.into(),
            source: None,
        }
    }

    /// A transport failure caused by `source` (a queue manager's or an HTTP client's error).
    pub fn transport_by(what: impl Into<String>, source: impl Into<BoxError>) -> Self {
        BenchError::Transport {
            what: what.into(),
            source: Some(source.into()),
        }
    }
}

/// `": cause"` for an optional cause, so that the message still names it when only the
/// message is printed.
fn cause<E: Display>(source: &Option<E>) -> String {
    source
        .as_ref()
        .map(|e| format!(": {e}"))
        .unwrap_or_default()
}
