//! Coordinated transactions survive kill -9: a real `sluice run` moves messages MQInput →
//! Compute (an INSERT into PostgreSQL) → MQOutput under `transaction: coordinated`, and is
//! killed again and again — by the test hook `SLUICE_TEST_CRASH_AT` at each point of the
//! two-phase commit (after the prepare, after the decision, after the commit of the prepared
//! transactions) and by SIGKILL at a random moment. After each kill the queue manager's files
//! and the database are read directly: every message is on exactly one of the two queues; a
//! committed row has its output message; every output message without a row has its
//! transaction prepared and named by a decision (the next start commits it). After each
//! restart no transaction prepared before the kill is left. At the end, once everything was
//! moved: every message is in the table exactly once and on the output queue exactly once,
//! the input queue is empty and `pg_prepared_xacts` is empty.
//!
//! Short form (in the normal suite): `cargo test -p sluice --test coordinated`.
//! Long form: `SLUICE_COORDINATED_CYCLES=200 cargo test -p sluice --test coordinated -- --nocapture`.
//! Replay a run's random choices with `SLUICE_COORDINATED_SEED=<the seed it printed>`.

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use sluice_db::{Datasource, DbError, SqlValueRef};
use sluice_flow_testing::PgServer;
use sluice_qm::{
    BrowseCursor, GetOptions, Message, Persistence, PutOptions, QmConfig, QueueDef, QueueManager,
};

/// Kills in the short form.
const DEFAULT_CYCLES: u64 = 12;

const SLUICE_YAML: &str = "queues:
  - { name: TWOPC.IN, max_depth: 1000000, default_persistence: persistent }
  - { name: TWOPC.OUT, max_depth: 1000000, default_persistence: persistent }
datasources:
  STORE: { postgres: 'URL' }
";

const FLOW_YAML: &str = "flow: move
transaction: coordinated
instances: 2
nodes:
  in: { type: MQInput, queue: TWOPC.IN, domain: XMLNSC, wires: { out: [store] } }
  store: { type: Compute, module: Store, datasource: STORE, wires: { out: [out] } }
  out: { type: MQOutput, queue: TWOPC.OUT }
";

const ESQL: &str = "CREATE COMPUTE MODULE Store
 CREATE FUNCTION Main() RETURNS BOOLEAN
 BEGIN
  INSERT INTO Database.seen(id) VALUES(InputRoot.XMLNSC.m.id);
  SET OutputRoot = InputRoot;
  RETURN TRUE;
 END;
END MODULE;
";

/// Where the hook aborts the process, by cycle; the last kind is a SIGKILL at a random moment.
const POINTS: [&str; 4] = [
    "after_prepare",
    "after_decision",
    "after_commit_prepared",
    "",
];

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// A started `sluice run`; SIGKILLed when dropped.
struct Sluice {
    child: Child,
    ready: Receiver<()>,
}

impl Sluice {
    fn start(project: &Path, data: &Path, log: &Path, crash_at: Option<String>) -> Sluice {
        let port = || {
            std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map(|a| a.port().to_string())
                .expect("a free port")
        };
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("the server log");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sluice"));
        cmd.arg("run")
            .arg(project)
            .args(["--bind", "127.0.0.1"])
            .args(["--http-port", &port()])
            .args(["--admin-port", &port()])
            .args(["--qm-port", &port()])
            .args(["--tcpip-port", &port()])
            .arg("--data-dir")
            .arg(data)
            .env_remove("SLUICE_TEST_CRASH_AT")
            .stdout(Stdio::piped())
            .stderr(stderr);
        if let Some(at) = crash_at {
            cmd.env("SLUICE_TEST_CRASH_AT", at);
        }
        let mut child = cmd.spawn().expect("start sluice");
        let stdout = child.stdout.take().expect("its stdout");
        let (tx, ready) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if line.trim() == "ready" {
                    let _ = tx.send(());
                }
            }
        });
        Sluice { child, ready }
    }

    /// Whether it became ready (false: it exited first, as a crash hook makes it do).
    fn wait_ready(&mut self, log: &Path) -> bool {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match self.ready.recv_timeout(Duration::from_millis(20)) {
                Ok(()) => return true,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    std::thread::sleep(Duration::from_millis(20))
                }
            }
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            assert!(
                Instant::now() < deadline,
                "sluice was not ready within 60 s:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
    }

    /// Wait up to `d` for it to end by itself; then SIGKILL it. Whether it ended by itself.
    fn end_within(&mut self, d: Duration) -> bool {
        let deadline = Instant::now() + d;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        false
    }

    /// SIGTERM, and wait for the drained exit.
    fn stop(&mut self) {
        // SAFETY: signalling the process this test started.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let _ = self.child.wait();
    }
}

