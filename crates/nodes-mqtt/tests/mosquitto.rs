//! MQTTSubscribe and MQTTPublish against a real Mosquitto that each test starts.

mod common;

use std::time::Duration;

use common::{Subscriber, body_text, le_text, mosquitto, publish, start, wait_subscribed};
use rumqttc::QoS;

const WAIT: Duration = Duration::from_secs(15);

#[test]
fn a_bridge_republishes_every_message_when_its_topic_matches_the_filter() {
    let Some(mq) = mosquitto("bridge") else {
        return;
    };
    let out = Subscriber::new(mq.port, "out/#");
    let flow = start(
        "flow: bridge\nnodes:\n  \
         in: { type: MQTTSubscribe, broker: local, topics: ['in/#', probe], wires: { out: [seen, pub] } }\n  \
         seen: { type: Capture }\n  \
         pub: { type: MQTTPublish, broker: local, topic: out/bridged, qos: 1 }\n",
        mq.port,
    );
    wait_subscribed(mq.port, &flow, "probe");
    let got_probes = out.take(100, Duration::from_millis(300)).len();
    for (topic, body) in [
        ("in/a", "one"),
        ("in/b/c", "two"),
        ("other", "no"),
        ("in", "three"),
    ] {
        publish(mq.port, topic, QoS::AtLeastOnce, false, body.as_bytes());
    }
    let got = out.take(3, WAIT);
    let bodies: Vec<String> = got
        .iter()
        .map(|p| String::from_utf8_lossy(&p.payload).into_owned())
        .collect();
    assert_eq!(
        bodies,
        ["one", "two", "three"],
        "(after {got_probes} probes)"
    );
    assert!(got.iter().all(|p| p.topic == "out/bridged"));
    let seen = flow.wait_for(3, WAIT);
    let topics: Vec<Option<String>> = seen
        .iter()
        .map(|c| le_text(&c.message.local_environment, &["MQTT", "Input", "Topic"]))
        .collect();
    assert_eq!(
        topics,
        [
            Some("in/a".into()),
            Some("in/b/c".into()),
            Some("in".into())
        ]
    );
    assert_eq!(
        le_text(
            &seen[0].message.local_environment,
            &["MQTT", "Input", "QualityOfService"]
        ),
        Some("1".into())
    );
}

#[test]
fn single_level_wildcard_matches_one_level_when_subscribed() {
    let Some(mq) = mosquitto("plus") else {
        return;
    };
    let flow = start(
        "flow: plus\nnodes:\n  \
         in: { type: MQTTSubscribe, broker: local, topics: ['sensors/+/temp', probe], qos: 2, wires: { out: [seen] } }\n  \
         seen: { type: Capture }\n",
        mq.port,
    );
    wait_subscribed(mq.port, &flow, "probe");
    publish(mq.port, "sensors/1/temp", QoS::ExactlyOnce, false, b"21");
    publish(
        mq.port,
        "sensors/1/humidity",
        QoS::ExactlyOnce,
        false,
        b"40",
    );
    publish(mq.port, "sensors/2/b/temp", QoS::ExactlyOnce, false, b"0");
    publish(mq.port, "sensors/2/temp", QoS::ExactlyOnce, false, b"22");
    let seen = flow.wait_for(2, WAIT);
    std::thread::sleep(Duration::from_millis(300));
    let mut seen = seen;
    seen.extend(flow.harness.take_captured());
    let bodies: Vec<String> = seen.iter().map(body_text).collect();
    assert_eq!(bodies, ["21", "22"]);
    assert_eq!(
        le_text(
            &seen[1].message.local_environment,
            &["MQTT", "Input", "QualityOfService"]
        ),
        Some("2".into())
    );
}

