//! Paging tests: queues deeper than a tiny window, through the queue manager.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::fs::FaultFs;
use crate::*;

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sluice-qm-{}-paging-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Removes a test directory when the test ends (also when it fails).
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A window of 3 messages and small log segments, so that deep queues page and checkpoints
/// move paged-out messages.
fn cfg() -> QmConfig {
    QmConfig {
        fs: Arc::new(FaultFs::new()),
        wal: wal::WalConfig {
            segment_size: 16 * 1024,
            checkpoint_min_bytes: 32 * 1024,
            free_segments: 1,
        },
        window: MemoryWindow {
            msgs: 3,
            bytes: 1 << 20,
        },
        ..QmConfig::default()
    }
}

fn open(dir: &Path) -> Arc<QueueManager> {
    let qm = QueueManager::open(dir, cfg()).expect("open");
    if qm.queue_def("Q").is_err() {
        qm.define(QueueDef::local("Q")).expect("define");
    }
    qm
}

/// A body that differs in length and content per message.
fn body(i: usize) -> Vec<u8> {
    (0..(i * 37) % 700 + 1)
        .map(|j| (i * 31 + j) as u8)
        .collect()
}

fn msg(i: usize, persistent: bool) -> Message {
    let mut m = Message::new(body(i));
    m.md.persistence = if persistent {
        Persistence::Persistent
    } else {
        Persistence::NotPersistent
    };
    m.md.correl_id[0] = (i % 251) as u8;
    m.md.correl_id[1] = 1;
    m.set_property("i", PropertyValue::Int(i as i64));
    m
}

fn index_of(m: &Message) -> usize {
    match m.property("i") {
        Some(PropertyValue::Int(i)) => *i as usize,
        other => panic!("message without its index: {other:?}"),
    }
}

fn put_all(qm: &QueueManager, n: usize, persistent: impl Fn(usize) -> bool) {
    for i in 0..n {
        qm.put("Q", msg(i, persistent(i)), &PutOptions::default())
            .expect("put");
    }
}

fn drain(qm: &QueueManager) -> Vec<Message> {
    let mut v = Vec::new();
    while let Some(m) = qm.get("Q", &GetOptions::new()).expect("get") {
        v.push(m);
    }
    v
}

#[test]
fn paged_messages_come_back_in_order_and_byte_identical_when_the_window_is_tiny() {
    let dir = tmpdir("order");
    let _c = Cleanup(dir.clone());
    let qm = open(&dir);
    put_all(&qm, 200, |i| i % 3 != 0);
    let s = qm.queue_stats("Q").expect("stats");
    assert_eq!(s.depth, 200);
    assert_eq!(s.in_memory, 3, "only the window is held whole");
    assert_eq!(s.bytes, (0..200).map(|i| body(i).len() as u64).sum::<u64>());
    assert!(
        qm.storage_stats().spill_bytes > 0,
        "non-persistent messages spilled"
    );
    let got = drain(&qm);
    assert_eq!(got.len(), 200);
    for (i, m) in got.iter().enumerate() {
        assert_eq!(index_of(m), i);
        assert_eq!(&m.body[..], &body(i)[..], "body of message {i}");
        assert_eq!(m.md.correl_id[0], (i % 251) as u8);
        assert_eq!(
            m.md.persistence == Persistence::Persistent,
            i % 3 != 0,
            "persistence of {i}"
        );
    }
    assert_eq!(qm.storage_stats().spill_bytes, 0, "spill file emptied");
    assert_eq!(qm.storage_stats().log_live_messages, 0);
}

#[test]
fn priorities_order_paged_and_whole_messages_alike() {
    let dir = tmpdir("prio");
    let _c = Cleanup(dir.clone());
    let qm = open(&dir);
    for i in 0..30 {
        let mut m = msg(i, i % 2 == 0);
        m.md.priority = (i % 4) as u8;
        qm.put("Q", m, &PutOptions::default()).expect("put");
    }
    let order: Vec<usize> = drain(&qm).iter().map(index_of).collect();
    let mut want: Vec<usize> = (0..30).collect();
    want.sort_by_key(|i| (3 - i % 4, *i));
    assert_eq!(order, want);
}