impl Drop for Sluice {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The state of the queues and the database while no server runs.
struct State {
    /// Message id → how many times on the input queue, on the output queue.
    on_in: BTreeMap<String, usize>,
    on_out: BTreeMap<String, usize>,
    /// Message id → committed rows.
    rows: BTreeMap<String, usize>,
    /// Transactions left prepared.
    prepared: Vec<String>,
    /// Transaction ids named by a commit decision.
    decided: HashSet<String>,
}

fn body_id(m: &Message) -> String {
    let text = String::from_utf8_lossy(&m.body);
    text.split("<id>")
        .nth(1)
        .and_then(|r| r.split("</id>").next())
        .unwrap_or("?")
        .to_string()
}

fn queue_ids(qm: &QueueManager, queue: &str) -> BTreeMap<String, usize> {
    let mut ids = BTreeMap::new();
    let mut cursor = BrowseCursor::new();
    while let Some(m) = qm
        .browse(queue, &GetOptions::new(), &mut cursor)
        .expect("browse")
    {
        *ids.entry(body_id(&m)).or_insert(0) += 1;
    }
    ids
}

fn text(v: SqlValueRef<'_>) -> String {
    match v {
        SqlValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        SqlValueRef::Integer(i) => i.to_string(),
        other => format!("{other:?}"),
    }
}

fn read_state(qm_dir: &Path, db: &Datasource) -> State {
    let qm = QueueManager::open(qm_dir, QmConfig::default()).expect("open the queue manager");
    let on_in = queue_ids(&qm, "TWOPC.IN");
    let on_out = queue_ids(&qm, "TWOPC.OUT");
    let decided = qm
        .decisions()
        .expect("decisions")
        .into_iter()
        .flat_map(|d| d.xids)
        .collect();
    qm.shutdown();
    drop(qm);
    let mut rows = BTreeMap::new();
    let mut prepared = Vec::new();
    let c = db.statement().expect("connection");
    c.query("SELECT id, COUNT(*) FROM seen GROUP BY id", &[], |r| {
        rows.insert(text(r.get(0)?), text(r.get(1)?).parse().unwrap_or(0));
        Ok::<_, DbError>(())
    })
    .expect("rows");
    c.query("SELECT gid FROM pg_prepared_xacts", &[], |r| {
        prepared.push(text(r.get(0)?));
        Ok::<_, DbError>(())
    })
    .expect("prepared");
    State {
        on_in,
        on_out,
        rows,
        prepared,
        decided,
    }
}

/// The invariants that must hold at any kill (see the module doc).
fn check_after_kill(s: &State, ids: &[String], cycle: u64, seed: u64) {
    let why = |what: String| format!("seed {seed}, cycle {cycle}: {what}");
    for id in ids {
        let (i, o) = (
            s.on_in.get(id).copied().unwrap_or(0),
            s.on_out.get(id).copied().unwrap_or(0),
        );
        assert_eq!(
            i + o,
            1,
            "{}",
            why(format!("{id} is {i}× on input, {o}× on output"))
        );
        let r = s.rows.get(id).copied().unwrap_or(0);
        assert!(r <= 1, "{}", why(format!("{id} has {r} rows")));
        assert!(
            r == 0 || o == 1,
            "{}",
            why(format!("{id} has a row but no output"))
        );
    }
    let out_without_row = ids
        .iter()
        .filter(|id| s.on_out.contains_key(*id) && !s.rows.contains_key(*id))
        .count();
    let to_commit = s.prepared.iter().filter(|x| s.decided.contains(*x)).count();
    assert_eq!(
        out_without_row,
        to_commit,
        "{}",
        why(format!(
            "output messages without a row must each have a decided prepared transaction (prepared {:?}, decided {:?})",
            s.prepared, s.decided
        ))
    );
}

fn count_rows(db: &Datasource) -> i64 {
    let mut n = 0;
    db.statement()
        .expect("connection")
        .query("SELECT COUNT(*) FROM seen", &[], |r| {
            n = text(r.get(0)?).parse().unwrap_or(0);
            Ok::<_, DbError>(())
        })
        .expect("count");
    n
}

fn still_prepared(db: &Datasource, gids: &[String]) -> Vec<String> {
    let mut left = Vec::new();
    db.statement()
        .expect("connection")
        .query("SELECT gid FROM pg_prepared_xacts", &[], |r| {
            let g = text(r.get(0)?);
            if gids.contains(&g) {
                left.push(g);
            }
            Ok::<_, DbError>(())
        })
        .expect("prepared");
    left
}

#[test]
fn a_coordinated_flow_killed_again_and_again_keeps_queue_and_table_in_step() {
    let Some(pg) = PgServer::start() else {
        return;
    };
    let cycles = std::env::var("SLUICE_COORDINATED_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CYCLES);
    let seed = std::env::var("SLUICE_COORDINATED_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1
        });
    println!("coordinated crash test: {cycles} cycles, seed {seed}");
    let mut rng = Rng(seed);
    let work: PathBuf =
        std::env::temp_dir().join(format!("sluice-coordinated-{}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let (project, data, log) = (
        work.join("project"),
        work.join("data"),
        work.join("server.log"),
    );
    std::fs::create_dir_all(project.join("flows")).expect("project");
    std::fs::create_dir_all(project.join("esql")).expect("esql folder");
    std::fs::write(
        project.join("sluice.yaml"),
        SLUICE_YAML.replace("URL", &pg.url()),
    )
    .expect("sluice.yaml");
    std::fs::write(project.join("flows/move.yaml"), FLOW_YAML).expect("flow");
    std::fs::write(project.join("esql/store.esql"), ESQL).expect("esql");
    let db = Datasource::postgres("check", &pg.url(), None).expect("datasource");
    db.statement()
        .expect("connection")
        .execute_batch("CREATE TABLE seen(id TEXT NOT NULL)")
        .expect("table");

    // Enough messages that no cycle runs out before its crash point.
    let n = cycles * 4 + 20;
    let mut ids: Vec<String> = (0..n).map(|i| format!("m{i}")).collect();
    let qm_dir = data.join("qm");
    {
        let qm = QueueManager::open(&qm_dir, QmConfig::default()).expect("open");
        for q in ["TWOPC.IN", "TWOPC.OUT"] {
            qm.define(QueueDef::local(q)).expect("define");
        }
        for id in &ids {
            let mut m = Message::new(format!("<m><id>{id}</id></m>"));
            m.md.persistence = Persistence::Persistent;
            qm.put("TWOPC.IN", m, &PutOptions::default()).expect("put");
        }
        qm.shutdown();
    }

    let started = Instant::now();
    let mut left_prepared: Vec<String> = Vec::new();
    let mut by_hook = 0;
    for cycle in 0..cycles {
        let point = POINTS[(cycle % POINTS.len() as u64) as usize];
        let hook = (!point.is_empty()).then(|| format!("{point}:{}", 1 + rng.below(3)));
        let mut s = Sluice::start(&project, &data, &log, hook.clone());
        if s.wait_ready(&log) {
            // Recovery ran before the flow started: what the last kill left prepared is settled.
            let left = still_prepared(&db, &left_prepared);
            assert!(
                left.is_empty(),
                "seed {seed}, cycle {cycle}: still prepared after the restart: {left:?}"
            );
        }
        let ended = match hook {
            Some(_) => s.end_within(Duration::from_secs(20)),
            None => s.end_within(Duration::from_millis(50 + rng.below(400))),
        };
        by_hook += u64::from(ended);
        drop(s);
        let state = read_state(&qm_dir, &db);
        check_after_kill(&state, &ids, cycle, seed);
        // The start in between settled whatever the kill before it left (recovery runs before
        // any flow, so even a start that crashed soon after did).
        let unsettled: Vec<&String> = state
            .prepared
            .iter()
            .filter(|g| left_prepared.contains(g))
            .collect();
        assert!(
            unsettled.is_empty(),
            "seed {seed}, cycle {cycle}: a restart left {unsettled:?} prepared"
        );
        left_prepared = state.prepared;
        // A SIGKILL cycle may move many messages: the input is topped up so that every
        // crash point is still reached (with no message, a hook would never fire).
        if state.on_in.len() < 20 {
            let qm = QueueManager::open(&qm_dir, QmConfig::default()).expect("open");
            for i in 0..40 {
                let id = format!("m{}", ids.len() + i);
                let mut m = Message::new(format!("<m><id>{id}</id></m>"));
                m.md.persistence = Persistence::Persistent;
                qm.put("TWOPC.IN", m, &PutOptions::default()).expect("put");
            }
            qm.shutdown();
            let next = ids.len();
            ids.extend((next..next + 40).map(|i| format!("m{i}")));
        }
    }
    let n = ids.len() as u64;

    // A last run without kills moves the rest.
    let mut s = Sluice::start(&project, &data, &log, None);
    assert!(s.wait_ready(&log), "the last run did not start");
    let left = still_prepared(&db, &left_prepared);
    assert!(
        left.is_empty(),
        "seed {seed}: still prepared after the last restart: {left:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    while count_rows(&db) < n as i64 {
        assert!(
            Instant::now() < deadline,
            "seed {seed}: only {} of {n} rows after 2 minutes:\n{}",
            count_rows(&db),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    s.stop();
    drop(s);
    let state = read_state(&qm_dir, &db);
    for id in &ids {
        assert_eq!(
            state.on_in.get(id),
            None,
            "seed {seed}: {id} is still on the input queue"
        );
        assert_eq!(
            state.on_out.get(id),
            Some(&1),
            "seed {seed}: {id} on the output queue"
        );
        assert_eq!(
            state.rows.get(id),
            Some(&1),
            "seed {seed}: {id} in the table"
        );
    }
    assert!(
        state.prepared.is_empty(),
        "seed {seed}: {:?}",
        state.prepared
    );
    assert!(
        state.decided.is_empty(),
        "seed {seed}: decisions left {:?}",
        state.decided
    );
    println!(
        "coordinated crash test: {cycles} cycles ({by_hook} ended by the crash hook), {n} messages, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&work);
}
