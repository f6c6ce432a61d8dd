//! Log and recovery tests, through the queue manager, with injected faults.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use super::format::Records;
use crate::fs::FaultFs;
use crate::*;

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sluice-qm-{}-{name}", std::process::id()));
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

fn cfg(fs: &FaultFs) -> QmConfig {
    QmConfig {
        fs: Arc::new(fs.clone()),
        ..QmConfig::default()
    }
}

fn pmsg(body: &str) -> Message {
    let mut m = Message::new(body.to_string());
    m.md.persistence = Persistence::Persistent;
    m
}

fn open(dir: &Path, fs: &FaultFs) -> Arc<QueueManager> {
    QueueManager::open(dir, cfg(fs)).expect("open")
}

fn drain(qm: &QueueManager, q: &str) -> Vec<String> {
    let mut v = Vec::new();
    while let Some(m) = qm.get(q, &GetOptions::new()).expect("get") {
        v.push(String::from_utf8(m.body.to_vec()).expect("utf8"));
    }
    v
}

fn put(qm: &QueueManager, q: &str, m: Message) {
    qm.put(q, m, &PutOptions::default()).expect("put");
}

/// (path, record end offsets) of the newest segment holding records.
fn last_segment(dir: &Path) -> (PathBuf, Vec<usize>) {
    let mut segs: Vec<PathBuf> = std::fs::read_dir(dir.join("log"))
        .expect("list")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("seg-"))
        })
        .collect();
    segs.sort();
    for p in segs.into_iter().rev() {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let n = u64::from_str_radix(&name[4..20], 16).expect("seg number");
        let data = Bytes::from(std::fs::read(&p).expect("read"));
        let mut recs = Records::new(data, n);
        let mut ends = Vec::new();
        while recs.next().is_some() {
            ends.push(recs.pos);
        }
        if !ends.is_empty() {
            return (p, ends);
        }
    }
    panic!("no segment with records");
}

