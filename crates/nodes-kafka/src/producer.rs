//! KafkaProducer: sends the message body to a topic and waits for the cluster's delivery report
//! before the flow goes on, so that a flow that continued (and committed its input) never leaves
//! a message the cluster did not take (with `acks: all`, one every in-sync replica has).
//!
//! The client is made at the first message (building the node touches no socket) and shared by
//! the flow's instances; librdkafka batches what they send together (`linger_ms`,
//! `batch_size`). The send is not part of the flow's unit of work (no Kafka transactions): a
//! flow that fails after the node sent has sent. With an input that comes again, that is at
//! least once; the idempotent producer keeps the client's own retries from adding duplicates.

use std::sync::mpsc::{self, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::error::{KafkaError as ClientError, RDKafkaErrorCode};
use rdkafka::message::{Header, Message as _, OwnedHeaders};
use rdkafka::producer::{BaseRecord, DeliveryResult, ProducerContext, ThreadedProducer};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, KafkaBroker, Message,
    Node, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, StringMap, Terminal,
    Terminals, properties, property_enum,
};
use sluice_nodes_core::domains::serialize_body;
use sluice_nodes_core::terminals::{FailureOut, In};

use crate::client::{self, Context};
use crate::{KafkaError, tree};

pub static KAFKA_PRODUCER: NodeSpec = NodeSpec {
    type_name: "KafkaProducer",
    summary: "Sends the message body, serialised in its domain, to a Kafka topic and goes on once the \
              cluster reported its delivery (acks 0, 1 or all; idempotent by default). \
              `LocalEnvironment.Destination.Kafka.Output` (topicName, key, partition, KafkaHeader) \
              overrides the properties; `LocalEnvironment.WrittenDestination.Kafka` says where the \
              message went.",
    inputs: In::SPECS,
    outputs: FailureOut::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Each message goes to `shipments`, keyed by customer",
        properties: "broker: events, topic: shipments, key: customer-7, acks: all",
        esql: "",
        input: ExampleInput {
            domain: "JSON",
            body: r#"{"shipment":3}"#,
            local_environment: &[],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", r#"{"shipment":3}"#)]),
        runs: Runs::No("it needs a running Kafka cluster."),
    }],
    builder: NodeBuilder::of::<KafkaProducerProps>(),
};

property_enum! {
    /// Which acknowledgement the producer waits for: none, the partition leader's, or every
    /// in-sync replica's.
    pub enum Acks { None = "0", Leader = "1", All = "all" }
}

property_enum! {
    /// How the producer compresses its batches.
    pub enum Compression { None = "none", Gzip = "gzip", Snappy = "snappy", Lz4 = "lz4" }
}

properties! {
    /// KafkaProducer's properties.
    pub struct KafkaProducerProps {
        /// The Kafka cluster, by its name under `brokers:` in sluice.yaml.
        broker: String,
        /// The topic; `LocalEnvironment.Destination.Kafka.Output.topicName` overrides it.
        topic: Option<String>,
        /// The key of every message (it chooses the partition); the LocalEnvironment's `key`
        /// overrides it. None lets the cluster spread keyless messages.
        key: Option<String>,
        /// The partition of every message; by default the key's (or any, without a key).
        partition: Option<u32>,
        /// `0` waits for nothing, `1` for the partition leader, `all` for every in-sync replica.
        acks: Acks = "all",
        /// The idempotent producer: the client's retries never write a message twice, and
        /// order is kept. Needs `acks: all`.
        idempotent: bool = "true",
        /// Headers sent with every message (before those of the LocalEnvironment's
        /// KafkaHeader).
        headers: StringMap = "{}",
        /// How long the client waits for more messages to send in one batch. Each flow instance
        /// waits for its message's delivery, so this helps only flows with several instances.
        linger_ms: u32 = "0",
        /// The most bytes in one batch.
        batch_size: u32 = "1000000",
        /// The batches' compression.
        compression: Compression = "none",
        /// How long a message may take to be delivered (retries included) before the node fails.
        delivery_timeout_ms: u32 = "30000",
        /// The client id; by default the broker's `client_id` (or `sluice`) with the flow and
        /// node names appended.
        client_id: Option<String>,
    }
}

impl BuildNode for KafkaProducerProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let broker = crate::kafka_broker(b.services, &self.broker)?;
        if let Some(t) = &self.topic {
            crate::check_topic(t).map_err(|why| {
                ConfigError::property("topic", format!("`{t}` is not a topic name: {why}"))
            })?;
        }
        if self.idempotent && self.acks != Acks::All {
            return Err(ConfigError::property(
                "idempotent",
                "the idempotent producer needs `acks: all`",
            )
            .with_hint("set `acks: all`, or `idempotent: false`"));
        }
        let partition = match self.partition {
            Some(p) => Some(i32::try_from(p).map_err(|_| {
                ConfigError::property("partition", "must be a whole number from 0 to 2147483647")
            })?),
            None => None,
        };
        if self.delivery_timeout_ms <= self.linger_ms {
            return Err(ConfigError::property(
                "delivery_timeout_ms",
                "must be longer than linger_ms",
            ));
        }
        if self.batch_size == 0 {
            return Err(ConfigError::property(
                "batch_size",
                "must be a whole number from 1",
            ));
        }
        let client_id = crate::client_id(&self.client_id, &broker, b.flow, b.label);
        Ok(NodeImpl::Process(Arc::new(KafkaProducer {
            flow: b.flow.to_string(),
            label: b.label.to_string(),
            broker,
            client_id,
            topic: self.topic,
            key: self.key,
            partition,
            acks: self.acks,
            idempotent: self.idempotent,
            headers: self.headers,
            linger_ms: self.linger_ms,
            batch_size: self.batch_size,
            compression: self.compression,
            delivery_timeout_ms: self.delivery_timeout_ms,
            producer: Mutex::new(None),
        })))
    }
}

