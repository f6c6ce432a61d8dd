//! MQTTPublish: publishes the message body to a topic and, at QoS 1 or 2, waits for the broker's
//! PUBACK or PUBCOMP before the flow goes on, so that a flow that continued (and committed its
//! input) never leaves a publish the broker did not take.
//!
//! The connection is opened at the first message (building the node touches no socket) and
//! shared by the flow's instances; when it fails, the messages waiting on it fail (the input
//! node backs them out) and the next message opens a new one.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, MqttBroker,
    Node, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, StringMap, Terminal,
    Terminals, properties,
};
use sluice_nodes_core::domains::serialize_body;
use sluice_nodes_core::terminals::{FailureOut, In};
use tokio::sync::{oneshot, watch};

use crate::MqttError;
use crate::connection::{self, Client, Event, Outgoing, Protocol, Qos, Session};
use crate::tree;

pub static MQTT_PUBLISH: NodeSpec = NodeSpec {
    type_name: "MQTTPublish",
    summary: "Publishes the message body, serialised in its domain, to a topic on an MQTT broker (3.1.1 or \
              5); `LocalEnvironment.Destination.MQTT.Output` (TopicName, qos, Retained, and at MQTT 5 \
              ContentType and UserProperties) overrides the properties. At QoS 1 and 2 the flow goes \
              on only once the broker acknowledged; `LocalEnvironment.WrittenDestination.MQTT` says \
              what was published.",
    inputs: In::SPECS,
    outputs: FailureOut::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Each message is published on `plant/alerts`, retained",
        properties: "broker: local, topic: plant/alerts, qos: 1, retain: true",
        esql: "",
        input: ExampleInput {
            domain: "JSON",
            body: r#"{"alert":"overheat"}"#,
            local_environment: &[],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", r#"{"alert":"overheat"}"#)]),
        runs: Runs::No("it needs a running MQTT broker."),
    }],
    builder: NodeBuilder::of::<MqttPublishProps>(),
};

properties! {
    /// MQTTPublish's properties.
    pub struct MqttPublishProps {
        /// The broker, by its name under `brokers:` in sluice.yaml.
        broker: String,
        /// The topic; `LocalEnvironment.Destination.MQTT.Output.TopicName` overrides it.
        topic: Option<String>,
        /// 0 at most once, 1 at least once, 2 exactly once.
        qos: Qos = "1",
        /// Have the broker keep the message as the topic's last (retained) message.
        retain: bool = "false",
        /// The MQTT protocol level: `3.1.1` or `5`.
        protocol: Protocol = "3.1.1",
        /// The client id; by default the broker's `client_id` (or `sluice`) with the flow and
        /// node names appended.
        client_id: Option<String>,
        /// MQTT 5: user properties sent with every message (before those of the
        /// LocalEnvironment).
        user_properties: StringMap = "{}",
        /// MQTT 5: the content type sent with every message.
        content_type: Option<String>,
        /// How long to wait for the broker's acknowledgement before the node fails.
        ack_timeout_secs: u64 = "30",
    }
}

impl BuildNode for MqttPublishProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let broker = crate::mqtt_broker(b.services, &self.broker)?;
        if let Some(t) = &self.topic
            && (t.is_empty() || t.contains(['+', '#']))
        {
            return Err(ConfigError::property(
                "topic",
                format!("`{t}` is not a topic name (no wildcards, not empty)"),
            ));
        }
        if self.protocol == Protocol::V311
            && (!self.user_properties.is_empty() || self.content_type.is_some())
        {
            return Err(ConfigError::property(
                "protocol",
                "user properties and a content type need MQTT 5",
            )
            .with_hint("set `protocol: 5`"));
        }
        let client_id = crate::client_id(&self.client_id, &broker, b.flow, b.label);
        Ok(NodeImpl::Process(Arc::new(MqttPublish {
            flow: b.flow.to_string(),
            label: b.label.to_string(),
            session: Session {
                protocol: self.protocol,
                client_id,
                clean: true,
                session_expiry_secs: 0,
                manual_acks: false,
            },
            broker,
            topic: self.topic,
            qos: self.qos,
            retain: self.retain,
            user_properties: self.user_properties,
            content_type: self.content_type,
            timeout_secs: self.ack_timeout_secs.max(1),
            runtime: b.services.runtime()?,
            conn: Mutex::new(None),
        })))
    }
}

struct MqttPublish {
    flow: String,
    label: String,
    broker: MqttBroker,
    session: Session,
    topic: Option<String>,
    qos: Qos,
    retain: bool,
    user_properties: Vec<(String, String)>,
    content_type: Option<String>,
    timeout_secs: u64,
    runtime: tokio::runtime::Handle,
    conn: Mutex<Option<Arc<Connection>>>,
}

type Waiter = oneshot::Sender<Result<(), MqttError>>;

/// A connection and the publishes waiting on it.
struct Connection {
    client: Client,
    /// Held while a waiter is queued and its publish handed to the client, so that the waiters
    /// are queued in the order the event loop sends the publishes.
    submit: tokio::sync::Mutex<()>,
    waiting: Mutex<Waiting>,
    dead: AtomicBool,
    stop: watch::Sender<bool>,
}

#[derive(Default)]
struct Waiting {
    /// Handed to the client, not yet sent (no packet id yet), oldest first.
    queued: VecDeque<(Qos, Waiter)>,
    /// Sent at QoS 1 or 2, by packet id.
    sent: HashMap<u16, Waiter>,
}

