//! TCP/IP nodes: TCPIPServerInput, TCPIPServerOutput and TCPIPServerReceive, sharing the
//! connections of a port through one connection manager per port (see [`connection`]), and
//! TCPIPClientInput, TCPIPClientOutput and TCPIPClientReceive, sharing a connection pool per
//! remote `host:port` (see [`client_pool`]).

pub mod client;
pub mod client_pool;
pub mod connection;
pub mod framing;
mod local_env;
pub mod port;
pub mod server_input;
pub mod server_output;
pub mod server_receive;
pub mod streams;
pub mod tls;
mod turn;

use bytes::Bytes;
use sluice_node_api::{ExceptionKind, NodeError, NodeSpec};

pub use client::{TCPIP_CLIENT_INPUT, TCPIP_CLIENT_OUTPUT, TCPIP_CLIENT_RECEIVE};
pub use server_input::TCPIP_SERVER_INPUT;
pub use server_output::TCPIP_SERVER_OUTPUT;
pub use server_receive::TCPIP_SERVER_RECEIVE;

/// What goes wrong on a TCP/IP connection or its listener.
#[derive(Debug, thiserror::Error)]
pub enum TcpipError {
    /// The listener of a port could not be opened (in use, no permission).
    #[error("cannot listen on {addr} for TCP/IP server nodes: {source}")]
    Bind {
        addr: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// The node runs where the server offers no TCP/IP listener address and it names no port.
    #[error(
        "no TCP/IP listener address is configured (give the node a `port`, or run the server with `--tcpip-port`)"
    )]
    NoAddress,
    /// The node runs without the server's async runtime.
    #[error("the server's async runtime is not available (this is a bug, please report it)")]
    NoRuntime,
    /// The peer closed its output in the middle of a record.
    #[error("the connection closed after {got} bytes, in the middle of {expected}")]
    Incomplete {
        got: usize,
        expected: String,
        /// The bytes of the incomplete record.
        partial: Bytes,
    },
    /// The bytes of a parsed record sequence are not a record of the node's domain.
    #[error("a record is malformed: {source}")]
    Malformed {
        #[source]
        source: sluice_tree::TreeError,
        /// The bytes pending when the record failed.
        partial: Bytes,
    },
    /// A record is longer than `max_record_bytes`.
    #[error("a record is longer than the maximum of {max} bytes")]
    RecordTooLong { max: usize, partial: Bytes },
    /// The rest of a record did not arrive within the read timeout after its first byte.
    #[error(
        "the rest of the record did not arrive within {secs} s of its first byte ({got} bytes came)"
    )]
    ReadTimeout {
        secs: u64,
        got: usize,
        partial: Bytes,
    },
    /// No record arrived within a receive node's wait.
    #[error("no record arrived within {secs} s")]
    NoRecord { secs: u64 },
    /// The peer did not take the data within the write timeout.
    #[error("the data was not sent within {secs} s (the peer does not read)")]
    WriteTimeout { secs: u64 },
    /// A body is longer than the fixed output record length.
    #[error("the body is {len} bytes, longer than the fixed record length of {max}")]
    OutputTooLong { len: usize, max: usize },
    /// A client connection could not be opened, after the retries.
    #[error("cannot connect to {to}: {source}")]
    Connect {
        to: String,
        #[source]
        source: std::io::Error,
    },
    /// Every connection of a client pool is in use and none came free in time.
    #[error("all {max} connections to {to} are in use")]
    PoolExhausted { to: String, max: usize },
    /// A TLS certificate or key file could not be read.
    #[error("cannot read the TLS file {path}: {source}")]
    TlsFile {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The TLS certificates or key do not make a usable configuration.
    #[error("the TLS configuration is not usable: {0}")]
    TlsConfig(#[source] rustls::Error),
    /// The TLS handshake with a server failed (its certificate is not trusted, it does not
    /// speak TLS, it refused the client certificate).
    #[error("the TLS handshake with {to} failed: {source}")]
    TlsHandshake {
        to: String,
        #[source]
        source: std::io::Error,
    },
    /// The connection named is not open (never was, or closed).
    #[error("connection '{id}' is not open on port {port}")]
    NoConnection { id: String, port: u16 },
    /// Another flow thread kept the connection's stream reserved for longer than the node
    /// waits.
    #[error(
        "the {stream} stream of connection '{id}' stayed reserved by another flow for {secs} s"
    )]
    StreamReserved {
        id: String,
        stream: &'static str,
        secs: u64,
    },
    /// The connection's input or output stream was closed.
    #[error("the {stream} stream of connection '{id}' is closed")]
    StreamClosed { id: String, stream: &'static str },
    /// Reading or writing the socket failed.
    #[error("connection '{id}': {source}")]
    Io {
        id: String,
        #[source]
        source: std::io::Error,
    },
}

impl TcpipError {
    /// The bytes of a record that could not be completed, for the failure terminal.
    pub fn partial(&self) -> Option<&Bytes> {
        match self {
            TcpipError::Incomplete { partial, .. }
            | TcpipError::RecordTooLong { partial, .. }
            | TcpipError::Malformed { partial, .. }
            | TcpipError::ReadTimeout { partial, .. } => Some(partial),
            _ => None,
        }
    }
}

impl From<TcpipError> for NodeError {
    fn from(e: TcpipError) -> NodeError {
        if let TcpipError::Malformed { source, .. } = e {
            return source.into();
        }
        let kind = match e {
            TcpipError::ReadTimeout { .. }
            | TcpipError::NoRecord { .. }
            | TcpipError::WriteTimeout { .. } => ExceptionKind::SocketTimeout,
            TcpipError::OutputTooLong { .. } => ExceptionKind::Recoverable,
            _ => ExceptionKind::Socket,
        };
        NodeError::new(kind, 3162, e.to_string())
    }
}

pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    for s in [
        &TCPIP_SERVER_INPUT,
        &TCPIP_SERVER_OUTPUT,
        &TCPIP_SERVER_RECEIVE,
        &TCPIP_CLIENT_INPUT,
        &TCPIP_CLIENT_OUTPUT,
        &TCPIP_CLIENT_RECEIVE,
    ] {
        r(s);
    }
}
