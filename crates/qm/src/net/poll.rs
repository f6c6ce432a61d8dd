//! Connections without TLS are served by a few threads per server (`qm-net-poll`, one per
//! CPU), each waiting on its share of them with epoll and running their puts and gets
//! outside syncpoint itself. Those never wait on the thread that runs them (a get that must
//! wait is hooked on its queue, persistent work goes to the log writer, see `waiter` and
//! `handoff`), so a request/reply round trip wakes no thread per connection: when many
//! clients are busy, one wake-up of a poll thread serves the requests of all that arrived
//! meanwhile. With a thread per connection each request cost a sleep and a wake-up of its
//! connection's thread, a third of all CPU in request/reply.
//!
//! Any other request (a unit of work, a browse, administration, a request over
//! [`MAX_POLLED_FRAME`]) may wait or take long, so the connection moves to a thread of its own
//! for good ([`Conn::serve`]), with the bytes already read.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use bytes::Bytes;
use parking_lot::Mutex;

use super::server::{Conn, Step, polled};
use super::sock::Sock;
use super::{MAX_FRAME, Out};

/// Largest request the poll thread runs; a connection that sends a larger one moves to a
/// thread of its own (reading and copying it there is not worth holding everyone else up).
pub(crate) const MAX_POLLED_FRAME: usize = 1 << 20;

/// The eventfd's token; connections count from 1.
const WAKE: u64 = 0;

/// A server's poll threads, one per CPU, each serving its share of the connections.
pub(crate) struct Pollers {
    all: Vec<Arc<Poller>>,
    next: AtomicUsize,
}

impl Pollers {
    /// Start one poll thread per CPU.
    pub fn start() -> io::Result<Pollers> {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(Pollers {
            all: (0..n).map(|_| Poller::start()).collect::<io::Result<_>>()?,
            next: AtomicUsize::new(0),
        })
    }

    /// Serve `conn` on `sock` from now on, on the next poll thread in turn.
    pub fn add(&self, conn: Conn, sock: Sock) {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.all.len();
        self.all[i].add(conn, sock);
    }

    /// Stop once the connections being served have ended.
    pub fn stop(&self) {
        for p in &self.all {
            p.stop();
        }
    }
}

/// One poll thread.
pub(crate) struct Poller {
    ep: OwnedFd,
    wake: OwnedFd,
    inbox: Mutex<Inbox>,
}

#[derive(Default)]
struct Inbox {
    /// Connections to take on.
    new: Vec<(Conn, Sock)>,
    /// Connections whose owed answer is out, to go on with.
    resume: Vec<u64>,
    /// The server stopped: end once the last connection has.
    stop: bool,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Level-triggered: one `recv` that does not fill the buffer is taken as having read all,
/// without a second one to see it fail; epoll reports the socket again if more is there.
const READABLE: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP) as u32;

fn epoll_ctl(ep: &OwnedFd, op: libc::c_int, fd: RawFd, token: u64, events: u32) -> io::Result<()> {
    let mut ev = libc::epoll_event { events, u64: token };
    // SAFETY: both descriptors are open; `ev` is valid for the duration of the call.
    cvt(unsafe { libc::epoll_ctl(ep.as_raw_fd(), op, fd, &mut ev) }).map(|_| ())
}

impl Poller {
    /// Start the poll thread.
    fn start() -> io::Result<Arc<Poller>> {
        // SAFETY: plain system calls; the descriptors they return are owned below.
        let ep = unsafe { OwnedFd::from_raw_fd(cvt(libc::epoll_create1(libc::EPOLL_CLOEXEC))?) };
        // SAFETY: as above.
        let wake = unsafe {
            OwnedFd::from_raw_fd(cvt(libc::eventfd(
                0,
                libc::EFD_CLOEXEC | libc::EFD_NONBLOCK,
            ))?)
        };
        epoll_ctl(&ep, libc::EPOLL_CTL_ADD, wake.as_raw_fd(), WAKE, READABLE)?;
        let p = Arc::new(Poller {
            ep,
            wake,
            inbox: Mutex::new(Inbox::default()),
        });
        let me = p.clone();
        std::thread::Builder::new()
            .name("qm-net-poll".into())
            .spawn(move || me.run())?;
        Ok(p)
    }

