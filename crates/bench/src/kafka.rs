//! The Kafka transport: each requester sends its message to the input topic (acks=1) and takes
//! the next message that arrives on the output topic, through one reader the requesters share
//! (any reply, as the MQTT transport): a bridge flow (KafkaConsumer to KafkaProducer) sends
//! every copy to one topic, so replies cannot be told apart by requester. The cluster must be
//! running; the harness does not start it.

use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message as _;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};

use crate::driver::{Transport, TransportFactory};
use crate::error::BenchError;

const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
const METADATA_TIMEOUT: Duration = Duration::from_secs(10);

/// Makes a [`KafkaClient`] per requester, all sharing one producer and one reader.
pub struct KafkaFactory {
    bootstrap: String,
    input: String,
    output: String,
    producer: ThreadedProducer<DefaultProducerContext>,
    replies: Arc<Mutex<Receiver<usize>>>,
}

impl KafkaFactory {
    /// Read every partition of `output` from its end, on the cluster at `bootstrap`.
    pub fn new(bootstrap: &str, input: &str, output: &str) -> Result<KafkaFactory, BenchError> {
        let producer: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("acks", "1")
            .set("linger.ms", "0")
            .create()
            .map_err(|e| BenchError::transport_by("creating the Kafka producer", e))?;
        let reader: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", format!("sluice-bench-{}", std::process::id()))
            .set("enable.auto.commit", "false")
            .create()
            .map_err(|e| BenchError::transport_by("creating the Kafka reader", e))?;
        // A producer's metadata request creates the topics where the cluster creates topics on
        // first use; the creation takes a moment to show in the metadata.
        let mut output_meta = None;
        for topic in [input, output] {
            let mut found = None;
            for _ in 0..50 {
                let m = producer
                    .client()
                    .fetch_metadata(Some(topic), METADATA_TIMEOUT)
                    .map_err(|e| {
                        BenchError::transport_by(
                            format!("reaching the Kafka cluster {bootstrap}"),
                            e,
                        )
                    })?;
                if m.topics().iter().any(|t| !t.partitions().is_empty()) {
                    found = Some(m);
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let Some(m) = found else {
                return Err(BenchError::transport(format!(
                    "the topic `{topic}` has no partitions on {bootstrap}"
                )));
            };
            output_meta = Some(m);
        }
        let Some(meta) = output_meta else {
            return Err(BenchError::Internal("no topic was looked up".into()));
        };
        let mut tpl = TopicPartitionList::new();
        for t in meta.topics() {
            for p in t.partitions() {
                // The end as it is now: `Offset::End` would be looked up only when fetching
                // starts, after the first replies may have come.
                let (_, end) = reader
                    .fetch_watermarks(t.name(), p.id(), METADATA_TIMEOUT)
                    .map_err(|e| BenchError::transport_by("reading the output topic's end", e))?;
                tpl.add_partition_offset(t.name(), p.id(), Offset::Offset(end))
                    .map_err(|e| BenchError::transport_by("assigning the output topic", e))?;
            }
        }
        reader
            .assign(&tpl)
            .map_err(|e| BenchError::transport_by("assigning the output topic", e))?;
        let (tx, rx) = channel();
        std::thread::Builder::new()
            .name("bench-kafka-replies".into())
            .spawn(move || {
                loop {
                    if let Some(Ok(m)) = reader.poll(Duration::from_millis(100))
                        && tx.send(m.payload().map_or(0, <[u8]>::len)).is_err()
                    {
                        return;
                    }
                }
            })
            .map_err(|e| BenchError::io("starting the Kafka reply thread", e))?;
        Ok(KafkaFactory {
            bootstrap: bootstrap.to_string(),
            input: input.to_string(),
            output: output.to_string(),
            producer,
            replies: Arc::new(Mutex::new(rx)),
        })
    }
}

impl TransportFactory for KafkaFactory {
    fn create(&self, _requester: usize) -> Result<Box<dyn Transport>, BenchError> {
        Ok(Box::new(KafkaClient {
            producer: self.producer.clone(),
            topic: self.input.clone(),
            replies: Arc::clone(&self.replies),
        }))
    }

    fn describe(&self) -> String {
        format!("kafka {} {} -> {}", self.bootstrap, self.input, self.output)
    }
}

/// One requester.
pub struct KafkaClient {
    producer: ThreadedProducer<DefaultProducerContext>,
    topic: String,
    replies: Arc<Mutex<Receiver<usize>>>,
}

impl Transport for KafkaClient {
    fn round_trip(&mut self, msg: &[u8]) -> Result<usize, BenchError> {
        let record: BaseRecord<'_, (), [u8]> = BaseRecord::to(&self.topic).payload(msg);
        self.producer
            .send(record)
            .map_err(|(e, _)| BenchError::transport_by("sending a request", e))?;
        let replies = self
            .replies
            .lock()
            .map_err(|_| BenchError::Internal("a requester panicked holding the replies".into()))?;
        match replies.recv_timeout(REPLY_TIMEOUT) {
            Ok(n) => Ok(n),
            Err(RecvTimeoutError::Timeout) => Err(BenchError::transport(format!(
                "no reply on the output topic within {} s",
                REPLY_TIMEOUT.as_secs()
            ))),
            Err(RecvTimeoutError::Disconnected) => Err(BenchError::ConnectionClosed),
        }
    }
}
