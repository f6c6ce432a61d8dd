//! Synchronous client over TCP, TLS or a local socket, with reconnect.

use std::io::BufReader;

use super::sock::Sock;
use super::{BoxStream, Out};
use std::time::Duration;

use bytes::Bytes;

use super::{
    F_AFTER_OK, F_BROWSE, F_NEW_MSG_ID, F_SET_ALL_CONTEXT, F_SYNCPOINT, STATUS_ERR, STATUS_OK, op,
};
use crate::codec::{self, Reader};
use crate::error::{QmError, Result};
use crate::model::{BrowseCursor, GetOptions, Message, MsgId, PutOptions, QueueDef};

/// Credentials sent at connect: a user and password, or a token, or nothing (anonymous).
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    /// User name.
    pub user: String,
    /// Password for `user`.
    pub password: String,
    /// Bearer token (used instead of user/password when not empty).
    pub token: String,
}

#[cfg(feature = "tls")]
type ClientTlsCfg = super::tls::ClientTls;
#[cfg(not(feature = "tls"))]
type ClientTlsCfg = std::convert::Infallible;

struct Conn {
    r: BufReader<BoxStream>,
    out: Out,
}

/// A connection to a queue manager server. Not shared between threads: open one per thread.
///
/// When the connection breaks, the failing call returns `ConnectionBroken` and the next call
/// reconnects. A unit of work open at that moment is gone (the server backed it out): the
/// next `commit` reports `BackedOut`.
pub struct Client {
    tls: Option<ClientTlsCfg>,
    addr: String,
    creds: Credentials,
    conn: Option<Conn>,
    next_id: u32,
    buf: Vec<u8>,
    in_uow: bool,
    uow_lost: bool,
    qmgr: String,
    nonce: [u8; 12],
    counter: u64,
}

/// 12 bytes unlikely to repeat across clients: time, process id and a process counter.
/// Longest wait for the answer to CONNECT.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

fn nonce() -> [u8; 12] {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut out = [0u8; 12];
    let mix = t ^ (u64::from(std::process::id()) << 40);
    out[..8].copy_from_slice(&mix.to_be_bytes());
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    out[8..].copy_from_slice(&n.to_be_bytes());
    out
}

fn bad(e: crate::codec::DecodeError) -> QmError {
    QmError::Protocol {
        why: "malformed response".into(),
        source: Some(Box::new(e)),
    }
}

impl Client {
    /// Connect and authenticate. `addr` is `HOST:PORT`, or the path of a server's local
    /// socket (an address with a `/` in it): the same protocol without the kernel's TCP path,
    /// for applications on the server's host.
    pub fn connect(addr: &str, creds: Credentials) -> Result<Client> {
        Client::open(addr, creds, None)
    }

    /// Connect over TLS and authenticate.
    #[cfg(feature = "tls")]
    pub fn connect_tls(
        addr: &str,
        creds: Credentials,
        tls: super::tls::ClientTls,
    ) -> Result<Client> {
        Client::open(addr, creds, Some(tls))
    }

    fn open(addr: &str, creds: Credentials, tls: Option<ClientTlsCfg>) -> Result<Client> {
        let mut c = Client {
            tls,
            addr: addr.to_string(),
            creds,
            conn: None,
            next_id: 1,
            buf: Vec::with_capacity(4096),
            in_uow: false,
            uow_lost: false,
            qmgr: String::new(),
            nonce: nonce(),
            counter: 0,
        };
        c.reconnect()?;
        Ok(c)
    }

    /// Name of the queue manager (from CONNECT).
    pub fn qmgr_name(&self) -> &str {
        &self.qmgr
    }