#[test]
fn browse_and_get_by_correl_id_reach_paged_out_messages() {
    let dir = tmpdir("browse");
    let _c = Cleanup(dir.clone());
    let qm = open(&dir);
    put_all(&qm, 40, |i| i % 2 == 0);
    let mut cursor = BrowseCursor::default();
    let mut seen = Vec::new();
    while let Some(m) = qm
        .browse("Q", &GetOptions::new(), &mut cursor)
        .expect("browse")
    {
        assert_eq!(&m.body[..], &body(index_of(&m))[..]);
        seen.push(index_of(&m));
    }
    assert_eq!(seen, (0..40).collect::<Vec<_>>());
    for i in [37usize, 20, 5] {
        let mut c = ID_NONE;
        c[0] = i as u8;
        c[1] = 1;
        let m = qm
            .get("Q", &GetOptions::new().correl_id(c))
            .expect("get")
            .expect("found by CorrelId");
        assert_eq!(index_of(&m), i);
        assert_eq!(&m.body[..], &body(i)[..]);
    }
    assert_eq!(qm.depth("Q").expect("depth"), 37);
}

#[test]
fn rollback_puts_paged_messages_back_with_their_backout_count() {
    let dir = tmpdir("rollback");
    let _c = Cleanup(dir.clone());
    let qm = open(&dir);
    put_all(&qm, 20, |i| i % 2 == 1);
    for round in 1..=2u32 {
        let mut uow = qm.begin();
        for _ in 0..10 {
            uow.get("Q", &GetOptions::new())
                .expect("get")
                .expect("a message");
        }
        uow.rollback();
        let mut cursor = BrowseCursor::default();
        let first = qm
            .browse("Q", &GetOptions::new(), &mut cursor)
            .expect("browse")
            .expect("a message");
        assert_eq!(first.md.backout_count, round);
    }
    let got = drain(&qm);
    assert_eq!(
        got.iter().map(index_of).collect::<Vec<_>>(),
        (0..20).collect::<Vec<_>>()
    );
    for m in &got {
        let want = if index_of(m) < 10 { 2 } else { 0 };
        assert_eq!(m.md.backout_count, want, "message {}", index_of(m));
    }
}

#[test]
fn restart_reads_paged_persistent_messages_back_after_checkpoints_moved_them() {
    let dir = tmpdir("restart");
    let _c = Cleanup(dir.clone());
    {
        let qm = open(&dir);
        put_all(&qm, 300, |i| i % 5 != 0);
        // Take some, so the checkpoints copy a queue with gaps.
        for _ in 0..50 {
            qm.get("Q", &GetOptions::new()).expect("get");
        }
        // Traffic on another queue rolls segments until checkpoints have moved Q's messages.
        qm.define(QueueDef::local("R")).expect("define");
        let mut rounds = 0;
        while qm.log_stats().expect("log").checkpoints < 2 {
            rounds += 1;
            assert!(rounds < 5000, "no checkpoint after {rounds} rounds");
            qm.put("R", msg(699, true), &PutOptions::default())
                .expect("put");
            qm.get("R", &GetOptions::new()).expect("get");
        }
        qm.shutdown();
    }
    let qm = open(&dir);
    let s = qm.queue_stats("Q").expect("stats");
    let want: Vec<usize> = (50..300).filter(|i| i % 5 != 0).collect();
    assert_eq!(
        s.depth,
        want.len(),
        "persistent messages back, the others gone"
    );
    assert!(s.in_memory <= 3, "recovery holds only the window: {s:?}");
    assert_eq!(qm.storage_stats().spill_bytes, 0);
    let got = drain(&qm);
    assert_eq!(got.iter().map(index_of).collect::<Vec<_>>(), want);
    for m in &got {
        assert_eq!(&m.body[..], &body(index_of(m))[..]);
    }
}

#[test]
fn expired_paged_messages_are_discarded_and_their_spill_released() {
    let dir = tmpdir("expiry");
    let _c = Cleanup(dir.clone());
    let qm = open(&dir);
    for i in 0..10 {
        let mut m = msg(i, false);
        m.md.expiry = 1; // a tenth of a second
        qm.put("Q", m, &PutOptions::default()).expect("put");
    }
    assert!(qm.storage_stats().spill_bytes > 0);
    std::thread::sleep(Duration::from_millis(150));
    assert!(qm.get("Q", &GetOptions::new()).expect("get").is_none());
    assert_eq!(qm.depth("Q").expect("depth"), 0);
    assert_eq!(qm.storage_stats().spill_bytes, 0);
}

