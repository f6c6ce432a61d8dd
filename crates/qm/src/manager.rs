//! The queue manager: open/recover, queue definitions (admin), dynamic queues.
//! Message operations are in `ops.rs`, units of work in `uow.rs`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::{Mutex, RwLock};

use crate::error::{QmError, Result};
use crate::fs::{self, Filesystem, StdFs};
use crate::model::{Persistence, QueueDef, QueueKind};
use crate::paging::{Entry, MemoryWindow, Paged, Pager};
use crate::queue::{Queue, now_ms};
use crate::wal::{Op, Wal, WalConfig, WalStats};

/// Queue manager settings.
#[derive(Clone)]
pub struct QmConfig {
    /// Queue manager name (ReplyToQMgr default, MsgId prefix).
    pub name: String,
    /// Dead-letter queue name; created at open when missing. Empty = none.
    pub dead_letter_queue: String,
    /// Log tuning.
    pub wal: WalConfig,
    /// How much of each queue is held whole in memory (queue managers with a directory;
    /// one in memory holds everything).
    pub window: MemoryWindow,
    /// Where files go (tests inject faults here).
    pub fs: Arc<dyn Filesystem>,
}

impl Default for QmConfig {
    fn default() -> Self {
        QmConfig {
            name: "SLUICE".into(),
            dead_letter_queue: "SYSTEM.DEAD.LETTER.QUEUE".into(),
            wal: WalConfig::default(),
            window: MemoryWindow::default(),
            fs: Arc::new(StdFs),
        }
    }
}

impl std::fmt::Debug for QmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QmConfig")
            .field("name", &self.name)
            .field("dead_letter_queue", &self.dead_letter_queue)
            .field("wal", &self.wal)
            .field("window", &self.window)
            .finish()
    }
}

/// A named object: a local queue, or the definition of an alias or model queue.
#[derive(Clone)]
pub(crate) enum Object {
    Local(Arc<Queue>),
    Other(QueueDef),
}

/// The queue manager. Thread-safe; share it as `Arc<QueueManager>`.
///
/// Locking: the name table is a read-mostly `RwLock` (shared on the message path, exclusive
/// only for define/delete); each queue has its own mutex; the log has its own writer thread.
pub struct QueueManager {
    pub(crate) cfg: QmConfig,
    pub(crate) objects: RwLock<HashMap<String, Object>>,
    pub(crate) wal: Option<Wal>,
    /// Pages messages past each queue's window out to disk (`None` in memory).
    pub(crate) pager: Option<Arc<Pager>>,
    dir: Option<PathBuf>,
    pub(crate) admin: Mutex<()>,
    pub(crate) seq: AtomicU64,
    pub(crate) boot: u32,
    dyn_counter: AtomicU64,
    pub(crate) shut: AtomicBool,
    /// The directory's lock, held until this queue manager shuts down or is dropped (see
    /// `Filesystem::lock_dir`).
    lock: Mutex<Option<std::fs::File>>,
    /// Queues held open for input, and by whom ([`QueueManager::open_input`]).
    inputs: Mutex<Vec<(String, String)>>,
    /// The prefix of transaction ids, read or made on first use (`indoubt.rs`).
    pub(crate) xid_prefix: std::sync::OnceLock<String>,
    /// Transaction ids handed out since start.
    pub(crate) xid_seq: AtomicU64,
    /// When this queue manager started, unix milliseconds (part of every transaction id).
    pub(crate) started_ms: u64,
}

/// A queue held open for input ([`QueueManager::open_input`]); closed when dropped.
pub struct InputHandle {
    qm: Arc<QueueManager>,
    /// The queue as opened, and an alias's target.
    names: Vec<String>,
    by: String,
}

impl Drop for InputHandle {
    fn drop(&mut self) {
        let mut inputs = self.qm.inputs.lock();
        for n in &self.names {
            if let Some(i) = inputs.iter().position(|(q, b)| q == n && *b == self.by) {
                inputs.swap_remove(i);
            }
        }
    }
}

const QUEUES_FILE: &str = "queues.json";
/// Non-persistent messages paged out of their queues' windows; emptied at open.
const SPILL_FILE: &str = "spill.dat";

/// Check a queue name: 1–48 characters of `A-Z a-z 0-9 . / _ %`.
pub fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 48
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._/%".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(QmError::BadField {
            reason: 2152,
            text: format!("bad queue name '{name}' (1-48 of A-Z a-z 0-9 . / _ %)"),
        })
    }
}