    /// Drop the current connection (if any) and open a new one.
    pub fn reconnect(&mut self) -> Result<()> {
        self.conn = None;
        if self.in_uow {
            self.uow_lost = true;
            self.in_uow = false;
        }
        let s = Sock::connect(&self.addr).map_err(|e| QmError::ConnectionBroken {
            why: self.addr.clone(),
            source: Some(e),
        })?;
        let _ = s.set_write_timeout(Some(Duration::from_secs(60)));
        // A TLS client on a plain port waits for a handshake answer that never comes (the
        // server takes its hello for the start of a large frame): CONNECT gets a time limit.
        let probe = s.try_clone().ok();
        if let Some(p) = &probe {
            let _ = p.set_read_timeout(Some(CONNECT_TIMEOUT));
        }
        let stream: BoxStream = match (&self.tls, s) {
            #[cfg(feature = "tls")]
            (Some(t), Sock::Tcp(tcp)) => t.wrap(tcp)?,
            #[cfg(feature = "tls")]
            (Some(_), Sock::Local(_)) => {
                return Err(QmError::Invalid(format!(
                    "{}: TLS is for TCP connections, not local sockets",
                    self.addr
                )));
            }
            (_, s) => Box::new(s),
        };
        self.conn = Some(Conn {
            r: BufReader::with_capacity(64 * 1024, stream),
            out: Out::default(),
        });
        let mut p = Vec::new();
        codec::put_str16(&mut p, &self.creds.user);
        codec::put_str16(&mut p, &self.creds.password);
        codec::put_str16(&mut p, &self.creds.token);
        p.extend_from_slice(&super::VERSION.to_le_bytes());
        // Who puts, for the messages' identity and origin context (MQ's client sends both).
        let me = crate::model::PutContext::of_this_process();
        codec::put_str16(&mut p, me.user());
        codec::put_str16(&mut p, me.appl_name());
        let resp = self.raw_call(op::CONNECT, &p, &[]).map_err(|e| match e {
            QmError::ConnectionBroken { why, source } => QmError::ConnectionBroken {
                why: format!(
                    "{}: no answer to CONNECT ({why}); a TLS client on a plain port, or a \
                     plain client on a TLS port, ends like this",
                    self.addr
                ),
                source,
            },
            e => e,
        });
        if let Some(p) = &probe {
            let _ = p.set_read_timeout(None);
        }
        let mut r = Reader::new(resp?);
        self.qmgr = r.str16().map_err(bad)?;
        Ok(())
    }

    fn raw_call(&mut self, code: u8, head: &[u8], tail: &[u8]) -> Result<Bytes> {
        let id = self.send(code, head, tail)?;
        self.flush()?;
        self.recv(id)
    }

    /// Queue one request frame (not flushed); returns its id.
    fn send(&mut self, code: u8, head: &[u8], tail: &[u8]) -> Result<u32> {
        if self.conn.is_none() {
            self.reconnect()?;
        }
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        let conn = self
            .conn
            .as_mut()
            .ok_or_else(|| QmError::broken("not connected"))?;
        if let Err(e) = conn.out.frame(conn.r.get_mut(), id, code, head, tail) {
            return Err(self.broken("sending a request", Some(e)));
        }
        Ok(id)
    }

    fn flush(&mut self) -> Result<()> {
        let r = match self.conn.as_mut() {
            Some(c) => c.out.flush(c.r.get_mut()),
            None => return Err(QmError::broken("not connected")),
        };
        r.map_err(|e| self.broken("sending requests", Some(e)))
    }

    /// Read the response to request `id`.
    fn recv(&mut self, id: u32) -> Result<Bytes> {
        let res = match self.conn.as_mut() {
            Some(c) => super::read_frame(&mut c.r),
            None => return Err(QmError::broken("not connected")),
        };
        let (rid, status, payload) = match res {
            Ok(Some(f)) => f,
            Ok(None) => return Err(self.broken("server closed the connection", None)),
            Err(e) => return Err(self.broken("reading a response", Some(e))),
        };
        if rid != id {
            return Err(self.broken(format!("response id {rid} for request {id}"), None));
        }
        match status {
            STATUS_OK => Ok(payload),
            STATUS_ERR => Err(super::decode_error(payload)),
            s => Err(self.broken(format!("bad status {s}"), None)),
        }
    }

    fn broken(&mut self, why: impl Into<String>, source: Option<std::io::Error>) -> QmError {
        self.conn = None;
        if self.in_uow {
            self.uow_lost = true;
            self.in_uow = false;
        }
        QmError::ConnectionBroken {
            why: why.into(),
            source,
        }
    }