#[test]
fn queue_stats_give_the_oldest_message_age_also_when_it_is_paged_out() {
    let dir = tmpdir("age");
    let _c = Cleanup(dir.clone());
    let qm = open(&dir);
    assert_eq!(qm.queue_stats("Q").expect("stats").oldest_age_ms, None);
    let mut old = msg(0, true);
    old.md.put_date = "20200101".into();
    old.md.put_time = "00000000".into();
    let opts = PutOptions {
        set_all_context: true,
        ..PutOptions::default()
    };
    qm.put("Q", old, &opts).expect("put");
    // Taken under syncpoint while the window fills, then put back: it is paged out.
    let mut uow = qm.begin();
    uow.get("Q", &GetOptions::new())
        .expect("get")
        .expect("the old one");
    for i in 1..10 {
        qm.put("Q", msg(i, true), &PutOptions::default())
            .expect("put");
    }
    uow.rollback();
    assert_eq!(qm.queue_stats("Q").expect("stats").in_memory, 3);
    let age = qm
        .queue_stats("Q")
        .expect("stats")
        .oldest_age_ms
        .expect("an age");
    assert!(age > 300 * 86_400_000, "age {age} ms");
    assert!(qm.storage_stats().log_disk_bytes > 0);
}

#[test]
fn a_full_disk_at_depth_refuses_persistent_puts_loses_nothing_and_service_resumes() {
    let dir = tmpdir("full");
    let _c = Cleanup(dir.clone());
    let fs = FaultFs::new();
    let qm = QueueManager::open(
        &dir,
        QmConfig {
            fs: Arc::new(fs.clone()),
            ..cfg()
        },
    )
    .expect("open");
    qm.define(QueueDef::local("Q")).expect("define");
    put_all(&qm, 50, |i| i % 2 == 0);
    fs.faults().lock().space_left = Some(20_000);
    let mut acked = 50;
    let err = loop {
        match qm.put("Q", msg(acked, acked % 2 == 0), &PutOptions::default()) {
            Ok(_) => acked += 1,
            Err(e) => break e,
        }
        assert!(acked < 10_000, "the disk never filled up");
    };
    assert_eq!(err.reason_code(), 2192, "{err}");
    // Non-persistent messages that cannot be spilled stay whole in memory.
    let more = acked + 1;
    for i in more..more + 5 {
        qm.put("Q", msg(i, false), &PutOptions::default())
            .expect("a non-persistent put needs no disk");
    }
    let s = qm.queue_stats("Q").expect("stats");
    assert!(
        s.in_memory > 3,
        "unspillable messages kept in memory: {s:?}"
    );
    fs.faults().lock().space_left = None;
    qm.put("Q", msg(more + 5, true), &PutOptions::default())
        .expect("puts resume once there is space");
    let want: Vec<usize> = (0..acked).chain(more..more + 6).collect();
    let got = drain(&qm);
    assert_eq!(got.iter().map(index_of).collect::<Vec<_>>(), want);
    for m in &got {
        assert_eq!(&m.body[..], &body(index_of(m))[..]);
    }
}

#[test]
fn log_space_is_released_after_a_deep_queue_is_drained_without_further_traffic() {
    let dir = tmpdir("reclaim");
    let _c = Cleanup(dir.clone());
    let qm = open(&dir);
    put_all(&qm, 400, |_| true);
    let full = qm.storage_stats().log_disk_bytes;
    assert!(full > 150_000, "log holds the backlog: {full}");
    drain(&qm);
    // The writer looks again every second while a checkpoint runs; on a loaded machine a
    // checkpoint can take a while.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let now = qm.storage_stats().log_disk_bytes;
        // The current segment, the spare and a near-empty checkpoint.
        if now <= 3 * 16 * 1024 + 4096 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "log still {now} bytes after the drain (was {full})"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
