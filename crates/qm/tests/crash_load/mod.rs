//! The kill -9 crash test's load, ledger and checks, shared by the two processes it is run
//! against: the real server (`crates/sluice/tests/crash.rs`, `sluice run`) and the queue
//! manager alone with tiny log segments (`crates/qm/tests/crash.rs`, `qm-crashd`). It needs
//! nothing but `sluice_qm` and std, so the queue manager's own tests include it by path.
//!
//! A run is `cycles` times: start the process on the same data folder (one start in five, and
//! always the second, is killed while it starts: in recovery, in the checkpoint taken at open,
//! or just after ready),
//! run producers and consumers over the client protocol, SIGKILL it at a random moment. Then a
//! last start drains the queue, and [`Outcome::check`] proves by message id that every committed
//! put was delivered exactly once, that nothing rolled back or uncommitted at a kill appeared,
//! that nothing appeared twice and that every delivered body is the one that was put.
//!
//! Environment: `SLUICE_CRASH_CYCLES` (kills; the short form's default otherwise) and
//! `SLUICE_CRASH_SEED` (replays the random moments and unit sizes of a printed run).

use std::collections::{HashMap, HashSet};
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sluice_qm::net::{Client, Credentials};
use sluice_qm::{GetOptions, Message, Persistence, PutOptions, QmError};

/// The queue the load uses; the process under test must serve it (persistent, deep).
pub const QUEUE: &str = "CRASH.Q";
const PRODUCERS: usize = 4;
const CONSUMERS: usize = 4;
/// Longest the final drain may take before the process is taken for hung.
const DRAIN_LIMIT: Duration = Duration::from_secs(120);

/// xorshift64*: small, seedable, and the same sequence for the same seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// How many kills and which random sequence, from the environment.
pub struct Plan {
    pub cycles: u64,
    pub seed: u64,
    /// Where the producers put: [`QUEUE`], or the input queue of a flow that moves each
    /// message on to [`QUEUE`], where the consumers get.
    pub put_queue: &'static str,
}

impl Plan {
    /// `SLUICE_CRASH_CYCLES` or `default_cycles`; `SLUICE_CRASH_SEED` or one from the clock.
    /// Prints the seed so that a failure can be replayed.
    pub fn from_env(test: &str, default_cycles: u64) -> Plan {
        let cycles = env_u64("SLUICE_CRASH_CYCLES").unwrap_or(default_cycles);
        let seed = env_u64("SLUICE_CRASH_SEED").unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            t ^ u64::from(std::process::id()) << 32
        });
        eprintln!("{test}: {cycles} cycles, seed {seed} (replay with SLUICE_CRASH_SEED={seed})");
        Plan {
            cycles,
            seed,
            put_queue: QUEUE,
        }
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.trim().parse().ok())
}

/// What the clients were told, by message id.
#[derive(Default)]
pub struct Ledger {
    /// Puts whose put (outside syncpoint) or commit was acknowledged: must arrive exactly once.
    committed: HashSet<String>,
    /// Puts whose outcome is unknown (the connection broke before the put's or the commit's
    /// answer): may arrive at most once.
    in_doubt_puts: HashSet<String>,
    /// Puts that were rolled back, or whose unit of work was still open when the connection
    /// broke: must never arrive.
    rolled_back: HashSet<String>,
    /// Gets whose commit was acknowledged.
    delivered: Vec<String>,
    /// Gets whose commit answer was lost: the message was delivered then or is still queued.
    in_doubt_gets: HashSet<String>,
    /// Errors that a kill does not explain (anything but a broken connection) and bad bodies.
    unexpected: Vec<String>,
    /// Units of work of gets rolled back on purpose (their messages must come back).
    consumer_rollbacks: u64,
    /// Gets outside syncpoint whose answer was lost: each may have taken one committed message.
    lost_gets: usize,
}

impl Ledger {
    fn note_error(&mut self, what: &str, e: &QmError) {
        if !matches!(
            e,
            QmError::ConnectionBroken { .. } | QmError::BackedOut { .. }
        ) {
            self.unexpected.push(format!("{what}: {e}"));
        }
    }
}

type Shared = Arc<Mutex<Ledger>>;

