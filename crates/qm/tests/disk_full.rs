//! Disk full on a real, small filesystem (not an injected error).
//!
//! Needs a directory on a small filesystem in `SLUICE_QM_SMALL_FS`, e.g. as root:
//! `mkdir -p /mnt/qmfull && mount -t tmpfs -o size=8m tmpfs /mnt/qmfull &&
//!  SLUICE_QM_SMALL_FS=/mnt/qmfull cargo test -p sluice-qm --test disk_full -- --ignored`

use sluice_qm::wal::WalConfig;
use sluice_qm::*;

#[test]
#[ignore = "needs a small filesystem in SLUICE_QM_SMALL_FS"]
fn real_disk_full_fails_puts_clearly_and_loses_nothing() {
    let Ok(base) = std::env::var("SLUICE_QM_SMALL_FS") else {
        panic!("set SLUICE_QM_SMALL_FS to a directory on a small filesystem");
    };
    let dir = std::path::Path::new(&base).join(format!("qm-{}", std::process::id()));
    let cfg = QmConfig {
        wal: WalConfig {
            segment_size: 1 << 20,
            checkpoint_min_bytes: 2 << 20,
            free_segments: 1,
        },
        ..QmConfig::default()
    };
    let body = bytes::Bytes::from(vec![b'z'; 64 * 1024]);
    let mut acked = 0usize;
    {
        let qm = QueueManager::open(&dir, cfg.clone()).expect("open");
        qm.define(QueueDef {
            max_depth: 1_000_000,
            ..QueueDef::local("Q")
        })
        .expect("define");
        let err = loop {
            let mut m = Message::new(body.clone());
            m.md.persistence = Persistence::Persistent;
            m.md.correl_id = id_from_str(&acked.to_string());
            match qm.put("Q", m, &PutOptions::default()) {
                Ok(_) => acked += 1,
                Err(e) => break e,
            }
            assert!(acked < 100_000, "the filesystem never filled up");
        };
        assert_eq!(err.reason_code(), 2192, "{err}");
        assert_eq!(qm.depth("Q").expect("depth"), acked);
        // Getting messages still works (removals are small records) or fails clearly.
        for _ in 0..3 {
            match qm.get("Q", &GetOptions::new()) {
                Ok(Some(_)) => acked -= 1,
                Ok(None) => panic!("messages vanished"),
                Err(e) => assert!(matches!(e.reason_code(), 2192 | 2102), "{e}"),
            }
        }
    }
    let qm = QueueManager::open(&dir, cfg).expect("reopen after disk full");
    assert_eq!(qm.depth("Q").expect("depth"), acked);
    drop(qm);
    let _ = std::fs::remove_dir_all(&dir);
}
