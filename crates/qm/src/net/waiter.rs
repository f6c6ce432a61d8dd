//! Answers written by other threads than the connection's. A connection whose get finds
//! nothing leaves a [`GetWait`] hooked on the queue and goes back to reading its socket; the
//! thread whose put makes a matching message available runs the get and writes the answer
//! to the waiting connection's socket itself. Work that must wait for the log (a persistent
//! put outside syncpoint, the removal of a persistent message got outside syncpoint) is
//! handed to the log writer with the answer to write once it is synced (see `handoff`). A
//! request/reply round trip then wakes no thread besides the ones reading sockets and the
//! log writer, instead of also waking one parked per waiting get and per committer. One
//! timer thread per process answers the waits that run out.
//!
//! Answers are written without blocking ([`Shared::send`]): whatever the socket does not
//! take at once is finished by a delivery thread, so a client that stops reading holds up
//! only that thread, never the log writer or another client's put.

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::{Condvar, Mutex};

use super::sock::Sock;
use super::{STATUS_ERR, STATUS_OK};
use crate::error::{QmError, Result};
use crate::manager::QueueManager;
use crate::model::{GetOptions, Message};
use crate::queue::Waiter;

/// The write side of a connection without TLS, shared with whoever owes it an answer.
pub(crate) struct Shared {
    sock: Sock,
    state: Mutex<State>,
    done: Condvar,
}

struct State {
    /// Another thread owes the connection's next answer (a waiting get, a log write): the
    /// connection writes nothing until it is out.
    waiting: bool,
    /// The answered request failed (for the next request's `F_AFTER_OK`).
    failed: bool,
    /// The get waiting for this connection, to take off its queue when the connection ends.
    wait: Option<Arc<GetWait>>,
    /// The connection ended: a get handed over afterwards does not wait.
    closed: bool,
    /// Run once the owed answer is out (the poll thread's way of waiting, see `poll`).
    then: Option<Box<dyn FnOnce() + Send>>,
}

impl Shared {
    pub fn new(sock: Sock) -> Arc<Shared> {
        Arc::new(Shared {
            sock,
            state: Mutex::new(State {
                waiting: false,
                failed: false,
                wait: None,
                closed: false,
                then: None,
            }),
            done: Condvar::new(),
        })
    }

    /// The connection's next answer is now owed by another thread.
    pub fn hand_off(&self) {
        self.state.lock().waiting = true;
    }

    /// Close the socket both ways (the connection is over).
    pub fn shutdown(&self) {
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
    }

    /// The connection ended: a get waiting for it is taken off its queue, and one handed
    /// over later does not wait.
    pub fn close(&self) {
        let wait = {
            let mut st = self.state.lock();
            st.closed = true;
            st.wait.take()
        };
        if let Some(w) = wait {
            w.cancel();
        }
    }

    /// Block until no answer is owed, checking every `slice` with `gone` whether the peer
    /// left; returns whether the answered request failed, or `None` when the peer left first.
    pub fn settle(&self, slice: Duration, gone: impl Fn() -> bool) -> Option<bool> {
        let mut st = self.state.lock();
        while st.waiting {
            if self.done.wait_for(&mut st, slice).timed_out() && gone() {
                return None;
            }
        }
        Some(st.failed)
    }

    /// Whether the answered request failed, if no answer is owed; otherwise `None`, and
    /// `then` runs once the owed answer is out.
    pub fn settled_or(&self, then: impl FnOnce() + Send + 'static) -> Option<bool> {
        let mut st = self.state.lock();
        if !st.waiting {
            return Some(st.failed);
        }
        st.then = Some(Box::new(then));
        None
    }

    /// The owed answer is out: let the connection go on.
    fn finish(&self, failed: bool) {
        let then = {
            let mut st = self.state.lock();
            st.waiting = false;
            st.failed = failed;
            st.wait = None;
            self.done.notify_all();
            st.then.take()
        };
        if let Some(then) = then {
            then();
        }
    }