fn ledger(l: &Shared) -> MutexGuard<'_, Ledger> {
    // A panicking load thread must not hide the ledger from the checks.
    l.lock().unwrap_or_else(|p| p.into_inner())
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The body of message `id`: the id, `|`, then filler whose size and bytes follow from the id,
/// so any delivered body can be checked. One message in a hundred is 64–320 KiB, so large log
/// records are in flight at some kills.
fn body_for(id: &str) -> Vec<u8> {
    let h = fnv(id);
    let len = if h.is_multiple_of(100) {
        64 * 1024 + (h >> 8) as usize % (256 * 1024)
    } else {
        (h >> 8) as usize % 200
    };
    let mut b = Vec::with_capacity(id.len() + 1 + len);
    b.extend_from_slice(id.as_bytes());
    b.push(b'|');
    b.extend((0..len).map(|i| b'a' + ((h as usize + i) % 26) as u8));
    b
}

fn message(id: &str) -> Message {
    let mut m = Message::new(body_for(id));
    m.md.persistence = Persistence::Persistent;
    m
}

/// The id of a delivered message, or why it is not one that was put.
fn check_delivered(m: &Message) -> Result<String, String> {
    let cut = m.body.iter().position(|&b| b == b'|').ok_or_else(|| {
        format!(
            "a delivered body has no id: {:?}",
            String::from_utf8_lossy(&m.body[..m.body.len().min(40)])
        )
    })?;
    let id = String::from_utf8_lossy(&m.body[..cut]).into_owned();
    if m.body[..] != body_for(&id)[..] {
        return Err(format!("{id} delivered with a different body"));
    }
    if m.md.persistence != Persistence::Persistent {
        return Err(format!("{id} delivered as non-persistent"));
    }
    Ok(id)
}

/// Persistent puts until the connection breaks: one put in four outside syncpoint, the rest in
/// units of work of 1–8 messages, one unit in five rolled back.
fn producer(addr: String, queue: &str, tag: String, l: Shared, seed: u64) {
    let Ok(mut c) = Client::connect(&addr, Credentials::default()) else {
        return;
    };
    let mut rng = Rng::new(seed);
    let mut n = 0u64;
    let mut next_id = || {
        n += 1;
        format!("{tag}-{n}")
    };
    loop {
        if rng.below(4) == 0 {
            let id = next_id();
            ledger(&l).in_doubt_puts.insert(id.clone());
            match c.put(queue, &message(&id), &PutOptions::default()) {
                Ok(_) => {
                    let mut g = ledger(&l);
                    g.in_doubt_puts.remove(&id);
                    g.committed.insert(id);
                }
                Err(e) => return ledger(&l).note_error("put", &e),
            }
            continue;
        }
        let ids: Vec<String> = (0..1 + rng.below(8)).map(|_| next_id()).collect();
        let roll_back = rng.below(5) == 0;
        for (i, id) in ids.iter().enumerate() {
            if let Err(e) = c.put_syncpoint(queue, &message(id), &PutOptions::default()) {
                // The unit was never committed: the server backs it out when the connection
                // ends, and a kill loses it with the process.
                let mut g = ledger(&l);
                g.note_error("put under syncpoint", &e);
                g.rolled_back.extend(ids[..=i].iter().cloned());
                return;
            }
        }
        if roll_back {
            let r = c.rollback();
            let mut g = ledger(&l);
            g.rolled_back.extend(ids);
            if let Err(e) = r {
                return g.note_error("rollback", &e);
            }
            continue;
        }
        ledger(&l).in_doubt_puts.extend(ids.iter().cloned());
        let r = c.commit();
        let mut g = ledger(&l);
        match r {
            Ok(()) => {
                for id in ids {
                    g.in_doubt_puts.remove(&id);
                    g.committed.insert(id);
                }
            }
            Err(e) => return g.note_error("commit of puts", &e),
        }
    }
}