    fn add(&self, conn: Conn, sock: Sock) {
        self.inbox.lock().new.push((conn, sock));
        self.kick();
    }

    fn stop(&self) {
        self.inbox.lock().stop = true;
        self.kick();
    }

    fn resume(&self, token: u64) {
        self.inbox.lock().resume.push(token);
        self.kick();
    }

    fn kick(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: `one` is 8 readable bytes; the eventfd is open. A full counter (EAGAIN)
        // still wakes the thread, so the result does not matter.
        let _ = unsafe { libc::write(self.wake.as_raw_fd(), one.as_ptr().cast(), 8) };
    }

    fn run(self: Arc<Self>) {
        let mut conns: HashMap<u64, Entry> = HashMap::new();
        let mut next = 1u64;
        let mut stopping = false;
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
        let mut ready = Vec::new();
        while !(stopping && conns.is_empty()) {
            // SAFETY: `events` is valid for `events.len()` entries.
            let n = unsafe {
                libc::epoll_wait(
                    self.ep.as_raw_fd(),
                    events.as_mut_ptr(),
                    events.len() as libc::c_int,
                    -1,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    tracing::error!("queue manager poll thread: {e}");
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                continue;
            }
            for ev in &events[..n as usize] {
                let token = ev.u64;
                if token != WAKE {
                    ready.push(token);
                    continue;
                }
                let mut count = [0u8; 8];
                // SAFETY: `count` is 8 writable bytes; the eventfd is open and non-blocking.
                let _ = unsafe { libc::read(self.wake.as_raw_fd(), count.as_mut_ptr().cast(), 8) };
                let mut inbox = self.inbox.lock();
                stopping |= inbox.stop;
                ready.append(&mut inbox.resume);
                for (conn, sock) in inbox.new.drain(..) {
                    let token = next;
                    next += 1;
                    if let Err(e) = epoll_ctl(
                        &self.ep,
                        libc::EPOLL_CTL_ADD,
                        sock.as_raw_fd(),
                        token,
                        READABLE,
                    ) {
                        tracing::warn!("cannot poll a connection: {e}");
                        continue;
                    }
                    conns.insert(token, Entry::new(conn, sock));
                    ready.push(token);
                }
            }
            for token in ready.drain(..) {
                let Some(e) = conns.get_mut(&token) else {
                    continue;
                };
                match e.run(&self, token) {
                    Next::Wait => {
                        // Input left unread (or the end of it) waits for the owed answer:
                        // the socket is not watched meanwhile, or epoll would report it
                        // again at once; the answer's resume watches it again.
                        let mute = e.eof || !e.drained;
                        if mute != e.muted {
                            let events = if mute { 0 } else { READABLE };
                            let fd = e.sock.as_raw_fd();
                            if epoll_ctl(&self.ep, libc::EPOLL_CTL_MOD, fd, token, events).is_ok() {
                                e.muted = mute;
                            }
                        }
                    }
                    Next::Close => {
                        if let Some(e) = conns.remove(&token) {
                            let _ =
                                epoll_ctl(&self.ep, libc::EPOLL_CTL_DEL, e.sock.as_raw_fd(), 0, 0);
                        }
                    }
                    Next::Thread => {
                        if let Some(e) = conns.remove(&token) {
                            let _ =
                                epoll_ctl(&self.ep, libc::EPOLL_CTL_DEL, e.sock.as_raw_fd(), 0, 0);
                            e.move_to_thread();
                        }
                    }
                }
            }
        }
    }
}

/// What the poll thread does with a connection next.
enum Next {
    /// Wait for its socket, or for its owed answer to be out.
    Wait,
    /// It ended.
    Close,
    /// Its next request is for a thread of its own.
    Thread,
}

/// One polled connection.
struct Entry {
    conn: Conn,
    sock: Sock,
    /// Bytes read and not yet run, from `at`.
    inbuf: Vec<u8>,
    at: usize,
    /// Answers to write.
    out: Out,
    head: Vec<u8>,
    /// The peer stopped sending.
    eof: bool,
    /// The last read found the socket empty.
    drained: bool,
    /// The socket is not watched (see `Poller::run`).
    muted: bool,
}

/// Unrun bytes beyond which a connection is not read further until they are run: a whole
/// request of the largest polled size fits.
const READ_AHEAD: usize = MAX_POLLED_FRAME + 64 * 1024;

impl Entry {
    fn new(conn: Conn, sock: Sock) -> Entry {
        Entry {
            conn,
            sock,
            inbuf: Vec::new(),
            at: 0,
            out: Out::default(),
            head: Vec::new(),
            eof: false,
            drained: true,
            muted: false,
        }
    }

