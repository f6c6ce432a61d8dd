//! Persistent work outside syncpoint, finished by the log writer. Without TLS the thread
//! running a connection's requests does not wait for the disk: it hands the log the record of a persistent
//! put (or of the removal of a persistent message got) together with the answer to write
//! once the record is synced, and goes back to reading its socket. The log writer, right
//! after the sync, makes the put visible, writes the answer and lets the connection go on
//! (see `waiter::Shared`): no thread parks on the group commit and none is woken for it.
//!
//! A get pipelined right behind such a put (`Client::put_then_get`, `Client::request`; it
//! carries `F_AFTER_OK`) is run by the same thread before the put is committed, and the
//! removal of the message it takes goes into the put's record: one record and one sync for
//! both (the implicit syncpoint of MQ spanning the two calls), answered together. The
//! outcome is the one the two requests in turn would have had: the put's answer comes first,
//! a put that fails skips the get (its message goes back), and a crash before the sync
//! undoes both, neither having been answered. Only a get from another queue is run ahead so:
//! one from the put's own queue might have to see the message being put.
//!
//! A persistent put for which a get already waits (hooked on the queue, see `waiter`: a
//! requester waiting for its reply) gives the message to that get directly: the removal
//! goes into the put's record, and the log writer answers both after that one sync, where
//! making the message visible first would cost the getter a second record and sync.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::waiter::{GetWait, Shared};
use super::{STATUS_ERR, STATUS_OK};
use crate::error::{QmError, Result};
use crate::manager::QueueManager;
use crate::model::{GetOptions, Message};
use crate::ops::{Staged, Taken};
use crate::queue::Hook;
use crate::wal::{Completion, Op};

/// What the get pipelined behind a persistent put found, run ahead of the put's commit.
pub(crate) enum GetPart {
    /// A message, taken off its queue; its removal (when persistent) is in the put's record.
    Taken(Box<Taken>),
    /// Nothing matched and the get does not wait.
    NoMessage,
    /// Nothing matched: the get waits, from when the put is committed.
    Wait {
        /// Queue to wait on.
        queue: String,
        /// The get's options, without the wait.
        opts: GetOptions,
        /// How long.
        wait: Duration,
    },
    /// The get failed by itself (unknown queue, get inhibited, …).
    Failed(QmError),
}

/// The get pipelined behind a persistent put: its request id and what it found.
pub(crate) struct PipelinedGet {
    pub frame: u32,
    pub part: GetPart,
}

/// Commit the staged persistent put `staged` (request `frame`) and, in the same record, the
/// removal of what `get` took; the log writer then makes the put visible and writes `owed`,
/// the put's answer and the get's (or starts the get's wait) to `conn`.
pub(crate) fn put_then(
    qm: &Arc<QueueManager>,
    conn: &Arc<Shared>,
    owed: Vec<u8>,
    frame: u32,
    staged: Staged,
    get: Option<PipelinedGet>,
) {
    let mut ops = vec![staged.log_op()];
    // A get already waiting for this message gets it straight from the put: its removal
    // goes into the put's record, so the getter is answered after this one sync instead
    // of after a second one for the removal.
    let claimed = staged.queue.claim_waiter(&staged.slot.msg.md.correl_id);
    if claimed.is_some() {
        ops.push(Op::Remove { seq: staged.key.1 });
    }
    if let Some(PipelinedGet {
        part: GetPart::Taken(t),
        ..
    }) = &get
        && let Some(op) = t.log_op(qm)
    {
        ops.push(op);
    }
    conn.hand_off();
    let (qm2, conn2) = (qm.clone(), conn.clone());
    let done: Completion = Box::new(move |r: Result<()>| {
        let put = PutDone {
            frame,
            staged,
            claimed,
        };
        put_done(&qm2, &conn2, owed, put, get, r)
    });
    match &qm.wal {
        Some(w) => w.commit_then(ops, done),
        // Without a log nothing is persistent: the put is complete as it is.
        None => done(Ok(())),
    }
}