/// Gets until the connection breaks: one get in four outside syncpoint, the rest under
/// syncpoint in units of 1–5 messages, one unit in seven rolled back (its messages return to the
/// queue and must still arrive once).
fn consumer(addr: String, l: Shared, seed: u64) {
    let Ok(mut c) = Client::connect(&addr, Credentials::default()) else {
        return;
    };
    let mut rng = Rng::new(seed);
    let wait = GetOptions::new().wait(Duration::from_millis(100));
    loop {
        if rng.below(4) == 0 {
            match c.get(QUEUE, &wait) {
                Ok(Some(m)) => match check_delivered(&m) {
                    Ok(id) => ledger(&l).delivered.push(id),
                    Err(why) => ledger(&l).unexpected.push(why),
                },
                Ok(None) => {}
                Err(e) => {
                    // The message this get took, if it took one, may be gone with the answer:
                    // a get outside syncpoint is delivered at most once.
                    let mut g = ledger(&l);
                    g.note_error("get", &e);
                    g.lost_gets += 1;
                    return;
                }
            }
            continue;
        }
        let want = 1 + rng.below(5);
        let mut got = Vec::new();
        while (got.len() as u64) < want {
            match c.get_syncpoint(QUEUE, &wait) {
                Ok(Some(m)) => match check_delivered(&m) {
                    Ok(id) => got.push(id),
                    Err(why) => ledger(&l).unexpected.push(why),
                },
                Ok(None) => break,
                // Not committed: the server backs these gets out.
                Err(e) => return ledger(&l).note_error("get under syncpoint", &e),
            }
        }
        if got.is_empty() {
            continue;
        }
        if rng.below(7) == 0 {
            let r = c.rollback();
            let mut g = ledger(&l);
            g.consumer_rollbacks += 1;
            if let Err(e) = r {
                return g.note_error("rollback of gets", &e);
            }
            continue;
        }
        let r = c.commit();
        let mut g = ledger(&l);
        match r {
            Ok(()) => g.delivered.extend(got),
            Err(e) => {
                g.note_error("commit of gets", &e);
                g.in_doubt_gets.extend(got);
                return;
            }
        }
    }
}

/// Tells from one stdout line of the process whether it is ready, and its client address.
pub type ReadyLine = Box<dyn Fn(&str) -> Option<String> + Send>;

/// A started process under test; SIGKILLed when dropped.
pub struct Process {
    child: Child,
    ready: Receiver<String>,
    log: PathBuf,
}

impl Process {
    /// Start `cmd` with its stderr appended to `log` (under a `what` heading) and its stdout
    /// watched for the line `ready` recognises.
    pub fn spawn(cmd: &mut Command, log: &Path, what: &str, ready: ReadyLine) -> Process {
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("open the process log");
        writeln!(f, "===== {what} =====").expect("write the process log");
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(f)
            .spawn()
            .expect("start the process under test");
        let stdout = child.stdout.take().expect("the process's stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if let Some(addr) = ready(&line) {
                    let _ = tx.send(addr);
                }
            }
        });
        Process {
            child,
            ready: rx,
            log: log.to_path_buf(),
        }
    }

    /// Wait until ready; its client address. Panics with the log's tail if it never is.
    fn wait_ready(&mut self, seed: u64) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match self.ready.recv_timeout(Duration::from_millis(50)) {
                Ok(addr) => return addr,
                Err(RecvTimeoutError::Timeout) => {}
                // It closed its stdout: it is exiting, which try_wait sees soon.
                Err(RecvTimeoutError::Disconnected) => {
                    std::thread::sleep(Duration::from_millis(50))
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "seed {seed}: the process exited with {status} before ready:\n{}",
                    tail(&self.log)
                );
            }
            if Instant::now() > deadline {
                self.kill();
                panic!(
                    "seed {seed}: the process was not ready within 60 s:\n{}",
                    tail(&self.log)
                );
            }
        }
    }

    /// SIGKILL and reap.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

fn start_load(
    addr: &str,
    plan: &Plan,
    cycle: u64,
    l: &Shared,
    rng: &mut Rng,
) -> Vec<JoinHandle<()>> {
    let mut threads = Vec::new();
    for p in 0..PRODUCERS {
        let (a, q, l, s) = (addr.to_string(), plan.put_queue, l.clone(), rng.next());
        threads.push(std::thread::spawn(move || {
            producer(a, q, format!("c{cycle}p{p}"), l, s)
        }));
    }
    for _ in 0..CONSUMERS {
        let (a, l, s) = (addr.to_string(), l.clone(), rng.next());
        threads.push(std::thread::spawn(move || consumer(a, l, s)));
    }
    threads
}

