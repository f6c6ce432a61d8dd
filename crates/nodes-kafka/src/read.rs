//! KafkaRead: reads the one message at a topic, partition and offset, as the product's node
//! does, and propagates it with `LocalEnvironment.Kafka.Input`; `no_message` when the partition
//! holds no message there (past its end, or already deleted).
//!
//! The node keeps one consumer outside any group (it assigns the partition itself and commits
//! nothing), made at the first message and shared by the flow's instances one read at a time.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError as ClientError, RDKafkaErrorCode};
use rdkafka::message::{Message as _, OwnedMessage};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, KafkaBroker, Message,
    Node, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals,
    properties, terminals,
};
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps};
use sluice_nodes_core::terminals::{FAILURE_DOC, In, OUT_DOC};

use crate::client::{self, Context};
use crate::{KafkaError, tree};

pub static KAFKA_READ: NodeSpec = NodeSpec {
    type_name: "KafkaRead",
    summary: "Reads the message at an offset of a Kafka topic's partition (the properties, or \
              `LocalEnvironment.Kafka.Read` topicName, partition and offset) and propagates it, its \
              body parsed in the chosen domain, with `LocalEnvironment.Kafka.Input`; `no_message` \
              when there is none there.",
    inputs: In::SPECS,
    outputs: KafkaReadOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Read offset 41 of partition 0 of `orders` again",
        properties: "broker: events, topic: orders, partition: 0, offset: 41, domain: JSON",
        esql: "",
        input: ExampleInput {
            domain: "JSON",
            body: r#"{"replay":true}"#,
            local_environment: &[],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", r#"{"order":17}"#)]),
        runs: Runs::No("it needs a running Kafka cluster."),
    }],
    builder: NodeBuilder::of::<KafkaReadProps>(),
};

terminals! {
    /// KafkaRead's outputs.
    pub enum KafkaReadOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": OUT_DOC,
        NoMessage = "no_message": "The partition holds no message at the offset (past its end, or deleted).",
    }
}

properties! {
    /// KafkaRead's properties.
    pub struct KafkaReadProps {
        /// The Kafka cluster, by its name under `brokers:` in sluice.yaml.
        broker: String,
        /// The topic; `LocalEnvironment.Kafka.Read.topicName` overrides it.
        topic: Option<String>,
        /// The partition; `LocalEnvironment.Kafka.Read.partition` overrides it.
        partition: u32 = "0",
        /// The offset; `LocalEnvironment.Kafka.Read.offset` overrides it.
        offset: u64 = "0",
        /// How long to wait for the cluster before the node fails.
        timeout_ms: u32 = "10000",
        /// The client id; by default the broker's `client_id` (or `sluice`) with the flow and
        /// node names appended.
        client_id: Option<String>,
        ..parsing: BodyParsingProps,
    }
}

impl BuildNode for KafkaReadProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let broker = crate::kafka_broker(b.services, &self.broker)?;
        if let Some(t) = &self.topic {
            crate::check_topic(t).map_err(|why| {
                ConfigError::property("topic", format!("`{t}` is not a topic name: {why}"))
            })?;
        }
        let partition = i32::try_from(self.partition).map_err(|_| {
            ConfigError::property("partition", "must be a whole number from 0 to 2147483647")
        })?;
        let offset = i64::try_from(self.offset)
            .map_err(|_| ConfigError::property("offset", "is too large"))?;
        let client_id = crate::client_id(&self.client_id, &broker, b.flow, b.label);
        Ok(NodeImpl::Process(std::sync::Arc::new(KafkaRead {
            flow: b.flow.to_string(),
            label: b.label.to_string(),
            broker,
            client_id,
            topic: self.topic,
            partition,
            offset,
            timeout: Duration::from_millis(u64::from(self.timeout_ms.max(1))),
            parsing: BodyParsing::from_props(&self.parsing)?,
            consumer: Mutex::new(None),
        })))
    }
}

struct KafkaRead {
    flow: String,
    label: String,
    broker: KafkaBroker,
    client_id: String,
    topic: Option<String>,
    partition: i32,
    offset: i64,
    timeout: Duration,
    parsing: BodyParsing,
    consumer: Mutex<Option<BaseConsumer<Context>>>,
}