    /// Write `head` then `tail` (whole frames) and let the connection go on. The socket
    /// takes what it can without blocking (one `sendmsg` of both parts, usually all of it);
    /// the rest is written by a delivery thread, so the calling thread (the log writer, a
    /// putter) is never held up by a slow reader.
    pub fn send(self: &Arc<Self>, mut head: Vec<u8>, mut tail: Bytes, failed: bool) {
        if tail.len() <= super::DIRECT {
            head.extend_from_slice(&tail);
            tail = Bytes::new();
        }
        let mut off = 0;
        while off < head.len() + tail.len() {
            let (a, b) = if off < head.len() {
                (&head[off..], &tail[..])
            } else {
                (&[][..], &tail[off - head.len()..])
            };
            match send_now(&self.sock, a, b) {
                Ok(n) => off += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let me = self.clone();
                    deliver(Box::new(move || me.send_blocking(head, tail, off, failed)));
                    return;
                }
                Err(e) => {
                    tracing::debug!("answer not delivered: {e}");
                    self.shutdown();
                    break;
                }
            }
        }
        self.finish(failed);
    }

    /// The rest of [`Shared::send`] from byte `off`, blocking.
    fn send_blocking(&self, head: Vec<u8>, tail: Bytes, off: usize, failed: bool) {
        let mut s = &self.sock;
        let r = if off < head.len() {
            s.write_all(&head[off..]).and_then(|()| s.write_all(&tail))
        } else {
            s.write_all(&tail[off - head.len()..])
        };
        if let Err(e) = r {
            tracing::debug!("answer not delivered: {e}");
            self.shutdown();
        }
        self.finish(failed);
    }
}