/// Everything left on the queue, got under syncpoint 200 per commit; then the dead-letter
/// queue's depth. When a flow moves the messages from `put_queue`, the drain goes on until
/// that queue is empty and nothing more arrived for a second (its last batch is committed).
fn drain(addr: &str, put_queue: &str, l: &Shared) -> (Vec<String>, usize) {
    let mut c = Client::connect(addr, Credentials::default()).expect("connect for the drain");
    let mut drained = Vec::new();
    let mut quiet = false;
    loop {
        let mut batch = Vec::new();
        while batch.len() < 200 {
            match c
                .get_syncpoint(QUEUE, &GetOptions::new())
                .expect("drain get")
            {
                Some(m) => match check_delivered(&m) {
                    Ok(id) => batch.push(id),
                    Err(why) => ledger(l).unexpected.push(why),
                },
                None => break,
            }
        }
        c.commit().expect("commit the drain");
        if !batch.is_empty() {
            drained.extend(batch);
            quiet = false;
            continue;
        }
        if put_queue == QUEUE || quiet {
            break;
        }
        let moving = c.depth(put_queue).expect("depth of the put queue") > 0;
        quiet = !moving;
        std::thread::sleep(Duration::from_millis(if moving { 20 } else { 1000 }));
    }
    assert_eq!(c.depth(QUEUE).expect("depth"), 0, "the queue is drained");
    let dead = c
        .depth("SYSTEM.DEAD.LETTER.QUEUE")
        .expect("depth of the dead-letter queue");
    (drained, dead)
}

/// What a run did, for [`Outcome::check`].
pub struct Outcome {
    plan: Plan,
    ledger: Ledger,
    drained: Vec<String>,
    dead_letters: usize,
    startup_kills: u64,
    /// Of those, the ones that came before the process was ready (in recovery).
    kills_before_ready: u64,
    /// How long the last start took to be ready.
    startup_ms: u64,
    elapsed: Duration,
}

/// Run the plan: `start(what)` starts the process under test on the same data folder each
/// time. Returns after the final drain, with the last process killed.
pub fn run(plan: Plan, mut start: impl FnMut(&str) -> Process) -> Outcome {
    let mut rng = Rng::new(plan.seed);
    let l: Shared = Arc::default();
    let started = Instant::now();
    let (mut startup_kills, mut kills_before_ready) = (0, 0);
    // How long the last start took to be ready: a kill while starting is aimed inside it.
    let mut startup_ms = 200;
    for cycle in 0..plan.cycles {
        let mut p = start(&format!("cycle {cycle}"));
        let spawned = Instant::now();
        // One start in five, and always the second, so that the short form has one too.
        if rng.below(5) == 0 || cycle == 1 {
            std::thread::sleep(Duration::from_millis(rng.below(startup_ms * 5 / 4 + 1)));
            if p.ready.try_recv().is_err() {
                kills_before_ready += 1;
            }
            p.kill();
            startup_kills += 1;
            continue;
        }
        let addr = p.wait_ready(plan.seed);
        startup_ms = spawned.elapsed().as_millis() as u64;
        let threads = start_load(&addr, &plan, cycle, &l, &mut rng);
        std::thread::sleep(Duration::from_millis(150 + rng.below(750)));
        p.kill();
        for t in threads {
            if t.join().is_err() {
                ledger(&l).unexpected.push("a load thread panicked".into());
            }
        }
    }
    let mut p = start("final drain");
    let addr = p.wait_ready(plan.seed);
    // The client has no read timeout: a server that stopped answering would hang the drain, so
    // a watchdog kills it after a while, which turns the hang into a failed drain.
    let (done, watch) = std::sync::mpsc::channel::<()>();
    let pid = p.child.id().to_string();
    let watchdog = std::thread::spawn(move || {
        if let Err(RecvTimeoutError::Timeout) = watch.recv_timeout(DRAIN_LIMIT) {
            eprintln!("the final drain took over {DRAIN_LIMIT:?}: killing the process");
            let _ = Command::new("kill").args(["-9", &pid]).status();
        }
    });
    let (drained, dead_letters) = drain(&addr, plan.put_queue, &l);
    drop(done);
    let _ = watchdog.join();
    p.kill();
    let ledger = std::mem::take(&mut *ledger(&l));
    Outcome {
        plan,
        ledger,
        drained,
        dead_letters,
        startup_kills,
        kills_before_ready,
        startup_ms,
        elapsed: started.elapsed(),
    }
}

