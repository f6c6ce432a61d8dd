//! The client protocol: length-prefixed binary frames over TCP or a local socket (see
//! `PROTOCOL.md` and `sock`).
//!
//! [`Server`] serves a [`crate::QueueManager`]: without TLS, poll threads (one per CPU, see
//! `poll`) run the puts and gets outside syncpoint of all connections and wait neither for
//! a message nor for the disk: a get outside syncpoint that has to wait is answered by the
//! thread whose put satisfies it (see `waiter`), and persistent work outside syncpoint is
//! answered by the log writer once it is synced (see `handoff`). Everything else, and TLS
//! connections, run on a thread per connection. [`Client`] is the synchronous client.

mod client;
mod handoff;
mod poll;
mod server;
mod sock;
#[cfg(feature = "tls")]
pub mod tls;
mod waiter;

use std::collections::HashMap;
use std::io::{self, Read, Write};

use bytes::Bytes;

pub use client::{Client, Credentials};
pub use server::Server;
#[doc(hidden)]
pub use server::serve_bytes;
pub use sock::is_local;

use crate::codec::{self, Reader};
use crate::error::QmError;

/// Protocol version sent in CONNECT.
pub const VERSION: u16 = 1;
/// Largest frame accepted (body limit of 100 MiB plus headroom).
pub const MAX_FRAME: usize = 128 << 20;
/// `wait_ms` value meaning "wait without limit".
pub const WAIT_UNLIMITED: u32 = u32::MAX;

/// Operation codes.
pub mod op {
    /// Authenticate: user, password, token, version.
    pub const CONNECT: u8 = 1;
    /// Define a queue (JSON definition).
    pub const DEFINE: u8 = 2;
    /// Alter a queue (JSON definition).
    pub const ALTER: u8 = 3;
    /// Delete a queue: name, purge flag.
    pub const DELETE: u8 = 4;
    /// Show one definition (JSON).
    pub const SHOW: u8 = 5;
    /// List definitions (JSON array).
    pub const LIST: u8 = 6;
    /// Current depth.
    pub const DEPTH: u8 = 7;
    /// Remove all messages.
    pub const CLEAR: u8 = 8;
    /// Put a message.
    pub const PUT: u8 = 9;
    /// Get or browse a message.
    pub const GET: u8 = 10;
    /// Begin a unit of work.
    pub const BEGIN: u8 = 11;
    /// Commit the unit of work.
    pub const COMMIT: u8 = 12;
    /// Roll back the unit of work.
    pub const ROLLBACK: u8 = 13;
    /// Create a temporary dynamic queue from a model.
    pub const CREATE_DYNAMIC: u8 = 14;
    /// Put to the dead-letter queue with a header.
    pub const DEAD_LETTER: u8 = 15;
}

/// Response status byte: success.
pub const STATUS_OK: u8 = 0;
/// Response status byte: error (reason code u32 + text).
pub const STATUS_ERR: u8 = 1;

/// PUT/GET flag: under the connection's unit of work (started if none).
pub const F_SYNCPOINT: u8 = 1;
/// PUT flag: always generate a new MsgId.
pub const F_NEW_MSG_ID: u8 = 2;
/// PUT flag: keep the caller's put date/time.
pub const F_SET_ALL_CONTEXT: u8 = 4;
/// GET flag: browse (non-destructive) from the cursor sent.
pub const F_BROWSE: u8 = 2;
/// GET flag: skip (error 2003) when the previous request on the connection failed, so a
/// pipelined put + get does not wait for a reply to a put that never happened.
pub const F_AFTER_OK: u8 = 4;

/// Who may connect.
#[derive(Debug, Clone, Default)]
pub struct AuthConfig {
    /// Accept connections without credentials.
    pub allow_anonymous: bool,
    /// user → password.
    pub users: HashMap<String, String>,
    /// Bearer tokens accepted.
    pub tokens: Vec<String>,
}

impl AuthConfig {
    /// Anyone may connect.
    pub fn anonymous() -> AuthConfig {
        AuthConfig {
            allow_anonymous: true,
            ..AuthConfig::default()
        }
    }

    /// Check CONNECT credentials.
    pub fn check(&self, user: &str, password: &str, token: &str) -> bool {
        if !token.is_empty() {
            return self
                .tokens
                .iter()
                .any(|t| ct_eq(t.as_bytes(), token.as_bytes()));
        }
        if !user.is_empty() {
            return self
                .users
                .get(user)
                .is_some_and(|p| ct_eq(p.as_bytes(), password.as_bytes()));
        }
        self.allow_anonymous
    }
}

/// Comparison whose time does not depend on where the inputs differ.
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A byte stream the protocol runs over: TCP, a local socket, or TLS.
pub(crate) trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}
/// Boxed [`Stream`].
pub(crate) type BoxStream = Box<dyn Stream>;

/// Bodies longer than this go to the socket straight from their buffer.
const DIRECT: usize = 64 * 1024;

/// Outgoing frames collected so that pipelined frames leave in one write.
#[derive(Default)]
pub(crate) struct Out {
    buf: Vec<u8>,
}

