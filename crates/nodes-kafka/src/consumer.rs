//! KafkaConsumer: a member of a consumer group that starts an invocation for each message of its
//! topics, and marks a message consumed only after the invocation's unit of work committed.
//!
//! Each flow instance is a consumer of its own in the node's group, so the cluster shares the
//! topics' partitions among the instances (and among servers running the same flow), and each
//! partition's messages are processed in order. After a message's unit of work commits, the
//! instance stores the offset after it (`enable.auto.offset.store=false`); librdkafka commits
//! the stored offsets to the group every `commit_interval_ms`, or the instance commits at once
//! when that is 0. An offset is never committed before its flow did: a kill -9 loses at most
//! the commits not yet made, and those messages come again (at least once).
//!
//! A message whose flow fails is not stored: the instance seeks its partition back to it, so it
//! comes again at once, before anything after it on that partition. The node counts the
//! failures of each message in memory; one that failed `backout_threshold` times goes to the
//! `failure` terminal when that is wired, else it is logged and skipped.
//!
//! A cluster that does not answer never stops the server: librdkafka connects again with a
//! backoff of 1 s doubling to 30 s, and the node logs the failures at most once per interval.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::{KafkaError as ClientError, RDKafkaErrorCode};
use rdkafka::message::{BorrowedMessage, Message as _};
use rdkafka::topic_partition_list::Offset;
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, ExampleInput, ExampleOutcome, InputNode, InstanceRunner,
    Invocation, KafkaBroker, Message, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec,
    Runs, Terminals, properties, property_enum,
};
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps};
use sluice_nodes_core::terminals::{InputOutputs, end_unit_of_work, own_failure, propagate_out};

use crate::client::{self, Context};
use crate::{KafkaError, tree};

pub static KAFKA_CONSUMER: NodeSpec = NodeSpec {
    type_name: "KafkaConsumer",
    summary: "Consumes the messages of Kafka topics as a member of a consumer group and propagates each, \
              its body parsed in the chosen domain, with `LocalEnvironment.Kafka.Input` (topicName, \
              partition, offset, key, timestamp, KafkaHeader). A message's offset is committed only \
              after the flow's unit of work committed; a failed message comes again.",
    inputs: &[],
    outputs: InputOutputs::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Every order on the `orders` topic starts the flow",
        properties: "broker: events, topics: [orders], group_id: order-flow, initial_offset: earliest, domain: JSON",
        esql: "",
        input: ExampleInput {
            domain: "JSON",
            body: r#"{"order":17}"#,
            local_environment: &[],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", r#"{"order":17}"#)]),
        runs: Runs::No("only a message from its Kafka cluster starts it."),
    }],
    builder: NodeBuilder::of::<KafkaConsumerProps>(),
};

property_enum! {
    /// Where a consumer group with no committed offset for a partition starts.
    pub enum InitialOffset { Earliest = "earliest", Latest = "latest" }
}

properties! {
    /// KafkaConsumer's properties.
    pub struct KafkaConsumerProps {
        /// The Kafka cluster, by its name under `brokers:` in sluice.yaml.
        broker: String,
        /// The topics to consume.
        topics: Vec<String>,
        /// The consumer group: the servers and instances of one group share the partitions.
        group_id: String,
        /// Where the group starts on a partition it has no committed offset for: the oldest
        /// message (`earliest`) or the next one published (`latest`).
        initial_offset: InitialOffset = "latest",
        /// The client id; by default the broker's `client_id` (or `sluice`) with the flow and
        /// node names appended.
        client_id: Option<String>,
        /// How often the offsets of committed messages are committed to the group; 0 commits
        /// after each message (slower; fewer messages come again after a kill).
        commit_interval_ms: u32 = "1000",
        /// How long the group waits for a silent member before it gives its partitions to
        /// another.
        session_timeout_ms: u32 = "45000",
        /// Attempts of a message that fails before it goes to `failure` (or is skipped).
        backout_threshold: u32 = "3",
        ..parsing: BodyParsingProps,
    }
}