impl QueueManager {
    fn new(cfg: QmConfig, wal: Option<Wal>, dir: Option<PathBuf>, next_seq: u64) -> QueueManager {
        let boot = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as u32)
            .unwrap_or(0);
        QueueManager {
            cfg,
            objects: RwLock::new(HashMap::new()),
            wal,
            pager: None,
            dir,
            admin: Mutex::new(()),
            seq: AtomicU64::new(next_seq.max(1)),
            boot,
            dyn_counter: AtomicU64::new(0),
            shut: AtomicBool::new(false),
            lock: Mutex::new(None),
            inputs: Mutex::new(Vec::new()),
            xid_prefix: std::sync::OnceLock::new(),
            xid_seq: AtomicU64::new(0),
            started_ms: now_ms(),
        }
    }

    /// A queue manager that keeps everything in memory (tests; persistent = non-persistent).
    pub fn open_in_memory(cfg: QmConfig) -> Result<Arc<QueueManager>> {
        let qm = QueueManager::new(cfg, None, None, 1);
        qm.ensure_dlq()?;
        Ok(Arc::new(qm))
    }

    /// Open (creating if needed) the queue manager stored in `dir`, recovering every committed
    /// persistent message and every queue definition.
    pub fn open(dir: &Path, cfg: QmConfig) -> Result<Arc<QueueManager>> {
        let fsys = cfg.fs.clone();
        fsys.create_dir_all(dir)
            .map_err(|e| QmError::io(dir.display().to_string(), e))?;
        // Two processes writing one log would destroy each other's records.
        let lock = fsys
            .lock_dir(dir)
            .map_err(|e| QmError::io(dir.display().to_string(), e))?;
        let defs = load_defs(&*fsys, &dir.join(QUEUES_FILE))?;
        let (wal, rec) = Wal::open(fsys.clone(), &dir.join("log"), cfg.wal.clone())?;
        let pager = Arc::new(Pager::open(
            cfg.window,
            rec.index.clone(),
            fsys.clone(),
            dir.join(SPILL_FILE),
        ));
        let mut qm = QueueManager::new(cfg, Some(wal), Some(dir.to_path_buf()), rec.next_seq);
        qm.lock = Mutex::new(lock);
        qm.pager = Some(pager);
        {
            let mut objs = qm.objects.write();
            for d in defs {
                let obj = match d.kind {
                    QueueKind::Local => Object::Local(Arc::new(qm.new_queue(d.clone()))),
                    _ => Object::Other(d.clone()),
                };
                objs.insert(d.name.clone(), obj);
            }
        }
        let now = now_ms();
        let mut gone = Vec::new();
        for (seq, m) in rec.msgs {
            let q = match qm.objects.read().get(&*m.queue) {
                Some(Object::Local(q)) => q.clone(),
                _ => {
                    tracing::warn!(
                        "recovered message {seq} for undefined queue '{}' dropped",
                        m.queue
                    );
                    gone.push(Op::Remove { seq });
                    continue;
                }
            };
            if m.expire_ms != 0 && m.expire_ms <= now {
                gone.push(Op::Remove { seq });
                continue;
            }
            let key = (9 - m.priority.min(9), seq);
            // Recovered messages stay in the log; each queue reads back what fits its window.
            q.state.lock().insert_entry(
                key,
                Entry::Paged(Paged {
                    msg_id: m.msg_id,
                    correl_id: m.correl_id,
                    group_id: m.group_id,
                    expire_ms: m.expire_ms,
                    backout_count: m.backout_count,
                    body_len: u32::try_from(m.body_len).unwrap_or(u32::MAX),
                    spill: None,
                }),
            );
        }
        for obj in qm.objects.read().values() {
            if let Object::Local(q) = obj {
                q.state.lock().fill_window();
            }
        }
        if let (false, Some(w)) = (gone.is_empty(), &qm.wal) {
            w.submit(gone);
        }
        qm.ensure_dlq()?;
        Ok(Arc::new(qm))
    }

    fn new_queue(&self, def: QueueDef) -> Queue {
        Queue::new(def, self.pager.clone())
    }

    fn ensure_dlq(&self) -> Result<()> {
        let name = self.cfg.dead_letter_queue.clone();
        if !name.is_empty() && !self.objects.read().contains_key(&name) {
            let def = QueueDef {
                max_depth: 999_999_999,
                ..QueueDef::local(&name)
            };
            self.define(def)?;
        }
        Ok(())
    }

    /// The queue manager's name.
    pub fn name(&self) -> &str {
        &self.cfg.name
    }

    /// Name of the dead-letter queue ("" when none).
    pub fn dead_letter_queue(&self) -> &str {
        &self.cfg.dead_letter_queue
    }

    fn save_defs(&self, objs: &HashMap<String, Object>) -> Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let mut defs: Vec<QueueDef> = objs
            .values()
            .map(|o| match o {
                Object::Local(q) => q.state.lock().def.clone(),
                Object::Other(d) => d.clone(),
            })
            .filter(|d| !d.temporary_dynamic)
            .collect();
        defs.sort_by(|a, b| a.name.cmp(&b.name));
        let json =
            serde_json::to_vec_pretty(&defs).map_err(|source| QmError::Definition { source })?;
        let path = dir.join(QUEUES_FILE);
        fs::write_atomic(&*self.cfg.fs, &path, &json).map_err(|e| {
            if crate::error::is_disk_full(&e) {
                QmError::DiskFull {
                    what: path.display().to_string(),
                    source: std::sync::Arc::new(e),
                }
            } else {
                QmError::io(path.display().to_string(), e)
            }
        })
    }

    fn check_def(&self, def: &QueueDef) -> Result<()> {
        validate_name(&def.name)?;
        if let QueueKind::Alias { target } = &def.kind {
            validate_name(target)?;
        }
        if !def.backout_requeue_queue.is_empty() {
            validate_name(&def.backout_requeue_queue)?;
        }
        Ok(())
    }

    /// Define a queue (local, alias or model). Persisted before it returns.
    pub fn define(&self, def: QueueDef) -> Result<()> {
        self.check_def(&def)?;
        let _g = self.admin.lock();
        if self.objects.read().contains_key(&def.name) {
            return Err(QmError::QueueExists(def.name));
        }
        let obj = match def.kind {
            QueueKind::Local => Object::Local(Arc::new(self.new_queue(def.clone()))),
            _ => Object::Other(def.clone()),
        };
        let mut next = self.objects.read().clone();
        next.insert(def.name.clone(), obj.clone());
        if !def.temporary_dynamic {
            self.save_defs(&next)?;
        }
        self.objects.write().insert(def.name.clone(), obj);
        Ok(())
    }

    /// Change the attributes of an existing queue (its kind cannot change).
    pub fn alter(&self, def: QueueDef) -> Result<()> {
        self.check_def(&def)?;
        let _g = self.admin.lock();
        let obj = self.objects.read().get(&def.name).cloned();
        match obj {
            None => Err(QmError::UnknownQueue(def.name)),
            Some(Object::Local(q)) => {
                if def.kind != QueueKind::Local {
                    return Err(QmError::WrongQueueType {
                        queue: def.name,
                        kind: "local",
                        what: "its type cannot change",
                    });
                }
                let old = {
                    let mut st = q.state.lock();
                    let tmp = st.def.temporary_dynamic;
                    std::mem::replace(
                        &mut st.def,
                        QueueDef {
                            temporary_dynamic: tmp,
                            ..def
                        },
                    )
                };
                if let Err(e) = self.save_defs(&self.objects.read()) {
                    q.state.lock().def = old;
                    return Err(e);
                }
                let fired = q.wake_all(&mut q.state.lock());
                crate::queue::fire(fired);
                Ok(())
            }
            Some(Object::Other(old)) => {
                if std::mem::discriminant(&old.kind) != std::mem::discriminant(&def.kind) {
                    return Err(QmError::WrongQueueType {
                        queue: def.name,
                        kind: old.kind.name(),
                        what: "its type cannot change",
                    });
                }
                let mut next = self.objects.read().clone();
                next.insert(def.name.clone(), Object::Other(def.clone()));
                self.save_defs(&next)?;
                self.objects
                    .write()
                    .insert(def.name.clone(), Object::Other(def));
                Ok(())
            }
        }
    }

    /// Delete a queue. A local queue holding messages is refused unless `purge`, and one with
    /// uncommitted work on it always.
    pub fn delete(&self, name: &str, purge: bool) -> Result<()> {
        self.delete_queue(name, purge, true)
    }

    /// Delete a temporary dynamic queue as its connection ends, whatever other units of work
    /// still do with it: it holds non-persistent messages only, so their later commit
    /// dropping them leaves nothing for a restart to bring back (MQ, too, deletes it once
    /// they end, and their messages with it).
    pub(crate) fn delete_temporary(&self, name: &str) -> Result<()> {
        self.delete_queue(name, true, false)
    }

    fn delete_queue(&self, name: &str, purge: bool, check_uncommitted: bool) -> Result<()> {
        let _g = self.admin.lock();
        let obj = self
            .objects
            .read()
            .get(name)
            .cloned()
            .ok_or_else(|| QmError::UnknownQueue(name.into()))?;
        if let Some((_, by)) = self.inputs.lock().iter().find(|(n, _)| n == name) {
            return Err(QmError::InUse {
                queue: name.into(),
                by: by.clone(),
            });
        }
        if let Object::Local(q) = &obj {
            let mut st = q.state.lock();
            if check_uncommitted {
                q.check_no_uncommitted(&st)?;
            }
            if st.depth() > 0 && !purge {
                return Err(QmError::QueueNotEmpty(name.into()));
            }
            let removed = st.clear();
            let ops: Vec<Op> = removed
                .iter()
                .filter(|(_, e)| e.persistent())
                .map(|(k, _)| Op::Remove { seq: k.1 })
                .collect();
            if let (false, Some(w)) = (ops.is_empty(), &self.wal)
                && let Err(e) = w.commit(ops)
            {
                for (k, entry) in removed {
                    st.insert_entry(k, entry);
                }
                return Err(e);
            }
            st.dispose(removed);
            st.deleted = true;
            let fired = q.wake_all(&mut st);
            drop(st);
            crate::queue::fire(fired);
        }
        let mut next = self.objects.read().clone();
        next.remove(name);
        self.save_defs(&next)?;
        self.objects.write().remove(name);
        Ok(())
    }

    /// The definition of a queue.
    pub fn queue_def(&self, name: &str) -> Result<QueueDef> {
        match self.objects.read().get(name) {
            Some(Object::Local(q)) => Ok(q.state.lock().def.clone()),
            Some(Object::Other(d)) => Ok(d.clone()),
            None => Err(QmError::UnknownQueue(name.into())),
        }
    }

    /// Every definition, sorted by name.
    pub fn list(&self) -> Vec<QueueDef> {
        let objs: Vec<Object> = self.objects.read().values().cloned().collect();
        let mut v: Vec<QueueDef> = objs
            .into_iter()
            .map(|o| match o {
                Object::Local(q) => q.state.lock().def.clone(),
                Object::Other(d) => d,
            })
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// Resolve a name (following an alias) to its local queue; `put` selects which
    /// inhibit attribute of an alias applies.
    pub(crate) fn resolve(&self, name: &str, put: bool) -> Result<Arc<Queue>> {
        self.resolve_for(name, Some(put))
    }

    /// [`QueueManager::resolve`]; `None` checks no inhibit attribute (an open, not a get or put).
    fn resolve_for(&self, name: &str, put: Option<bool>) -> Result<Arc<Queue>> {
        let objs = self.objects.read();
        match objs.get(name) {
            Some(Object::Local(q)) => Ok(q.clone()),
            Some(Object::Other(d)) => match &d.kind {
                QueueKind::Alias { target } => {
                    if put == Some(true) && d.put_inhibited {
                        return Err(QmError::PutInhibited(name.into()));
                    }
                    if put == Some(false) && d.get_inhibited {
                        return Err(QmError::GetInhibited(name.into()));
                    }
                    match objs.get(target) {
                        Some(Object::Local(q)) => Ok(q.clone()),
                        Some(_) => Err(QmError::WrongQueueType {
                            queue: target.clone(),
                            kind: "non-local",
                            what: "alias target must be a local queue",
                        }),
                        None => Err(QmError::UnknownQueue(target.clone())),
                    }
                }
                k => Err(QmError::WrongQueueType {
                    queue: name.into(),
                    kind: k.name(),
                    what: "cannot hold messages",
                }),
            },
            None => Err(QmError::UnknownQueue(name.into())),
        }
    }

    /// Open `queue` for input on behalf of `by` (a flow's MQInput, named in errors) until the
    /// handle is dropped: meanwhile the queue, and an alias's target, cannot be deleted
    /// (MQRC_OBJECT_IN_USE 2042).
    pub fn open_input(self: &Arc<Self>, queue: &str, by: &str) -> Result<InputHandle> {
        self.resolve_for(queue, None)?;
        let mut names = vec![queue.to_string()];
        if let Some(Object::Other(d)) = self.objects.read().get(queue)
            && let QueueKind::Alias { target } = &d.kind
        {
            names.push(target.clone());
        }
        let mut inputs = self.inputs.lock();
        for n in &names {
            inputs.push((n.clone(), by.to_string()));
        }
        Ok(InputHandle {
            qm: Arc::clone(self),
            names,
            by: by.to_string(),
        })
    }

    /// Current depth of a queue or an alias's target, as MQ's CURDEPTH: the messages on it,
    /// counting those put under a unit of work not committed yet and not those got under one.
    pub fn depth(&self, name: &str) -> Result<usize> {
        let q = self.resolve(name, false)?;
        let st = q.state.lock();
        Ok(st.depth() + st.reserved)
    }

    /// Remove every message from a queue; returns how many were removed.
    pub fn clear(&self, name: &str) -> Result<usize> {
        let q = self.resolve(name, false)?;
        let mut st = q.state.lock();
        q.check_no_uncommitted(&st)?;
        let removed = st.clear();
        let ops: Vec<Op> = removed
            .iter()
            .filter(|(_, e)| e.persistent())
            .map(|(k, _)| Op::Remove { seq: k.1 })
            .collect();
        if let (false, Some(w)) = (ops.is_empty(), &self.wal)
            && let Err(e) = w.commit(ops)
        {
            for (k, entry) in removed {
                st.insert_entry(k, entry);
            }
            return Err(e);
        }
        let n = removed.len();
        st.dispose(removed);
        Ok(n)
    }

    /// Create a temporary dynamic queue from a model queue, named as MQ's DynamicQName says:
    /// a trailing `*` is replaced by a unique hex suffix (empty = `AMQ.*`), a name without one
    /// is used as given (refused if it exists). Not kept over a restart.
    pub fn create_dynamic(&self, model: &str, prefix: &str) -> Result<String> {
        let m = self.queue_def(model)?;
        if m.kind != QueueKind::Model {
            return Err(QmError::WrongQueueType {
                queue: model.into(),
                kind: m.kind.name(),
                what: "not a model queue",
            });
        }
        let prefix = if prefix.is_empty() { "AMQ.*" } else { prefix };
        let name = match prefix.strip_suffix('*') {
            Some(p) => {
                let n = self.dyn_counter.fetch_add(1, Ordering::Relaxed);
                format!("{p}{:08X}{:08X}", self.boot, n)
            }
            None => prefix.to_string(),
        };
        let def = QueueDef {
            name: name.clone(),
            kind: QueueKind::Local,
            temporary_dynamic: true,
            default_persistence: Persistence::NotPersistent,
            ..m
        };
        self.define(def)?;
        Ok(name)
    }

    /// Log counters (None for an in-memory queue manager).
    pub fn log_stats(&self) -> Option<WalStats> {
        self.wal.as_ref().map(|w| w.stats())
    }

    /// The directory this queue manager keeps its data in (`None` in memory).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Stop: refuse new work, wake waiting getters, flush and stop the log writer.
    pub fn shutdown(&self) {
        self.shut.store(true, Ordering::SeqCst);
        let mut fired = Vec::new();
        for o in self.objects.read().values() {
            if let Object::Local(q) = o {
                fired.extend(q.wake_all(&mut q.state.lock()));
            }
        }
        // Woken getters look their queue up again, so the object table is not held here.
        crate::queue::fire(fired);
        if let Some(w) = &self.wal {
            w.shutdown();
        }
        // Nothing is written any more: the directory is free for the next queue manager,
        // even while threads still hold this one until they notice.
        self.lock.lock().take();
    }

    pub(crate) fn check_open(&self) -> Result<()> {
        if self.shut.load(Ordering::Relaxed) {
            Err(QmError::ShutDown)
        } else {
            Ok(())
        }
    }
}

fn load_defs(fsys: &dyn Filesystem, path: &Path) -> Result<Vec<QueueDef>> {
    if !fsys.exists(path) {
        return Ok(Vec::new());
    }
    let data = fsys
        .read(path)
        .map_err(|e| QmError::io(path.display().to_string(), e))?;
    serde_json::from_slice(&data).map_err(|e| QmError::Corrupt {
        path: path.display().to_string(),
        detail: "the queue definitions are not valid JSON".into(),
        source: Some(Box::new(e)),
    })
}
