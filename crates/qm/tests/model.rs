//! Model test: random put / get / browse / unit-of-work / crash sequences against a simple
//! model. Each queue's memory window is 4 messages, so messages are paged out to disk and
//! read back (from the log or the spill file) in almost every case.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use sluice_qm::fs::FaultFs;
use sluice_qm::*;

#[derive(Debug, Clone)]
enum Step {
    Put {
        q: usize,
        persistent: bool,
        in_uow: bool,
    },
    Get {
        q: usize,
        in_uow: bool,
    },
    Browse {
        q: usize,
    },
    Commit,
    Rollback,
    Crash {
        keep_torn: u64,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..2usize, any::<bool>(), any::<bool>()).prop_map(|(q, persistent, in_uow)| Step::Put { q, persistent, in_uow }),
        3 => (0..2usize, any::<bool>()).prop_map(|(q, in_uow)| Step::Get { q, in_uow }),
        1 => (0..2usize).prop_map(|q| Step::Browse { q }),
        1 => Just(Step::Commit),
        1 => Just(Step::Rollback),
        1 => (0..64u64).prop_map(|keep_torn| Step::Crash { keep_torn }),
    ]
}

#[derive(Clone, Debug)]
struct Item {
    id: u64,
    persistent: bool,
    backout: u32,
}

#[derive(Default)]
struct Model {
    queues: [BTreeMap<u64, Item>; 2],
    pending_puts: Vec<(usize, u64, Item)>,
    pending_gets: Vec<(usize, u64, Item)>,
}

const QS: [&str; 2] = ["A", "B"];
static DIRS: AtomicU64 = AtomicU64::new(0);

fn run(steps: Vec<Step>) {
    let dir = std::env::temp_dir().join(format!(
        "sluice-qm-model-{}-{}",
        std::process::id(),
        DIRS.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let fs = FaultFs::new();
    fs.faults().lock().simulated_syncs = true;
    // Small segments so that rolls, checkpoints and recycling happen within a case.
    let cfg = QmConfig {
        fs: Arc::new(fs.clone()),
        wal: sluice_qm::wal::WalConfig {
            segment_size: 4096,
            checkpoint_min_bytes: 8192,
            free_segments: 2,
        },
        window: MemoryWindow {
            msgs: 4,
            bytes: 1 << 20,
        },
        ..QmConfig::default()
    };
    let open = |d: &PathBuf| QueueManager::open(d, cfg.clone()).expect("open");
    let mut qm = open(&dir);
    // A hardens backout counts (HARDENBO), B does not.
    qm.define(QueueDef {
        harden_get_backout: true,
        ..QueueDef::local(QS[0])
    })
    .expect("define");
    qm.define(QueueDef::local(QS[1])).expect("define");
    let mut m = Model::default();
    let mut uow: Option<UnitOfWork> = None;
    let mut next_id = 0u64;
    // The queue manager orders by its own sequence; the model mirrors it with a counter that
    // advances on every put, exactly like the queue manager's.
    let mut seq = 0u64;
    for s in steps {
        match s {
            Step::Put {
                q,
                persistent,
                in_uow,
            } => {
                next_id += 1;
                seq += 1;
                let mut msg = Message::new(next_id.to_string());
                msg.md.persistence = if persistent {
                    Persistence::Persistent
                } else {
                    Persistence::NotPersistent
                };
                let item = Item {
                    id: next_id,
                    persistent,
                    backout: 0,
                };
                if in_uow {
                    let u = uow.get_or_insert_with(|| qm.begin());
                    u.put(QS[q], msg, &PutOptions::default()).expect("uow put");
                    m.pending_puts.push((q, seq, item));
                } else {
                    qm.put(QS[q], msg, &PutOptions::default()).expect("put");
                    m.queues[q].insert(seq, item);
                }
            }
            Step::Get { q, in_uow } => {
                let got = if in_uow {
                    let u = uow.get_or_insert_with(|| qm.begin());
                    u.get(QS[q], &GetOptions::new()).expect("uow get")
                } else {
                    qm.get(QS[q], &GetOptions::new()).expect("get")
                };
                let want = m.queues[q].pop_first();
                match (&got, &want) {
                    (None, None) => {}
                    (Some(g), Some((_, w))) => {
                        let id = String::from_utf8_lossy(&g.body).trim_end().to_string();
                        assert_eq!(id, w.id.to_string(), "wrong message");
                        assert_eq!(g.md.backout_count, w.backout, "backout count of {}", w.id);
                    }
                    _ => panic!("got {got:?}, model has {want:?}"),
                }
                if let (true, Some((k, w))) = (in_uow, want) {
                    m.pending_gets.push((q, k, w));
                }
            }
            Step::Browse { q } => {
                let mut cursor = BrowseCursor::default();
                let mut seen = Vec::new();
                while let Some(g) = qm
                    .browse(QS[q], &GetOptions::new(), &mut cursor)
                    .expect("browse")
                {
                    let id = String::from_utf8_lossy(&g.body).trim_end().to_string();
                    seen.push((id, g.md.backout_count));
                }
                let want: Vec<(String, u32)> = m.queues[q]
                    .values()
                    .map(|i| (i.id.to_string(), i.backout))
                    .collect();
                assert_eq!(seen, want, "browse of {}", QS[q]);
            }
            Step::Commit => {
                if let Some(u) = uow.take() {
                    u.commit().expect("commit");
                }
                for (q, k, it) in m.pending_puts.drain(..) {
                    m.queues[q].insert(k, it);
                }
                m.pending_gets.clear();
            }
            Step::Rollback => {
                if let Some(u) = uow.take() {
                    u.rollback();
                }
                m.pending_puts.clear();
                for (q, k, mut it) in m.pending_gets.drain(..) {
                    it.backout += 1;
                    m.queues[q].insert(k, it);
                }
            }
            Step::Crash { keep_torn } => {
                drop(uow.take());
                drop(qm);
                fs.power_cut(|n| keep_torn.min(n)).expect("power cut");
                qm = open(&dir);
                m.pending_puts.clear();
                // Gets in flight at the crash come back; on A their backout count was hardened
                // when they were taken, on B counts fall back to the logged value (0).
                for (q, k, mut it) in m.pending_gets.drain(..) {
                    it.backout += 1;
                    m.queues[q].insert(k, it);
                }
                for (i, q) in m.queues.iter_mut().enumerate() {
                    q.retain(|_, it| it.persistent);
                    if i == 1 {
                        for it in q.values_mut() {
                            it.backout = 0;
                        }
                    }
                }
                // Sequence numbers continue above the highest one on disk; keep the model's
                // relative order by jumping ahead (ordering only compares within a run).
                seq += 1 << 20;
            }
        }
    }
    drop(uow); // = rollback
    for (q, k, it) in m.pending_gets.drain(..) {
        m.queues[q].insert(k, it);
    }
    for (q, name) in QS.iter().enumerate() {
        let mut left = Vec::new();
        while let Some(g) = qm.get(name, &GetOptions::new()).expect("drain") {
            left.push(String::from_utf8_lossy(&g.body).trim_end().to_string());
        }
        let want: Vec<String> = m.queues[q].values().map(|i| i.id.to_string()).collect();
        assert_eq!(left, want, "queue {name} at the end");
    }
    drop(qm);
    let _ = std::fs::remove_dir_all(&dir);
}

proptest! {
    // Every persistent step costs a real fdatasync; PROPTEST_CASES=500 for a long run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(128),
        ..ProptestConfig::default()
    })]
    #[test]
    fn queue_manager_matches_model(steps in proptest::collection::vec(step(), 1..60)) {
        run(steps);
    }
}
