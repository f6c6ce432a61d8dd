//! Reserving a connection's streams for one flow thread (the product's stream modification
//! options): while a thread holds a connection's input stream, no other thread and no input
//! node reads it; while it holds the output stream, no other thread writes it. The holder is
//! the flow thread itself, as in the product, so a reservation kept after an invocation
//! (`reserve`) is used by that flow instance's later invocations until one of them releases it
//! or the connection closes; `reserve_and_release_at_end` ends with the invocation's unit of
//! work.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use sluice_node_api::{Resource, ResourceError, UnitOfWork, property_enum};

use crate::TcpipError;
use crate::connection::Connection;

/// One of a connection's two streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Input = 0,
    Output = 1,
}

impl Stream {
    pub fn name(self) -> &'static str {
        match self {
            Stream::Input => "input",
            Stream::Output => "output",
        }
    }
}

property_enum! {
    /// What a node does to the reservation of a stream it uses.
    pub enum StreamModification {
        /// Use the stream; while another flow thread holds it, wait for it (up to the node's
        /// timeout).
        None = "none",
        /// Reserve the stream for this flow thread, beyond this invocation: until a node of
        /// the same flow instance releases it, or the connection closes.
        Reserve = "reserve",
        /// Reserve the stream for the rest of this invocation.
        ReserveAndReleaseAtEnd = "reserve_and_release_at_end",
        /// Use the stream, then release this thread's reservation of it.
        Release = "release",
    }
}

/// Which flow thread holds each stream of a connection.
#[derive(Default)]
pub(crate) struct Holders {
    held: Mutex<[Option<ThreadId>; 2]>,
    changed: Condvar,
    /// Whether any stream is held, so that the common case (none ever is) takes no lock.
    any: AtomicBool,
}

fn me() -> ThreadId {
    std::thread::current().id()
}