impl Drop for MqttPublish {
    fn drop(&mut self) {
        if let Ok(mut c) = self.conn.lock()
            && let Some(c) = c.take()
        {
            let _ = c.stop.send(true);
        }
    }
}

impl Node for MqttPublish {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let o = tree::read_overrides(msg)?;
        let topic = o.topic.or_else(|| self.topic.clone()).ok_or_else(|| {
            NodeError::recoverable(
                "no topic: set the node's `topic` or LocalEnvironment.Destination.MQTT.Output.TopicName",
            )
        })?;
        if topic.contains(['+', '#']) || topic.is_empty() {
            return Err(NodeError::recoverable(format!(
                "`{topic}` is not a topic name (no wildcards, not empty)"
            )));
        }
        let qos = o.qos.unwrap_or(self.qos);
        let (payload, _) = serialize_body(msg)?;
        let mut user_properties = self.user_properties.clone();
        user_properties.extend(o.user_properties);
        let out = Outgoing {
            topic: topic.clone(),
            qos,
            retain: o.retain.unwrap_or(self.retain),
            payload,
            user_properties,
            content_type: o.content_type.or_else(|| self.content_type.clone()),
        };
        self.publish(out).map_err(|e| {
            let mut e = NodeError::recoverable(format!("publishing to `{topic}`: {e}"));
            e.exception.label.clone_from(&self.label);
            e.exception.node_type = "MQTTPublish".into();
            e
        })?;
        tree::write_written(msg, &self.session.client_id, &topic, qos)?;
        ctx.propagate(FailureOut::Out, msg)
    }
}

impl MqttPublish {
    fn publish(&self, out: Outgoing) -> Result<(), MqttError> {
        let conn = self.connection()?;
        let (tx, rx) = oneshot::channel();
        let secs = self.timeout_secs;
        self.runtime.block_on(async {
            {
                let _order = conn.submit.lock().await;
                if let Ok(mut w) = conn.waiting.lock() {
                    w.queued.push_back((out.qos, tx));
                }
                conn.client.publish(out).await?;
            }
            match tokio::time::timeout(Duration::from_secs(secs), rx).await {
                Ok(Ok(r)) => r,
                Ok(Err(_)) => Err(MqttError::Connection("the connection ended".into())),
                Err(_) => Err(MqttError::Timeout(secs)),
            }
        })
    }

    /// The live connection, or a new one.
    fn connection(&self) -> Result<Arc<Connection>, MqttError> {
        let mut slot = self
            .conn
            .lock()
            .map_err(|_| MqttError::Client("a publisher panicked".into()))?;
        if let Some(c) = &*slot
            && !c.dead.load(Ordering::Acquire)
        {
            return Ok(Arc::clone(c));
        }
        let (client, events) = connection::open(&self.broker, &self.session)?;
        let (stop, stop_rx) = watch::channel(false);
        let conn = Arc::new(Connection {
            client,
            submit: tokio::sync::Mutex::new(()),
            waiting: Mutex::new(Waiting::default()),
            dead: AtomicBool::new(false),
            stop,
        });
        let task = Arc::clone(&conn);
        let (flow, label, url) = (
            self.flow.clone(),
            self.label.clone(),
            self.broker.url.clone(),
        );
        self.runtime.spawn(async move {
            if let Some(error) = run(&task, events, stop_rx).await {
                tracing::warn!(%error, %flow, node = %label, broker = %url, "The connection to the MQTT broker failed; the next message connects again.");
            }
        });
        *slot = Some(Arc::clone(&conn));
        Ok(conn)
    }
}

/// Drive one connection: pair each publish with its packet id, and each packet id with its
/// acknowledgement; on failure, fail every waiter.
async fn run(
    conn: &Connection,
    mut events: connection::Events,
    mut stop: watch::Receiver<bool>,
) -> Option<MqttError> {
    let result = loop {
        let ev = tokio::select! {
            ev = events.poll() => ev,
            _ = stop.changed() => {
                conn.client.disconnect().await;
                let _ = tokio::time::timeout(Duration::from_millis(100), events.poll()).await;
                break None;
            }
        };
        let Ok(mut w) = conn.waiting.lock() else {
            break None;
        };
        match ev {
            Ok(Event::Sent(pkid)) => {
                if let Some((qos, waiter)) = w.queued.pop_front() {
                    if qos == Qos::AtMostOnce {
                        let _ = waiter.send(Ok(()));
                    } else {
                        w.sent.insert(pkid, waiter);
                    }
                }
            }
            Ok(Event::Acked(pkid, r)) => {
                if let Some(waiter) = w.sent.remove(&pkid) {
                    let _ = waiter.send(r.map_err(MqttError::Refused));
                }
            }
            Ok(_) => {}
            Err(e) => break Some(e),
        }
    };
    conn.dead.store(true, Ordering::Release);
    if let Ok(mut w) = conn.waiting.lock() {
        let why = result
            .as_ref()
            .map_or_else(|| "the node stopped".to_string(), |e| e.to_string());
        for (_, waiter) in w.queued.drain(..) {
            let _ = waiter.send(Err(MqttError::Connection(why.clone())));
        }
        for (_, waiter) in w.sent.drain() {
            let _ = waiter.send(Err(MqttError::Connection(why.clone())));
        }
    }
    result
}
