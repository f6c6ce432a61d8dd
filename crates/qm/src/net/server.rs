//! Client-protocol server: requests are run over the queue manager API by a poll thread
//! (connections without TLS, see `poll`) or by the connection's own thread (TLS, and any
//! connection once it asks for something that may wait). A get outside syncpoint that must
//! wait is handed to a [`GetWait`] hooked on the queue, and a persistent put or get outside
//! syncpoint to the log writer (`handoff`), so the thread goes on instead of waiting.

use std::io::{self, BufRead, BufReader};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::{
    AuthConfig, BoxStream, F_AFTER_OK, F_BROWSE, F_NEW_MSG_ID, F_SET_ALL_CONTEXT, F_SYNCPOINT, Out,
    STATUS_ERR, STATUS_OK, WAIT_UNLIMITED, op,
};
use crate::codec::{self, DecodeError, Reader};
use crate::error::{QmError, Result};
use crate::manager::QueueManager;
use crate::model::{BrowseCursor, GetOptions, PutContext, PutOptions, QueueDef};
use crate::ops::{Staged, Taken};
use crate::uow::UnitOfWork;

use super::handoff::{self, GetPart, PipelinedGet};
use super::poll::Pollers;
use super::sock::{self, Listener, Sock};
use super::waiter::{GetWait, Shared};

/// A running server; dropping it (or [`Server::stop`]) stops accepting.
pub struct Server {
    address: String,
    /// The listening socket, to end the accepting thread's wait.
    wake: Option<std::os::fd::OwnedFd>,
    /// Serves the connections, unless they are TLS ones.
    poller: Option<Arc<Pollers>>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

#[cfg(feature = "tls")]
type TlsCfg = Option<Arc<rustls::ServerConfig>>;
#[cfg(not(feature = "tls"))]
#[derive(Clone, Default)]
struct TlsCfg {
    _none: (),
}

#[cfg(feature = "tls")]
fn tls_off(tls: &TlsCfg) -> bool {
    tls.is_none()
}
#[cfg(not(feature = "tls"))]
fn tls_off(_: &TlsCfg) -> bool {
    true
}

fn wrap(tls: &TlsCfg, sock: Sock) -> io::Result<BoxStream> {
    // TLS listeners are TCP ones (`start_tls`).
    #[cfg(feature = "tls")]
    if let Some(cfg) = tls
        && let Sock::Tcp(tcp) = sock
    {
        return super::tls::wrap_server(cfg, tcp);
    }
    let _ = tls;
    Ok(Box::new(sock))
}

impl Server {
    /// Listen on `addr` and serve in background threads: `HOST:PORT` (port 0 for any), or
    /// the path of a local socket (an address with a `/` in it, see [`super::is_local`]).
    pub fn bind(addr: &str, qm: Arc<QueueManager>, auth: AuthConfig) -> io::Result<Server> {
        let listener = if super::is_local(addr) {
            Listener::bind_local(Path::new(addr))?
        } else {
            Listener::Tcp(TcpListener::bind(addr)?)
        };
        Server::spawn(listener, qm, auth, TlsCfg::default())
    }

    /// Serve an already bound listener in background threads.
    pub fn start(
        listener: TcpListener,
        qm: Arc<QueueManager>,
        auth: AuthConfig,
    ) -> io::Result<Server> {
        Server::spawn(Listener::Tcp(listener), qm, auth, TlsCfg::default())
    }

    /// Serve TLS connections (see [`super::tls::server_config`]) in background threads.
    #[cfg(feature = "tls")]
    pub fn start_tls(
        listener: TcpListener,
        qm: Arc<QueueManager>,
        auth: AuthConfig,
        tls: Arc<rustls::ServerConfig>,
    ) -> io::Result<Server> {
        Server::spawn(Listener::Tcp(listener), qm, auth, Some(tls))
    }

