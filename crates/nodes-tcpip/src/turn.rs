//! A plain server connection read by the flow instances themselves: after a record, the
//! instance that handled it reads on without blocking, and when the socket has nothing, it
//! parks the connection on the socket's readiness instead of waking the connection's task.
//! The wake of that readiness (on the runtime's I/O driver) hands the connection straight to
//! the input node's channel. The connection's task keeps the turn's `done` signal waiting all
//! along, and takes over when the turn hands it back: to read with its timeouts, or to close.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Wake, Waker};

use bytes::Bytes;
use tokio::sync::oneshot;

use crate::TcpipError;
use crate::connection::{Connection, Delivery, Event, Handback};
use crate::framing::Framing;

/// The buffer grows by this much when it runs short, so that one read takes what a client sent
/// back to back (several records at once).
const READ_CHUNK: usize = 64 * 1024;

/// What a flow instance found when it looked for a connection's next record without waiting.
pub enum TryNext {
    /// A record, with its sequence number on the connection.
    Record(Bytes, u64),
    /// Nothing pending and the socket has nothing: park the connection.
    Idle,
    /// Part of a record is pending (its time limit runs), or a receive node is reading the
    /// connection: the connection's task reads the rest.
    Wait,
    /// The peer closed between records, or the input stream was closed.
    Ended,
    /// A record cannot be read.
    Failed(TcpipError),
}

/// Where a parked connection goes when its socket becomes readable.
pub struct Turn {
    pub tx: crossbeam_channel::Sender<Delivery>,
    pub done: oneshot::Sender<Handback>,
}

/// A connection waiting for its socket, with the readiness future whose wake resumes it.
pub struct Parked {
    turn: Turn,
    /// Kept alive so that its waker stays registered with the I/O driver.
    _readable: Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>>,
}

/// Wakes a parked connection: hands it to the input node's flow instances.
struct ParkWaker {
    conn: Weak<Connection>,
}

impl Wake for ParkWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let Some(conn) = self.conn.upgrade() else {
            return;
        };
        let parked = conn.parked.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(p) = parked {
            // A send that fails (the flow stopped) drops `done`: the task reads on.
            let _ = p.turn.tx.send(Delivery {
                conn,
                event: Event::Resume,
                done: p.turn.done,
            });
        }
    }
}

impl Connection {
    /// Whether flow instances read this connection themselves (a plain server connection).
    pub fn read_by_flows(&self) -> bool {
        self.tcp.is_some()
    }

    /// The next record without waiting: cut from the bytes already read, else after one
    /// non-blocking read of whatever the socket holds.
    pub fn try_next_record(&self, framing: &Framing) -> TryNext {
        let Some(tcp) = &self.tcp else {
            return TryNext::Wait;
        };
        if self.input_closed.load(Ordering::Acquire) {
            return TryNext::Ended;
        }
        if self.is_reserved() {
            // A flow holds the input: the task waits for it to let go.
            return TryNext::Wait;
        }
        let Ok(mut guard) = self.input.try_lock() else {
            return TryNext::Wait;
        };
        let s = &mut *guard;
        loop {
            match framing.next_record(&mut s.buf, s.eof) {
                Ok(Some(rec)) => {
                    s.seq += 1;
                    return TryNext::Record(rec, s.seq);
                }
                Ok(None) if s.eof => return TryNext::Ended,
                Ok(None) => {}
                Err(e) => return TryNext::Failed(e),
            }
            if s.buf.capacity() - s.buf.len() < 4096 {
                s.buf.reserve(READ_CHUNK);
            }
            match tcp.try_read_buf(&mut s.buf) {
                Ok(0) => s.eof = true,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    return if s.buf.is_empty() {
                        TryNext::Idle
                    } else {
                        TryNext::Wait
                    };
                }
                Err(source) => {
                    return TryNext::Failed(TcpipError::Io {
                        id: self.id.clone(),
                        source,
                    });
                }
            }
        }
    }

    /// Park the connection until its socket is readable, when `turn` is sent to its input
    /// node. `Err(turn)`: it is readable already (or not a plain connection), read on.
    pub fn park(self: &Arc<Self>, turn: Turn) -> Result<(), Turn> {
        let Some(tcp) = &self.tcp else {
            return Err(turn);
        };
        let tcp = Arc::clone(tcp);
        let mut readable: Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>> =
            Box::pin(async move { tcp.readable().await });
        let waker = Waker::from(Arc::new(ParkWaker {
            conn: Arc::downgrade(self),
        }));
        // The slot is locked before the future is first polled, so that a wake racing with
        // parking finds the turn stored.
        let mut slot = self.parked.lock().unwrap_or_else(|p| p.into_inner());
        if self.input_closed.load(Ordering::Acquire) {
            return Err(turn);
        }
        match readable.as_mut().poll(&mut Context::from_waker(&waker)) {
            Poll::Pending => {
                *slot = Some(Parked {
                    turn,
                    _readable: readable,
                });
                Ok(())
            }
            Poll::Ready(Ok(())) => Err(turn),
            Poll::Ready(Err(_)) => {
                // The socket cannot wait (the runtime is shutting down): the task reads it
                // and meets the error there.
                let _ = turn.done.send(Handback::Read);
                Ok(())
            }
        }
    }
}