impl BuildNode for KafkaConsumerProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let broker = crate::kafka_broker(b.services, &self.broker)?;
        if self.topics.is_empty() {
            return Err(ConfigError::property("topics", "name at least one topic"));
        }
        for t in &self.topics {
            crate::check_topic(t).map_err(|why| {
                ConfigError::property("topics", format!("`{t}` is not a topic name: {why}"))
            })?;
        }
        if self.group_id.trim().is_empty() {
            return Err(ConfigError::property("group_id", "name the consumer group"));
        }
        if self.backout_threshold == 0 {
            return Err(ConfigError::property(
                "backout_threshold",
                "must be a whole number from 1",
            ));
        }
        if !(1000..=3_600_000).contains(&self.session_timeout_ms) {
            return Err(ConfigError::property(
                "session_timeout_ms",
                "must be from 1000 to 3600000",
            ));
        }
        let client_id = crate::client_id(&self.client_id, &broker, b.flow, b.label);
        Ok(NodeImpl::Input(Arc::new(KafkaConsumer {
            flow: b.flow.to_string(),
            label: b.label.to_string(),
            broker,
            client_id,
            topics: self.topics,
            group_id: self.group_id,
            initial_offset: self.initial_offset,
            commit_interval_ms: self.commit_interval_ms,
            session_timeout_ms: self.session_timeout_ms,
            backout_threshold: self.backout_threshold,
            parsing: BodyParsing::from_props(&self.parsing)?,
            failures: Mutex::new(HashMap::new()),
        })))
    }
}

struct KafkaConsumer {
    flow: String,
    label: String,
    broker: KafkaBroker,
    client_id: String,
    topics: Vec<String>,
    group_id: String,
    initial_offset: InitialOffset,
    commit_interval_ms: u32,
    session_timeout_ms: u32,
    backout_threshold: u32,
    parsing: BodyParsing,
    /// Failed attempts by (topic, partition, offset).
    failures: Mutex<HashMap<(String, i32, i64), u32>>,
}

const POLL: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long a seek back to a failed message may take.
const SEEK_TIMEOUT: Duration = Duration::from_secs(10);
/// Failure counts remembered at most: the map is emptied when full (a count forgotten only
/// gives a message more attempts).
const FAILURES_KEPT: usize = 4096;