    fn spawn(
        listener: Listener,
        qm: Arc<QueueManager>,
        auth: AuthConfig,
        tls: TlsCfg,
    ) -> io::Result<Server> {
        let address = listener.address()?;
        let wake = Some(listener.try_clone_fd()?);
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let auth = Arc::new(auth);
        // Without TLS the poll threads serve the connections (see `poll`).
        let poller = if tls_off(&tls) {
            Some(Arc::new(Pollers::start()?))
        } else {
            None
        };
        let p2 = poller.clone();
        let accept = std::thread::Builder::new()
            .name("qm-net-accept".into())
            .spawn(move || accept_loop(listener, qm, auth, s2, tls, p2.as_deref()))?;
        Ok(Server {
            address,
            wake,
            poller,
            stop,
            accept: Some(accept),
        })
    }

    /// Serve on the calling thread until the listener fails.
    pub fn serve_blocking(listener: TcpListener, qm: Arc<QueueManager>, auth: AuthConfig) {
        let poller = match Pollers::start() {
            Ok(p) => p,
            Err(e) => {
                tracing::error!("cannot start the poll thread: {e}");
                return;
            }
        };
        accept_loop(
            Listener::Tcp(listener),
            qm,
            Arc::new(auth),
            Arc::new(AtomicBool::new(false)),
            TlsCfg::default(),
            Some(&poller),
        );
    }

