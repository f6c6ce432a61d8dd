//! MQTTSubscribe: subscribes to topic filters on a broker and starts an invocation for each
//! message, acknowledging a QoS 1 or 2 message only after the invocation's unit of work
//! committed.
//!
//! One connection per node, kept by a task on the server's runtime: it connects (again, with a
//! backoff of 1 s doubling to 30 s, logging each failure, so that a broker that is down never
//! stops the server), subscribes, and hands each message to the flow instances over a bounded
//! channel. MQTT has no negative acknowledgement: a broker sends an unacknowledged message again
//! only on a new connection of the same persistent session. So when a flow fails on a message
//! the broker can send again (QoS 1 or 2, `clean_session: false`), the node drops the
//! connection and connects again; each connection has a generation, and the messages of an
//! older one still waiting in the channel are skipped, since the broker sends them again. A
//! kill -9 likewise leaves the message unacknowledged, and the broker keeps it for the session.
//!
//! MQTT carries no delivery count: the node counts the failures of each message (by topic and
//! packet id, which a resend keeps) in memory. A message that failed `backout_threshold` times
//! goes to the `failure` terminal when that is wired, else it is logged and discarded.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, ExampleInput, ExampleOutcome, InputNode, InstanceRunner,
    Invocation, Message, MqttBroker, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs,
    Terminals, properties,
};
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps};
use sluice_nodes_core::terminals::{InputOutputs, end_unit_of_work, own_failure, propagate_out};
use tokio::sync::{Notify, watch};

use crate::connection::{self, Client, Event, Protocol, Qos, Received, Session};
use crate::tree;

pub static MQTT_SUBSCRIBE: NodeSpec = NodeSpec {
    type_name: "MQTTSubscribe",
    summary: "Subscribes to topic filters on an MQTT broker (3.1.1 or 5) and propagates each message, its \
              body parsed in the chosen domain, with `LocalEnvironment.MQTT.Input` (Topic, \
              QualityOfService, Retained, Duplicate, MessageId; ContentType and UserProperties at \
              MQTT 5). QoS 1 and 2 messages are acknowledged after the flow commits; a failed one \
              comes again.",
    inputs: &[],
    outputs: InputOutputs::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Every reading published under `sensors/` starts the flow",
        properties: "broker: local, topics: ['sensors/+/temperature'], qos: 1, domain: JSON",
        esql: "",
        input: ExampleInput {
            domain: "JSON",
            body: r#"{"celsius":21.5}"#,
            local_environment: &[],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", r#"{"celsius":21.5}"#)]),
        runs: Runs::No("only a message from its broker starts it."),
    }],
    builder: NodeBuilder::of::<MqttSubscribeProps>(),
};

properties! {
    /// MQTTSubscribe's properties.
    pub struct MqttSubscribeProps {
        /// The broker, by its name under `brokers:` in sluice.yaml.
        broker: String,
        /// Topic filters: `+` matches one level, `#` (last) every level below.
        topics: Vec<String>,
        /// The QoS asked for every filter: 0 at most once, 1 at least once, 2 exactly once.
        qos: Qos = "1",
        /// The MQTT protocol level: `3.1.1` or `5`.
        protocol: Protocol = "3.1.1",
        /// The client id; by default the broker's `client_id` (or `sluice`) with the flow and
        /// node names appended, stable across restarts.
        client_id: Option<String>,
        /// Start a clean session. Off, the broker keeps the subscriptions and the messages not
        /// yet acknowledged while the node is away, and a failed message comes again.
        clean_session: bool = "false",
        /// MQTT 5: how long the broker keeps the persistent session after a disconnection.
        session_expiry_secs: u32 = "86400",
        /// Attempts of a message that fails before it goes to `failure` (or is discarded).
        backout_threshold: u32 = "3",
        ..parsing: BodyParsingProps,
    }
}