impl Out {
    /// Add a frame; a large `tail` is written to `s` directly after what is pending.
    pub fn frame(
        &mut self,
        s: &mut dyn Write,
        id: u32,
        code: u8,
        head: &[u8],
        tail: &[u8],
    ) -> io::Result<()> {
        if tail.len() > DIRECT {
            write_frame(&mut self.buf, id, code, head, &[])?;
            let len = (4 + 1 + head.len() + tail.len()) as u32;
            let at = self.buf.len() - head.len() - 9;
            self.buf[at..at + 4].copy_from_slice(&len.to_le_bytes());
            s.write_all(&self.buf)?;
            self.buf.clear();
            s.write_all(tail)
        } else {
            write_frame(&mut self.buf, id, code, head, tail)
        }
    }

    /// Add a whole frame to the answers gathered, however large its `tail`.
    pub fn push(&mut self, id: u32, code: u8, head: &[u8], tail: &[u8]) {
        push_frame(&mut self.buf, id, code, head, tail.len());
        self.buf.extend_from_slice(tail);
    }

    /// Hand over what is pending (whole frames), to be sent by someone else.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// Send everything pending.
    pub fn flush(&mut self, s: &mut dyn Write) -> io::Result<()> {
        if !self.buf.is_empty() {
            s.write_all(&self.buf)?;
            self.buf.clear();
            if self.buf.capacity() > 1 << 20 {
                self.buf = Vec::new();
            }
        }
        s.flush()
    }
}

/// Read one frame: returns (request id, op/status, payload). `Ok(None)` on clean EOF.
pub(crate) fn read_frame(r: &mut impl Read) -> io::Result<Option<(u32, u8, Bytes)>> {
    read_frame_limited(r, MAX_FRAME)
}

/// [`read_frame`] refusing frames longer than `limit`.
pub(crate) fn read_frame_limited(
    r: &mut impl Read,
    limit: usize,
) -> io::Result<Option<(u32, u8, Bytes)>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if !(5..=limit).contains(&len) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame length {len}"),
        ));
    }
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf)?;
    let id = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]);
    let code = buf[4];
    Ok(Some((id, code, Bytes::from(buf).slice(5..))))
}

/// Write one frame; `tail` (a large body) is written after `head` without copying.
pub(crate) fn write_frame(
    w: &mut impl Write,
    id: u32,
    code: u8,
    head: &[u8],
    tail: &[u8],
) -> io::Result<()> {
    let len = (4 + 1 + head.len() + tail.len()) as u32;
    let mut h = [0u8; 9];
    h[..4].copy_from_slice(&len.to_le_bytes());
    h[4..8].copy_from_slice(&id.to_le_bytes());
    h[8] = code;
    w.write_all(&h)?;
    w.write_all(head)?;
    w.write_all(tail)
}

/// Append one frame whose last `tail_len` payload bytes are not in `head`: the caller sends
/// them right after `buf` (so a large message body is never copied).
pub(crate) fn push_frame(buf: &mut Vec<u8>, id: u32, code: u8, head: &[u8], tail_len: usize) {
    let len = (4 + 1 + head.len() + tail_len) as u32;
    buf.extend_from_slice(&len.to_le_bytes());
    buf.extend_from_slice(&id.to_le_bytes());
    buf.push(code);
    buf.extend_from_slice(head);
}

/// Encode a GET answer carrying `m` (head to `out`, the body returned to go after it).
pub(crate) fn encode_found(
    m: crate::model::Message,
    cursor: Option<(u8, u64)>,
    out: &mut Vec<u8>,
) -> Bytes {
    out.push(1);
    let (p, s) = cursor.unwrap_or((0, 0));
    out.push(p);
    out.extend_from_slice(&s.to_le_bytes());
    codec::encode_head(&m, out);
    m.body
}

/// Encode an error response payload.
pub(crate) fn error_payload(e: &QmError) -> Vec<u8> {
    let mut v = Vec::with_capacity(64);
    v.extend_from_slice(&e.reason_code().to_le_bytes());
    codec::put_str16(&mut v, &e.to_string());
    v
}

/// Decode an error response payload.
pub(crate) fn decode_error(p: Bytes) -> QmError {
    let mut r = Reader::new(p);
    match (r.u32(), r.str16()) {
        (Ok(code), Ok(text)) => QmError::from_remote(code, text),
        _ => QmError::protocol("malformed error response"),
    }
}

/// Encode GET options and browse cursor.
pub(crate) fn encode_get(
    out: &mut Vec<u8>,
    queue: &str,
    flags: u8,
    o: &crate::GetOptions,
    cursor: Option<(u8, u64)>,
) {
    codec::put_str16(out, queue);
    out.push(flags);
    let wait = match o.wait {
        None => 0,
        Some(d) => d.as_millis().min(u128::from(WAIT_UNLIMITED - 1)) as u32,
    };
    out.extend_from_slice(&wait.to_le_bytes());
    let mask = u8::from(o.msg_id.is_some())
        | (u8::from(o.correl_id.is_some()) << 1)
        | (u8::from(o.group_id.is_some()) << 2);
    out.push(mask);
    for id in [o.msg_id, o.correl_id, o.group_id].into_iter().flatten() {
        out.extend_from_slice(&id);
    }
    match cursor {
        Some((p, s)) => {
            out.push(1);
            out.push(p);
            out.extend_from_slice(&s.to_le_bytes());
        }
        None => out.push(0),
    }
}