impl Node for KafkaRead {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let o = tree::read_read(msg)?;
        let topic = o.topic.or_else(|| self.topic.clone()).ok_or_else(|| {
            NodeError::recoverable(
                "no topic: set the node's `topic` or LocalEnvironment.Kafka.Read.topicName",
            )
        })?;
        crate::check_topic(&topic).map_err(|why| {
            NodeError::recoverable(format!("`{topic}` is not a topic name: {why}"))
        })?;
        let partition = o.partition.unwrap_or(self.partition);
        let offset = o.offset.unwrap_or(self.offset);
        if partition < 0 || offset < 0 {
            return Err(NodeError::recoverable(
                "the partition and the offset to read must not be negative",
            ));
        }
        let read = self.read(&topic, partition, offset).map_err(|e| {
            let mut e = NodeError::recoverable(format!(
                "reading offset {offset} of {topic}[{partition}]: {e}"
            ));
            e.exception.label.clone_from(&self.label);
            e.exception.node_type = "KafkaRead".into();
            e
        })?;
        match read {
            None => ctx.propagate(KafkaReadOutput::NoMessage, msg),
            Some(m) => {
                let mut out = Message::new();
                out.local_environment = msg.local_environment.clone();
                out.exception_list = msg.exception_list.clone();
                tree::write_input(&mut out.local_environment, &m)?;
                let payload = Bytes::copy_from_slice(m.payload().unwrap_or_default());
                self.parsing.attach(&mut out.root, payload)?;
                ctx.propagate(KafkaReadOutput::Out, &mut out)
            }
        }
    }
}

impl KafkaRead {
    /// The message at `offset` (or the first after it, when that one was removed by compaction
    /// or is a transaction marker); None past the partition's end or before its start.
    fn read(
        &self,
        topic: &str,
        partition: i32,
        offset: i64,
    ) -> Result<Option<OwnedMessage>, KafkaError> {
        let mut slot = self.consumer.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(self.open()?);
        }
        let Some(consumer) = slot.as_ref() else {
            return Ok(None);
        };
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(topic, partition, Offset::Offset(offset))
            .map_err(|source| KafkaError::Request {
                what: "assigning",
                source,
            })?;
        consumer
            .assign(&tpl)
            .map_err(|source| KafkaError::Request {
                what: "assigning",
                source,
            })?;
        let deadline = Instant::now() + self.timeout;
        let result = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break Err(KafkaError::Timeout(self.timeout.as_millis() as u64));
            }
            match consumer.poll(left.min(Duration::from_millis(200))) {
                None => {}
                Some(Ok(m)) if m.topic() == topic && m.partition() == partition => {
                    if m.offset() < offset {
                        continue;
                    }
                    break Ok(Some(m.detach()));
                }
                Some(Ok(_)) => {}
                Some(Err(ClientError::PartitionEOF(p))) if p == partition => break Ok(None),
                Some(Err(e)) if past_the_ends(&e) => break Ok(None),
                Some(Err(e)) if is_passing(&e) => {}
                Some(Err(source)) => {
                    break Err(KafkaError::Request {
                        what: "fetching",
                        source,
                    });
                }
            }
        };
        // Stop fetching until the next read.
        let _ = consumer.unassign();
        result
    }

    fn open(&self) -> Result<BaseConsumer<Context>, KafkaError> {
        let mut c = client::config(&self.broker, &self.client_id)?;
        // librdkafka's consumer needs a group even to assign partitions itself; it never joins
        // it here, and commits nothing.
        c.set("group.id", format!("{}-read", self.client_id))
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false")
            .set("enable.partition.eof", "true")
            // An offset outside the partition is reported, not replaced by another.
            .set("auto.offset.reset", "error");
        c.create_with_context(Context::new(&self.flow, &self.label, &self.broker))
            .map_err(KafkaError::Client)
    }
}

/// The partition has no message at the offset: it is before the oldest kept or past the end.
fn past_the_ends(e: &ClientError) -> bool {
    matches!(
        e.rdkafka_error_code(),
        Some(RDKafkaErrorCode::AutoOffsetReset | RDKafkaErrorCode::OffsetOutOfRange)
    )
}

/// Errors the client recovers from by itself (a broker not answering yet).
fn is_passing(e: &ClientError) -> bool {
    matches!(
        e.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::BrokerTransportFailure
                | RDKafkaErrorCode::AllBrokersDown
                | RDKafkaErrorCode::Resolve
                | RDKafkaErrorCode::UnknownTopicOrPartition
                | RDKafkaErrorCode::NotLeaderForPartition
                | RDKafkaErrorCode::LeaderNotAvailable
        )
    )
}