impl BuildNode for MqttSubscribeProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let broker = crate::mqtt_broker(b.services, &self.broker)?;
        if self.topics.is_empty() {
            return Err(ConfigError::property(
                "topics",
                "name at least one topic filter",
            ));
        }
        for t in &self.topics {
            check_filter(t).map_err(|why| {
                ConfigError::property("topics", format!("`{t}` is not a topic filter: {why}"))
            })?;
        }
        if self.backout_threshold == 0 {
            return Err(ConfigError::property(
                "backout_threshold",
                "must be a whole number from 1",
            ));
        }
        let client_id = crate::client_id(&self.client_id, &broker, b.flow, b.label);
        let (tx, rx) = crossbeam_channel::bounded(32);
        Ok(NodeImpl::Input(Arc::new(MqttSubscribe {
            flow: b.flow.to_string(),
            label: b.label.to_string(),
            session: Session {
                protocol: self.protocol,
                client_id,
                clean: self.clean_session,
                session_expiry_secs: self.session_expiry_secs,
                manual_acks: true,
            },
            broker,
            filters: self.topics.iter().map(|t| (t.clone(), self.qos)).collect(),
            parsing: BodyParsing::from_props(&self.parsing)?,
            backout_threshold: self.backout_threshold,
            runtime: b.services.runtime()?,
            shared: Arc::new(Shared {
                tx,
                rx,
                live: Mutex::new(None),
                generation: AtomicU64::new(0),
                reconnect: Notify::new(),
                stop: Mutex::new(None),
                failures: Mutex::new(HashMap::new()),
            }),
        })))
    }
}

/// MQTT's rules for a topic filter: not empty, `#` alone in the last level, `+` alone in its
/// level.
fn check_filter(f: &str) -> Result<(), &'static str> {
    if f.is_empty() {
        return Err("it is empty");
    }
    let levels: Vec<&str> = f.split('/').collect();
    for (i, l) in levels.iter().enumerate() {
        if l.contains('#') && (*l != "#" || i + 1 != levels.len()) {
            return Err("`#` must be a whole level, and the last");
        }
        if l.contains('+') && *l != "+" {
            return Err("`+` must be a whole level");
        }
    }
    Ok(())
}

struct MqttSubscribe {
    flow: String,
    label: String,
    broker: MqttBroker,
    session: Session,
    filters: Vec<(String, Qos)>,
    parsing: BodyParsing,
    backout_threshold: u32,
    runtime: tokio::runtime::Handle,
    shared: Arc<Shared>,
}

/// What the connection task and the flow instances share.
struct Shared {
    tx: Sender<Delivery>,
    rx: Receiver<Delivery>,
    /// The client of the connection now up, with its generation; None while connecting.
    live: Mutex<Option<(u64, Client)>>,
    generation: AtomicU64,
    /// Asks the task to drop the connection and connect again (to have a failed message sent
    /// again).
    reconnect: Notify,
    /// Tells the running task to end.
    stop: Mutex<Option<watch::Sender<bool>>>,
    /// Failed attempts by (topic, packet id).
    failures: Mutex<HashMap<(String, u16), u32>>,
}

/// A message with the generation of the connection that brought it.
struct Delivery {
    generation: u64,
    msg: Received,
}

