//! The queue manager as coordinator of two-phase units of work: transaction ids and the
//! durable commit decisions (the in-doubt log).
//!
//! # Protocol
//!
//! A coordinated unit of work has the queue manager's own unit of work ([`UnitOfWork`]) and
//! resource managers that can prepare (PostgreSQL's `PREPARE TRANSACTION`). It commits so:
//!
//! 1. Every resource manager prepares its transaction under an id from
//!    [`QueueManager::next_xid`]. A failure here rolls back everything, the prepared ones
//!    with `ROLLBACK PREPARED`.
//! 2. The decision — "commit", with the ids prepared — is put under the queue manager's unit
//!    of work ([`UnitOfWork::record_decision`]) as a persistent message on
//!    [`DECISION_QUEUE`], and that unit of work commits. The decision is thus part of the very
//!    log record that commits the queue work: the queue work is committed if and only if the
//!    decision is on disk (one record, all or nothing, fsynced before commit returns).
//! 3. Each resource manager commits what it prepared (`COMMIT PREPARED`).
//! 4. The decision is forgotten ([`QueueManager::forget_decision`]), without waiting for the
//!    disk: a forget lost in a crash leaves a decision whose ids are no longer prepared,
//!    which recovery simply drops.
//!
//! Recovery, before any input starts: every transaction still prepared under this queue
//! manager's prefix ([`QueueManager::xid_prefix`]) is committed when a decision names it and
//! rolled back when none does (presumed abort: without a decision the queue work did not
//! commit either); then the decisions are forgotten.
//!
//! # Invariants
//!
//! 1. A decision record exists on disk ⇔ the queue work of its unit of work committed.
//! 2. No prepared transaction is committed before its decision is on disk.
//! 3. An id is unique for the life of the data folder: the prefix is this data folder's
//!    identity (kept in `coordinator.id`), then the start time in milliseconds and a counter.
//! 4. Only transactions with this queue manager's prefix are ever resolved by it, so servers
//!    sharing one database never settle each other's.

use std::sync::atomic::Ordering;

use crate::error::{QmError, Result};
use crate::manager::QueueManager;
use crate::model::{GetOptions, Message, MsgId, Persistence, PutOptions, QueueDef};
use crate::uow::UnitOfWork;

/// The queue that holds the commit decisions not yet forgotten.
pub const DECISION_QUEUE: &str = "SYSTEM.SLUICE.INDOUBT";

/// The file in the data folder holding the queue manager's identity as a coordinator.
const IDENTITY_FILE: &str = "coordinator.id";

/// First line of a decision record's body.
const COMMIT: &str = "commit";

/// A recorded decision: the transactions it commits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The record's MsgId, to forget it by.
    pub id: MsgId,
    /// The transaction ids the decision commits.
    pub xids: Vec<String>,
}

impl QueueManager {
    /// The prefix of every transaction id this queue manager hands out: `sluice.` and its
    /// data folder's identity, then `.`. Stable across restarts of the same data folder.
    pub fn xid_prefix(&self) -> Result<&str> {
        if let Some(p) = self.xid_prefix.get() {
            return Ok(p);
        }
        // Instances asking at once must not both make (and write) an identity.
        let _g = self.admin.lock();
        if let Some(p) = self.xid_prefix.get() {
            return Ok(p);
        }
        let ident = self.identity()?;
        Ok(self.xid_prefix.get_or_init(|| format!("sluice.{ident}.")))
    }

    /// The identity kept in the data folder, made on first use; a fresh one in memory.
    fn identity(&self) -> Result<String> {
        let Some(dir) = self.dir() else {
            return Ok(fresh_identity());
        };
        let path = dir.join(IDENTITY_FILE);
        let fs = &*self.cfg.fs;
        if fs.exists(&path) {
            let data = fs
                .read(&path)
                .map_err(|e| QmError::io(path.display().to_string(), e))?;
            let text = String::from_utf8_lossy(&data).trim().to_string();
            if !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric()) {
                return Ok(text);
            }
            return Err(QmError::Corrupt {
                path: path.display().to_string(),
                detail: "the coordinator identity is not a word of letters and digits".into(),
                source: None,
            });
        }
        let ident = fresh_identity();
        crate::fs::write_atomic(fs, &path, ident.as_bytes())
            .map_err(|e| QmError::io(path.display().to_string(), e))?;
        Ok(ident)
    }

    /// Whether this data folder ever coordinated a transaction (its identity was made): when
    /// not, no transaction can be in doubt and recovery has nothing to look for.
    pub fn coordinated_before(&self) -> bool {
        self.xid_prefix.get().is_some()
            || self
                .dir()
                .is_some_and(|d| self.cfg.fs.exists(&d.join(IDENTITY_FILE)))
    }

    /// A transaction id unique for the life of the data folder (see the module's invariants).
    pub fn next_xid(&self) -> Result<String> {
        let prefix = self.xid_prefix()?;
        let n = self.xid_seq.fetch_add(1, Ordering::Relaxed);
        Ok(format!("{prefix}{:x}.{n:x}", self.started_ms))
    }

    /// The decisions on record, oldest first.
    pub fn decisions(&self) -> Result<Vec<Decision>> {
        if self.queue_def(DECISION_QUEUE).is_err() {
            return Ok(Vec::new());
        }
        let mut cursor = crate::model::BrowseCursor::new();
        let mut out = Vec::new();
        while let Some(m) = self.browse(DECISION_QUEUE, &GetOptions::new(), &mut cursor)? {
            let text = String::from_utf8_lossy(&m.body);
            let mut lines = text.lines();
            if lines.next() != Some(COMMIT) {
                tracing::warn!(msg_id = ?m.md.msg_id, "A message on {DECISION_QUEUE} is not a decision record; ignored.");
                continue;
            }
            out.push(Decision {
                id: m.md.msg_id,
                xids: lines.map(str::to_string).collect(),
            });
        }
        Ok(out)
    }

    /// Forget a decision once every transaction it names is committed. Not waited for on
    /// disk: a forget lost in a crash leaves a decision naming nothing prepared, which
    /// recovery drops.
    pub fn forget_decision(&self, id: MsgId) -> Result<()> {
        let q = self.resolve(DECISION_QUEUE, false)?;
        if let Some((key, slot, _hold)) = self.take(&q, &GetOptions::new().msg_id(id))?
            && slot.persistent
            && let Some(w) = &self.wal
        {
            w.submit(vec![crate::wal::Op::Remove { seq: key.1 }]);
        }
        Ok(())
    }

    fn ensure_decision_queue(&self) -> Result<()> {
        if self.queue_def(DECISION_QUEUE).is_ok() {
            return Ok(());
        }
        let def = QueueDef {
            max_depth: 999_999_999,
            ..QueueDef::local(DECISION_QUEUE)
        };
        match self.define(def) {
            Err(QmError::QueueExists(_)) => Ok(()),
            r => r,
        }
    }
}

