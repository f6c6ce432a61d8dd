//! The queue manager at depth (not a test): a backlog of persistent messages put by several
//! clients over a local socket, the process killed, then a restart and a drain that checks
//! every message. Reports peak RSS, the data folder's size, time to ready and rates.
//!
//! ```text
//! cargo run -p sluice-qm --release --example qm_deep -- put   DIR COUNT [BODY_BYTES] [CLIENTS]
//! cargo run -p sluice-qm --release --example qm_deep -- drain DIR COUNT [BODY_BYTES] [CLIENTS]
//! ```
//!
//! `put` opens (or creates) the queue manager in DIR, has CLIENTS clients (default 8) put
//! COUNT/CLIENTS persistent messages of BODY_BYTES (default 2048) each to the queue `DEEP`,
//! then ends the process with `abort()`: nothing is shut down cleanly, as with `kill -9`.
//! `drain` opens DIR again (the time to ready is the restart), gets everything with one
//! client in units of work of 1,000 gets and checks that each client's messages arrive once each, in the order put, with
//! the bodies put; it fails loudly otherwise.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sluice_qm::net::{AuthConfig, Client, Credentials, Server};
use sluice_qm::*;

fn rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = s
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn dir_bytes(p: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(p) else {
        return 0;
    };
    rd.flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => {
                use std::os::unix::fs::MetadataExt;
                // Allocated, not apparent, size: preallocated segments count only once written.
                m.blocks() * 512
            }
            Err(_) => 0,
        })
        .sum()
}

/// Samples RSS every 50 ms and keeps the peak.
fn rss_sampler() -> (Arc<AtomicU64>, Arc<AtomicBool>) {
    let peak = Arc::new(AtomicU64::new(rss()));
    let stop = Arc::new(AtomicBool::new(false));
    let (p, s) = (peak.clone(), stop.clone());
    std::thread::spawn(move || {
        while !s.load(Ordering::Relaxed) {
            p.fetch_max(rss(), Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    (peak, stop)
}

/// The body of client `c`'s message `i`: both numbers, then bytes that depend on them.
fn body(c: u64, i: u64, len: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(len.max(16));
    b.extend_from_slice(&c.to_le_bytes());
    b.extend_from_slice(&i.to_le_bytes());
    let mut x = c.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i;
    while b.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b.push(x as u8);
    }
    b
}

const MB: f64 = 1024.0 * 1024.0;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: qm_deep put|drain DIR COUNT [BODY_BYTES] [CLIENTS]");
        std::process::exit(2);
    }
    let dir = Path::new(&args[2]).to_path_buf();
    let count: u64 = args[3].parse().expect("COUNT is a number");
    let len: usize = args.get(4).map_or(2048, |s| s.parse().expect("BODY_BYTES"));
    let clients: u64 = args.get(5).map_or(8, |s| s.parse().expect("CLIENTS"));
    let (peak, stop) = rss_sampler();
    let t0 = Instant::now();
    let qm = QueueManager::open(&dir, QmConfig::default()).expect("open");
    let ready = t0.elapsed();
    if qm.queue_def("DEEP").is_err() {
        qm.define(QueueDef {
            max_depth: 999_999_999,
            ..QueueDef::local("DEEP")
        })
        .expect("define");
    }
    println!(
        "open to ready: {:.3} s, depth {}, RSS {:.1} MB, data folder {:.1} MB",
        ready.as_secs_f64(),
        qm.depth("DEEP").expect("depth"),
        rss() as f64 / MB,
        dir_bytes(&dir) as f64 / MB
    );
    let sock = dir.join("deep.sock").display().to_string();
    let server = Server::bind(&sock, qm.clone(), AuthConfig::anonymous()).expect("bind");
    let addr = server.address().to_string();
    let t1 = Instant::now();
    match args[1].as_str() {
        "put" => {
            let per = count / clients;
            let done = Arc::new(AtomicU64::new(0));
            let threads: Vec<_> = (0..clients)
                .map(|c| {
                    let (addr, done) = (addr.clone(), done.clone());
                    std::thread::spawn(move || {
                        let mut cl =
                            Client::connect(&addr, Credentials::default()).expect("connect");
                        for i in 0..per {
                            let mut m = Message::new(body(c, i, len));
                            m.md.persistence = Persistence::Persistent;
                            cl.put("DEEP", &m, &PutOptions::default()).expect("put");
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                    })
                })
                .collect();
            let mut last = Instant::now();
            while done.load(Ordering::Relaxed) < per * clients {
                std::thread::sleep(Duration::from_millis(200));
                if last.elapsed() >= Duration::from_secs(10) {
                    last = Instant::now();
                    let s = qm.storage_stats();
                    println!(
                        "  {} put, {:.0}/s, RSS {:.1} MB (peak {:.1}), log {:.1} MB",
                        done.load(Ordering::Relaxed),
                        done.load(Ordering::Relaxed) as f64 / t1.elapsed().as_secs_f64(),
                        rss() as f64 / MB,
                        peak.load(Ordering::Relaxed) as f64 / MB,
                        s.log_disk_bytes as f64 / MB
                    );
                }
            }
            for t in threads {
                t.join().expect("client thread");
            }
            let secs = t1.elapsed().as_secs_f64();
            let st = qm.queue_stats("DEEP").expect("stats");
            println!(
                "put {} x {len} B persistent by {clients} clients in {secs:.1} s ({:.0}/s); depth {}, in memory {}; peak RSS {:.1} MB; data folder {:.1} MB ({:.2} x payload)",
                per * clients,
                (per * clients) as f64 / secs,
                st.depth,
                st.in_memory,
                peak.load(Ordering::Relaxed) as f64 / MB,
                dir_bytes(&dir) as f64 / MB,
                dir_bytes(&dir) as f64 / (st.bytes as f64).max(1.0)
            );
            // As kill -9: nothing shut down, nothing flushed beyond what was acknowledged.
            std::process::abort();
        }
        "drain" => {
            let mut cl = Client::connect(&addr, Credentials::default()).expect("connect");
            let mut next = vec![0u64; clients as usize];
            let mut got = 0u64;
            // Units of work of 1,000 gets: one log sync per unit, not per message.
            cl.begin().expect("begin");
            while let Some(m) = cl.get_syncpoint("DEEP", &GetOptions::new()).expect("get") {
                let b = &m.body[..];
                let c = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
                let i = u64::from_le_bytes(b[8..16].try_into().expect("8 bytes"));
                assert!(c < clients, "message from an unknown client {c}");
                assert_eq!(i, next[c as usize], "client {c}: out of order or twice");
                assert!(
                    b == &body(c, i, len)[..],
                    "client {c} message {i}: body differs"
                );
                next[c as usize] += 1;
                got += 1;
                if got.is_multiple_of(1000) {
                    cl.commit().expect("commit");
                    cl.begin().expect("begin");
                }
            }
            cl.commit().expect("commit");
            let secs = t1.elapsed().as_secs_f64();
            assert_eq!(got, count / clients * clients, "messages lost");
            // Let a checkpoint started by the drain's last segment roll finish.
            std::thread::sleep(Duration::from_secs(2));
            println!(
                "drained {got} in order, once each, byte-identical, in {secs:.1} s ({:.0}/s); peak RSS {:.1} MB; data folder after the drain {:.1} MB",
                got as f64 / secs,
                peak.load(Ordering::Relaxed) as f64 / MB,
                dir_bytes(&dir) as f64 / MB
            );
        }
        other => panic!("unknown command {other}"),
    }
    stop.store(true, Ordering::Relaxed);
    drop(server);
    qm.shutdown();
}
