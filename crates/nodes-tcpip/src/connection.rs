//! Open connections (each with an Id, an input stream and an output stream), the sets of them
//! that a server port ([`crate::port`]) or a client pool keeps, and the reading of records for
//! the input node that serves a port or pool. Nodes of every flow that name the same port share
//! its connections: a record read by one flow's input node can be answered by another flow's
//! output node.
//!
//! Reading runs on the server's async runtime, one task per connection. The task reads one
//! record, hands it to the input node's flow instances and waits until that invocation ended
//! before it reads the next from the same connection: records of a connection are processed
//! in order, a slow flow holds back only its own connection, and a TCPIPServerReceive in the
//! invocation reads the connection's next record itself. The flow instances take records
//! from a channel, so a connection that is slow to send never blocks another's records.
//!
//! A plain (not TLS) server connection mostly skips its task: the flow instance that handled
//! a record reads on from the socket itself without blocking (see [`Connection::try_next_record`])
//! and, when nothing is there, parks the connection on the socket's readiness
//! ([`Connection::park`]), whose wake hands it straight to the flow instances again. Each hop
//! between threads costs a context switch on a busy core, so a record then costs one wake
//! instead of four. The task takes over again whenever timing matters (part of a record is
//! pending, an idle timeout is set) or the connection ends.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::runtime::Handle;
use tokio::sync::{oneshot, watch};

use crate::TcpipError;
use crate::framing::Framing;

/// How reading a record is bounded in time.
#[derive(Clone, Copy, Debug)]
pub struct ReadTimeouts {
    /// From a record's first byte to its last (the product's Timeout waiting for a data
    /// record): exceeded, the bytes that came go to the failure terminal.
    pub record: Duration,
    /// How long to wait for the first byte of a record; `None` waits for ever.
    pub first_byte: Option<Duration>,
}

/// The reading half of a connection: a TCP socket's, or a TLS session's.
pub type ReadHalf = Box<dyn AsyncRead + Send + Unpin>;
/// The writing half of a connection.
pub type WriteHalf = Box<dyn AsyncWrite + Send + Unpin>;

/// How a connection's bytes are read: a plain socket directly (shared with its writing side,
/// so that a flow thread can read and write it without the runtime), a TLS session through
/// its reading half.
enum Reader {
    Plain(Arc<tokio::net::TcpStream>),
    Boxed(ReadHalf),
}

impl Reader {
    async fn read_buf(&mut self, buf: &mut BytesMut) -> std::io::Result<usize> {
        match self {
            Reader::Boxed(r) => r.read_buf(buf).await,
            Reader::Plain(tcp) => loop {
                tcp.readable().await?;
                match tcp.try_read_buf(buf) {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    r => return r,
                }
            },
        }
    }
}

/// How a connection's bytes are written.
enum Writer {
    Plain(Arc<tokio::net::TcpStream>),
    Boxed(WriteHalf),
}