/// A persistent put being logged: its request id, the message and the waiting get that
/// takes it directly, if any.
struct PutDone {
    frame: u32,
    staged: Staged,
    claimed: Option<Hook>,
}

fn put_done(
    qm: &Arc<QueueManager>,
    conn: &Arc<Shared>,
    mut buf: Vec<u8>,
    put: PutDone,
    get: Option<PipelinedGet>,
    r: Result<()>,
) {
    let PutDone {
        frame,
        staged,
        claimed,
    } = put;
    if let Err(e) = r {
        staged.queue.unreserve();
        if let Some((_, w)) = claimed {
            // Back to waiting (or to whatever else is on the queue by now).
            w.wake();
        }
        super::push_frame(&mut buf, frame, STATUS_ERR, &super::error_payload(&e), 0);
        if let Some(g) = get {
            if let GetPart::Taken(t) = g.part {
                (*t).restore();
            }
            let skipped = QmError::backed_out("get skipped: the request before it failed");
            super::push_frame(
                &mut buf,
                g.frame,
                STATUS_ERR,
                &super::error_payload(&skipped),
                0,
            );
        }
        return conn.send(buf, Bytes::new(), true);
    }
    let id = staged.slot.msg.md.msg_id;
    let handed = match claimed {
        Some((_, w)) => Some((w, staged.into_delivered())),
        None => {
            // Visible before it is acknowledged, so that the putter's next request sees it.
            staged.queue.insert_reserved(staged.key, staged.slot);
            None
        }
    };
    super::push_frame(&mut buf, frame, STATUS_OK, &id, 0);
    match get.map(|g| (g.frame, g.part)) {
        None => conn.send(buf, Bytes::new(), false),
        Some((f, GetPart::Taken(t))) => answer_found(conn, buf, f, Ok((*t).into_message())),
        Some((f, GetPart::NoMessage)) => {
            super::push_frame(&mut buf, f, STATUS_OK, &[0], 0);
            conn.send(buf, Bytes::new(), false)
        }
        Some((f, GetPart::Failed(e))) => {
            super::push_frame(&mut buf, f, STATUS_ERR, &super::error_payload(&e), 0);
            conn.send(buf, Bytes::new(), true)
        }
        Some((f, GetPart::Wait { queue, opts, wait })) => {
            GetWait::start(qm, conn, buf, f, queue, opts, wait)
        }
    }
    // The waiting get that takes the message hears of it last: a requester's wait for its
    // reply, pipelined behind this put, is hooked by now, so that the reply, likely to come
    // at once, finds it waiting and goes to it directly (one record, see `claim_waiter`).
    if let Some((w, msg)) = handed {
        w.deliver(msg);
    }
}

/// Log the removal of the persistent message `taken` for get request `frame`; the log
/// writer writes `owed` and the answer once it is synced.
pub(crate) fn get_then(
    qm: &Arc<QueueManager>,
    conn: &Arc<Shared>,
    owed: Vec<u8>,
    frame: u32,
    taken: Taken,
) {
    conn.hand_off();
    let conn2 = conn.clone();
    taken.finish_then(qm, move |r| answer_found(&conn2, owed, frame, r));
}

/// Write `buf` and the answer to get request `frame` that found a message (or failed).
fn answer_found(conn: &Arc<Shared>, mut buf: Vec<u8>, frame: u32, r: Result<Message>) {
    match r {
        Ok(m) => {
            let mut head = Vec::with_capacity(256);
            let body = super::encode_found(m, None, &mut head);
            super::push_frame(&mut buf, frame, STATUS_OK, &head, body.len());
            conn.send(buf, body, false)
        }
        Err(e) => {
            super::push_frame(&mut buf, frame, STATUS_ERR, &super::error_payload(&e), 0);
            conn.send(buf, Bytes::new(), true)
        }
    }
}