    /// What clients connect to: `HOST:PORT`, or a local socket's path.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The bound TCP address (`0.0.0.0:0` for a local socket).
    pub fn local_addr(&self) -> SocketAddr {
        self.address
            .parse()
            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    /// Stop accepting connections (open connections end when their clients close).
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Shutting a listening socket down makes a blocked accept return (Linux), whether
        // or not its address can still be reached (a local socket's file may be gone).
        if let Some(fd) = self.wake.take() {
            sock::shutdown_listener(fd);
        }
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        if let Some(p) = &self.poller {
            p.stop();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(
    listener: Listener,
    qm: Arc<QueueManager>,
    auth: Arc<AuthConfig>,
    stop: Arc<AtomicBool>,
    tls: TlsCfg,
    poller: Option<&Pollers>,
) {
    loop {
        let conn = listener.accept();
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let stream = match conn {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("accept failed: {e}");
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let mut conn = Conn::new(qm.clone(), auth.clone());
        conn.probe = stream.try_clone().ok();
        // Without TLS a poll thread serves the connection (see `poll`), and a waiting get
        // is answered by the thread whose put satisfies it, writing to this socket; TLS
        // keeps everything on the connection's own thread.
        if let Some(poller) = poller {
            conn.shared = stream.try_clone().ok().map(Shared::new);
            if conn.shared.is_some() {
                poller.add(conn, stream);
                continue;
            }
        }
        let tls = tls.clone();
        let r = std::thread::Builder::new()
            .name("qm-net-conn".into())
            .spawn(move || {
                let peer = stream.peer();
                let res = wrap(&tls, stream).and_then(|s| conn.serve(s));
                if let Err(e) = res {
                    tracing::debug!("connection {peer} ended: {e}");
                }
            });
        if let Err(e) = r {
            tracing::error!("cannot start connection thread: {e}");
        }
    }
}

/// A request whose answer another thread writes; this thread goes back to its socket.
enum HandOff {
    /// A get outside syncpoint that found nothing waits on its queue: queue, options
    /// (without the wait) and how long.
    Wait(String, GetOptions, Duration),
    /// A get outside syncpoint took a persistent message: its removal is logged.
    Get(Taken),
    /// A persistent put outside syncpoint, checked and staged: its record is logged.
    Put(Staged),
}

/// What became of one request ([`Conn::step`]).
pub(super) enum Step {
    /// The answer, for the caller to write: status, the small part in `head`, and a
    /// message body; `close` ends the connection after it (a protocol or authentication
    /// error).
    Answer {
        status: u8,
        body: Bytes,
        close: bool,
    },
    /// Another thread writes the answer; `used` bytes of what arrived behind the request
    /// went with it.
    HandedOff { used: usize },
}

/// A decoded GET request.
struct GetRequest {
    queue: String,
    flags: u8,
    /// Match options and wait (`None`: no wait).
    opts: GetOptions,
    cursor: Option<(u8, u64)>,
}

impl GetRequest {
    fn decode(r: &mut Reader) -> Result<GetRequest> {
        let queue = r.str16().map_err(bad)?;
        let flags = r.u8().map_err(bad)?;
        let wait_ms = r.u32().map_err(bad)?;
        let mask = r.u8().map_err(bad)?;
        let mut o = GetOptions::new();
        if mask & 1 != 0 {
            o.msg_id = Some(r.id().map_err(bad)?);
        }
        if mask & 2 != 0 {
            o.correl_id = Some(r.id().map_err(bad)?);
        }
        if mask & 4 != 0 {
            o.group_id = Some(r.id().map_err(bad)?);
        }
        let cursor = if r.u8().map_err(bad)? != 0 {
            Some((r.u8().map_err(bad)?, r.u64().map_err(bad)?))
        } else {
            None
        };
        o.wait = match wait_ms {
            0 => None,
            WAIT_UNLIMITED => Some(Duration::from_secs(365 * 86_400)),
            ms => Some(Duration::from_millis(u64::from(ms))),
        };
        Ok(GetRequest {
            queue,
            flags,
            opts: o,
            cursor,
        })
    }
}

/// One client connection's state (MQ's hconn): its unit of work and dynamic queues.
pub(super) struct Conn {
    qm: Arc<QueueManager>,
    auth: Arc<AuthConfig>,
    pub(super) authed: bool,
    uow: Option<UnitOfWork>,
    dynamic: Vec<String>,
    pub(super) last_failed: bool,
    /// A handle on the raw socket to notice a client leaving during a long wait.
    probe: Option<Sock>,
    /// Write side shared with the threads that write answers for this one (not over TLS).
    pub(super) shared: Option<Arc<Shared>>,
    /// The answer to the last request is written by another thread (a waiting get's, or
    /// the log writer's): the next request waits until it is out.
    pub(super) handed_off: bool,
    /// Set by a request whose answer another thread will write (see [`HandOff`]).
    handoff: Option<HandOff>,
    /// Longest a get may wait (`None` = as asked); set only when serving bytes from memory,
    /// where no other client can ever satisfy the wait.
    max_wait: Option<Duration>,
    /// The identity and origin context the queue manager gives this connection's puts.
    context: PutContext,
}

/// Longest single wait before checking that the client is still there.
const WAIT_SLICE: Duration = Duration::from_secs(2);

fn bad(e: DecodeError) -> QmError {
    QmError::Protocol {
        why: "malformed request".into(),
        source: Some(Box::new(e)),
    }
}

/// Whether the poll thread runs a request (see `poll`): a connect, or a put or get outside
/// syncpoint and not a browse, which never wait on the thread that runs them.
pub(super) fn polled(code: u8, payload: &[u8]) -> bool {
    let flags = || payload.get(get_flags_at(payload)).copied();
    match code {
        op::CONNECT => true,
        op::PUT => flags().is_some_and(|f| f & F_SYNCPOINT == 0),
        op::GET => flags().is_some_and(|f| f & (F_SYNCPOINT | F_BROWSE) == 0),
        _ => false,
    }
}

/// Offset of the flags byte of a PUT or GET payload (after the queue name's str16).
fn get_flags_at(p: &[u8]) -> usize {
    if p.len() < 2 {
        return usize::MAX;
    }
    2 + u16::from_le_bytes([p[0], p[1]]) as usize
}

impl Conn {
    fn new(qm: Arc<QueueManager>, auth: Arc<AuthConfig>) -> Conn {
        let authed = auth.allow_anonymous && auth.users.is_empty() && auth.tokens.is_empty();
        Conn {
            qm,
            auth,
            authed,
            uow: None,
            dynamic: Vec::new(),
            last_failed: false,
            probe: None,
            shared: None,
            handed_off: false,
            handoff: None,
            max_wait: None,
            context: PutContext::default(),
        }
    }

    pub(super) fn serve(&mut self, stream: BoxStream) -> io::Result<()> {
        let mut r = BufReader::with_capacity(64 * 1024, stream);
        let mut out = Out::default();
        let mut head = Vec::with_capacity(4096);
        loop {
            // Before authentication only small frames are read, so an unauthenticated peer
            // cannot make the server allocate a large buffer.
            let limit = if self.authed {
                super::MAX_FRAME
            } else {
                64 * 1024
            };
            let Some((id, code, payload)) = super::read_frame_limited(&mut r, limit)? else {
                // The client stopped sending: a get still waiting for it is dropped (a
                // message must not go to a socket nobody reads), but the answer to work
                // already done (a put being logged) is still written.
                if let (true, Some(sh)) = (self.handed_off, &self.shared) {
                    sh.close();
                    self.settle();
                }
                return Ok(());
            };
            // A request sent while an earlier one is still owed its answer is answered
            // after it, in order.
            if self.handed_off {
                match self.settle() {
                    Some(failed) => self.last_failed = failed,
                    None => return Ok(()),
                }
            }
            let rest = r.buffer();
            match self.step(id, code, payload, &mut head, &mut out, rest) {
                Step::HandedOff { used } => r.consume(used),
                Step::Answer {
                    status,
                    body,
                    close,
                } => {
                    out.frame(r.get_mut(), id, status, &head, &body)?;
                    if close {
                        return out.flush(r.get_mut());
                    }
                    // Pipelined requests are answered in one write when they arrive together.
                    if r.buffer().is_empty() {
                        out.flush(r.get_mut())?;
                    }
                }
            }
        }
    }

    /// Run request `id` (its answers owed before it are in `out`); `rest` is what has
    /// arrived behind it. Either the answer is for the caller to write (its small part in
    /// `head`), or another thread will write it (after `out`'s), having taken `used` bytes of
    /// `rest` with it (a get pipelined behind a persistent put).
    pub(super) fn step(
        &mut self,
        id: u32,
        code: u8,
        payload: Bytes,
        head: &mut Vec<u8>,
        out: &mut Out,
        rest: &[u8],
    ) -> Step {
        head.clear();
        let skip = code == op::GET
            && self.last_failed
            && payload
                .get(get_flags_at(&payload))
                .is_some_and(|f| f & F_AFTER_OK != 0);
        let result = if !self.authed && code != op::CONNECT {
            Err(QmError::NotAuthorized(
                "CONNECT with credentials first".into(),
            ))
        } else if skip {
            Err(QmError::backed_out(
                "get skipped: the request before it failed",
            ))
        } else {
            self.handle(code, payload, head)
        };
        self.last_failed = result.is_err();
        if let (Some(h), Some(sh)) = (self.handoff.take(), self.shared.clone()) {
            // The answer is written by the thread that completes the request, together
            // with the answers owed before it (a pipelined put's), so the client gets
            // them in one read as when this thread waited.
            let owed = out.take();
            self.handed_off = true;
            let qm = self.qm.clone();
            let mut used = 0;
            match h {
                HandOff::Wait(queue, opts, wait) => {
                    GetWait::start(&qm, &sh, owed, id, queue, opts, wait)
                }
                HandOff::Get(t) => handoff::get_then(&qm, &sh, owed, id, t),
                HandOff::Put(staged) => {
                    let get = self.pipelined_get(rest, &staged).map(|(g, n)| {
                        used = n;
                        g
                    });
                    handoff::put_then(&qm, &sh, owed, id, staged, get)
                }
            }
            return Step::HandedOff { used };
        }
        match result {
            Ok(body) => Step::Answer {
                status: STATUS_OK,
                body,
                close: false,
            },
            Err(e) => {
                *head = super::error_payload(&e);
                Step::Answer {
                    status: STATUS_ERR,
                    body: Bytes::new(),
                    close: matches!(e, QmError::Protocol { .. } | QmError::NotAuthorized(_)),
                }
            }
        }
    }

    /// Run one request; small results go to `out`, a message body is returned to be
    /// written after it without copying.
    fn handle(&mut self, code: u8, payload: Bytes, out: &mut Vec<u8>) -> Result<Bytes> {
        let mut r = Reader::new(payload);
        let qm = self.qm.clone();
        match code {
            op::CONNECT => {
                let (user, pass, token) = (
                    r.str16().map_err(bad)?,
                    r.str16().map_err(bad)?,
                    r.str16().map_err(bad)?,
                );
                let version = r.u16().map_err(bad)?;
                if version != super::VERSION {
                    return Err(QmError::protocol(format!(
                        "protocol version {version} not supported"
                    )));
                }
                if !self.auth.check(&user, &pass, &token) {
                    return Err(QmError::NotAuthorized("bad user, password or token".into()));
                }
                self.authed = true;
                // Older clients end here; newer ones say who runs them and as what program.
                let os_user = r.str16().unwrap_or_default();
                let program = r.str16().unwrap_or_default();
                // The authenticated user, else the one the client asserts (as MQ without
                // connection authentication).
                self.context =
                    PutContext::new(if user.is_empty() { &os_user } else { &user }, &program);
                codec::put_str16(out, qm.name());
            }
            op::DEFINE | op::ALTER => {
                let json = r.bytes32().map_err(bad)?;
                let def: QueueDef = serde_json::from_slice(&json)
                    .map_err(|source| QmError::Definition { source })?;
                if code == op::DEFINE {
                    qm.define(def)?
                } else {
                    qm.alter(def)?
                }
            }
            op::DELETE => {
                let name = r.str16().map_err(bad)?;
                let purge = r.u8().map_err(bad)? != 0;
                qm.delete(&name, purge)?;
                self.dynamic.retain(|n| *n != name);
            }
            op::SHOW => {
                let def = qm.queue_def(&r.str16().map_err(bad)?)?;
                let j =
                    serde_json::to_vec(&def).map_err(|source| QmError::Definition { source })?;
                codec::put_bytes32(out, &j);
            }
            op::LIST => {
                let j = serde_json::to_vec(&qm.list())
                    .map_err(|source| QmError::Definition { source })?;
                codec::put_bytes32(out, &j);
            }
            op::DEPTH => {
                out.extend_from_slice(&(qm.depth(&r.str16().map_err(bad)?)? as u64).to_le_bytes())
            }
            op::CLEAR => {
                out.extend_from_slice(&(qm.clear(&r.str16().map_err(bad)?)? as u64).to_le_bytes())
            }
            op::PUT => {
                let queue = r.str16().map_err(bad)?;
                let flags = r.u8().map_err(bad)?;
                let mut msg = r.message().map_err(bad)?;
                let opts = PutOptions {
                    new_msg_id: flags & F_NEW_MSG_ID != 0,
                    set_all_context: flags & F_SET_ALL_CONTEXT != 0,
                };
                if !opts.set_all_context {
                    self.context.apply(&mut msg);
                }
                let id = if flags & F_SYNCPOINT != 0 {
                    self.uow
                        .get_or_insert_with(|| qm.begin())
                        .put(&queue, msg, &opts)?
                } else if self.shared.is_some() && qm.wal.is_some() {
                    // Without TLS a persistent put's record is handed to the log writer,
                    // which answers once it is synced.
                    let s = qm.stage_put(&queue, msg, &opts)?;
                    if s.slot.persistent {
                        self.handoff = Some(HandOff::Put(s));
                        return Ok(Bytes::new());
                    }
                    let id = s.slot.msg.md.msg_id;
                    s.queue.insert_reserved(s.key, s.slot);
                    id
                } else {
                    qm.put(&queue, msg, &opts)?
                };
                out.extend_from_slice(&id);
            }
            op::GET => return self.get(&mut r, out),
            op::BEGIN => {
                if self.uow.as_ref().is_some_and(|u| !u.is_empty()) {
                    return Err(QmError::Invalid("a unit of work is already active".into()));
                }
                self.uow = Some(qm.begin());
            }
            op::COMMIT => {
                if let Some(u) = self.uow.take() {
                    u.commit()?;
                }
            }
            op::ROLLBACK => {
                if let Some(u) = self.uow.take() {
                    u.rollback();
                }
            }
            op::CREATE_DYNAMIC => {
                let (model, prefix) = (r.str16().map_err(bad)?, r.str16().map_err(bad)?);
                let name = qm.create_dynamic(&model, &prefix)?;
                codec::put_str16(out, &name);
                self.dynamic.push(name);
            }
            op::DEAD_LETTER => {
                let dest = r.str16().map_err(bad)?;
                let reason = r.u32().map_err(bad)?;
                let text = r.str16().map_err(bad)?;
                let msg = r.message().map_err(bad)?;
                out.extend_from_slice(&qm.put_dead_letter_from(msg, &dest, reason, &text)?);
            }
            other => return Err(QmError::protocol(format!("unknown operation {other}"))),
        }
        Ok(Bytes::new())
    }

    fn get(&mut self, r: &mut Reader, out: &mut Vec<u8>) -> Result<Bytes> {
        let GetRequest {
            queue,
            flags,
            opts: mut o,
            cursor,
        } = GetRequest::decode(r)?;
        if let (Some(w), Some(cap)) = (o.wait, self.max_wait) {
            o.wait = Some(w.min(cap));
        }
        let qm = self.qm.clone();
        // Without TLS a get outside syncpoint neither waits for a message nor for the
        // log on this thread.
        if flags & (F_BROWSE | F_SYNCPOINT) == 0 && self.shared.is_some() {
            let wait = o.wait.take();
            return match (qm.take_now(&queue, &o)?, wait) {
                (Some(t), _) if t.log_op(&qm).is_some() => {
                    self.handoff = Some(HandOff::Get(t));
                    Ok(Bytes::new())
                }
                (Some(t), _) => Ok(super::encode_found(t.into_message(), None, out)),
                (None, Some(wait)) => {
                    self.handoff = Some(HandOff::Wait(queue, o, wait));
                    Ok(Bytes::new())
                }
                (None, None) => {
                    out.push(0);
                    Ok(Bytes::new())
                }
            };
        }
        let total = o.wait;
        let start = Instant::now();
        let mut c = BrowseCursor::from_wire(cursor);
        // A long wait is cut into slices; between slices the socket is checked so that a
        // client that went away does not keep this thread (and its unit of work) forever.
        let msg = loop {
            if let Some(t) = total {
                o.wait = Some(t.saturating_sub(start.elapsed()).min(WAIT_SLICE));
            }
            let m = if flags & F_BROWSE != 0 {
                qm.browse(&queue, &o, &mut c)?
            } else if flags & F_SYNCPOINT != 0 {
                self.uow.get_or_insert_with(|| qm.begin()).get(&queue, &o)?
            } else {
                qm.get(&queue, &o)?
            };
            match total {
                Some(t) if m.is_none() && start.elapsed() < t => {
                    if self.peer_closed() {
                        return Err(QmError::broken(
                            "client closed the connection while waiting",
                        ));
                    }
                }
                _ => break m,
            }
        };
        let cur = (flags & F_BROWSE != 0).then(|| c.to_wire()).flatten();
        match msg {
            None => {
                out.push(0);
                Ok(Bytes::new())
            }
            Some(m) => Ok(super::encode_found(m, cur, out)),
        }
    }
}

impl Conn {
    /// A get outside syncpoint with `F_AFTER_OK`, from another queue than `put`'s, already
    /// arrived right behind the persistent put `put` (at the start of `rest`): run now, so
    /// that its removal joins the put's log record (see `handoff`), with the bytes of `rest`
    /// it took. `None` leaves it where it is; it is then run after the put's answer.
    fn pipelined_get(&mut self, rest: &[u8], put: &Staged) -> Option<(PipelinedGet, usize)> {
        let len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
        let frame = rest.get(4..4 + len)?;
        if len < 5 || frame[4] != op::GET {
            return None;
        }
        let id = u32::from_le_bytes(frame[..4].try_into().ok()?);
        let mut rd = Reader::new(Bytes::copy_from_slice(&frame[5..]));
        let GetRequest {
            queue, flags, opts, ..
        } = GetRequest::decode(&mut rd).ok()?;
        if flags & F_AFTER_OK == 0 || flags & (F_BROWSE | F_SYNCPOINT) != 0 {
            return None;
        }
        let q = self.qm.resolve(&queue, false).ok()?;
        if Arc::ptr_eq(&q, &put.queue) {
            return None;
        }
        let mut o = opts;
        let wait = o.wait.take();
        let part = match (self.qm.take_now(&queue, &o), wait) {
            (Ok(Some(t)), _) => GetPart::Taken(Box::new(t)),
            (Ok(None), Some(wait)) => GetPart::Wait {
                queue,
                opts: o,
                wait,
            },
            (Ok(None), None) => GetPart::NoMessage,
            (Err(e), _) => GetPart::Failed(e),
        };
        Some((PipelinedGet { frame: id, part }, 4 + len))
    }

    /// True when the peer has closed its end (a zero-byte peek without blocking).
    fn peer_closed(&self) -> bool {
        use std::os::fd::AsRawFd;
        let Some(p) = &self.probe else { return false };
        let mut b = [0u8; 1];
        // MSG_DONTWAIT rather than switching the socket to non-blocking: another thread may
        // be writing a waiting get's answer to it at this moment.
        // SAFETY: `b` is valid for 1 byte for the duration of the call and the descriptor
        // is open (owned by `p`).
        let n = unsafe {
            libc::recv(
                p.as_raw_fd(),
                b.as_mut_ptr().cast(),
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        n == 0
    }
}

impl Conn {
    /// Wait for the waiting get's answer to be out; `None` when the peer left first (the
    /// wait is then dropped).
    fn settle(&mut self) -> Option<bool> {
        let Some(sh) = self.shared.clone().filter(|_| self.handed_off) else {
            return Some(self.last_failed);
        };
        self.handed_off = false;
        let r = sh.settle(WAIT_SLICE, || self.peer_closed());
        if r.is_none() {
            sh.close();
        }
        r
    }
}

/// A byte stream from memory: reads its input, collects what is written (up to 16 MiB, so
/// a long run of requests cannot grow the answer without limit).
struct MemStream {
    input: io::Cursor<Vec<u8>>,
    output: Arc<parking_lot::Mutex<Vec<u8>>>,
}

impl io::Read for MemStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        io::Read::read(&mut self.input, buf)
    }
}

impl io::Write for MemStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut out = self.output.lock();
        let room = (16usize << 20).saturating_sub(out.len());
        out.extend_from_slice(&buf[..buf.len().min(room)]);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Serve one connection whose request bytes are `input` on the calling thread; returns the
/// answer bytes written (cut at 16 MiB) and how the connection ended. Gets never wait.
/// This is the whole request path from untrusted bytes without sockets, for the protocol
/// fuzz target and its tests.
#[doc(hidden)]
pub fn serve_bytes(
    qm: Arc<QueueManager>,
    auth: AuthConfig,
    input: &[u8],
) -> (Vec<u8>, io::Result<()>) {
    let output = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let stream = MemStream {
        input: io::Cursor::new(input.to_vec()),
        output: output.clone(),
    };
    let res = {
        let mut conn = Conn::new(qm, Arc::new(auth));
        conn.max_wait = Some(Duration::ZERO);
        conn.serve(Box::new(stream))
    };
    let out = std::mem::take(&mut *output.lock());
    (out, res)
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let (true, Some(sh)) = (self.handed_off, &self.shared) {
            // A thread answering right now must not block on a peer that left.
            sh.shutdown();
            sh.close();
        }
        // A connection that ends backs out its unit of work and deletes its temporary
        // dynamic queues, as MQ does at disconnect.
        if let Some(u) = self.uow.take() {
            u.rollback();
        }
        for q in self.dynamic.drain(..) {
            let _ = self.qm.delete_temporary(&q);
        }
    }
}