impl InputNode for KafkaConsumer {
    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        let mut backoff = Duration::from_secs(1);
        while !runner.stop().is_stopped() {
            match self.open() {
                Ok(consumer) => {
                    backoff = Duration::from_secs(1);
                    self.consume(runner, &consumer);
                    // Commit what the flow committed before leaving the group, so that the
                    // member taking these partitions does not process it again.
                    match consumer.commit_consumer_state(CommitMode::Sync) {
                        Ok(()) => {}
                        Err(e) if e.rdkafka_error_code() == Some(RDKafkaErrorCode::NoOffset) => {}
                        Err(error) => tracing::warn!(
                            %error, flow = %self.flow, node = %self.label,
                            "Cannot commit the consumed offsets on stopping; those messages come again."
                        ),
                    }
                }
                Err(error) => {
                    tracing::warn!(
                        %error, flow = %self.flow, node = %self.label, brokers = %self.broker.bootstrap_servers,
                        retry_secs = backoff.as_secs(), "Cannot start the Kafka consumer; trying again."
                    );
                    if runner.stop().sleep(backoff) {
                        return;
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }
}

impl KafkaConsumer {
    /// A consumer of the node's group, subscribed to its topics.
    fn open(&self) -> Result<BaseConsumer<Context>, KafkaError> {
        let mut c = client::config(&self.broker, &self.client_id)?;
        c.set("group.id", &self.group_id)
            .set("enable.auto.offset.store", "false")
            .set(
                "enable.auto.commit",
                (self.commit_interval_ms > 0).to_string(),
            )
            .set(
                "auto.commit.interval.ms",
                self.commit_interval_ms.max(1).to_string(),
            )
            .set("auto.offset.reset", self.initial_offset.word())
            .set("session.timeout.ms", self.session_timeout_ms.to_string());
        let consumer: BaseConsumer<Context> = c
            .create_with_context(Context::new(&self.flow, &self.label, &self.broker))
            .map_err(KafkaError::Client)?;
        let topics: Vec<&str> = self.topics.iter().map(String::as_str).collect();
        consumer
            .subscribe(&topics)
            .map_err(|source| KafkaError::Request {
                what: "subscribing",
                source,
            })?;
        Ok(consumer)
    }

    /// Poll and process until the flow stops, or the client hits a fatal error.
    fn consume(&self, runner: &mut dyn InstanceRunner, consumer: &BaseConsumer<Context>) {
        while !runner.stop().is_stopped() {
            match consumer.poll(POLL) {
                None => {}
                Some(Ok(m)) => self.handle(runner, consumer, &m),
                Some(Err(e)) => {
                    if is_fatal(&e) {
                        tracing::error!(
                            error = %e, flow = %self.flow, node = %self.label,
                            "The Kafka consumer failed; starting a new one."
                        );
                        return;
                    }
                    // Passing errors (a broker that went away, a topic not there yet) are the
                    // client's to recover from; its context logged them.
                    tracing::debug!(error = %e, flow = %self.flow, node = %self.label, "Kafka consumer error.");
                }
            }
        }
    }

    fn handle(
        &self,
        runner: &mut dyn InstanceRunner,
        consumer: &BaseConsumer<Context>,
        m: &BorrowedMessage<'_>,
    ) {
        let payload = Bytes::copy_from_slice(m.payload().unwrap_or_default());
        runner.record_input_bytes(payload.len() as u64);
        let key = (m.topic().to_string(), m.partition(), m.offset());
        let attempts = self
            .failures
            .lock()
            .ok()
            .and_then(|f| f.get(&key).copied())
            .unwrap_or(0);
        let mut inv = Invocation::new();
        let (mut msg, parse_error) = match self.message(m, payload.clone(), &self.parsing) {
            Ok(msg) => (msg, None),
            Err(e) => match self.message(m, payload, &BodyParsing::blob()) {
                Ok(msg) => (msg, Some(e)),
                Err(e) => (Message::new(), Some(e)),
            },
        };
        let result = if attempts >= self.backout_threshold {
            let e = NodeError::recoverable(format!(
                "the message at offset {} of {}[{}] failed {attempts} times (backout threshold {})",
                key.2, key.0, key.1, self.backout_threshold
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
                self.consumed(consumer, m);
            }
            Err(e) if attempts < self.backout_threshold => {
                tracing::warn!(
                    error = %e.exception.describe(), flow = %self.flow, node = %self.label,
                    topic = %key.0, partition = key.1, offset = key.2,
                    "Message processing failed; the message comes again."
                );
                if let Ok(mut f) = self.failures.lock() {
                    if f.len() >= FAILURES_KEPT {
                        f.clear();
                    }
                    f.insert(key.clone(), attempts + 1);
                }
                if let Err(error) =
                    consumer.seek(&key.0, key.1, Offset::Offset(key.2), SEEK_TIMEOUT)
                {
                    // The partition may have gone to another member: its committed offset is
                    // still before this message, so the message comes again there.
                    tracing::warn!(
                        %error, flow = %self.flow, node = %self.label, topic = %key.0, partition = key.1,
                        "Cannot seek back to the failed message; it comes again after the next rebalance."
                    );
                }
            }
            Err(e) => {
                tracing::error!(
                    error = %e.exception.describe(), flow = %self.flow, node = %self.label,
                    topic = %key.0, partition = key.1, offset = key.2,
                    "Message processing failed past the backout threshold; the message is skipped."
                );
                self.forget(&key);
                self.consumed(consumer, m);
            }
        }
    }

    /// The flow is done with `m`: store the offset after it, for the next commit (or commit now).
    fn consumed(&self, consumer: &BaseConsumer<Context>, m: &BorrowedMessage<'_>) {
        let stored = consumer.store_offset_from_message(m).and_then(|()| {
            if self.commit_interval_ms == 0 {
                consumer.commit_consumer_state(CommitMode::Sync)
            } else {
                Ok(())
            }
        });
        if let Err(error) = stored {
            // A partition revoked meanwhile cannot take the offset: its new owner processes the
            // message again (at least once).
            tracing::warn!(
                %error, flow = %self.flow, node = %self.label, topic = m.topic(), partition = m.partition(),
                "Cannot store a consumed offset; the message may come again."
            );
        }
    }

    /// The message tree: the LocalEnvironment's Kafka.Input and the body.
    fn message(
        &self,
        m: &BorrowedMessage<'_>,
        payload: Bytes,
        parsing: &BodyParsing,
    ) -> Result<Message, NodeError> {
        let mut msg = Message::new();
        tree::write_input(&mut msg.local_environment, m)?;
        parsing.attach(&mut msg.root, payload)?;
        Ok(msg)
    }

    fn fail(
        &self,
        runner: &mut dyn InstanceRunner,
        inv: &mut Invocation,
        msg: &mut Message,
        e: NodeError,
    ) -> Result<(), NodeError> {
        own_failure(runner, inv, msg, e, &self.label, "KafkaConsumer")
    }

    fn forget(&self, key: &(String, i32, i64)) {
        if let Ok(mut f) = self.failures.lock() {
            f.remove(key);
        }
    }
}

/// Whether the client cannot go on (librdkafka's fatal errors) and must be made again.
fn is_fatal(e: &ClientError) -> bool {
    e.rdkafka_error_code() == Some(RDKafkaErrorCode::Fatal)
}