impl UnitOfWork {
    /// Record, under this unit of work, the decision to commit the transactions `xids`: it
    /// becomes durable with this unit's commit and only then. Returns the record's id.
    pub fn record_decision(&mut self, xids: &[String]) -> Result<MsgId> {
        self.qm.ensure_decision_queue()?;
        let mut body = String::from(COMMIT);
        for x in xids {
            body.push('\n');
            body.push_str(x);
        }
        let mut m = Message::new(body);
        m.md.persistence = Persistence::Persistent;
        self.put(DECISION_QUEUE, m, &PutOptions::default())
    }
}

/// Twelve hex digits from the clock and the process id: distinct data folders get distinct
/// identities without a random number generator.
fn fresh_identity() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mixed = (nanos as u64) ^ (u64::from(std::process::id()) << 40) ^ ((nanos >> 64) as u64);
    format!("{:012x}", mixed & 0xffff_ffff_ffff)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::QmConfig;

    fn temp_dir(case: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("sluice-qm-indoubt-{case}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn decision_survives_a_restart_only_when_its_unit_of_work_commits() {
        let dir = temp_dir("restart");
        let qm = QueueManager::open(&dir, QmConfig::default()).unwrap();
        qm.define(QueueDef::local("OUT")).unwrap();
        let mut u = qm.begin();
        let mut m = Message::new("out");
        m.md.persistence = Persistence::Persistent;
        u.put("OUT", m, &PutOptions::default()).unwrap();
        u.record_decision(&["x1".into(), "x2".into()]).unwrap();
        u.commit().unwrap();
        let mut lost = qm.begin();
        lost.record_decision(&["x3".into()]).unwrap();
        lost.rollback();
        let prefix = qm.xid_prefix().unwrap().to_string();
        qm.shutdown();
        drop(qm);
        let qm = QueueManager::open(&dir, QmConfig::default()).unwrap();
        let d = qm.decisions().unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].xids, ["x1", "x2"]);
        assert_eq!(qm.depth("OUT").unwrap(), 1);
        assert_eq!(qm.xid_prefix().unwrap(), prefix, "the identity is kept");
        qm.forget_decision(d[0].id).unwrap();
        assert!(qm.decisions().unwrap().is_empty());
        qm.shutdown();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn next_xid_is_unique_and_starts_with_the_prefix_when_called_twice() {
        let qm: Arc<QueueManager> = QueueManager::open_in_memory(QmConfig::default()).unwrap();
        let a = qm.next_xid().unwrap();
        let b = qm.next_xid().unwrap();
        assert_ne!(a, b);
        let p = qm.xid_prefix().unwrap();
        assert!(a.starts_with(p) && b.starts_with(p), "{a} {b} {p}");
        assert!(a.len() < 200, "PostgreSQL's limit on a gid");
    }

    #[test]
    fn xid_prefix_is_made_once_when_threads_ask_at_once() {
        let dir = temp_dir("race");
        let qm = QueueManager::open(&dir, QmConfig::default()).unwrap();
        let prefixes: Vec<String> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| s.spawn(|| qm.next_xid().map(|_| qm.xid_prefix().unwrap().to_string())))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap().unwrap()).collect()
        });
        assert!(prefixes.iter().all(|p| *p == prefixes[0]), "{prefixes:?}");
        qm.shutdown();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn decisions_are_empty_when_none_was_ever_recorded() {
        let qm = QueueManager::open_in_memory(QmConfig::default()).unwrap();
        assert!(qm.decisions().unwrap().is_empty());
        assert!(
            qm.queue_def(DECISION_QUEUE).is_err(),
            "not defined until needed"
        );
        assert!(!qm.coordinated_before());
        qm.next_xid().unwrap();
        assert!(qm.coordinated_before());
    }
}
