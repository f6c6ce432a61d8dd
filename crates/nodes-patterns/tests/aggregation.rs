//! The samples' Aggregation use case run in-process against a queue manager on disk: the
//! fan-out, four back-ends and the fan-in flows of samples/flows/aggregation*.yaml.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sluice_flow::{Flow, Registry, RunningFlow, load_flow};
use sluice_node_api::Services;
use sluice_node_api::http_listener::HttpRouter;
use sluice_qm::{GetOptions, Message, Persistence, PutOptions, QmConfig, QueueDef, QueueManager};

const QUEUES: &[&str] = &[
    "AGGREGATION.IN",
    "AGGREGATION.BACKEND.1",
    "AGGREGATION.BACKEND.2",
    "AGGREGATION.BACKEND.3",
    "AGGREGATION.BACKEND.4",
    "AGGREGATION.REPLIES",
    "AGGREGATION.OUT",
    "AGGREGATION.TIMEOUT",
    "AGGREGATION.UNKNOWN",
];

const STATE: &[&str] = &[
    "SYSTEM.SLUICE.AGGR.CONTROL",
    "SYSTEM.SLUICE.AGGR.REQUEST",
    "SYSTEM.SLUICE.AGGR.REPLY",
];

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples")
}

fn registry() -> Registry {
    let mut r = Registry::new();
    let mut add = |s| r.register(s);
    sluice_nodes_core::register(&mut add);
    sluice_nodes_esql::register(&mut add);
    sluice_nodes_mq::register(&mut add);
    sluice_nodes_patterns::register(&mut add);
    r
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let p = std::env::temp_dir().join(format!(
            "sluice-patterns-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&p).expect("create a temporary folder");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn open_qm(dir: &Path) -> Arc<QueueManager> {
    let qm = QueueManager::open(dir, QmConfig::default()).expect("open the queue manager");
    for q in QUEUES {
        if qm.queue_def(q).is_err() {
            qm.define(QueueDef::local(q)).expect("define a queue");
        }
    }
    qm
}

/// Start the sample flow `name` (its file under samples/flows), with `edit` applied to its
/// text.
fn start(qm: &Arc<QueueManager>, name: &str, edit: &dyn Fn(String) -> String) -> RunningFlow {
    let file = samples().join("flows").join(format!("{name}.yaml"));
    let src = edit(std::fs::read_to_string(&file).expect("read a sample flow"));
    let def = load_flow(&file.display().to_string(), &src, &registry())
        .unwrap_or_else(|d| panic!("{name}: {d:?}"));
    let services = Services {
        http: Arc::new(HttpRouter::new()),
        runtime: None,
        queues: Some(Arc::clone(qm)),
        data_dir: None,
        tcpip: None,
        datasources: Default::default(),
        brokers: Default::default(),
        cache: Default::default(),
    };
    let flow = Flow::build(&def, &samples(), &services).unwrap_or_else(|d| panic!("{name}: {d:?}"));
    Arc::new(flow).start()
}

fn as_is(s: String) -> String {
    s
}

fn backends(qm: &Arc<QueueManager>, which: &[u8]) -> Vec<RunningFlow> {
    which
        .iter()
        .map(|i| start(qm, &format!("aggregation-backend-{i}"), &as_is))
        .collect()
}

fn request(qm: &QueueManager, persistence: Persistence) {
    let mut m = Message::new("<trip><to>Paris</to></trip>");
    m.md.persistence = persistence;
    m.md.format = "MQSTR   ".into();
    qm.put("AGGREGATION.IN", m, &PutOptions::default())
        .expect("put the request");
}

fn wait_for(qm: &QueueManager, queue: &str, secs: u64) -> Option<String> {
    qm.get(queue, &GetOptions::new().wait(Duration::from_secs(secs)))
        .expect("get")
        .map(|m| String::from_utf8_lossy(&m.body).into_owned())
}

fn wait_depth(qm: &QueueManager, queue: &str, depth: usize) {
    for _ in 0..200 {
        if qm.depth(queue).unwrap_or(0) == depth {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{queue} never reached depth {depth}");
}

fn state_is_empty(qm: &QueueManager) {
    for q in STATE {
        wait_depth(qm, q, 0);
    }
}

fn depths(qm: &QueueManager) -> String {
    let mut out = String::new();
    for d in qm.list() {
        out.push_str(&format!("{}={} ", d.name, qm.depth(&d.name).unwrap_or(0)));
    }
    if let Ok(Some(m)) = qm.get("SYSTEM.DEAD.LETTER.QUEUE", &GetOptions::new()) {
        out.push_str(&format!(
            "{:?} {}",
            m.properties,
            String::from_utf8_lossy(&m.body)
        ));
    }
    out
}

fn stop(flows: Vec<RunningFlow>) {
    for f in flows {
        f.stop();
    }
}

#[test]
fn aggregation_combines_four_replies_into_one_message_when_all_arrive() {
    let dir = TempDir::new("e2e");
    let qm = open_qm(&dir.0);
    let mut flows = backends(&qm, &[1, 2, 3, 4]);
    flows.push(start(&qm, "aggregation-fanin", &as_is));
    flows.push(start(&qm, "aggregation", &as_is));
    for _ in 0..3 {
        request(&qm, Persistence::NotPersistent);
    }
    for _ in 0..3 {
        let out = wait_for(&qm, "AGGREGATION.OUT", 20).unwrap_or_else(|| panic!("{}", depths(&qm)));
        assert!(out.contains("<replies>4</replies>"), "{out}");
        for (folder, item) in [
            ("Backend1", "flight"),
            ("Backend2", "hotel"),
            ("Backend3", "car"),
            ("Backend4", "insurance"),
        ] {
            assert!(
                out.contains(&format!("<{folder}><item>{item}</item></{folder}>")),
                "{out}"
            );
        }
    }
    state_is_empty(&qm);
    assert_eq!(qm.depth("AGGREGATION.TIMEOUT").unwrap(), 0);
    stop(flows);
}

#[test]
fn aggregation_completes_when_its_replies_arrive_after_a_restart() {
    let dir = TempDir::new("restart");
    let qm = open_qm(&dir.0);
    let fanout = start(&qm, "aggregation", &as_is);
    request(&qm, Persistence::Persistent);
    for i in 1..=4 {
        wait_depth(&qm, &format!("AGGREGATION.BACKEND.{i}"), 1);
    }
    fanout.stop();
    qm.shutdown();
    drop(qm);

    let qm = open_qm(&dir.0);
    assert_eq!(qm.depth("SYSTEM.SLUICE.AGGR.CONTROL").unwrap(), 1);
    assert_eq!(qm.depth("SYSTEM.SLUICE.AGGR.REQUEST").unwrap(), 4);
    // Two replies arrive, then the server restarts again, then the other two.
    let first = backends(&qm, &[1, 2]);
    wait_depth(&qm, "AGGREGATION.REPLIES", 2);
    stop(first);
    let fanin = start(&qm, "aggregation-fanin", &as_is);
    wait_depth(&qm, "SYSTEM.SLUICE.AGGR.REPLY", 2);
    fanin.stop();
    qm.shutdown();
    drop(qm);

    let qm = open_qm(&dir.0);
    let mut flows = backends(&qm, &[3, 4]);
    flows.push(start(&qm, "aggregation-fanin", &as_is));
    let out = wait_for(&qm, "AGGREGATION.OUT", 20).expect("a combined reply");
    assert!(out.contains("<replies>4</replies>"), "{out}");
    assert!(
        out.contains("<Backend1><item>flight</item></Backend1>"),
        "{out}"
    );
    state_is_empty(&qm);
    stop(flows);
}

#[test]
fn aggregation_propagates_what_arrived_to_timeout_when_replies_are_missing() {
    let dir = TempDir::new("timeout");
    let qm = open_qm(&dir.0);
    let one_second = |s: String| s.replace("timeout_secs: 10", "timeout_secs: 1");
    let mut flows = backends(&qm, &[2]);
    flows.push(start(&qm, "aggregation-fanin", &as_is));
    flows.push(start(&qm, "aggregation", &one_second));
    request(&qm, Persistence::Persistent);
    let out = wait_for(&qm, "AGGREGATION.TIMEOUT", 20).expect("a timed-out reply");
    assert!(out.contains("<replies>1</replies>"), "{out}");
    assert!(
        out.contains("<Backend2><item>hotel</item></Backend2>"),
        "{out}"
    );
    state_is_empty(&qm);
    // A late reply belongs to no aggregation any more.
    stop(flows);
    let late = backends(&qm, &[1]);
    let fanin = start(&qm, "aggregation-fanin", &as_is);
    let unknown = wait_for(&qm, "AGGREGATION.UNKNOWN", 20).expect("the late reply");
    assert!(unknown.contains("<item>flight</item>"), "{unknown}");
    assert_eq!(qm.depth("AGGREGATION.OUT").unwrap(), 0);
    fanin.stop();
    stop(late);
}

#[test]
fn aggregate_reply_sends_a_reply_to_unknown_when_it_answers_no_request() {
    let dir = TempDir::new("unknown");
    let qm = open_qm(&dir.0);
    let fanin = start(&qm, "aggregation-fanin", &as_is);
    let mut m = Message::new("<booked><item>boat</item></booked>");
    m.md.correl_id = *b"NOT A REQUEST OF OURS...";
    qm.put("AGGREGATION.REPLIES", m, &PutOptions::default())
        .unwrap();
    let unknown = wait_for(&qm, "AGGREGATION.UNKNOWN", 20).expect("the reply");
    assert!(unknown.contains("boat"), "{unknown}");
    fanin.stop();
}