struct KafkaProducer {
    flow: String,
    label: String,
    broker: KafkaBroker,
    client_id: String,
    topic: Option<String>,
    key: Option<String>,
    partition: Option<i32>,
    acks: Acks,
    idempotent: bool,
    headers: Vec<(String, String)>,
    linger_ms: u32,
    batch_size: u32,
    compression: Compression,
    delivery_timeout_ms: u32,
    producer: Mutex<Option<Arc<ThreadedProducer<Delivery>>>>,
}

/// Where a message went, or why it did not.
type Report = Result<(i32, i64), ClientError>;

/// The producer's context: the shared one for logs, plus each message's delivery report sent to
/// the flow instance that waits for it.
struct Delivery(Context);

impl ClientContext for Delivery {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, message: &str) {
        self.0.log(level, fac, message);
    }

    fn error(&self, error: ClientError, reason: &str) {
        self.0.error(error, reason);
    }
}

impl ProducerContext for Delivery {
    type DeliveryOpaque = Box<SyncSender<Report>>;

    fn delivery(&self, r: &DeliveryResult<'_>, to: Self::DeliveryOpaque) {
        let report = match r {
            Ok(m) => Ok((m.partition(), m.offset())),
            Err((e, _)) => Err(e.clone()),
        };
        // The instance may have given up waiting; then nobody needs the report.
        let _ = to.send(report);
    }
}

impl Node for KafkaProducer {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let o = tree::read_overrides(msg)?;
        let topic = o.topic.or_else(|| self.topic.clone()).ok_or_else(|| {
            NodeError::recoverable(
                "no topic: set the node's `topic` or LocalEnvironment.Destination.Kafka.Output.topicName",
            )
        })?;
        crate::check_topic(&topic).map_err(|why| {
            NodeError::recoverable(format!("`{topic}` is not a topic name: {why}"))
        })?;
        let key = o
            .key
            .or_else(|| self.key.as_ref().map(|k| k.as_bytes().to_vec()));
        let partition = o.partition.or(self.partition);
        let mut headers = OwnedHeaders::new_with_capacity(self.headers.len() + o.headers.len());
        for (k, v) in &self.headers {
            headers = headers.insert(Header {
                key: k,
                value: Some(v.as_bytes()),
            });
        }
        for (k, v) in &o.headers {
            headers = headers.insert(Header {
                key: k,
                value: Some(v.as_slice()),
            });
        }
        let (payload, _) = serialize_body(msg)?;
        let sent = self.send(&topic, key.as_deref(), partition, headers, &payload);
        let (partition, offset) = sent.map_err(|e| {
            let mut e = NodeError::recoverable(format!("sending to `{topic}`: {e}"));
            e.exception.label.clone_from(&self.label);
            e.exception.node_type = "KafkaProducer".into();
            e
        })?;
        tree::write_written(msg, &topic, partition, offset)?;
        ctx.propagate(FailureOut::Out, msg)
    }
}

impl KafkaProducer {
    fn send(
        &self,
        topic: &str,
        key: Option<&[u8]>,
        partition: Option<i32>,
        headers: OwnedHeaders,
        payload: &[u8],
    ) -> Result<(i32, i64), KafkaError> {
        let producer = self.producer()?;
        let (tx, rx) = mpsc::sync_channel(1);
        let mut record = BaseRecord::with_opaque_to(topic, Box::new(tx))
            .payload(payload)
            .headers(headers);
        if let Some(k) = key {
            record = record.key(k);
        }
        if let Some(p) = partition {
            record = record.partition(p);
        }
        let wait = Duration::from_millis(u64::from(self.delivery_timeout_ms));
        let deadline = Instant::now() + wait;
        loop {
            match producer.send(record) {
                Ok(()) => break,
                // The client's queue is full: its thread is sending; wait for room.
                Err((ClientError::MessageProduction(RDKafkaErrorCode::QueueFull), back))
                    if Instant::now() < deadline =>
                {
                    record = back;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err((source, _)) => {
                    return Err(KafkaError::Request {
                        what: "sending",
                        source,
                    });
                }
            }
        }
        // librdkafka reports every message within message.timeout.ms; the margin covers its
        // thread's polling.
        match rx.recv_timeout(wait + Duration::from_secs(5)) {
            Ok(Ok(at)) => Ok(at),
            Ok(Err(e)) => Err(KafkaError::Delivery(e)),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                Err(KafkaError::Timeout(u64::from(self.delivery_timeout_ms)))
            }
        }
    }

    /// The shared producer, made at the first message.
    fn producer(&self) -> Result<Arc<ThreadedProducer<Delivery>>, KafkaError> {
        let mut slot = self.producer.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = &*slot {
            return Ok(Arc::clone(p));
        }
        let mut c = client::config(&self.broker, &self.client_id)?;
        c.set("acks", self.acks.word())
            .set("enable.idempotence", self.idempotent.to_string())
            .set("linger.ms", self.linger_ms.to_string())
            .set("batch.size", self.batch_size.to_string())
            .set("compression.type", self.compression.word())
            .set("message.timeout.ms", self.delivery_timeout_ms.to_string());
        let p: ThreadedProducer<Delivery> = c
            .create_with_context(Delivery(Context::new(
                &self.flow,
                &self.label,
                &self.broker,
            )))
            .map_err(KafkaError::Client)?;
        let p = Arc::new(p);
        *slot = Some(Arc::clone(&p));
        Ok(p)
    }
}