    /// Whether the connection may go on: no answer is owed to it (else it is resumed once
    /// the answer is out).
    fn settled(&mut self, p: &Arc<Poller>, token: u64) -> bool {
        if !self.conn.handed_off {
            return true;
        }
        let Some(sh) = &self.conn.shared else {
            return true;
        };
        let weak: Weak<Poller> = Arc::downgrade(p);
        match sh.settled_or(move || {
            if let Some(p) = weak.upgrade() {
                p.resume(token);
            }
        }) {
            Some(failed) => {
                self.conn.handed_off = false;
                self.conn.last_failed = failed;
                true
            }
            None => false,
        }
    }

    /// Read what the socket has, up to [`READ_AHEAD`] unrun bytes; true when it had no more
    /// (or the peer stopped sending).
    fn fill(&mut self) -> io::Result<bool> {
        let r = self.read_some();
        self.drained = matches!(r, Ok(true));
        r
    }

    fn read_some(&mut self) -> io::Result<bool> {
        if self.at > 0 {
            self.inbuf.drain(..self.at);
            self.at = 0;
        }
        if self.inbuf.is_empty() && self.inbuf.capacity() > 256 * 1024 {
            self.inbuf = Vec::new();
        }
        loop {
            if self.inbuf.len() >= READ_AHEAD {
                return Ok(false);
            }
            self.inbuf.reserve(16 * 1024);
            let room = READ_AHEAD - self.inbuf.len();
            let spare = self.inbuf.spare_capacity_mut();
            let room = spare.len().min(room);
            // SAFETY: `spare` is valid for writes of `spare.len()` bytes; recv initialises
            // the first `n` of them, which `set_len` then covers. The descriptor is open.
            let n = unsafe {
                libc::recv(
                    self.sock.as_raw_fd(),
                    spare.as_mut_ptr().cast(),
                    room,
                    libc::MSG_DONTWAIT,
                )
            };
            if n > 0 {
                // SAFETY: see above.
                unsafe { self.inbuf.set_len(self.inbuf.len() + n as usize) };
                if (n as usize) < room {
                    return Ok(true);
                }
                continue;
            }
            if n == 0 {
                self.eof = true;
                return Ok(true);
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock => return Ok(true),
                io::ErrorKind::Interrupted => {}
                _ => return Err(e),
            }
        }
    }

    /// Write the answers gathered so far, as an answer owed until it is out: usually at
    /// once; what the socket does not take at once, a delivery thread finishes (see
    /// [`super::waiter::Shared::send`]) and the connection goes on after it.
    fn flush(&mut self) {
        let buf = self.out.take();
        if buf.is_empty() {
            return;
        }
        if let Some(sh) = &self.conn.shared {
            sh.hand_off();
            self.conn.handed_off = true;
            sh.send(buf, Bytes::new(), self.conn.last_failed);
        }
    }