    fn call(&mut self, code: u8, build: impl FnOnce(&mut Vec<u8>)) -> Result<Bytes> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        build(&mut buf);
        let r = self.raw_call(code, &buf, &[]);
        self.buf = buf;
        r
    }

    /// Define a queue.
    pub fn define(&mut self, def: &QueueDef) -> Result<()> {
        let j = serde_json::to_vec(def).map_err(|source| QmError::Definition { source })?;
        self.call(op::DEFINE, |b| codec::put_bytes32(b, &j))
            .map(|_| ())
    }

    /// Alter a queue.
    pub fn alter(&mut self, def: &QueueDef) -> Result<()> {
        let j = serde_json::to_vec(def).map_err(|source| QmError::Definition { source })?;
        self.call(op::ALTER, |b| codec::put_bytes32(b, &j))
            .map(|_| ())
    }

    /// Delete a queue (`purge` to delete one holding messages).
    pub fn delete(&mut self, name: &str, purge: bool) -> Result<()> {
        self.call(op::DELETE, |b| {
            codec::put_str16(b, name);
            b.push(u8::from(purge));
        })
        .map(|_| ())
    }

    /// A queue's definition.
    pub fn show(&mut self, name: &str) -> Result<QueueDef> {
        let p = self.call(op::SHOW, |b| codec::put_str16(b, name))?;
        let j = Reader::new(p).bytes32().map_err(bad)?;
        serde_json::from_slice(&j).map_err(|e| QmError::Protocol {
            why: "malformed queue definition".into(),
            source: Some(Box::new(e)),
        })
    }

    /// All definitions.
    pub fn list(&mut self) -> Result<Vec<QueueDef>> {
        let p = self.call(op::LIST, |_| {})?;
        let j = Reader::new(p).bytes32().map_err(bad)?;
        serde_json::from_slice(&j).map_err(|e| QmError::Protocol {
            why: "malformed queue definition".into(),
            source: Some(Box::new(e)),
        })
    }

    /// Current depth.
    pub fn depth(&mut self, name: &str) -> Result<usize> {
        let p = self.call(op::DEPTH, |b| codec::put_str16(b, name))?;
        Ok(Reader::new(p).u64().map_err(bad)? as usize)
    }

    /// Remove all messages; returns how many.
    pub fn clear(&mut self, name: &str) -> Result<usize> {
        let p = self.call(op::CLEAR, |b| codec::put_str16(b, name))?;
        Ok(Reader::new(p).u64().map_err(bad)? as usize)
    }

    /// Put outside syncpoint (a persistent message is on disk when this returns).
    pub fn put(&mut self, queue: &str, msg: &Message, opts: &PutOptions) -> Result<MsgId> {
        self.put_with(queue, msg, opts, false)
    }

    /// Put under the connection's unit of work (started when none is active).
    pub fn put_syncpoint(
        &mut self,
        queue: &str,
        msg: &Message,
        opts: &PutOptions,
    ) -> Result<MsgId> {
        self.put_with(queue, msg, opts, true)
    }

    fn put_with(
        &mut self,
        queue: &str,
        msg: &Message,
        opts: &PutOptions,
        sync: bool,
    ) -> Result<MsgId> {
        let flags = if sync { F_SYNCPOINT } else { 0 }
            | if opts.new_msg_id { F_NEW_MSG_ID } else { 0 }
            | if opts.set_all_context {
                F_SET_ALL_CONTEXT
            } else {
                0
            };
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        codec::put_str16(&mut buf, queue);
        buf.push(flags);
        codec::encode_head(msg, &mut buf);
        if sync {
            self.in_uow = true;
        }
        let r = self.raw_call(op::PUT, &buf, &msg.body);
        self.buf = buf;
        let p = r?;
        Reader::new(p).id().map_err(bad)
    }

    /// Get outside syncpoint; `Ok(None)` when no message (after waiting if asked).
    pub fn get(&mut self, queue: &str, opts: &GetOptions) -> Result<Option<Message>> {
        Ok(self.get_with(queue, opts, 0, None)?.map(|(m, _)| m))
    }

    /// Get under the connection's unit of work (started when none is active).
    pub fn get_syncpoint(&mut self, queue: &str, opts: &GetOptions) -> Result<Option<Message>> {
        self.in_uow = true;
        Ok(self
            .get_with(queue, opts, F_SYNCPOINT, None)?
            .map(|(m, _)| m))
    }

    /// Browse the next message after `cursor` (a new cursor browses from the first).
    pub fn browse(
        &mut self,
        queue: &str,
        opts: &GetOptions,
        cursor: &mut BrowseCursor,
    ) -> Result<Option<Message>> {
        let r = self.get_with(queue, opts, F_BROWSE, Some(cursor.to_wire()))?;
        Ok(r.map(|(m, c)| {
            *cursor = BrowseCursor::from_wire(Some(c));
            m
        }))
    }

    fn get_with(
        &mut self,
        queue: &str,
        opts: &GetOptions,
        flags: u8,
        cursor: Option<Option<(u8, u64)>>,
    ) -> Result<Option<(Message, (u8, u64))>> {
        let p = self.call(op::GET, |b| {
            super::encode_get(b, queue, flags, opts, cursor.flatten())
        })?;
        let mut r = Reader::new(p);
        if r.u8().map_err(bad)? == 0 {
            return Ok(None);
        }
        let c = (r.u8().map_err(bad)?, r.u64().map_err(bad)?);
        Ok(Some((r.message().map_err(bad)?, c)))
    }

    /// Put to `put_queue`, then get from `get_queue`, in one network round trip (the two
    /// requests are pipelined; the get is skipped, with an error, if the put failed). A
    /// requester uses it to send a request and wait for its reply; a responder to send a
    /// reply and wait for the next request. A message without a MsgId gets one generated
    /// here, so a get can match the reply by `correl_id == msg_id` (see [`Client::request`]).
    pub fn put_then_get(
        &mut self,
        put_queue: &str,
        msg: &Message,
        put_opts: &PutOptions,
        get_queue: &str,
        get_opts: &GetOptions,
    ) -> (Result<MsgId>, Result<Option<Message>>) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let flags = if put_opts.new_msg_id { F_NEW_MSG_ID } else { 0 }
            | if put_opts.set_all_context {
                F_SET_ALL_CONTEXT
            } else {
                0
            };
        codec::put_str16(&mut buf, put_queue);
        buf.push(flags);
        codec::encode_head(msg, &mut buf);
        let put_len = buf.len();
        super::encode_get(&mut buf, get_queue, F_AFTER_OK, get_opts, None);
        let sent = self
            .send(op::PUT, &buf[..put_len], &msg.body)
            .and_then(|p| Ok((p, self.send(op::GET, &buf[put_len..], &[])?)))
            .and_then(|ids| self.flush().map(|_| ids));
        self.buf = buf;
        let (pid, gid) = match sent {
            Ok(ids) => ids,
            Err(e) => {
                // The get went nowhere: its put's error says why.
                let e2 = QmError::broken("get not sent: sending the put before it failed");
                return (Err(e), Err(e2));
            }
        };
        let put = self
            .recv(pid)
            .and_then(|p| Reader::new(p).id().map_err(bad));
        let get = self.recv(gid).and_then(|p| {
            let mut r = Reader::new(p);
            if r.u8().map_err(bad)? == 0 {
                return Ok(None);
            }
            r.u8().map_err(bad)?;
            r.u64().map_err(bad)?;
            Ok(Some(r.message().map_err(bad)?))
        });
        (put, get)
    }

    /// Request/reply in one round trip: put `msg` (ReplyToQ set to `reply_queue`) to `queue`
    /// and wait up to `wait` for the reply whose CorrelId is the request's MsgId.
    pub fn request(
        &mut self,
        queue: &str,
        msg: &Message,
        reply_queue: &str,
        wait: Duration,
    ) -> Result<Option<Message>> {
        let mut m = msg.clone();
        if m.md.msg_id == crate::model::ID_NONE {
            m.md.msg_id = self.client_msg_id();
        }
        m.md.reply_to_q = reply_queue.to_string();
        let o = GetOptions::new().correl_id(m.md.msg_id).wait(wait);
        let (p, g) = self.put_then_get(queue, &m, &PutOptions::default(), reply_queue, &o);
        p?;
        g
    }

    /// A MsgId unique to this client: "CLI " + a per-client nonce + a counter.
    fn client_msg_id(&mut self) -> MsgId {
        let mut id = crate::model::ID_NONE;
        id[..4].copy_from_slice(b"CLI ");
        id[4..16].copy_from_slice(&self.nonce);
        self.counter += 1;
        id[16..].copy_from_slice(&self.counter.to_be_bytes());
        id
    }

    /// Begin a unit of work on this connection.
    pub fn begin(&mut self) -> Result<()> {
        self.uow_lost = false;
        self.call(op::BEGIN, |_| {})?;
        self.in_uow = true;
        Ok(())
    }

    /// Commit the connection's unit of work. `BackedOut` if the connection broke inside it.
    pub fn commit(&mut self) -> Result<()> {
        if std::mem::take(&mut self.uow_lost) {
            return Err(QmError::backed_out(
                "connection was lost inside the unit of work",
            ));
        }
        let r = self.call(op::COMMIT, |_| {});
        self.in_uow = false;
        r.map(|_| ())
    }

    /// Roll back the connection's unit of work.
    pub fn rollback(&mut self) -> Result<()> {
        self.uow_lost = false;
        let r = self.call(op::ROLLBACK, |_| {});
        self.in_uow = false;
        r.map(|_| ())
    }

    /// Create a temporary dynamic queue; it is deleted when this connection ends.
    pub fn create_dynamic(&mut self, model: &str, prefix: &str) -> Result<String> {
        let p = self.call(op::CREATE_DYNAMIC, |b| {
            codec::put_str16(b, model);
            codec::put_str16(b, prefix);
        })?;
        Reader::new(p).str16().map_err(bad)
    }

    /// Put to the dead-letter queue with a dead-letter header.
    pub fn put_dead_letter(
        &mut self,
        msg: &Message,
        dest_q: &str,
        reason: u32,
        text: &str,
    ) -> Result<MsgId> {
        let mut head = Vec::new();
        codec::put_str16(&mut head, dest_q);
        head.extend_from_slice(&reason.to_le_bytes());
        codec::put_str16(&mut head, text);
        codec::encode_head(msg, &mut head);
        let p = self.raw_call(op::DEAD_LETTER, &head, &msg.body)?;
        Reader::new(p).id().map_err(bad)
    }
}