impl Outcome {
    /// Every broken promise, by message id.
    fn violations(&self) -> Vec<String> {
        let l = &self.ledger;
        let mut errors = l.unexpected.clone();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for id in l.delivered.iter().chain(&self.drained) {
            *seen.entry(id.as_str()).or_default() += 1;
        }
        for (&id, &n) in &seen {
            if n > 1 {
                errors.push(format!("{id} delivered {n} times"));
            }
            if l.rolled_back.contains(id) {
                errors.push(format!(
                    "{id} was rolled back or uncommitted at a kill, but delivered"
                ));
            } else if !l.committed.contains(id) && !l.in_doubt_puts.contains(id) {
                errors.push(format!("{id} delivered but never put"));
            }
        }
        let lost: Vec<&String> = l
            .committed
            .iter()
            .filter(|id| !seen.contains_key(id.as_str()) && !l.in_doubt_gets.contains(*id))
            .collect();
        if lost.len() > l.lost_gets {
            for id in lost {
                errors.push(format!("{id} committed but lost"));
            }
        }
        if self.dead_letters != 0 {
            errors.push(format!(
                "{} messages on the dead-letter queue",
                self.dead_letters
            ));
        }
        errors.sort();
        errors
    }

    /// Print the figures and fail on any violation, on a log folder (`log_dir`) of more than
    /// `max_log_files` files (restarts must not make the log grow), or on too little progress.
    /// `work` (data and process log) is removed on success and kept, and named, on failure.
    pub fn check(&self, test: &str, log_dir: &Path, max_log_files: usize, work: &Path) {
        let (l, seed, cycles) = (&self.ledger, self.plan.seed, self.plan.cycles);
        let names: Vec<String> = std::fs::read_dir(log_dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let log_files = names.len();
        // Segments are numbered from 0 and the log moves to the next at every roll and every
        // start, so the newest number against the number of starts tells how many rolls the
        // load made.
        let newest_segment = names
            .iter()
            .filter_map(|n| n.strip_prefix("seg-")?.strip_suffix(".wal"))
            .filter_map(|hex| u64::from_str_radix(hex, 16).ok())
            .max()
            .unwrap_or(0);
        let mut errors = self.violations();
        if log_files > max_log_files {
            errors.push(format!(
                "{log_files} files in {} after {cycles} restarts",
                log_dir.display()
            ));
        }
        eprintln!(
            "{test}: {cycles} kills ({} while starting, {} of them before ready; a start takes \
             {} ms) in {:.1?}; {} puts committed, {} in doubt, {} rolled back; {} delivered before \
             the kills, {} drained, {} gets in doubt, {} gets outside syncpoint cut off, {} consumer \
             rollbacks; {log_files} files in the log folder, newest segment {newest_segment}",
            self.startup_kills,
            self.kills_before_ready,
            self.startup_ms,
            self.elapsed,
            l.committed.len(),
            l.in_doubt_puts.len(),
            l.rolled_back.len(),
            l.delivered.len(),
            self.drained.len(),
            l.in_doubt_gets.len(),
            l.lost_gets,
            l.consumer_rollbacks,
        );
        assert!(
            errors.is_empty(),
            "seed {seed}: {} violations (data and process log kept in {}), first: {:#?}",
            errors.len(),
            work.display(),
            &errors[..errors.len().min(20)]
        );
        let loaded = cycles - self.startup_kills;
        assert!(
            loaded == 0 || l.committed.len() as u64 > 10 * loaded,
            "seed {seed}: the load made too little progress to prove anything ({} committed puts)",
            l.committed.len()
        );
        let _ = std::fs::remove_dir_all(work);
    }
}
