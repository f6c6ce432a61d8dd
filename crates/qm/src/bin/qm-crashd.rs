//! Serves a queue manager over the client protocol, for crash testing.
//!
//! Usage: `qm-crashd DATA_DIR PORT [SEGMENT_BYTES [WINDOW_MSGS]]` (PORT 0 picks a free one; a
//! small SEGMENT_BYTES makes segment rolls, recycling and checkpoints happen under the crash
//! load, a small WINDOW_MSGS makes the queue page messages out to disk and back).
//! Defines the queue `CRASH.Q` when missing, prints `READY <port>` on stdout once listening,
//! and serves until killed.

use std::io::Write;

use sluice_qm::net::{AuthConfig, Server};
use sluice_qm::{QmConfig, QueueDef, QueueManager};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !(3..=5).contains(&args.len()) {
        eprintln!("usage: qm-crashd DATA_DIR PORT [SEGMENT_BYTES [WINDOW_MSGS]]");
        std::process::exit(2);
    }
    let mut cfg = QmConfig::default();
    if let Some(seg) = args.get(3) {
        match seg.parse::<u64>() {
            Ok(n) if n >= 4096 => {
                cfg.wal.segment_size = n;
                cfg.wal.checkpoint_min_bytes = 2 * n;
            }
            _ => {
                eprintln!("bad SEGMENT_BYTES '{seg}' (at least 4096)");
                std::process::exit(2);
            }
        }
    }
    if let Some(w) = args.get(4) {
        match w.parse::<usize>() {
            Ok(n) if n > 0 => cfg.window.msgs = n,
            _ => {
                eprintln!("bad WINDOW_MSGS '{w}' (at least 1)");
                std::process::exit(2);
            }
        }
    }
    let port: u16 = match args[2].parse() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("bad port '{}': {e}", args[2]);
            std::process::exit(2);
        }
    };
    let qm = match QueueManager::open(std::path::Path::new(&args[1]), cfg) {
        Ok(q) => q,
        Err(e) => {
            eprintln!("cannot open queue manager in {}: {e}", args[1]);
            std::process::exit(1);
        }
    };
    if qm.queue_def("CRASH.Q").is_err()
        && let Err(e) = qm.define(QueueDef {
            max_depth: 10_000_000,
            ..QueueDef::local("CRASH.Q")
        })
    {
        eprintln!("cannot define CRASH.Q: {e}");
        std::process::exit(1);
    }
    let listener = match std::net::TcpListener::bind(("127.0.0.1", port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("cannot listen on port {port}: {e}");
            std::process::exit(1);
        }
    };
    let actual = listener.local_addr().map(|a| a.port()).unwrap_or(port);
    println!("READY {actual}");
    let _ = std::io::stdout().flush();
    Server::serve_blocking(listener, qm, AuthConfig::anonymous());
}
