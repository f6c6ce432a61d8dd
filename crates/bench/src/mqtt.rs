//! The MQTT transport: each requester publishes its message at QoS 1 on the input topic with a
//! connection of its own, and takes the next message that arrives on the output topic, through
//! one subscription the requesters share (any reply, as the queue transport's `any_reply`): a
//! bridge flow publishes every copy on one topic, so replies cannot be told apart by requester.
//! The broker must be running; the harness does not start it.

use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rumqttc::{Client, Connection, Event, MqttOptions, Packet, QoS};

use crate::driver::{Transport, TransportFactory};
use crate::error::BenchError;

const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// Makes an [`MqttClient`] per requester; holds the shared subscription.
pub struct MqttFactory {
    host: String,
    port: u16,
    input: String,
    output: String,
    replies: Arc<Mutex<Receiver<usize>>>,
    /// Kept so that the subscription lives as long as the factory.
    _subscriber: Client,
}

impl MqttFactory {
    /// Subscribe to `output` on the broker at `host:port`, and wait until the broker confirmed.
    pub fn new(
        host: &str,
        port: u16,
        input: &str,
        output: &str,
    ) -> Result<MqttFactory, BenchError> {
        let (subscriber, mut conn) = Client::new(options("bench-replies", host, port), 64);
        subscriber
            .subscribe(output, QoS::AtMostOnce)
            .map_err(|e| BenchError::transport_by("subscribing to the output topic", e))?;
        let (ready_tx, ready_rx) = channel();
        let (tx, rx) = channel();
        std::thread::Builder::new()
            .name("bench-mqtt-replies".into())
            .spawn(move || {
                for ev in conn.iter() {
                    match ev {
                        Ok(Event::Incoming(Packet::SubAck(_))) => {
                            let _ = ready_tx.send(Ok(()));
                        }
                        Ok(Event::Incoming(Packet::Publish(p))) => {
                            if tx.send(p.payload.len()).is_err() {
                                return;
                            }
                        }
                        Ok(_) => {}
                        Err(e) => {
                            let _ = ready_tx.send(Err(e.to_string()));
                            return;
                        }
                    }
                }
            })
            .map_err(|e| BenchError::io("starting the MQTT reply thread", e))?;
        match ready_rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(BenchError::transport(format!(
                    "cannot subscribe on the MQTT broker {host}:{port}: {e}"
                )));
            }
            Err(_) => {
                return Err(BenchError::transport(format!(
                    "the MQTT broker {host}:{port} did not confirm the subscription"
                )));
            }
        }
        Ok(MqttFactory {
            host: host.to_string(),
            port,
            input: input.to_string(),
            output: output.to_string(),
            replies: Arc::new(Mutex::new(rx)),
            _subscriber: subscriber,
        })
    }
}

fn options(id: &str, host: &str, port: u16) -> MqttOptions {
    let mut o = MqttOptions::new(format!("{id}-{}", std::process::id()), host, port);
    o.set_keep_alive(Duration::from_secs(30))
        .set_max_packet_size(64 * 1024 * 1024, 64 * 1024 * 1024);
    o
}

impl TransportFactory for MqttFactory {
    fn create(&self, requester: usize) -> Result<Box<dyn Transport>, BenchError> {
        let (client, conn) = Client::new(
            options(&format!("bench-{requester}"), &self.host, self.port),
            16,
        );
        std::thread::Builder::new()
            .name(format!("bench-mqtt-{requester}"))
            .spawn(move || drive(conn))
            .map_err(|e| BenchError::io("starting an MQTT requester thread", e))?;
        Ok(Box::new(MqttClient {
            client,
            topic: self.input.clone(),
            replies: Arc::clone(&self.replies),
        }))
    }

    fn describe(&self) -> String {
        format!(
            "mqtt {}:{} {} -> {}",
            self.host, self.port, self.input, self.output
        )
    }
}

/// Poll a requester's connection (its acknowledgements and pings) until it ends.
fn drive(mut conn: Connection) {
    for ev in conn.iter() {
        if ev.is_err() {
            return;
        }
    }
}

/// One requester's connection.
pub struct MqttClient {
    client: Client,
    topic: String,
    replies: Arc<Mutex<Receiver<usize>>>,
}

impl Transport for MqttClient {
    fn round_trip(&mut self, msg: &[u8]) -> Result<usize, BenchError> {
        self.client
            .publish(self.topic.as_str(), QoS::AtLeastOnce, false, msg.to_vec())
            .map_err(|e| BenchError::transport_by("publishing a request", e))?;
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