impl Holders {
    fn lock(&self) -> std::sync::MutexGuard<'_, [Option<ThreadId>; 2]> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn none_held(&self) -> bool {
        !self.any.load(Ordering::Acquire)
    }

    /// Whether a thread other than this one holds `s`.
    pub fn held_by_other(&self, s: Stream) -> bool {
        !self.none_held() && self.lock()[s as usize].is_some_and(|t| t != me())
    }

    /// Whether this thread holds `s`.
    pub fn held_by_me(&self, s: Stream) -> bool {
        !self.none_held() && self.lock()[s as usize] == Some(me())
    }

    /// Whether any thread holds the input stream.
    pub fn input_held(&self) -> bool {
        !self.none_held() && self.lock()[Stream::Input as usize].is_some()
    }

    /// Wait until no other thread holds `s` (at most `wait`, or until `gone` says the
    /// connection closed); then take it for this thread when `take`.
    fn wait(
        &self,
        s: Stream,
        take: bool,
        wait: Duration,
        gone: impl Fn() -> bool,
    ) -> Result<bool, ()> {
        if !take && self.none_held() {
            return Ok(false);
        }
        let deadline = Instant::now() + wait;
        let mut held = self.lock();
        loop {
            match held[s as usize] {
                Some(t) if t != me() && !gone() => {}
                before => {
                    if take && before.is_none() {
                        held[s as usize] = Some(me());
                        self.any.store(true, Ordering::Release);
                        return Ok(true);
                    }
                    return Ok(false);
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(());
            }
            // Closing a connection does not notify: look again now and then.
            let slice = left.min(Duration::from_millis(100));
            held = self
                .changed
                .wait_timeout(held, slice)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// Let `s` go if this thread holds it. Whether it did.
    fn release(&self, s: Stream) -> bool {
        self.release_by(me(), s)
    }

    /// Let `s` go if thread `who` holds it. Whether it did.
    fn release_by(&self, who: ThreadId, s: Stream) -> bool {
        let mut held = self.lock();
        if held[s as usize] != Some(who) {
            return false;
        }
        held[s as usize] = None;
        if held.iter().all(Option::is_none) {
            self.any.store(false, Ordering::Release);
        }
        drop(held);
        self.changed.notify_all();
        true
    }
}

impl Connection {
    /// Get ready to use stream `s` as `m` says: wait while another flow thread holds it, and
    /// reserve it for this thread when asked (the end-of-invocation release joins `uow`).
    pub fn claim(
        self: &Arc<Self>,
        s: Stream,
        m: StreamModification,
        wait: Duration,
        uow: &mut UnitOfWork,
    ) -> Result<(), TcpipError> {
        let take = matches!(
            m,
            StreamModification::Reserve | StreamModification::ReserveAndReleaseAtEnd
        );
        let taken = self
            .holders
            .wait(s, take, wait, || self.is_closed())
            .map_err(|()| TcpipError::StreamReserved {
                id: self.id.clone(),
                stream: s.name(),
                secs: wait.as_secs(),
            })?;
        if taken {
            self.refresh_reserved();
            remember(self, s);
        }
        if m == StreamModification::ReserveAndReleaseAtEnd {
            uow.get_or_join(&format!("tcpip-{}-{}", s.name(), self.id), || {
                Ok::<_, TcpipError>(ReleaseAtEnd {
                    conn: Arc::clone(self),
                    stream: s,
                })
            })?;
        }
        Ok(())
    }

    /// After using stream `s`: release it when `m` says so.
    pub fn after_use(&self, s: Stream, m: StreamModification) {
        if m == StreamModification::Release {
            self.release_stream(s);
        }
    }

    /// Whether a flow thread other than this one reserved one of its streams.
    pub fn reserved_by_other(&self) -> bool {
        self.holders.held_by_other(Stream::Input) || self.holders.held_by_other(Stream::Output)
    }

    /// Let this thread's reservation of `s` go.
    pub fn release_stream(&self, s: Stream) {
        if self.holders.release(s) {
            self.refresh_reserved();
            forget(self, s);
        }
    }
}

/// The streams a thread reserved, let go when the thread ends (its flow stopped or was
/// redeployed): a reservation of a thread that no longer runs would hold its stream for ever.
struct Reservations {
    /// The thread's id, kept because `std::thread::current` is gone while thread-locals drop.
    thread: ThreadId,
    held: Vec<(Weak<Connection>, Stream)>,
}

impl Drop for Reservations {
    fn drop(&mut self) {
        for (c, s) in self.held.drain(..) {
            if let Some(c) = c.upgrade()
                && c.holders.release_by(self.thread, s)
            {
                c.refresh_reserved();
            }
        }
    }
}

thread_local! {
    static RESERVED: RefCell<Reservations> = RefCell::new(Reservations {
        thread: me(),
        held: Vec::new(),
    });
}

fn remember(c: &Arc<Connection>, s: Stream) {
    let _ = RESERVED.try_with(|r| r.borrow_mut().held.push((Arc::downgrade(c), s)));
}

fn forget(c: &Connection, s: Stream) {
    let _ = RESERVED.try_with(|r| {
        r.borrow_mut()
            .held
            .retain(|(w, t)| !(*t == s && std::ptr::eq(w.as_ptr(), c)) && w.strong_count() > 0)
    });
}

/// A reservation that ends with the invocation.
struct ReleaseAtEnd {
    conn: Arc<Connection>,
    stream: Stream,
}

impl Resource for ReleaseAtEnd {
    fn commit(&mut self) -> Result<(), ResourceError> {
        self.conn.release_stream(self.stream);
        Ok(())
    }

    fn rollback(&mut self) {
        self.conn.release_stream(self.stream);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_thread_waits_for_a_stream_until_its_holder_releases_it() {
        let h = Arc::new(Holders::default());
        assert_eq!(
            h.wait(Stream::Output, true, Duration::ZERO, || false),
            Ok(true)
        );
        assert!(h.held_by_me(Stream::Output));
        assert!(!h.held_by_other(Stream::Input));
        let other = Arc::clone(&h);
        let waited = std::thread::spawn(move || {
            let early = other.wait(Stream::Output, true, Duration::from_millis(50), || false);
            let late = other.wait(Stream::Output, true, Duration::from_secs(5), || false);
            (early, late)
        });
        std::thread::sleep(Duration::from_millis(200));
        assert!(h.release(Stream::Output));
        let (early, late) = waited.join().unwrap();
        assert_eq!(early, Err(()));
        assert_eq!(late, Ok(true));
        assert!(h.held_by_other(Stream::Output));
        assert!(!h.release(Stream::Output), "only the holder releases");
    }

    #[test]
    fn a_reservation_ends_with_the_thread_that_made_it() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let set = Arc::new(crate::connection::ConnectionSet::default());
        let (conn, _client) = rt.block_on(async {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = l.local_addr().unwrap();
            let client = tokio::net::TcpStream::connect(addr).await.unwrap();
            let (s, _) = l.accept().await.unwrap();
            let c = Connection::open(s, "TCPIPServer", "127.0.0.1".into(), addr.port(), &set);
            (c.unwrap(), client)
        });
        let (held, go) = (
            std::sync::mpsc::channel::<()>(),
            std::sync::mpsc::channel::<()>(),
        );
        let c = Arc::clone(&conn);
        let flow = std::thread::spawn(move || {
            let mut uow = UnitOfWork::default();
            let m = StreamModification::Reserve;
            c.claim(Stream::Output, m, Duration::ZERO, &mut uow)
                .unwrap();
            c.claim(Stream::Input, m, Duration::ZERO, &mut uow).unwrap();
            held.0.send(()).unwrap();
            go.1.recv().unwrap();
        });
        held.1.recv().unwrap();
        assert!(conn.holders.held_by_other(Stream::Output));
        assert!(
            conn.is_reserved(),
            "a held input stream stops the input node"
        );
        go.0.send(()).unwrap();
        flow.join().unwrap();
        assert!(!conn.holders.held_by_other(Stream::Output));
        assert!(!conn.holders.held_by_other(Stream::Input));
        assert!(!conn.is_reserved());
    }

    #[test]
    fn a_stream_of_a_closed_connection_is_not_waited_for() {
        let h = Arc::new(Holders::default());
        h.wait(Stream::Input, true, Duration::ZERO, || false)
            .unwrap();
        let other = Arc::clone(&h);
        let r = std::thread::spawn(move || {
            other.wait(Stream::Input, false, Duration::from_secs(5), || true)
        })
        .join()
        .unwrap();
        assert_eq!(r, Ok(false));
    }
}
