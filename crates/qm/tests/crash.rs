//! Crash test: kill -9 the server at random moments under concurrent persistent put/get
//! load and prove, by message id, that every acknowledged put is delivered exactly once and
//! nothing rolled back or unacknowledged-and-lost appears twice.
//!
//! Short form (default, a few iterations): `cargo test -p sluice-qm --test crash`.
//! Long form: `SLUICE_CRASH_ITERS=200 cargo test -p sluice-qm --release --test crash -- --nocapture`.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sluice_qm::net::{Client, Credentials};
use sluice_qm::{GetOptions, Message, Persistence, PutOptions};

const Q: &str = "CRASH.Q";

#[derive(Default)]
struct Ledger {
    /// Puts whose put (or commit) was acknowledged.
    acked: HashSet<String>,
    /// Puts whose outcome is unknown (the connection broke before the answer).
    in_doubt_puts: HashSet<String>,
    /// Puts the client rolled back on purpose: must never be delivered.
    rolled_back: HashSet<String>,
    /// Messages got under syncpoint whose commit was acknowledged.
    delivered: Vec<String>,
    /// Messages got under syncpoint whose commit outcome is unknown.
    in_doubt_gets: HashSet<String>,
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn start(dir: &Path) -> (Child, String) {
    // 256 KiB segments: the load rolls segments, recycles them and takes checkpoints, so
    // kill -9 also lands in the middle of those.
    let mut child = Command::new(env!("CARGO_BIN_EXE_qm-crashd"))
        .arg(dir)
        .arg("0")
        .arg("262144")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn qm-crashd");
    let out = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(out)
        .read_line(&mut line)
        .expect("read READY");
    let port = line
        .trim()
        .strip_prefix("READY ")
        .unwrap_or_else(|| panic!("unexpected output {line:?}"))
        .to_string();
    (child, format!("127.0.0.1:{port}"))
}

fn pmsg(id: &str) -> Message {
    let mut m = Message::new(id.to_string());
    m.md.persistence = Persistence::Persistent;
    m
}

fn producer(addr: String, tag: String, ledger: Arc<Mutex<Ledger>>, seed: u64) {
    let Ok(mut c) = Client::connect(&addr, Credentials::default()) else {
        return;
    };
    let mut rng = Rng(seed | 1);
    let mut n = 0u64;
    loop {
        let roll = rng.next() % 10;
        if roll < 7 {
            n += 1;
            let id = format!("{tag}-{n}");
            ledger
                .lock()
                .expect("lock")
                .in_doubt_puts
                .insert(id.clone());
            match c.put(Q, &pmsg(&id), &PutOptions::default()) {
                Ok(_) => {
                    let mut l = ledger.lock().expect("lock");
                    l.in_doubt_puts.remove(&id);
                    l.acked.insert(id);
                }
                Err(_) => return,
            }
        } else {
            let ids: Vec<String> = (0..2)
                .map(|_| {
                    n += 1;
                    format!("{tag}-{n}")
                })
                .collect();
            let rollback = roll == 9;
            ledger
                .lock()
                .expect("lock")
                .in_doubt_puts
                .extend(ids.iter().cloned());
            for id in &ids {
                if c.put_syncpoint(Q, &pmsg(id), &PutOptions::default())
                    .is_err()
                {
                    // Nothing committed: the server backs the unit out.
                    let mut l = ledger.lock().expect("lock");
                    for id in &ids {
                        l.in_doubt_puts.remove(id);
                        l.rolled_back.insert(id.clone());
                    }
                    return;
                }
            }
            let mut l = ledger.lock().expect("lock");
            if rollback {
                drop(l);
                let r = c.rollback();
                let mut l = ledger.lock().expect("lock");
                for id in &ids {
                    l.in_doubt_puts.remove(id);
                    l.rolled_back.insert(id.clone());
                }
                if r.is_err() {
                    return;
                }
            } else {
                drop(l);
                let r = c.commit();
                l = ledger.lock().expect("lock");
                if r.is_ok() {
                    for id in &ids {
                        l.in_doubt_puts.remove(id);
                        l.acked.insert(id.clone());
                    }
                } else {
                    return; // stays in doubt
                }
            }
        }
    }
}

fn consumer(addr: String, ledger: Arc<Mutex<Ledger>>) {
    let Ok(mut c) = Client::connect(&addr, Credentials::default()) else {
        return;
    };
    loop {
        let m = match c.get_syncpoint(Q, &GetOptions::new().wait(Duration::from_millis(100))) {
            Ok(Some(m)) => m,
            Ok(None) => continue,
            Err(_) => return, // not committed: the server backs the get out
        };
        let id = String::from_utf8_lossy(&m.body).into_owned();
        match c.commit() {
            Ok(()) => ledger.lock().expect("lock").delivered.push(id),
            Err(_) => {
                ledger.lock().expect("lock").in_doubt_gets.insert(id);
                return;
            }
        }
    }
}

#[test]
fn kill_dash_nine_under_load_loses_and_duplicates_nothing() {
    let iters: u64 = std::env::var("SLUICE_CRASH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    let dir = std::env::temp_dir().join(format!("sluice-qm-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let seed0 = Instant::now().elapsed().as_nanos() as u64
        ^ u64::from(std::process::id()) << 20
        ^ 0x9e37_79b9;
    let mut rng = Rng(seed0 | 1);
    let started = Instant::now();
    for it in 0..iters {
        let (mut child, addr) = start(&dir);
        let mut hs = Vec::new();
        for p in 0..4 {
            let (a, l, s) = (addr.clone(), ledger.clone(), rng.next());
            hs.push(std::thread::spawn(move || {
                producer(a, format!("i{it}p{p}"), l, s)
            }));
        }
        for _ in 0..3 {
            let (a, l) = (addr.clone(), ledger.clone());
            hs.push(std::thread::spawn(move || consumer(a, l)));
        }
        std::thread::sleep(Duration::from_millis(150 + rng.next() % 600));
        child.kill().expect("kill -9");
        child.wait().expect("wait");
        for h in hs {
            h.join().expect("load thread");
        }
    }
    // Final restart: drain what is left.
    let (mut child, addr) = start(&dir);
    let mut c = Client::connect(&addr, Credentials::default()).expect("connect");
    let mut drained = Vec::new();
    loop {
        // Drain under syncpoint, 200 per commit, so the drain costs few disk syncs.
        let mut batch = Vec::new();
        while batch.len() < 200 {
            match c.get_syncpoint(Q, &GetOptions::new()).expect("drain") {
                Some(m) => batch.push(String::from_utf8_lossy(&m.body).into_owned()),
                None => break,
            }
        }
        c.commit().expect("commit drain");
        if batch.is_empty() {
            break;
        }
        drained.extend(batch);
    }
    child.kill().expect("kill");
    child.wait().expect("wait");
    let log_files = std::fs::read_dir(dir.join("log"))
        .map(|d| d.count())
        .unwrap_or(0);

    let l = ledger.lock().expect("lock");
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for id in l.delivered.iter().chain(drained.iter()) {
        *seen.entry(id.as_str()).or_default() += 1;
    }
    let mut errors = Vec::new();
    for (id, n) in &seen {
        if *n > 1 {
            errors.push(format!("{id} delivered {n} times"));
        }
        let id = id.to_string();
        if l.rolled_back.contains(&id) {
            errors.push(format!("{id} was rolled back but delivered"));
        } else if !l.acked.contains(&id) && !l.in_doubt_puts.contains(&id) {
            errors.push(format!("{id} delivered but never put"));
        }
    }
    for id in &l.acked {
        if !seen.contains_key(id.as_str()) && !l.in_doubt_gets.contains(id) {
            errors.push(format!("{id} acknowledged but lost"));
        }
    }
    eprintln!(
        "crash test: {iters} kills in {:?}; {log_files} files in the log dir; {} acked puts, {} in doubt, {} rolled back, {} delivered before kills, {} after, {} gets in doubt",
        started.elapsed(),
        l.acked.len(),
        l.in_doubt_puts.len(),
        l.rolled_back.len(),
        l.delivered.len(),
        drained.len(),
        l.in_doubt_gets.len()
    );
    assert!(
        l.acked.len() > 10,
        "the load made too little progress to prove anything"
    );
    assert!(
        errors.is_empty(),
        "{} violations, first: {:?}",
        errors.len(),
        &errors[..errors.len().min(10)]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
