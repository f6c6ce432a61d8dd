//! A coordinated (two-phase) commit of an invocation's unit of work, the queue manager
//! coordinating: the protocol and its invariants are in `sluice_qm`'s `indoubt` module and in
//! docs/databases.md. In short: every database prepares; resources that cannot (SQLite)
//! commit in one phase; the decision is recorded under the queue manager's unit of work, whose
//! commit makes the queue work and the decision durable in one log record; then every
//! prepared transaction is committed and the decision forgotten.
//!
//! `SLUICE_TEST_CRASH_AT` is a test hook, read by tests that kill the server: `POINT` or
//! `POINT:N` aborts the process the N-th time (1 by default) a commit reaches `POINT` —
//! `after_prepare` (everything prepared, no decision), `after_decision` (decision and queue
//! work on disk, nothing committed prepared), `after_commit_prepared` (everything committed,
//! the decision not forgotten).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use sluice_node_api::{ResourceError, UnitOfWork};
use sluice_qm::QueueManager;

/// How a coordinated commit ended well.
pub(crate) enum Committed {
    /// Everything committed, the queue work with the decision.
    Decided,
    /// No resource prepared anything (they had nothing to do, or committed in one phase):
    /// the queue work, given back, commits on its own.
    Undecided(Option<sluice_qm::UnitOfWork>),
}

/// How a coordinated commit failed; everything but the queue work given back is rolled back.
pub(crate) enum Failed {
    /// Before the decision: the queue work is given back, for the caller to back out.
    Undecided {
        queue_work: Option<sluice_qm::UnitOfWork>,
        error: ResourceError,
    },
    /// The queue manager's commit with the decision failed: it rolled the queue work back.
    Decision(sluice_qm::QmError),
}

/// Commit `rest` and `queue_work` (the queue manager's unit of work, when there is one) as one
/// coordinated transaction.
pub(crate) fn commit(
    qm: &Arc<QueueManager>,
    queue_work: Option<sluice_qm::UnitOfWork>,
    rest: &mut UnitOfWork,
    flow: &str,
) -> Result<Committed, Failed> {
    let prepared = match rest.prepare(|| qm.next_xid()) {
        Ok(p) => p,
        Err(error) => return Err(Failed::Undecided { queue_work, error }),
    };
    if prepared.is_empty() {
        return Ok(Committed::Undecided(queue_work));
    }
    crash_point("after_prepare");
    let xids = prepared.xids();
    let mut u = queue_work.unwrap_or_else(|| qm.begin());
    let id = match u.record_decision(&xids) {
        Ok(id) => id,
        Err(e) => {
            prepared.rollback();
            return Err(Failed::Undecided {
                queue_work: Some(u),
                error: ResourceError::new("the queue manager", e),
            });
        }
    };
    if let Err(e) = u.commit() {
        prepared.rollback();
        return Err(Failed::Decision(e));
    }
    crash_point("after_decision");
    let failed = prepared.commit();
    if !failed.is_empty() {
        for error in failed {
            // Its decision is kept: the next start commits what is still prepared.
            tracing::error!(%error, flow, ?xids, "A prepared transaction did not commit; it is committed at the next start.");
        }
        return Ok(Committed::Decided);
    }
    crash_point("after_commit_prepared");
    if let Err(error) = qm.forget_decision(id) {
        tracing::warn!(%error, flow, "Cannot forget a settled commit decision; the next start drops it.");
    }
    Ok(Committed::Decided)
}

/// Abort the process here when the test hook `SLUICE_TEST_CRASH_AT` names this point (see the
/// module doc).
fn crash_point(point: &str) {
    static HOOK: OnceLock<Option<(String, u32)>> = OnceLock::new();
    static REACHED: AtomicU32 = AtomicU32::new(0);
    let hook = HOOK.get_or_init(|| {
        let v = std::env::var("SLUICE_TEST_CRASH_AT").ok()?;
        Some(match v.split_once(':') {
            Some((p, n)) => (p.to_string(), n.parse().unwrap_or(1)),
            None => (v, 1),
        })
    });
    if let Some((at, nth)) = hook
        && at == point
        && REACHED.fetch_add(1, Ordering::SeqCst) + 1 >= *nth
    {
        eprintln!("SLUICE_TEST_CRASH_AT: aborting {point}");
        std::process::abort();
    }
}