#[test]
fn a_qos1_message_comes_again_when_the_flow_fails_and_then_goes_to_failure() {
    let Some(mq) = mosquitto("redeliver") else {
        return;
    };
    let flow = start(
        "flow: redeliver\nnodes:\n  \
         in: { type: MQTTSubscribe, broker: local, topics: ['jobs/#', probe], backout_threshold: 2, wires: { out: [seen, boom], failure: [failed] } }\n  \
         seen: { type: Capture }\n  \
         boom: { type: Throw, message_text: refused }\n  \
         failed: { type: Capture }\n",
        mq.port,
    );
    wait_subscribed(mq.port, &flow, "probe");
    publish(mq.port, "jobs/1", QoS::AtLeastOnce, false, b"work");
    let got = flow.wait_for(3, WAIT);
    let labels: Vec<&str> = got.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["seen", "seen", "failed"]);
    let dup = |i: usize| {
        le_text(
            &got[i].message.local_environment,
            &["MQTT", "Input", "Duplicate"],
        )
    };
    assert_eq!(dup(0), Some("false".into()));
    assert_eq!(dup(1), Some("true".into()), "the broker sent it again");
    assert_eq!(body_text(&got[2]), "work");
    // Acknowledged once it went to failure: it does not come again.
    std::thread::sleep(Duration::from_millis(500));
    assert!(flow.harness.take_captured().is_empty());
}

#[test]
fn messages_published_while_the_flow_is_stopped_arrive_when_it_starts_again() {
    let Some(mq) = mosquitto("restart") else {
        return;
    };
    // The persistent session keeps the subscription and what arrives meanwhile for the same
    // client id, as it does for a server that was killed.
    let src = "flow: restart\nnodes:\n  \
         in: { type: MQTTSubscribe, broker: local, client_id: restart-1, topics: ['jobs/#', probe], wires: { out: [seen] } }\n  \
         seen: { type: Capture }\n";
    let flow = start(src, mq.port);
    wait_subscribed(mq.port, &flow, "probe");
    flow.stop();
    publish(mq.port, "jobs/2", QoS::AtLeastOnce, false, b"kept");
    let flow = start(src, mq.port);
    let got = flow.wait_for(1, WAIT);
    let bodies: Vec<String> = got.iter().map(body_text).collect();
    assert_eq!(bodies, ["kept"]);
}

#[test]
fn retained_messages_reach_a_new_subscriber_when_published_with_retain() {
    let Some(mq) = mosquitto("retained") else {
        return;
    };
    publish(mq.port, "state/door", QoS::AtLeastOnce, true, b"open");
    let flow = start(
        "flow: retained\nnodes:\n  \
         in: { type: MQTTSubscribe, broker: local, topics: ['state/#'], wires: { out: [seen, pub] } }\n  \
         seen: { type: Capture }\n  \
         pub: { type: MQTTPublish, broker: local, topic: copy/door, retain: true }\n",
        mq.port,
    );
    let got = flow.wait_for(1, WAIT);
    assert_eq!(got.len(), 1);
    assert_eq!(
        le_text(
            &got[0].message.local_environment,
            &["MQTT", "Input", "Retained"]
        ),
        Some("true".into())
    );
    assert_eq!(body_text(&got[0]), "open");
    // MQTTPublish retained its copy: a subscriber that comes later gets it.
    std::thread::sleep(Duration::from_millis(300));
    let late = Subscriber::new(mq.port, "copy/door");
    let copies = late.take(1, WAIT);
    assert_eq!(copies.len(), 1);
    assert!(copies[0].retain);
    assert_eq!(&copies[0].payload[..], b"open");
}

