//! A Mosquitto started for one test (free port, temporary folder, killed at the end), flows
//! built in process against it, and plain rumqttc clients on the other side.

#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rumqttc::{Client, Event, MqttOptions, Packet, QoS};
use sluice_flow::{Flow, Registry, RunningFlow, load_flow};
use sluice_flow_testing::{Captured, Harness, require_tool};
use sluice_node_api::{BrokerDef, MqttBroker, Services};
use sluice_tree::{Tree, Value};

pub struct Mosquitto {
    pub port: u16,
    child: Child,
    dir: PathBuf,
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A Mosquitto on a free port, or None (after saying why) when it is not installed.
pub fn mosquitto(test: &str) -> Option<Mosquitto> {
    let bin = require_tool("Mosquitto", &["mosquitto", "/usr/sbin/mosquitto"])?;
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let dir = std::env::temp_dir().join(format!("sluice-mqtt-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let conf = dir.join("mosquitto.conf");
    std::fs::write(
        &conf,
        format!("listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"),
    )
    .expect("write mosquitto.conf");
    let child = Command::new(bin)
        .arg("-c")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mosquitto");
    let m = Mosquitto { port, child, dir };
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "mosquitto did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(m)
}

pub fn broker(port: u16) -> MqttBroker {
    MqttBroker {
        url: format!("tcp://127.0.0.1:{port}"),
        host: "127.0.0.1".into(),
        port,
        client_id: None,
        username: None,
        password_env: None,
        tls: None,
        keep_alive_secs: 30,
    }
}

/// A flow running in process, its broker `local` on `port`.
pub struct Running {
    pub harness: Arc<Harness>,
    running: Option<RunningFlow>,
    _flow: Arc<Flow>,
    _runtime: tokio::runtime::Runtime,
}

impl Running {
    /// Stop the flow (as a server does when it shuts down or redeploys).
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

pub fn start(src: &str, port: u16) -> Running {
    start_injecting(src, port, Vec::new())
}

/// Start the flow with messages queued for its Inject node (which takes them as it starts).
pub fn start_injecting(src: &str, port: u16, inject: Vec<sluice_node_api::Message>) -> Running {
    let mut registry = Registry::new();
    sluice_nodes_core::register(&mut |s| registry.register(s));
    sluice_nodes_mqtt::register(&mut |s| registry.register(s));
    Harness::register(&mut registry);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut services = Services {
        runtime: Some(runtime.handle().clone()),
        ..Services::none()
    };
    services
        .brokers
        .insert("local".into(), BrokerDef::Mqtt(broker(port)));
    let def = load_flow("mqtt.yaml", src, &registry).unwrap_or_else(|d| panic!("{}", d[0]));
    let harness = Harness::new();
    let flow = harness
        .build(&def, std::path::Path::new("."), &services)
        .unwrap_or_else(|d| panic!("{}", d[0]));
    for m in inject {
        harness.inject(m);
    }
    let running = flow.start();
    Running {
        harness,
        running: Some(running),
        _flow: flow,
        _runtime: runtime,
    }
}

fn options(port: u16) -> MqttOptions {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    MqttOptions::new(
        format!("test-{}-{n}", std::process::id()),
        "127.0.0.1",
        port,
    )
}

/// Publish with a plain 3.1.1 client, waiting for the broker's acknowledgement.
pub fn publish(port: u16, topic: &str, qos: QoS, retain: bool, payload: &[u8]) {
    let (client, mut conn) = Client::new(options(port), 10);
    client
        .publish(topic, qos, retain, payload.to_vec())
        .expect("publish");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        match conn.recv_timeout(Duration::from_millis(200)) {
            Ok(Ok(Event::Incoming(Packet::PubAck(_) | Packet::PubComp(_)))) => break,
            Ok(Ok(Event::Outgoing(rumqttc::Outgoing::Publish(_)))) if qos == QoS::AtMostOnce => {
                break;
            }
            Ok(Err(e)) => panic!("publishing: {e}"),
            _ => {}
        }
    }
    let _ = client.disconnect();
    let _ = conn.recv_timeout(Duration::from_millis(200));
}

/// A 3.1.1 subscriber on `filter` that collects what arrives, on its own thread.
pub struct Subscriber {
    rx: std::sync::mpsc::Receiver<rumqttc::Publish>,
}

impl Subscriber {
    pub fn new(port: u16, filter: &str) -> Subscriber {
        let (client, mut conn) = Client::new(options(port), 10);
        client
            .subscribe(filter, QoS::ExactlyOnce)
            .expect("subscribe");
        let (tx, rx) = std::sync::mpsc::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _client = client;
            for ev in conn.iter() {
                match ev {
                    Ok(Event::Incoming(Packet::SubAck(_))) => {
                        let _ = ready_tx.send(());
                    }
                    // A receiver gone ends the test; the connection ends with it.
                    Ok(Event::Incoming(Packet::Publish(p))) => {
                        let _ = tx.send(p);
                    }
                    Err(_) => return,
                    _ => {}
                }
            }
        });
        ready_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the subscription acknowledged");
        Subscriber { rx }
    }

    pub fn take(&self, n: usize, within: Duration) -> Vec<rumqttc::Publish> {
        let deadline = Instant::now() + within;
        let mut out = Vec::new();
        while out.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(p) => out.push(p),
                Err(_) => break,
            }
        }
        out
    }
}

/// Publish QoS 0 probes on `topic` until the flow captured one: its subscription is then in
/// place. The probes are dropped from the captures.
pub fn wait_subscribed(port: u16, flow: &Running, topic: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(Instant::now() < deadline, "the flow never subscribed");
        publish(port, topic, QoS::AtMostOnce, false, b"probe");
        std::thread::sleep(Duration::from_millis(100));
        let got = flow.harness.take_captured();
        if got.iter().any(|c| {
            le_text(&c.message.local_environment, &["MQTT", "Input", "Topic"]).as_deref()
                == Some(topic)
        }) {
            // Later probes may still be on their way.
            std::thread::sleep(Duration::from_millis(200));
            flow.harness.take_captured();
            return;
        }
    }
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

/// The body of a captured BLOB message as text.
pub fn body_text(c: &Captured) -> String {
    let mut m = c.message.clone();
    let (b, _) = sluice_nodes_core::domains::serialize_body(&mut m).expect("a body");
    String::from_utf8_lossy(&b).into_owned()
}