const POLL: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Failure counts remembered at most: the map is emptied when full (a count forgotten only
/// gives a message more attempts).
const FAILURES_KEPT: usize = 4096;

impl InputNode for MqttSubscribe {
    fn start(&self) {
        let (stop_tx, stop_rx) = watch::channel(false);
        if let Ok(mut s) = self.shared.stop.lock()
            && let Some(old) = s.replace(stop_tx)
        {
            let _ = old.send(true);
        }
        let task = ConnectionTask {
            flow: self.flow.clone(),
            label: self.label.clone(),
            broker: self.broker.clone(),
            session: self.session.clone(),
            filters: self.filters.clone(),
            shared: Arc::clone(&self.shared),
        };
        self.runtime.spawn(task.run(stop_rx));
    }

    fn stopped(&self) {
        // The task is told and not waited for: messages not yet acknowledged stay with the
        // broker's session for the next start.
        if let Ok(mut s) = self.shared.stop.lock()
            && let Some(tx) = s.take()
        {
            let _ = tx.send(true);
        }
        if let Ok(mut live) = self.shared.live.lock() {
            live.take();
        }
    }

    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        while !runner.stop().is_stopped() {
            match self.shared.rx.recv_timeout(POLL) {
                Ok(d) => self.handle(runner, d),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }
}

impl MqttSubscribe {
    /// Whether the broker sends `m` again when it is not acknowledged.
    fn redeliverable(&self, m: &Received) -> bool {
        m.qos() > 0 && !self.session.clean
    }

    fn live_generation(&self) -> Option<u64> {
        self.shared.live.lock().ok()?.as_ref().map(|(g, _)| *g)
    }

    fn handle(&self, runner: &mut dyn InstanceRunner, d: Delivery) {
        let m = &d.msg;
        if self.redeliverable(m) && self.live_generation() != Some(d.generation) {
            // Its connection is gone: the broker sends it again on the new one.
            return;
        }
        let payload = m.payload();
        runner.record_input_bytes(payload.len() as u64);
        let key = (m.topic(), m.pkid());
        let attempts = if self.redeliverable(m) {
            self.shared
                .failures
                .lock()
                .ok()
                .and_then(|f| f.get(&key).copied())
                .unwrap_or(0)
        } else {
            0
        };
        let mut inv = Invocation::new();
        let (mut msg, parse_error) = match self.message(m, &self.parsing) {
            Ok(msg) => (msg, None),
            Err(e) => match self.message(m, &BodyParsing::blob()) {
                Ok(msg) => (msg, Some(e)),
                Err(e) => (Message::new(), Some(e)),
            },
        };
        let result = if attempts >= self.backout_threshold {
            let e = NodeError::recoverable(format!(
                "the message on topic `{}` failed {attempts} times (backout threshold {})",
                key.0, self.backout_threshold
            ));
            self.fail(runner, &mut inv, &mut msg, e)
        } else if let Some(e) = parse_error {
            self.fail(runner, &mut inv, &mut msg, e)
        } else {
            propagate_out(runner, &mut inv, &mut msg)
        };
        let outcome = end_unit_of_work(&mut inv, result);
        match outcome {
            Ok(()) => {
                self.forget(&key);
                self.ack(&d);
            }
            Err(e) if self.redeliverable(m) && attempts < self.backout_threshold => {
                tracing::warn!(
                    error = %e.exception.describe(), flow = %self.flow, node = %self.label, topic = %key.0,
                    "Message processing failed; the broker sends the message again."
                );
                if let Ok(mut f) = self.shared.failures.lock() {
                    if f.len() >= FAILURES_KEPT {
                        f.clear();
                    }
                    f.insert(key, attempts + 1);
                }
                self.shared.reconnect.notify_one();
                // The connection is dropped and made again: wait for it, so that this instance
                // does not take messages the broker is about to send again.
                let was = d.generation;
                for _ in 0..50 {
                    if self.live_generation().is_some_and(|g| g != was)
                        || runner.stop().sleep(Duration::from_millis(20))
                    {
                        break;
                    }
                }
            }
            Err(e) => {
                tracing::error!(
                    error = %e.exception.describe(), flow = %self.flow, node = %self.label, topic = %key.0,
                    "Message processing failed and the message cannot come again; it is discarded."
                );
                self.forget(&key);
                self.ack(&d);
            }
        }
    }

    /// The message tree: the LocalEnvironment's MQTT.Input and the body.
    fn message(&self, m: &Received, parsing: &BodyParsing) -> Result<Message, NodeError> {
        let mut msg = Message::new();
        tree::write_input(&mut msg.local_environment, m)?;
        parsing.attach(&mut msg.root, m.payload())?;
        Ok(msg)
    }

    /// This node's own failure: to the failure terminal with `e` when that is wired, else the
    /// error.
    fn fail(
        &self,
        runner: &mut dyn InstanceRunner,
        inv: &mut Invocation,
        msg: &mut Message,
        e: NodeError,
    ) -> Result<(), NodeError> {
        own_failure(runner, inv, msg, e, &self.label, "MQTTSubscribe")
    }

    fn forget(&self, key: &(String, u16)) {
        if let Ok(mut f) = self.shared.failures.lock() {
            f.remove(key);
        }
    }

    /// Acknowledge on the connection that brought the message (an acknowledgement on another
    /// would name a packet id the broker gave to another message).
    fn ack(&self, d: &Delivery) {
        if d.msg.qos() == 0 {
            return;
        }
        let client = match self.shared.live.lock() {
            Ok(live) => match &*live {
                Some((g, c)) if *g == d.generation => c.clone(),
                _ => return,
            },
            Err(_) => return,
        };
        if let Err(error) = self.runtime.block_on(client.ack(&d.msg)) {
            tracing::warn!(%error, flow = %self.flow, node = %self.label, "Failed to acknowledge a message; the broker sends it again.");
        }
    }
}

/// The task that keeps the node's connection.
struct ConnectionTask {
    flow: String,
    label: String,
    broker: MqttBroker,
    session: Session,
    filters: Vec<(String, Qos)>,
    shared: Arc<Shared>,
}

impl ConnectionTask {
    async fn run(self, mut stop: watch::Receiver<bool>) {
        let mut backoff = Duration::from_secs(1);
        while !*stop.borrow() {
            let generation = self.shared.generation.fetch_add(1, Ordering::AcqRel) + 1;
            let failed = match connection::open(&self.broker, &self.session) {
                Ok((client, events)) => {
                    if let Ok(mut live) = self.shared.live.lock() {
                        *live = Some((generation, client.clone()));
                    }
                    let r = self
                        .connected(client, events, generation, &mut stop, &mut backoff)
                        .await;
                    if let Ok(mut live) = self.shared.live.lock()
                        && live.as_ref().is_some_and(|(g, _)| *g == generation)
                    {
                        *live = None;
                    }
                    r
                }
                Err(e) => Some(e),
            };
            let Some(error) = failed else {
                continue;
            };
            tracing::warn!(
                %error, flow = %self.flow, node = %self.label, broker = %self.broker.url,
                retry_secs = backoff.as_secs(), "Cannot reach the MQTT broker; trying again."
            );
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                _ = stop.changed() => {}
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Run one connection until it fails (the error), is asked to reconnect or the node stops
    /// (None).
    async fn connected(
        &self,
        client: Client,
        mut events: connection::Events,
        generation: u64,
        stop: &mut watch::Receiver<bool>,
        backoff: &mut Duration,
    ) -> Option<crate::MqttError> {
        loop {
            let ev = tokio::select! {
                ev = events.poll() => ev,
                _ = self.shared.reconnect.notified() => return None,
                _ = stop.changed() => {
                    client.disconnect().await;
                    // Give the DISCONNECT a moment to go out.
                    let _ = tokio::time::timeout(Duration::from_millis(100), events.poll()).await;
                    return None;
                }
            };
            match ev {
                Ok(Event::Connected { session_present }) => {
                    *backoff = Duration::from_secs(1);
                    tracing::info!(
                        flow = %self.flow, node = %self.label, broker = %self.broker.url, session_present,
                        "Connected to the MQTT broker."
                    );
                    // The client's request queue is drained by this loop: subscribing from
                    // here must not wait for it.
                    let c = client.clone();
                    let filters = self.filters.clone();
                    tokio::spawn(async move { c.subscribe(&filters).await });
                }
                Ok(Event::Subscribed { refused }) => {
                    for i in refused {
                        if let Some((f, _)) = self.filters.get(i) {
                            tracing::error!(flow = %self.flow, node = %self.label, filter = %f, "The MQTT broker refused a subscription.");
                        }
                    }
                }
                Ok(Event::Message(msg)) => {
                    let mut d = Delivery { generation, msg };
                    loop {
                        match self.shared.tx.try_send(d) {
                            Ok(()) => break,
                            Err(TrySendError::Full(back)) => {
                                d = back;
                                tokio::select! {
                                    _ = tokio::time::sleep(Duration::from_millis(2)) => {}
                                    _ = stop.changed() => return None,
                                }
                            }
                            Err(TrySendError::Disconnected(_)) => return None,
                        }
                    }
                }
                Ok(_) => {}
                Err(e) => return Some(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_filter;

    #[test]
    fn check_filter_accepts_wildcards_when_they_are_whole_levels() {
        for ok in ["a/b", "a/+/c", "#", "a/#", "+", "+/+"] {
            assert!(check_filter(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a/#/c", "a#", "a/b+", "#/a"] {
            assert!(check_filter(bad).is_err(), "{bad}");
        }
    }
}