#[test]
fn mqtt5_user_properties_reach_the_local_environment_and_the_published_message() {
    let Some(mq) = mosquitto("v5") else {
        return;
    };
    let (out_tx, out_rx) = std::sync::mpsc::channel();
    let watcher = v5_subscriber(mq.port, "v5/out", out_tx);
    let flow = start(
        "flow: v5\nnodes:\n  \
         in: { type: MQTTSubscribe, broker: local, protocol: 5, topics: ['v5/in', probe], wires: { out: [seen, pub] } }\n  \
         seen: { type: Capture }\n  \
         pub: { type: MQTTPublish, broker: local, protocol: 5, topic: v5/out, qos: 2, content_type: text/plain, user_properties: { origin: sluice } }\n",
        mq.port,
    );
    wait_subscribed(mq.port, &flow, "probe");
    // Probes were bridged too.
    while out_rx.recv_timeout(Duration::from_millis(300)).is_ok() {}
    v5_publish(
        mq.port,
        "v5/in",
        vec![("tenant".into(), "acme".into())],
        "application/json",
    );
    let got = flow.wait_for(1, WAIT);
    assert_eq!(got.len(), 1);
    let le = &got[0].message.local_environment;
    assert_eq!(
        le_text(le, &["MQTT", "Input", "UserProperties", "tenant"]),
        Some("acme".into())
    );
    assert_eq!(
        le_text(le, &["MQTT", "Input", "ContentType"]),
        Some("application/json".into())
    );
    let (props, ct) = out_rx.recv_timeout(WAIT).expect("the bridged message");
    assert_eq!(props, [("origin".to_string(), "sluice".to_string())]);
    assert_eq!(ct.as_deref(), Some("text/plain"));
    drop(watcher);
}

#[test]
fn mqtt_publish_fails_to_its_failure_terminal_when_the_broker_is_down() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let flow = common::start_injecting(
        "flow: down\nnodes:\n  \
         src: { type: Inject, wires: { out: [pub] } }\n  \
         pub: { type: MQTTPublish, broker: local, topic: t, ack_timeout_secs: 5, wires: { out: [ok], failure: [failed] } }\n  \
         ok: { type: Capture }\n  \
         failed: { type: Capture }\n",
        port,
        vec![sluice_node_api::Message::new()],
    );
    let got = flow.wait_for(1, WAIT);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].label, "failed");
}

type Seen = (Vec<(String, String)>, Option<String>);

fn v5_subscriber(
    port: u16,
    filter: &str,
    tx: std::sync::mpsc::Sender<Seen>,
) -> std::thread::JoinHandle<()> {
    use rumqttc::v5::mqttbytes::v5::Packet;
    use rumqttc::v5::{Client, Event, MqttOptions};
    let (client, mut conn) = Client::new(
        MqttOptions::new(format!("v5-sub-{}", std::process::id()), "127.0.0.1", port),
        10,
    );
    client
        .subscribe(filter, rumqttc::v5::mqttbytes::QoS::AtLeastOnce)
        .expect("subscribe");
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        let _client = client;
        for ev in conn.iter() {
            match ev {
                Ok(Event::Incoming(Packet::SubAck(_))) => {
                    let _ = ready_tx.send(());
                }
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    let props = p.properties.unwrap_or_default();
                    if tx
                        .send((props.user_properties, props.content_type))
                        .is_err()
                    {
                        return;
                    }
                }
                Err(_) => return,
                _ => {}
            }
        }
    });
    ready_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the subscription acknowledged");
    h
}

fn v5_publish(port: u16, topic: &str, user_properties: Vec<(String, String)>, content_type: &str) {
    use rumqttc::v5::mqttbytes::v5::{Packet, PublishProperties};
    use rumqttc::v5::{Client, Event, MqttOptions};
    let (client, mut conn) = Client::new(
        MqttOptions::new(format!("v5-pub-{}", std::process::id()), "127.0.0.1", port),
        10,
    );
    let props = PublishProperties {
        user_properties,
        content_type: Some(content_type.into()),
        ..Default::default()
    };
    client
        .publish_with_properties(
            topic,
            rumqttc::v5::mqttbytes::QoS::AtLeastOnce,
            false,
            b"{\"v\":1}".to_vec(),
            props,
        )
        .expect("publish");
    for ev in conn.iter() {
        match ev {
            Ok(Event::Incoming(Packet::PubAck(_))) => break,
            Err(e) => panic!("publishing: {e}"),
            _ => {}
        }
    }
    let _ = client.disconnect();
}
