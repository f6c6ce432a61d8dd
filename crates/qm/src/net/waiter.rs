//! Gets that wait without a thread. A connection whose get finds nothing leaves a
//! [`GetWait`] hooked on the queue and goes back to reading its socket; the thread whose put
//! makes a matching message available runs the get and writes the answer to the waiting
//! connection's socket itself. A request/reply round trip then wakes no thread besides the
//! ones reading sockets, instead of also waking one parked per waiting get. A persistent
//! message is the exception: its removal must be synced before the answer, and that is left
//! to a delivery thread so the putter does not wait for a second sync. One timer thread per
//! process answers the waits that run out.
//!
//! The answer is a blocking write from the thread that completes the wait; a client that
//! stops reading while its get waits can hold that thread until its socket buffer drains
//! (as a thread-per-connection server's own write would).

use std::collections::{BTreeMap, VecDeque};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::{Out, STATUS_ERR, STATUS_OK};
use crate::codec;
use crate::error::{QmError, Result};
use crate::manager::QueueManager;
use crate::model::{GetOptions, Message};
use crate::queue::Waiter;

/// The write side of a plain TCP connection, shared with its waits.
pub(crate) struct Shared {
    sock: TcpStream,
    state: Mutex<State>,
    done: Condvar,
}

struct State {
    /// A get is waiting: the connection writes nothing until its answer is out.
    waiting: bool,
    /// The answered get failed (for the next request's `F_AFTER_OK`).
    failed: bool,
}

impl Shared {
    pub fn new(sock: TcpStream) -> Arc<Shared> {
        Arc::new(Shared {
            sock,
            state: Mutex::new(State {
                waiting: false,
                failed: false,
            }),
            done: Condvar::new(),
        })
    }

    /// Close the socket both ways (the connection is over).
    pub fn shutdown(&self) {
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
    }

    /// Block until no get is waiting, checking every `slice` with `gone` whether the peer
    /// left; returns whether the answered get failed, or `None` when the peer left first.
    pub fn settle(&self, slice: Duration, gone: impl Fn() -> bool) -> Option<bool> {
        let mut st = self.state.lock();
        while st.waiting {
            if self.done.wait_for(&mut st, slice).timed_out() && gone() {
                return None;
            }
        }
        Some(st.failed)
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
    /// by whichever thread completes it (possibly this one, before this returns).
    pub fn start(
        qm: &Arc<QueueManager>,
        conn: &Arc<Shared>,
        owed: Vec<u8>,
        frame: u32,
        queue: String,
        opts: GetOptions,
        wait: Duration,
    ) -> Arc<GetWait> {
        conn.state.lock().waiting = true;
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
        timers().add(w.deadline, &w);
        w.clone().attempt(true);
        w
    }

    /// Try the get; hook on the queue again when it still waits. `own` is true on the
    /// connection's own thread, false on a thread whose put woke the wait.
    fn attempt(self: Arc<Self>, own: bool) {
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
                self.settle(false);
            }
            qm.pass_wake(&self.queue, &self.opts);
            return;
        }
        if Instant::now() >= self.deadline {
            let r = qm.get(&self.queue, &self.opts);
            return self.answer(r);
        }
        let hook = (self.id, self.clone() as Arc<dyn Waiter>);
        match qm.take_or_hook(&self.queue, &self.opts, hook) {
            Ok(None) => {}
            Ok(Some(t)) if t.persistent() && !own => {
                // Logging the removal waits for the disk: not on the thread of the put that
                // woke this wait, whose own connection would wait one sync more for it.
                let me = self.clone();
                deliver(Box::new(move || me.answer(t.finish(&qm).map(Some))));
            }
            Ok(Some(t)) => {
                let r = t.finish(&qm).map(Some);
                self.answer(r);
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
            // Between a wake and its new attempt: look again shortly (the attempt sees the
            // deadline and does not hook again).
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
                    self.settle(false);
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
        let mut out = Out {
            buf: std::mem::take(&mut *self.owed.lock()),
        };
        let mut head = Vec::with_capacity(256);
        let mut s = &self.conn.sock;
        let failed = r.is_err();
        let written = match r {
            Ok(None) => {
                head.push(0);
                out.frame(&mut s, self.frame, STATUS_OK, &head, &[])
            }
            Ok(Some(m)) => {
                head.push(1);
                head.push(0);
                head.extend_from_slice(&0u64.to_le_bytes());
                codec::encode_head(&m, &mut head);
                out.frame(&mut s, self.frame, STATUS_OK, &head, &m.body)
            }
            Err(e) => out.frame(
                &mut s,
                self.frame,
                STATUS_ERR,
                &super::error_payload(&e),
                &[],
            ),
        };
        if let Err(e) = written.and_then(|()| out.flush(&mut s)) {
            tracing::debug!("answer to a waiting get not delivered: {e}");
            let _ = self.conn.sock.shutdown(std::net::Shutdown::Both);
        }
        self.settle(failed);
    }

    fn settle(&self, failed: bool) {
        let mut st = self.conn.state.lock();
        st.waiting = false;
        st.failed = failed;
        self.conn.done.notify_all();
    }
}

impl Waiter for GetWait {
    fn wake(self: Arc<Self>) {
        self.attempt(false);
    }
}

/// A persistent message's delivery: log its removal, then answer.
type Job = Box<dyn FnOnce() + Send>;

/// Threads that finish deliveries needing the disk, so that the putting thread does not
/// wait for the sync. A delivery wakes an idle one (as a parked getter used to be woken);
/// there are as many as deliveries wait at once, so their syncs are grouped.
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