impl Writer {
    async fn write_all(&mut self, mut data: &[u8]) -> std::io::Result<()> {
        match self {
            Writer::Boxed(w) => w.write_all(data).await,
            Writer::Plain(tcp) => {
                while !data.is_empty() {
                    tcp.writable().await?;
                    match tcp.try_write(data) {
                        Ok(n) => data = &data[n..],
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            }
        }
    }

    async fn shutdown(&mut self) -> std::io::Result<()> {
        match self {
            Writer::Boxed(w) => w.shutdown().await,
            Writer::Plain(tcp) => {
                socket2::SockRef::from(tcp.as_ref()).shutdown(std::net::Shutdown::Write)
            }
        }
    }
}

/// The state of a connection's input stream, behind its lock.
pub(crate) struct InputStream {
    read: Reader,
    pub(crate) buf: BytesMut,
    pub(crate) eof: bool,
    /// Records read so far.
    pub(crate) seq: u64,
}

/// An open connection: accepted on a server port, or opened by a client pool.
pub struct Connection {
    /// The product's connection Id: unique in the server.
    pub id: String,
    /// `TCPIPServer` or `TCPIPClient`, as ConnectionDetails.Type says.
    pub kind: &'static str,
    /// The host the connection details name: the peer's address on a server port, the host
    /// connected to by a client.
    pub hostname: String,
    /// The listening port of a server connection, the remote port of a client one.
    pub port: u16,
    pub peer: SocketAddr,
    /// When it was opened: microseconds since the epoch, GMT.
    pub opened_micros: i64,
    pub(crate) input: tokio::sync::Mutex<InputStream>,
    output: tokio::sync::Mutex<Option<Writer>>,
    /// The socket of a plain server connection, which flow threads read on their own (see
    /// the module's documentation); `None` for TLS and client connections, which their task
    /// reads (a client connection may be leased to a flow, which the task respects).
    pub(crate) tcp: Option<Arc<tokio::net::TcpStream>>,
    /// The flow instances' turn while the connection waits for its socket to be readable.
    pub(crate) parked: Mutex<Option<crate::turn::Parked>>,
    pub(crate) input_closed: AtomicBool,
    output_closed: AtomicBool,
    /// Becomes true when the input stream closes (by a node or the connection's end), to
    /// wake a read in progress.
    input_closing: watch::Sender<bool>,
    /// True while a flow holds the connection (a client lease) or a flow thread holds its
    /// input stream: the reading task for an input node leaves it alone meanwhile.
    reserved: watch::Sender<bool>,
    /// Leased by a flow from its client pool.
    leased: AtomicBool,
    /// The flow threads that reserved its streams.
    pub(crate) holders: crate::streams::Holders,
    /// The product's Reply ID: a value a flow stored on the connection, reported in the
    /// connection details of what is read from it afterwards.
    reply_id: Mutex<Option<String>>,
    has_reply_id: AtomicBool,
    set: Weak<ConnectionSet>,
}

/// How a read of a record ended without a record.
pub enum ReadEnd {
    /// The peer closed between records, or the input stream was closed.
    Ended,
    /// The connection was reserved by a flow; what was read so far stays buffered.
    Yielded,
}

/// The open connections of a port or a client pool, by Id.
#[derive(Default)]
pub struct ConnectionSet {
    map: Mutex<HashMap<String, Arc<Connection>>>,
}

impl ConnectionSet {
    pub fn get(&self, id: &str) -> Option<Arc<Connection>> {
        lock(&self.map).get(id).cloned()
    }

    /// The connection whose output stream this flow thread reserved, else the oldest whose
    /// output is open and reserved by no other thread (Ids grow).
    pub fn any(&self) -> Option<Arc<Connection>> {
        let map = lock(&self.map);
        let open = map
            .values()
            .filter(|c| !c.output_closed.load(Ordering::Acquire));
        if let Some(mine) = open
            .clone()
            .find(|c| c.holders.held_by_me(crate::streams::Stream::Output))
        {
            return Some(Arc::clone(mine));
        }
        open.filter(|c| !c.holders.held_by_other(crate::streams::Stream::Output))
            .min_by_key(|c| (c.id.len(), c.id.clone()))
            .cloned()
    }

    /// A connection one of whose streams this flow thread reserved.
    pub fn held_by_me(&self) -> Option<Arc<Connection>> {
        use crate::streams::Stream;
        lock(&self.map)
            .values()
            .find(|c| c.holders.held_by_me(Stream::Output) || c.holders.held_by_me(Stream::Input))
            .cloned()
    }

    /// Every connection whose output is open and reserved by no other flow thread, oldest
    /// first (a broadcast's destinations).
    pub fn all_writable(&self) -> Vec<Arc<Connection>> {
        let mut v: Vec<_> = lock(&self.map)
            .values()
            .filter(|c| {
                !c.output_closed.load(Ordering::Acquire)
                    && !c.holders.held_by_other(crate::streams::Stream::Output)
            })
            .cloned()
            .collect();
        v.sort_by(|a, b| (a.id.len(), &a.id).cmp(&(b.id.len(), &b.id)));
        v
    }

    pub fn len(&self) -> usize {
        lock(&self.map).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn remove(&self, id: &str) {
        lock(&self.map).remove(id);
    }

    /// Hand every parked connection back to its task (its input node stopped: the turn would
    /// wake a node that no longer reads), which waits for the port's next input node.
    pub fn unpark_all(&self) {
        let conns: Vec<_> = lock(&self.map).values().cloned().collect();
        for c in conns {
            drop(lock(&c.parked).take());
        }
    }

    /// Close every connection (on the runtime, without waiting).
    pub fn close_all(&self, runtime: &Handle) {
        let conns: Vec<_> = lock(&self.map).drain().map(|(_, c)| c).collect();
        for c in conns {
            c.close_input();
            runtime.spawn(async move { c.close_output().await });
        }
    }
}

/// Microseconds since the epoch, now.
pub fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

impl Connection {
    /// A connection of `set` over a plain TCP `stream`, entered into the set.
    pub fn open(
        stream: tokio::net::TcpStream,
        kind: &'static str,
        hostname: String,
        port: u16,
        set: &Arc<ConnectionSet>,
    ) -> std::io::Result<Arc<Connection>> {
        let peer = stream.peer_addr()?;
        let _ = stream.set_nodelay(true);
        let tcp = Arc::new(stream);
        Ok(Connection::enter(
            Reader::Plain(Arc::clone(&tcp)),
            Writer::Plain(Arc::clone(&tcp)),
            (kind == "TCPIPServer").then_some(tcp),
            peer,
            kind,
            hostname,
            port,
            set,
        ))
    }

    /// A connection of `set` over a stream already split (a TLS session), entered into the
    /// set.
    pub fn open_halves(
        read: ReadHalf,
        write: WriteHalf,
        peer: SocketAddr,
        kind: &'static str,
        hostname: String,
        port: u16,
        set: &Arc<ConnectionSet>,
    ) -> Arc<Connection> {
        Connection::enter(
            Reader::Boxed(read),
            Writer::Boxed(write),
            None,
            peer,
            kind,
            hostname,
            port,
            set,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn enter(
        read: Reader,
        write: Writer,
        tcp: Option<Arc<tokio::net::TcpStream>>,
        peer: SocketAddr,
        kind: &'static str,
        hostname: String,
        port: u16,
        set: &Arc<ConnectionSet>,
    ) -> Arc<Connection> {
        let conn = Arc::new(Connection {
            id: format!("{:016X}", next_id()),
            kind,
            hostname,
            port,
            peer,
            opened_micros: now_micros(),
            input: tokio::sync::Mutex::new(InputStream {
                read,
                buf: BytesMut::new(),
                eof: false,
                seq: 0,
            }),
            output: tokio::sync::Mutex::new(Some(write)),
            tcp,
            parked: Mutex::new(None),
            input_closed: AtomicBool::new(false),
            output_closed: AtomicBool::new(false),
            input_closing: watch::channel(false).0,
            reserved: watch::channel(false).0,
            leased: AtomicBool::new(false),
            holders: crate::streams::Holders::default(),
            reply_id: Mutex::new(None),
            has_reply_id: AtomicBool::new(false),
            set: Arc::downgrade(set),
        });
        lock(&set.map).insert(conn.id.clone(), Arc::clone(&conn));
        conn
    }

    /// Lease the connection to a flow (or let it go): an input node's reading stops
    /// meanwhile.
    pub fn lease(&self, on: bool) {
        self.leased.store(on, Ordering::Release);
        self.refresh_reserved();
    }

    /// Tell an input node's reading whether a flow holds the connection's input now.
    pub(crate) fn refresh_reserved(&self) {
        let on = self.leased.load(Ordering::Acquire) || self.holders.input_held();
        self.reserved
            .send_if_modified(|r| std::mem::replace(r, on) != on);
    }

    /// Store the product's Reply ID on the connection: the connection details of what is read
    /// from it afterwards carry it.
    pub fn set_reply_id(&self, id: Option<String>) {
        let mut r = lock(&self.reply_id);
        self.has_reply_id.store(id.is_some(), Ordering::Release);
        *r = id;
    }

    pub fn reply_id(&self) -> Option<String> {
        // Every record's details ask; most connections never get one.
        if !self.has_reply_id.load(Ordering::Acquire) {
            return None;
        }
        lock(&self.reply_id).clone()
    }

    /// Whether a flow holds the connection's input (a lease, a reserved input stream).
    pub(crate) fn is_reserved(&self) -> bool {
        *self.reserved.borrow()
    }

    /// Read the next record with `framing`. `Ok(Err(_))`: no record, and why. Only one reader
    /// at a time reads a connection; others wait. `yielding` reads (an input node's) give way
    /// when the connection is reserved.
    pub async fn read_record(
        &self,
        framing: &Framing,
        timeouts: ReadTimeouts,
        yielding: bool,
    ) -> Result<Result<(Bytes, u64), ReadEnd>, TcpipError> {
        let mut closing = self.input_closing.subscribe();
        let mut reserved = self.reserved.subscribe();
        let mut reservation = async move || {
            if yielding {
                let _ = reserved.wait_for(|r| *r).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        // Biased, the reservation first: a reader woken late (a busy machine) must not take
        // what arrived for the flow that reserved the input meanwhile.
        let mut guard = tokio::select! {
            biased;
            _ = reservation() => return Ok(Err(ReadEnd::Yielded)),
            _ = closing.wait_for(|c| *c) => return Ok(Err(ReadEnd::Ended)),
            g = self.input.lock() => g,
        };
        let s = &mut *guard;
        let start = Instant::now();
        let mut first_byte = (!s.buf.is_empty()).then_some(start);
        loop {
            if self.input_closed.load(Ordering::Acquire) {
                return Ok(Err(ReadEnd::Ended));
            }
            if let Some(rec) = framing.next_record(&mut s.buf, s.eof)? {
                s.seq += 1;
                return Ok(Ok((rec, s.seq)));
            }
            if s.eof {
                return Ok(Err(ReadEnd::Ended));
            }
            if first_byte.is_none() && !s.buf.is_empty() {
                first_byte = Some(Instant::now());
            }
            let deadline = match first_byte {
                Some(t) => Some(t + timeouts.record),
                None => timeouts.first_byte.map(|w| start + w),
            };
            if s.buf.capacity() - s.buf.len() < 4096 {
                s.buf.reserve(16 * 1024);
            }
            let read = s.read.read_buf(&mut s.buf);
            let got = tokio::select! {
                biased;
                _ = reservation() => return Ok(Err(ReadEnd::Yielded)),
                _ = closing.wait_for(|c| *c) => return Ok(Err(ReadEnd::Ended)),
                r = async {
                    match deadline {
                        Some(d) => tokio::time::timeout_at(d.into(), read).await.ok(),
                        None => Some(read.await),
                    }
                } => r,
            };
            match got {
                None if s.buf.is_empty() => {
                    return Err(TcpipError::NoRecord {
                        secs: timeouts.first_byte.map_or(0, |d| d.as_secs()),
                    });
                }
                None => {
                    let partial = s.buf.split().freeze();
                    return Err(TcpipError::ReadTimeout {
                        secs: timeouts.record.as_secs(),
                        got: partial.len(),
                        partial,
                    });
                }
                Some(Ok(0)) => s.eof = true,
                Some(Ok(_)) => {}
                Some(Err(source)) => {
                    return Err(TcpipError::Io {
                        id: self.id.clone(),
                        source,
                    });
                }
            }
        }
    }

    /// Write `data` from a thread outside the runtime, waiting at most `timeout`. A plain
    /// socket that takes the data at once is written on this thread; otherwise the rest is
    /// written on `runtime`.
    pub fn write_blocking(
        &self,
        runtime: &Handle,
        data: &[u8],
        timeout: Duration,
    ) -> Result<(), TcpipError> {
        if let Some(tcp) = &self.tcp
            && let Ok(g) = self.output.try_lock()
        {
            if g.is_none() {
                return Err(TcpipError::StreamClosed {
                    id: self.id.clone(),
                    stream: "output",
                });
            }
            let mut sent = 0;
            while sent < data.len() {
                match tcp.try_write(&data[sent..]) {
                    Ok(n) => sent += n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(source) => {
                        return Err(TcpipError::Io {
                            id: self.id.clone(),
                            source,
                        });
                    }
                }
            }
            if sent == data.len() {
                return Ok(());
            }
            // The peer reads slowly: the rest waits on the runtime, holding the stream so
            // that no other record is written into the middle of this one.
            return runtime.block_on(self.write_locked(Some(g), &data[sent..], timeout));
        }
        runtime.block_on(self.write(data, timeout))
    }

    /// Write `data` to the output stream within `timeout`. A write that times out leaves the
    /// peer with part of a record, so the connection is closed.
    pub async fn write(&self, data: &[u8], timeout: Duration) -> Result<(), TcpipError> {
        self.write_locked(None, data, timeout).await
    }

    async fn write_locked(
        &self,
        held: Option<tokio::sync::MutexGuard<'_, Option<Writer>>>,
        data: &[u8],
        timeout: Duration,
    ) -> Result<(), TcpipError> {
        let write = async {
            let mut g = match held {
                Some(g) => g,
                None => self.output.lock().await,
            };
            let Some(w) = g.as_mut() else {
                return Err(TcpipError::StreamClosed {
                    id: self.id.clone(),
                    stream: "output",
                });
            };
            w.write_all(data).await.map_err(|source| TcpipError::Io {
                id: self.id.clone(),
                source,
            })
        };
        match tokio::time::timeout(timeout, write).await {
            Ok(r) => r,
            Err(_) => {
                self.close().await;
                Err(TcpipError::WriteTimeout {
                    secs: timeout.as_secs(),
                })
            }
        }
    }

    /// Close the input stream: nothing more is read from it.
    pub fn close_input(&self) {
        self.input_closed.store(true, Ordering::Release);
        self.input_closing.send_replace(true);
        // A parked turn goes back to the connection's task, which sees the stream closed.
        drop(lock(&self.parked).take());
        self.forget_if_closed();
    }

    /// Close the output stream (the peer sees the end of the stream).
    pub async fn close_output(&self) {
        let w = self.output.lock().await.take();
        if let Some(mut w) = w {
            let _ = w.shutdown().await;
        }
        self.output_closed.store(true, Ordering::Release);
        self.forget_if_closed();
    }

    /// Close both streams; the connection leaves its manager.
    pub async fn close(&self) {
        self.close_input();
        self.close_output().await;
    }

    pub fn is_closed(&self) -> bool {
        self.input_closed.load(Ordering::Acquire) && self.output_closed.load(Ordering::Acquire)
    }

    fn forget_if_closed(&self) {
        if self.is_closed()
            && let Some(set) = self.set.upgrade()
        {
            set.remove(&self.id);
        }
    }
}

/// What the reading task of a connection hands the input node.
pub enum Event {
    /// The connection was accepted.
    Open,
    /// A plain server connection's socket became readable while it was parked: the flow
    /// instance reads on from it ([`Connection::try_next_record`]).
    Resume,
    /// A record, with its sequence number on the connection (from 1).
    Record(Bytes, u64),
    /// A record could not be read; the connection is closed after this.
    Failed(TcpipError),
    /// The connection closed.
    Close,
}

/// An event of a connection for the input node, with the signal that its invocation ended.
pub struct Delivery {
    pub conn: Arc<Connection>,
    pub event: Event,
    /// Sent (or dropped) when the invocation ended; the connection's next record waits for it.
    pub done: oneshot::Sender<Handback>,
}

/// What the task of a connection does when a flow instance hands the connection back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handback {
    /// Read the next record (with the read timeouts) and deliver it.
    Read,
    /// The connection's input ended, or a record failed: close the connection.
    End,
}

/// The TCPIPServerInput node serving a port: how it reads and where records go.
pub struct InputSink {
    /// Which node registered it (so that only it unregisters it).
    pub owner: u64,
    /// TLS for the connections accepted while this node serves the port.
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    pub framing: Framing,
    pub timeouts: ReadTimeouts,
    /// Connections a server port keeps at most.
    pub max_connections: Option<usize>,
    pub tx: crossbeam_channel::Sender<Delivery>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A process-wide Id for connections and input nodes.
pub fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Hand `event` to the input node and wait until its invocation ended.
/// Clear `sink` if it serves the input node `owner` (a newer node may have taken it over).
pub(crate) fn unserve(sink: &watch::Sender<Option<Arc<InputSink>>>, owner: u64) {
    sink.send_if_modified(|s| {
        if s.as_ref().is_some_and(|s| s.owner == owner) {
            *s = None;
            true
        } else {
            false
        }
    });
}

async fn deliver(sink: &InputSink, conn: &Arc<Connection>, event: Event) -> Handback {
    let (done, ended) = oneshot::channel();
    let d = Delivery {
        conn: Arc::clone(conn),
        event,
        done,
    };
    if sink.tx.send(d).is_ok() {
        // Dropped unanswered (the flow stopped): the connection is read as before.
        return ended.await.unwrap_or(Handback::Read);
    }
    Handback::Read
}

/// Read a connection's records for the input node serving its port, one at a time, until the
/// connection or its input stream closes.
pub async fn read_connection(
    conn: Arc<Connection>,
    mut sinks: watch::Receiver<Option<Arc<InputSink>>>,
) {
    let mut closing = conn.input_closing.subscribe();
    let mut reserved = conn.reserved.subscribe();
    let mut opened = false;
    loop {
        // Without an input node on the port, the connection is read only by receive nodes.
        let sink = tokio::select! {
            s = sinks.wait_for(Option::is_some) => match s {
                Ok(s) => s.clone(),
                Err(_) => break,
            },
            _ = closing.wait_for(|c| *c) => break,
        };
        let Some(sink) = sink else { continue };
        if !opened {
            opened = true;
            if deliver(&sink, &conn, Event::Open).await == Handback::End {
                break;
            }
            continue;
        }
        match conn.read_record(&sink.framing, sink.timeouts, true).await {
            Ok(Ok((rec, seq))) => {
                if deliver(&sink, &conn, Event::Record(rec, seq)).await == Handback::End {
                    break;
                }
            }
            Ok(Err(ReadEnd::Ended)) => break,
            Ok(Err(ReadEnd::Yielded)) => {
                // A flow holds the connection: read again when it let go.
                tokio::select! {
                    _ = reserved.wait_for(|r| !*r) => {}
                    _ = closing.wait_for(|c| *c) => break,
                }
            }
            Err(TcpipError::NoRecord { .. }) => {
                tracing::info!(connection = %conn.id, peer = %conn.peer, "Closing an idle TCP/IP connection.");
                break;
            }
            Err(e) => {
                deliver(&sink, &conn, Event::Failed(e)).await;
                break;
            }
        }
    }
    let input_closed_by_node = conn.input_closed.load(Ordering::Acquire);
    if !input_closed_by_node || conn.output_closed.load(Ordering::Acquire) {
        conn.close().await;
    }
    let current = sinks.borrow().clone();
    if opened
        && conn.is_closed()
        && let Some(sink) = current
    {
        deliver(&sink, &conn, Event::Close).await;
    }
}
