//! The shared Kafka broker (sluice_flow_testing::KafkaServer), flows built in process against
//! it, and plain librdkafka clients on the other side.

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, Headers, Message as _, OwnedHeaders, OwnedMessage};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use sluice_flow::{Flow, Registry, RunningFlow, load_flow};
use sluice_flow_testing::{Captured, Harness, KafkaServer};
use sluice_node_api::{BrokerDef, KafkaBroker, KafkaSasl, Services};
use sluice_tree::{Tree, Value};

pub const WAIT: Duration = Duration::from_secs(60);

/// The shared broker, or None (after saying why) when Kafka or Java is missing.
pub fn kafka() -> Option<&'static KafkaServer> {
    KafkaServer::shared()
}

pub fn broker(bootstrap: &str) -> KafkaBroker {
    KafkaBroker {
        bootstrap_servers: bootstrap.to_string(),
        client_id: None,
        username: None,
        password_env: None,
        sasl_mechanism: KafkaSasl::Plain,
        tls: None,
    }
}

/// A flow running in process, its broker `events` the shared one.
pub struct Running {
    pub harness: Arc<Harness>,
    running: Option<RunningFlow>,
    _flow: Arc<Flow>,
    _project: Option<tempdir::Dir>,
}

mod tempdir {
    /// A folder removed on drop.
    pub struct Dir(pub std::path::PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl Running {
    pub fn stop(mut self) {
        if let Some(r) = self.running.take() {
            r.stop();
        }
    }

    /// Wait until `n` messages were captured (all captures so far, in order).
    pub fn wait_for(&self, n: usize, within: Duration) -> Vec<Captured> {
        let deadline = Instant::now() + within;
        let mut got = Vec::new();
        while got.len() < n && Instant::now() < deadline {
            got.extend(self.harness.take_captured());
            std::thread::sleep(Duration::from_millis(20));
        }
        got
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(r) = self.running.take() {
            r.stop();
        }
    }
}

/// Start the flow `src`, with ESQL modules (`name`, text) in a project folder of its own and
/// messages queued for its Inject node.
pub fn start(
    k: &KafkaServer,
    src: &str,
    esql: &[(&str, &str)],
    inject: Vec<sluice_node_api::Message>,
) -> Running {
    start_on(&k.bootstrap(), src, esql, inject)
}

/// [`start`] against the broker at `bootstrap`.
pub fn start_on(
    bootstrap: &str,
    src: &str,
    esql: &[(&str, &str)],
    inject: Vec<sluice_node_api::Message>,
) -> Running {
    let mut registry = Registry::new();
    sluice_nodes_core::register(&mut |s| registry.register(s));
    sluice_nodes_esql::register(&mut |s| registry.register(s));
    sluice_nodes_kafka::register(&mut |s| registry.register(s));
    Harness::register(&mut registry);
    let mut services = Services::none();
    services
        .brokers
        .insert("events".into(), BrokerDef::Kafka(broker(bootstrap)));
    let dir = std::env::temp_dir().join(format!(
        "sluice-kafka-flow-{}-{}",
        std::process::id(),
        unique()
    ));
    std::fs::create_dir_all(dir.join("esql")).expect("a project folder");
    for (name, text) in esql {
        std::fs::write(dir.join("esql").join(format!("{name}.esql")), text).expect("write esql");
    }
    let project = tempdir::Dir(dir);
    let def = load_flow("kafka.yaml", src, &registry).unwrap_or_else(|d| panic!("{}", d[0]));
    let harness = Harness::new();
    let flow = harness
        .build(&def, Path::new(&project.0), &services)
        .unwrap_or_else(|d| panic!("{}", d[0]));
    for m in inject {
        harness.inject(m);
    }
    let running = flow.start();
    Running {
        harness,
        running: Some(running),
        _flow: flow,
        _project: Some(project),
    }
}

/// A number no other call in this process returns, for topic and group names.
pub fn unique() -> u32 {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn config(k: &KafkaServer) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", k.bootstrap());
    c
}

/// A message to send: key, body, headers.
pub type Outgoing<'a> = (Option<&'a str>, &'a str, &'a [(&'a str, &'a str)]);

/// Send `messages` to `topic` and wait until the broker has them all.
pub fn produce(k: &KafkaServer, topic: &str, messages: &[Outgoing<'_>]) {
    let p: BaseProducer = config(k).set("acks", "all").create().expect("a producer");
    for (key, body, headers) in messages {
        let mut hs = OwnedHeaders::new();
        for (n, v) in *headers {
            hs = hs.insert(Header {
                key: n,
                value: Some(*v),
            });
        }
        let mut r: BaseRecord<'_, str, str> = BaseRecord::to(topic).payload(*body).headers(hs);
        if let Some(key) = key {
            r = r.key(*key);
        }
        p.send(r).map_err(|(e, _)| e).expect("send");
    }
    p.flush(Duration::from_secs(60)).expect("flush");
}

/// Read `n` messages of partition 0 of `topic` from its start.
pub fn consume(k: &KafkaServer, topic: &str, n: usize, within: Duration) -> Vec<OwnedMessage> {
    let c: BaseConsumer = config(k)
        .set("group.id", format!("test-reader-{}", unique()))
        .set("enable.auto.commit", "false")
        .create()
        .expect("a consumer");
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning)
        .expect("partition");
    c.assign(&tpl).expect("assign");
    let deadline = Instant::now() + within;
    let mut out = Vec::new();
    while out.len() < n && Instant::now() < deadline {
        if let Some(Ok(m)) = c.poll(Duration::from_millis(200)) {
            out.push(m.detach());
        }
    }
    out
}

/// The message's headers as (name, value) text pairs.
pub fn headers(m: &OwnedMessage) -> Vec<(String, String)> {
    m.headers()
        .map(|hs| {
            hs.iter()
                .map(|h| {
                    (
                        h.key.to_string(),
                        String::from_utf8_lossy(h.value.unwrap_or_default()).into_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

pub fn body(m: &OwnedMessage) -> String {
    String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned()
}

/// A LocalEnvironment field as text.
pub fn le_text(le: &Tree, path: &[&str]) -> Option<String> {
    let mut t = le.clone();
    let r = t.root();
    let id = t.path(r, path).ok()??;
    Some(match t.value(id) {
        Value::Character(s) => t.str(s).into_owned(),
        Value::Integer(i) => i.to_string(),
        Value::Boolean(b) => b.to_string(),
        other => format!("{other:?}"),
    })
}

/// The body of a captured message as text.
pub fn body_text(c: &Captured) -> String {
    let mut m = c.message.clone();
    let (b, _) = sluice_nodes_core::domains::serialize_body(&mut m).expect("a body");
    String::from_utf8_lossy(&b).into_owned()
}

/// Append the bodies of partition 0 of `topic` to `seen`, from its start, for `within`.
pub fn follow(
    bootstrap: &str,
    topic: &str,
    seen: &std::sync::Mutex<Vec<String>>,
    within: Duration,
) {
    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("test-follower-{}", unique()))
        .set("enable.auto.commit", "false")
        .create()
        .expect("a consumer");
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning)
        .expect("partition");
    c.assign(&tpl).expect("assign");
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Some(Ok(m)) = c.poll(Duration::from_millis(200))
            && let Ok(mut s) = seen.lock()
        {
            s.push(String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned());
        }
    }
}