#[test]
fn recovery_restores_exactly_committed_state_after_crash() {
    let dir = tmpdir("crash");
    let _cleanup = Cleanup(dir.clone());
    let fs = FaultFs::new();
    {
        let qm = open(&dir, &fs);
        qm.define(QueueDef::local("Q")).expect("define");
        for i in 0..10 {
            put(&qm, "Q", pmsg(&format!("p{i}")));
        }
        put(&qm, "Q", Message::new("non-persistent"));
        assert_eq!(
            qm.get("Q", &GetOptions::new())
                .expect("get")
                .map(|m| m.body),
            Some(Bytes::from("p0"))
        );
        let mut committed = qm.begin();
        committed.get("Q", &GetOptions::new()).expect("get");
        committed
            .put("Q", pmsg("uow-put"), &PutOptions::default())
            .expect("put");
        committed.commit().expect("commit");
        let mut open_uow = qm.begin();
        open_uow.get("Q", &GetOptions::new()).expect("get"); // p2, in flight at the crash
        open_uow
            .put("Q", pmsg("never"), &PutOptions::default())
            .expect("put");
        std::mem::forget(open_uow); // the process dies with the unit open
    }
    fs.power_cut(|_| 0).expect("power cut");
    let qm = open(&dir, &fs);
    let got = drain(&qm, "Q");
    let want: Vec<String> = (2..10)
        .map(|i| format!("p{i}"))
        .chain(std::iter::once("uow-put".to_string()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn recovery_drops_torn_tail() {
    let dir = tmpdir("torn");
    let _cleanup = Cleanup(dir.clone());
    let fs = FaultFs::new();
    {
        let qm = open(&dir, &fs);
        qm.define(QueueDef::local("Q")).expect("define");
        for i in 0..5 {
            put(&qm, "Q", pmsg(&format!("m{i}")));
        }
        qm.shutdown();
    }
    let (seg, ends) = last_segment(&dir);
    // Tear the last record: keep its header and a few payload bytes only.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&seg)
        .expect("open seg");
    f.set_len(ends[ends.len() - 2] as u64 + 12)
        .expect("truncate");
    drop(f);
    {
        let qm = open(&dir, &fs);
        assert_eq!(drain(&qm, "Q"), ["m0", "m1", "m2", "m3"]);
        put(&qm, "Q", pmsg("after"));
        qm.shutdown();
    }
    // A second recovery must not look past the repaired end, and must keep the new put.
    let qm = open(&dir, &fs);
    assert_eq!(drain(&qm, "Q"), ["after"]);
}

#[test]
fn recovery_drops_corrupt_record_and_everything_after_it_in_the_tail() {
    let dir = tmpdir("corrupt");
    let _cleanup = Cleanup(dir.clone());
    let fs = FaultFs::new();
    {
        let qm = open(&dir, &fs);
        qm.define(QueueDef::local("Q")).expect("define");
        for i in 0..3 {
            put(&qm, "Q", pmsg(&format!("m{i}")));
        }
        qm.shutdown();
    }
    let (seg, ends) = last_segment(&dir);
    let mut data = std::fs::read(&seg).expect("read");
    assert_eq!(ends.len(), 3);
    data[ends[0] + 20] ^= 0xff; // inside the middle record (m1); m2 after it is intact
    std::fs::write(&seg, &data).expect("write");
    let qm = open(&dir, &fs);
    // The batch was never acknowledged past the bad record: m1 and everything after it go.
    assert_eq!(drain(&qm, "Q"), ["m0"]);
}

#[test]
fn failed_fsync_fails_the_put_and_it_never_comes_back() {
    let dir = tmpdir("fsync");
    let _cleanup = Cleanup(dir.clone());
    let fs = FaultFs::new();
    {
        let qm = open(&dir, &fs);
        qm.define(QueueDef::local("Q")).expect("define");
        put(&qm, "Q", pmsg("ok1"));
        fs.faults().lock().fail_syncs = 1;
        let e = qm
            .put("Q", pmsg("failed"), &PutOptions::default())
            .expect_err("sync fails");
        assert_eq!(e.reason_code(), 2102, "{e}");
        assert_eq!(qm.depth("Q").expect("depth"), 1);
        put(&qm, "Q", pmsg("ok2"));
        // A failed commit of a get leaves the message on the queue.
        fs.faults().lock().fail_syncs = 1;
        assert!(qm.get("Q", &GetOptions::new()).is_err());
        assert_eq!(qm.depth("Q").expect("depth"), 2);
    }
    fs.power_cut(|n| n).expect("power cut");
    let qm = open(&dir, &fs);
    assert_eq!(drain(&qm, "Q"), ["ok1", "ok2"]);
}

/// The filesystem error at the end of `e`'s chain of sources.
fn io_source(e: &QmError) -> Option<&io::Error> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = cur {
        if let Some(io) = s.downcast_ref::<io::Error>() {
            return Some(io);
        }
        if let Some(io) = s.downcast_ref::<Arc<io::Error>>() {
            return Some(io);
        }
        cur = s.source();
    }
    None
}

#[test]
fn failed_fsync_backs_out_the_commit_keeping_the_log_error_as_source() {
    let dir = tmpdir("fsync-uow");
    let _cleanup = Cleanup(dir.clone());
    let fs = FaultFs::new();
    let qm = open(&dir, &fs);
    qm.define(QueueDef::local("Q")).expect("define");
    let mut u = qm.begin();
    u.put("Q", pmsg("lost"), &PutOptions::default())
        .expect("staged");
    fs.faults().lock().fail_syncs = 1;
    let e = u.commit().expect_err("sync fails");
    assert_eq!(e.reason_code(), 2003, "{e}");
    let QmError::BackedOut {
        source: Some(log), ..
    } = &e
    else {
        panic!("not a backout with a cause: {e:?}");
    };
    assert!(matches!(**log, QmError::Log { .. }), "{log}");
    assert_eq!(
        io_source(&e).and_then(io::Error::raw_os_error),
        Some(libc::EIO)
    );
    assert_eq!(qm.depth("Q").expect("depth"), 0);
}

#[test]
fn disk_full_fails_the_put_with_a_clear_reason_and_loses_nothing() {
    let dir = tmpdir("enospc");
    let _cleanup = Cleanup(dir.clone());
    let fs = FaultFs::new();
    {
        let qm = open(&dir, &fs);
        qm.define(QueueDef::local("Q")).expect("define");
        for i in 0..3 {
            put(&qm, "Q", pmsg(&format!("m{i}")));
        }
        fs.faults().lock().space_left = Some(100);
        let e = qm
            .put("Q", pmsg(&"x".repeat(10_000)), &PutOptions::default())
            .expect_err("full");
        assert!(matches!(e, QmError::DiskFull { .. }), "{e}");
        assert_eq!(e.reason_code(), 2192);
        assert_eq!(
            io_source(&e).map(io::Error::kind),
            Some(io::ErrorKind::StorageFull)
        );
        let mut u = qm.begin();
        u.put("Q", pmsg(&"y".repeat(10_000)), &PutOptions::default())
            .expect("staged");
        let e = u.commit().expect_err("still full");
        assert!(matches!(e, QmError::DiskFull { .. }), "{e}");
        fs.faults().lock().space_left = None;
        put(&qm, "Q", pmsg("after"));
    }
    fs.power_cut(|n| n).expect("power cut");
    let qm = open(&dir, &fs);
    assert_eq!(drain(&qm, "Q"), ["m0", "m1", "m2", "after"]);
}

#[test]
fn checkpoints_bound_the_log_and_recovery_uses_them() {
    let dir = tmpdir("ckpt");
    let _cleanup = Cleanup(dir.clone());
    let c = small_segments();
    {
        let qm = QueueManager::open(&dir, c.clone()).expect("open");
        qm.define(QueueDef {
            max_depth: 100_000,
            ..QueueDef::local("Q")
        })
        .expect("define");
        put(&qm, "Q", pmsg("keeper"));
        for i in 0..200 {
            put(&qm, "Q", pmsg(&format!("{i:0>2000}")));
            qm.get("Q", &GetOptions::new().msg_id(qm_last_id(&qm))).ok();
        }
        let st = qm.log_stats().expect("stats");
        assert!(st.checkpoints > 0, "{st:?}");
        qm.shutdown();
    }
    let files = std::fs::read_dir(dir.join("log")).expect("list").count();
    assert!(files <= 8, "log dir holds {files} files");
    let qm = QueueManager::open(&dir, c).expect("reopen");
    let left = drain(&qm, "Q");
    assert_eq!(left.len(), 1, "{:?}", &left[..left.len().min(3)]);
    assert_eq!(left[0], "keeper");
}

#[test]
fn a_clean_stop_in_a_recycled_segment_leaves_no_torn_tail() {
    let dir = tmpdir("recycled");
    let _cleanup = Cleanup(dir.clone());
    let c = small_segments();
    // The first round fills and frees segments; each later one starts in a recycled segment
    // (full of the records it held before), writes a little and stops cleanly.
    for round in 0..4 {
        let qm = QueueManager::open(&dir, c.clone()).expect("open");
        if round == 0 {
            qm.define(QueueDef {
                max_depth: 100_000,
                ..QueueDef::local("Q")
            })
            .expect("define");
        }
        for i in 0..if round == 0 { 150 } else { 3 } {
            put(&qm, "Q", pmsg(&format!("{round}-{i:0>1500}")));
            qm.get("Q", &GetOptions::new()).expect("get");
        }
        qm.shutdown();
        drop(qm);
        let (w, rec) =
            wal::Wal::open(c.fs.clone(), &dir.join("log"), c.wal.clone()).expect("recover");
        assert_eq!(
            rec.dropped_tail, None,
            "round {round}: a clean stop left a torn tail"
        );
        w.shutdown();
    }
}

/// 64 KiB log segments with checkpoints every 128 KiB, so a few hundred messages roll,
/// checkpoint and recycle segments.
fn small_segments() -> QmConfig {
    let mut c = cfg(&FaultFs::new());
    c.wal = wal::WalConfig {
        segment_size: 64 * 1024,
        checkpoint_min_bytes: 128 * 1024,
        free_segments: 2,
    };
    c
}

/// MsgId of the newest message: every put here takes the next sequence number.
fn qm_last_id(qm: &QueueManager) -> MsgId {
    qm.new_msg_id(qm.seq.load(std::sync::atomic::Ordering::Relaxed) - 1)
}

#[test]
fn non_persistent_messages_never_touch_the_disk() {
    let dir = tmpdir("nonp");
    let _cleanup = Cleanup(dir.clone());
    let fs = FaultFs::new();
    {
        let qm = open(&dir, &fs);
        qm.define(QueueDef::local("Q")).expect("define");
        let before = qm.log_stats().expect("stats");
        for _ in 0..100 {
            put(&qm, "Q", Message::new("np"));
        }
        drain(&qm, "Q");
        for _ in 0..10 {
            put(&qm, "Q", Message::new("left"));
        }
        assert_eq!(qm.log_stats().expect("stats").bytes, before.bytes);
    }
    let qm = open(&dir, &fs);
    assert_eq!(qm.depth("Q").expect("depth"), 0);
}

#[test]
fn twenty_megabyte_persistent_message_survives_restart() {
    let dir = tmpdir("big");
    let _cleanup = Cleanup(dir.clone());
    let fs = FaultFs::new();
    let body: Vec<u8> = (0..20 * 1024 * 1024).map(|i| (i % 251) as u8).collect();
    let body = Bytes::from(body);
    {
        let qm = open(&dir, &fs);
        qm.define(QueueDef::local("Q")).expect("define");
        let mut m = Message::new(body.clone());
        m.md.persistence = Persistence::Persistent;
        put(&qm, "Q", m);
    }
    let qm = open(&dir, &fs);
    let m = qm.get("Q", &GetOptions::new()).expect("get").expect("msg");
    assert_eq!(m.body, body);
}

#[test]
fn concurrent_persistent_puts_share_syncs() {
    let dir = tmpdir("group");
    let _cleanup = Cleanup(dir.clone());
    let qm = QueueManager::open(&dir, QmConfig::default()).expect("open");
    qm.define(QueueDef {
        max_depth: 100_000,
        ..QueueDef::local("Q")
    })
    .expect("define");
    let hs: Vec<_> = (0..16)
        .map(|_| {
            let qm = qm.clone();
            std::thread::spawn(move || {
                for _ in 0..100 {
                    qm.put("Q", pmsg("g"), &PutOptions::default()).expect("put");
                }
            })
        })
        .collect();
    for h in hs {
        h.join().expect("join");
    }
    let st = qm.log_stats().expect("stats");
    assert_eq!(st.records, 1600);
    assert!(st.syncs < st.records, "{st:?}");
}

#[test]
fn queue_definitions_survive_restart() {
    let dir = tmpdir("defs");
    let _cleanup = Cleanup(dir.clone());
    let fs = FaultFs::new();
    {
        let qm = open(&dir, &fs);
        qm.define(QueueDef {
            max_depth: 42,
            backout_threshold: 3,
            ..QueueDef::local("Q")
        })
        .expect("define");
        qm.define(QueueDef::alias("A", "Q")).expect("alias");
        qm.define(QueueDef::model("M")).expect("model");
        qm.create_dynamic("M", "").expect("dynamic");
    }
    let qm = open(&dir, &fs);
    let names: Vec<String> = qm.list().into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["A", "M", "Q", "SYSTEM.DEAD.LETTER.QUEUE"]);
    assert_eq!(qm.queue_def("Q").expect("def").backout_threshold, 3);
}

/// A queue manager with queue `Q` defined with HardenGetBackout.
fn open_with_hardenbo_q(dir: &Path, fs: &FaultFs) -> Arc<QueueManager> {
    let qm = open(dir, fs);
    qm.define(QueueDef {
        harden_get_backout: true,
        ..QueueDef::local("Q")
    })
    .expect("define");
    qm
}

#[test]
fn backout_count_is_hardened_when_a_syncpoint_get_takes_the_message_on_hardenbo_queues() {
    let dir = tmpdir("backout");
    let _cleanup = Cleanup(dir.clone());
    let fs = FaultFs::new();
    {
        let qm = open_with_hardenbo_q(&dir, &fs);
        qm.define(QueueDef::local("SOFT")).expect("define");
        put(&qm, "Q", pmsg("poison"));
        put(&qm, "SOFT", pmsg("soft"));
        let mut u = qm.begin();
        u.get("SOFT", &GetOptions::new())
            .expect("get")
            .expect("msg");
        u.rollback();
        let mut u = qm.begin();
        u.get("Q", &GetOptions::new()).expect("get").expect("msg");
        u.rollback();
        let mut u = qm.begin();
        let m = u.get("Q", &GetOptions::new()).expect("get").expect("msg");
        assert_eq!(m.md.backout_count, 1);
        std::mem::forget(u); // the process dies while processing it
    }
    fs.power_cut(|_| 0).expect("power cut");
    let qm = open(&dir, &fs);
    let m = qm.get("Q", &GetOptions::new()).expect("get").expect("msg");
    assert_eq!(m.md.backout_count, 2);
    // Without HARDENBO the count raised by the rollback was in memory only.
    let m = qm
        .get("SOFT", &GetOptions::new())
        .expect("get")
        .expect("msg");
    assert_eq!(m.md.backout_count, 0);
}

#[test]
fn a_released_get_on_a_hardenbo_queue_takes_the_hardened_count_back() {
    let dir = tmpdir("release");
    let _cleanup = Cleanup(dir.clone());
    let fs = FaultFs::new();
    {
        let qm = open_with_hardenbo_q(&dir, &fs);
        put(&qm, "Q", pmsg("m"));
        let mut u = qm.begin();
        u.get("Q", &GetOptions::new()).expect("get").expect("msg");
        u.release_last_get();
        // A later commit's sync carries the released count with it.
        put(&qm, "Q", pmsg("after"));
        std::mem::forget(u);
    }
    fs.power_cut(|_| 0).expect("power cut");
    let qm = open(&dir, &fs);
    let m = qm.get("Q", &GetOptions::new()).expect("get").expect("msg");
    assert_eq!(&m.body[..], b"m");
    assert_eq!(m.md.backout_count, 0);
}

#[test]
fn recovery_never_resurrects_records_behind_a_corrupt_one() {
    let dir = tmpdir("behind");
    let _cleanup = Cleanup(dir.clone());
    let fs = FaultFs::new();
    {
        let qm = open(&dir, &fs);
        qm.define(QueueDef::local("Q")).expect("define");
        for i in 0..3 {
            put(&qm, "Q", pmsg(&format!("m{i}")));
        }
        qm.shutdown();
    }
    let (seg, ends) = last_segment(&dir);
    let mut data = std::fs::read(&seg).expect("read");
    data[ends[0] + 20] ^= 0xff; // m1 bad, m2 intact behind it
    std::fs::write(&seg, &data).expect("write");
    for round in 0..2 {
        let qm = open(&dir, &fs);
        assert_eq!(qm.depth("Q").expect("depth"), 1 + round, "round {round}");
        put(&qm, "Q", pmsg(&format!("new{round}")));
        qm.shutdown();
    }
    let qm = open(&dir, &fs);
    assert_eq!(drain(&qm, "Q"), ["m0", "new0", "new1"]);
}

#[test]
fn a_second_queue_manager_on_the_same_directory_is_refused_while_the_first_is_open() {
    let dir = tmpdir("lock");
    let _cleanup = Cleanup(dir.clone());
    let first = QueueManager::open(&dir, QmConfig::default()).expect("first open");
    let Err(e) = QueueManager::open(&dir, QmConfig::default()) else {
        panic!("a second queue manager opened the same directory");
    };
    let text = e.to_string();
    assert!(text.contains("in use by process"), "{text}");
    drop(first);
    QueueManager::open(&dir, QmConfig::default()).expect("open again once the first is closed");
}