    /// Run what the connection sent, as far as it can go on this thread.
    fn run(&mut self, p: &Arc<Poller>, token: u64) -> Next {
        loop {
            if !self.settled(p, token) {
                // Read on (what arrives waits behind the owed answer), to notice a client
                // that left: a get still waiting for it is then dropped.
                if self.fill().is_err() {
                    return Next::Close;
                }
                if let (true, Some(sh)) = (self.eof, &self.conn.shared) {
                    sh.close();
                }
                return Next::Wait;
            }
            let drained = match self.fill() {
                Ok(d) => d,
                Err(e) => {
                    tracing::debug!("connection ended: {e}");
                    return Next::Close;
                }
            };
            match self.run_requests(p, token) {
                Some(next) => return next,
                None if self.eof => {
                    // The client stopped sending: a get still waiting for it is dropped,
                    // but the answer to work already done (a put being logged) is still
                    // written before the connection ends.
                    if let (true, Some(sh)) = (self.conn.handed_off, &self.conn.shared) {
                        sh.close();
                        if !self.settled(p, token) {
                            return Next::Wait;
                        }
                    }
                    return Next::Close;
                }
                None if drained => return Next::Wait,
                None => {}
            }
        }
    }

    /// Run the whole requests read; `None` when they are all run (their answers written).
    fn run_requests(&mut self, p: &Arc<Poller>, token: u64) -> Option<Next> {
        loop {
            let avail = &self.inbuf[self.at..];
            let Some(len) = avail
                .get(..4)
                .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()) as usize)
            else {
                break;
            };
            // Before authentication only small requests are read (as `Conn::serve` does).
            let limit = if self.conn.authed {
                MAX_FRAME
            } else {
                64 * 1024
            };
            if !(5..=limit).contains(&len) {
                tracing::debug!("connection ended: frame length {len}");
                return Some(Next::Close);
            }
            if len > MAX_POLLED_FRAME {
                self.flush();
                return Some(Next::Thread);
            }
            if avail.len() < 4 + len {
                break;
            }
            if !self.settled(p, token) {
                return Some(Next::Wait);
            }
            let avail = &self.inbuf[self.at..];
            let (id, code) = (
                u32::from_le_bytes(avail[4..8].try_into().unwrap_or_default()),
                avail[8],
            );
            if !polled(code, &avail[9..4 + len]) {
                self.flush();
                return Some(Next::Thread);
            }
            let payload = Bytes::copy_from_slice(&avail[9..4 + len]);
            self.at += 4 + len;
            let rest = &self.inbuf[self.at..];
            match self
                .conn
                .step(id, code, payload, &mut self.head, &mut self.out, rest)
            {
                Step::HandedOff { used } => self.at += used,
                Step::Answer {
                    status,
                    body,
                    close,
                } => {
                    self.out.push(id, status, &self.head, &body);
                    if close {
                        self.flush();
                        return Some(Next::Close);
                    }
                }
            }
        }
        self.flush();
        None
    }

    /// Serve the connection on a thread of its own from now on.
    fn move_to_thread(self) {
        let Entry {
            mut conn,
            sock,
            inbuf,
            at,
            ..
        } = self;
        let stream = Prefixed {
            pre: io::Cursor::new(inbuf[at..].to_vec()),
            sock,
        };
        let r = std::thread::Builder::new()
            .name("qm-net-conn".into())
            .spawn(move || {
                if let Err(e) = conn.serve(Box::new(stream)) {
                    tracing::debug!("connection ended: {e}");
                }
            });
        if let Err(e) = r {
            tracing::error!("cannot start connection thread: {e}");
        }
    }
}

/// A connection's socket behind the bytes already read from it.
struct Prefixed {
    pre: io::Cursor<Vec<u8>>,
    sock: Sock,
}

impl Read for Prefixed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if (self.pre.position() as usize) < self.pre.get_ref().len() {
            return self.pre.read(buf);
        }
        self.sock.read(buf)
    }
}

impl Write for Prefixed {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.sock.write(buf)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.sock.write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