/// One `sendmsg` of `a` then `b` that does not block (and raises no SIGPIPE).
fn send_now(sock: &Sock, a: &[u8], b: &[u8]) -> io::Result<usize> {
    let iov = [
        libc::iovec {
            iov_base: a.as_ptr() as *mut libc::c_void,
            iov_len: a.len(),
        },
        libc::iovec {
            iov_base: b.as_ptr() as *mut libc::c_void,
            iov_len: b.len(),
        },
    ];
    // SAFETY: an all-zero msghdr is valid (no name, no control data).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = if b.is_empty() { 1 } else { 2 } as _;
    // SAFETY: `msg` points at two iovecs describing live, readable slices that outlive the
    // call; sendmsg only reads them. The descriptor is open (owned by `sock`).
    let n = unsafe {
        libc::sendmsg(
            sock.as_raw_fd(),
            &msg,
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// One get waiting on a queue for a connection.
pub(crate) struct GetWait {
    id: u64,
    /// Answers to earlier requests of the connection, sent with this one.
    owed: Mutex<Vec<u8>>,
    frame: u32,
    queue: String,
    /// The get's options, without the wait.
    opts: GetOptions,
    deadline: Instant,
    qm: Weak<QueueManager>,
    conn: Arc<Shared>,
    /// Set once: the answer is written (or the connection dropped the wait).
    done: AtomicBool,
    /// The connection ended: answer at once instead of hooking again.
    cancelled: AtomicBool,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl GetWait {
    /// Start a waiting get answering request `frame`, for which no message was found. The
    /// answer is written to the socket after `owed` (frames the connection owes before it)
    /// by whichever thread completes it (possibly this one, before this returns). Runs on
    /// the connection's thread or, for a get pipelined behind a persistent put, on the log
    /// writer's once the put is committed; it never blocks.
    pub fn start(
        qm: &Arc<QueueManager>,
        conn: &Arc<Shared>,
        owed: Vec<u8>,
        frame: u32,
        queue: String,
        opts: GetOptions,
        wait: Duration,
    ) {
        let w = Arc::new(GetWait {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            owed: Mutex::new(owed),
            frame,
            queue,
            opts,
            deadline: Instant::now() + wait,
            qm: Arc::downgrade(qm),
            conn: conn.clone(),
            done: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
        });
        {
            let mut st = conn.state.lock();
            st.waiting = true;
            if st.closed {
                // Nobody reads the answer: the connection is gone.
                drop(st);
                w.done.store(true, Ordering::Release);
                return conn.finish(false);
            }
            st.wait = Some(w.clone());
        }
        timers().add(w.deadline, &w);
        w.attempt();
    }

    /// Try the get; hook on the queue again when it still waits. A message found is
    /// answered here, or, when its removal must be logged first, by the log writer once it
    /// is synced: never by waiting for the disk on this thread (a putter's, whose own
    /// connection would wait one sync more, or the log writer itself).
    fn attempt(self: Arc<Self>) {
        if self.done.load(Ordering::Acquire) {
            return;
        }
        let Some(qm) = self.qm.upgrade() else {
            return self.answer(Err(QmError::ShutDown));
        };
        if self.cancelled.load(Ordering::Acquire) {
            // Nobody will read a message taken now; the wake this waiter may have used up
            // goes to the next plain waiter instead.
            if !self.done.swap(true, Ordering::AcqRel) {
                timers().remove(self.deadline, self.id);
                self.conn.finish(false);
            }
            qm.pass_wake(&self.queue, &self.opts);
            return;
        }
        let late = Instant::now() >= self.deadline;
        let found = if late {
            qm.take_now(&self.queue, &self.opts)
        } else {
            let hook = (self.id, self.clone() as Arc<dyn Waiter>);
            qm.take_or_hook(&self.queue, &self.opts, hook)
        };
        match found {
            Ok(None) if late => self.answer(Ok(None)),
            // Hooked again.
            Ok(None) => {}
            Ok(Some(t)) => {
                let me = self.clone();
                t.finish_then(&qm, move |r| me.answer(r.map(Some)));
            }
            Err(e) => self.answer(Err(e)),
        }
    }

    /// The deadline passed: answer "no message" unless a wake is already running.
    fn expire(self: Arc<Self>) {
        if self.done.load(Ordering::Acquire) {
            return;
        }
        let unhooked = self
            .qm
            .upgrade()
            .is_some_and(|qm| qm.unhook(&self.queue, &self.opts, self.id));
        if unhooked {
            self.answer(Ok(None));
        } else {
            // Between a wake and its new attempt (or its message's removal being logged):
            // look again shortly (the attempt sees the deadline and does not hook again).
            timers().add(Instant::now() + Duration::from_millis(1), &self);
        }
    }

    /// The connection ended: take the wait off its queue, or let a running wake finish.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        while !self.done.load(Ordering::Acquire) {
            let unhooked = self
                .qm
                .upgrade()
                .is_none_or(|qm| qm.unhook(&self.queue, &self.opts, self.id));
            if unhooked {
                if !self.done.swap(true, Ordering::AcqRel) {
                    timers().remove(self.deadline, self.id);
                    self.conn.finish(false);
                }
                return;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Write the get's answer (once) and let the connection go on.
    fn answer(&self, r: Result<Option<Message>>) {
        if self.done.swap(true, Ordering::AcqRel) {
            return;
        }
        timers().remove(self.deadline, self.id);
        let mut buf = std::mem::take(&mut *self.owed.lock());
        let failed = r.is_err();
        let tail = match r {
            Ok(None) => {
                super::push_frame(&mut buf, self.frame, STATUS_OK, &[0], 0);
                Bytes::new()
            }
            Ok(Some(m)) => {
                let mut head = Vec::with_capacity(256);
                let body = super::encode_found(m, None, &mut head);
                super::push_frame(&mut buf, self.frame, STATUS_OK, &head, body.len());
                body
            }
            Err(e) => {
                let p = super::error_payload(&e);
                super::push_frame(&mut buf, self.frame, STATUS_ERR, &p, 0);
                Bytes::new()
            }
        };
        self.conn.send(buf, tail, failed);
    }
}

impl Waiter for GetWait {
    fn wake(self: Arc<Self>) {
        self.attempt();
    }

    fn deliver(self: Arc<Self>, msg: Message) {
        self.answer(Ok(Some(msg)));
    }
}

/// The rest of an answer the socket did not take at once.
type Job = Box<dyn FnOnce() + Send>;

/// Threads that finish writing answers to sockets that did not take them at once (a large
/// message, a client that stops reading), so that the thread that had the answer (the log
/// writer, a putter) goes on. A job wakes an idle one; there are as many as jobs wait.
struct Deliverers {
    state: Mutex<(VecDeque<Job>, usize)>,
    cv: Condvar,
}

/// How long a delivery thread stays without work.
const DELIVERER_IDLE: Duration = Duration::from_secs(10);

fn deliver(job: Job) {
    static D: OnceLock<Deliverers> = OnceLock::new();
    let d = D.get_or_init(|| Deliverers {
        state: Mutex::new((VecDeque::new(), 0)),
        cv: Condvar::new(),
    });
    let mut st = d.state.lock();
    st.0.push_back(job);
    if st.0.len() <= st.1 {
        d.cv.notify_one();
        return;
    }
    drop(st);
    let spawned = std::thread::Builder::new()
        .name("qm-net-deliver".into())
        .spawn(move || deliverer(d));
    if let Err(e) = spawned {
        // Run it here rather than leave it to a thread that may never come.
        tracing::warn!("cannot start a delivery thread: {e}");
        let job = d.state.lock().0.pop_front();
        if let Some(job) = job {
            job();
        }
    }
}

fn deliverer(d: &'static Deliverers) {
    let mut st = d.state.lock();
    loop {
        if let Some(job) = st.0.pop_front() {
            drop(st);
            job();
            st = d.state.lock();
            continue;
        }
        st.1 += 1;
        let idle = d.cv.wait_for(&mut st, DELIVERER_IDLE).timed_out();
        st.1 -= 1;
        if idle && st.0.is_empty() {
            return;
        }
    }
}

/// Deadlines of waiting gets, served by one thread.
struct Timers {
    map: Mutex<Schedule>,
    cv: Condvar,
}

struct Schedule {
    due: BTreeMap<(Instant, u64), Arc<GetWait>>,
    /// When the timer thread will next look (None: it sleeps until told).
    next: Option<Instant>,
}

fn timers() -> &'static Timers {
    static T: OnceLock<Timers> = OnceLock::new();
    T.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("qm-net-timer".into())
            .spawn(|| timers().run());
        if let Err(e) = spawned {
            tracing::error!("cannot start the wait timer thread: {e}");
        }
        Timers {
            map: Mutex::new(Schedule {
                due: BTreeMap::new(),
                next: None,
            }),
            cv: Condvar::new(),
        }
    })
}

impl Timers {
    fn add(&self, at: Instant, w: &Arc<GetWait>) {
        let mut s = self.map.lock();
        s.due.insert((at, w.id), w.clone());
        // Only an earlier deadline than the one the thread sleeps towards needs a wake-up,
        // so a steady stream of waits does not wake it once per get.
        if s.next.is_none_or(|n| at < n) {
            s.next = Some(at);
            self.cv.notify_one();
        }
    }

    fn remove(&self, at: Instant, id: u64) {
        self.map.lock().due.remove(&(at, id));
    }

    fn run(&self) {
        let mut s = self.map.lock();
        loop {
            let now = Instant::now();
            let mut expired = Vec::new();
            while let Some(e) = s.due.first_entry() {
                if e.key().0 > now {
                    break;
                }
                expired.push(e.remove());
            }
            s.next = s.due.keys().next().map(|k| k.0);
            if !expired.is_empty() {
                drop(s);
                for w in expired {
                    w.expire();
                }
                s = self.map.lock();
                continue;
            }
            match s.next {
                Some(at) => {
                    self.cv.wait_until(&mut s, at);
                }
                None => self.cv.wait(&mut s),
            }
        }
    }
}
