//! What the three nodes share: librdkafka's configuration from a sluice.yaml broker entry, and a
//! client context that sends librdkafka's logs and errors to the server's log without flooding
//! it while a cluster is down.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rdkafka::ClientConfig;
use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::ConsumerContext;
use sluice_node_api::KafkaBroker;

use crate::KafkaError;

/// The first wait between connection attempts, and the longest: librdkafka doubles it (with
/// jitter) from one to the other, as MQTTSubscribe does.
const BACKOFF_MS: (u32, u32) = (1000, 30_000);

/// librdkafka's configuration for `broker`: servers, client id, TLS and SASL. The password is
/// read from the environment now, so that it is never kept in the project.
pub fn config(broker: &KafkaBroker, client_id: &str) -> Result<ClientConfig, KafkaError> {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", &broker.bootstrap_servers)
        .set("client.id", client_id)
        .set("reconnect.backoff.ms", BACKOFF_MS.0.to_string())
        .set("reconnect.backoff.max.ms", BACKOFF_MS.1.to_string())
        // A closed idle connection is routine (the broker's connections.max.idle.ms).
        .set("log.connection.close", "false");
    let sasl = broker.username.is_some();
    let protocol = match (sasl, broker.tls.is_some()) {
        (false, false) => "plaintext",
        (false, true) => "ssl",
        (true, false) => "sasl_plaintext",
        (true, true) => "sasl_ssl",
    };
    c.set("security.protocol", protocol);
    if let Some(tls) = &broker.tls {
        if let Some(ca) = &tls.ca_file {
            c.set("ssl.ca.location", ca.to_string_lossy());
        }
        if let (Some(cert), Some(key)) = (&tls.cert_file, &tls.key_file) {
            c.set("ssl.certificate.location", cert.to_string_lossy())
                .set("ssl.key.location", key.to_string_lossy());
        }
    }
    if let Some(user) = &broker.username {
        c.set("sasl.mechanisms", broker.sasl_mechanism.name())
            .set("sasl.username", user);
        if let Some(var) = &broker.password_env {
            let pw =
                std::env::var(var).map_err(|_| KafkaError::PasswordEnv { var: var.clone() })?;
            c.set("sasl.password", pw);
        }
    }
    c.set_log_level(RDKafkaLogLevel::Warning);
    Ok(c)
}

/// The context of every client the nodes create: names the flow and node in log lines, and logs
/// a repeating problem (a cluster that is down) at most once per interval, the interval
/// doubling from 1 s to 30 s while it repeats.
pub struct Context {
    flow: String,
    label: String,
    servers: String,
    quiet: Mutex<Quiet>,
}

struct Quiet {
    last: Option<Instant>,
    interval: Duration,
    suppressed: u64,
}

impl Context {
    pub fn new(flow: &str, label: &str, broker: &KafkaBroker) -> Context {
        Context {
            flow: flow.to_string(),
            label: label.to_string(),
            servers: broker.bootstrap_servers.clone(),
            quiet: Mutex::new(Quiet {
                last: None,
                interval: Duration::from_secs(1),
                suppressed: 0,
            }),
        }
    }

    /// Log `what` as a warning unless one was logged within the interval.
    fn warn(&self, what: &str) {
        let Ok(mut q) = self.quiet.lock() else {
            return;
        };
        let now = Instant::now();
        if let Some(last) = q.last {
            if now.duration_since(last) < q.interval {
                q.suppressed += 1;
                return;
            }
            // A pause twice the interval long means the problem went away in between.
            q.interval = if now.duration_since(last) > q.interval * 2 {
                Duration::from_secs(1)
            } else {
                (q.interval * 2).min(Duration::from_secs(30))
            };
        }
        let suppressed = std::mem::take(&mut q.suppressed);
        q.last = Some(now);
        drop(q);
        tracing::warn!(
            flow = %self.flow, node = %self.label, brokers = %self.servers, suppressed,
            "Kafka: {what}; the client keeps trying."
        );
    }
}

impl ClientContext for Context {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, message: &str) {
        match level {
            RDKafkaLogLevel::Debug => {
                tracing::trace!(flow = %self.flow, node = %self.label, "librdkafka {fac}: {message}")
            }
            RDKafkaLogLevel::Info | RDKafkaLogLevel::Notice => {
                tracing::debug!(flow = %self.flow, node = %self.label, "librdkafka {fac}: {message}")
            }
            _ => self.warn(&format!("{fac}: {message}")),
        }
    }

    fn error(&self, error: rdkafka::error::KafkaError, reason: &str) {
        self.warn(&format!("{error}: {reason}"));
    }
}

impl ConsumerContext for Context {}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_node_api::{BrokerTls, KafkaSasl};

    #[test]
    fn config_chooses_the_security_protocol_when_tls_and_sasl_are_set() {
        let mut b = crate::tests::broker();
        let c = config(&b, "c").unwrap();
        assert_eq!(c.get("security.protocol"), Some("plaintext"));
        assert_eq!(c.get("sasl.mechanisms"), None);
        b.username = Some("u".into());
        b.sasl_mechanism = KafkaSasl::ScramSha256;
        b.tls = Some(BrokerTls {
            ca_file: Some("ca.pem".into()),
            ..BrokerTls::default()
        });
        let c = config(&b, "c").unwrap();
        assert_eq!(c.get("security.protocol"), Some("sasl_ssl"));
        assert_eq!(c.get("sasl.mechanisms"), Some("SCRAM-SHA-256"));
        assert_eq!(c.get("ssl.ca.location"), Some("ca.pem"));
    }

    #[test]
    fn config_fails_when_the_password_variable_is_not_set() {
        let mut b = crate::tests::broker();
        b.username = Some("u".into());
        b.password_env = Some("SLUICE_TEST_KAFKA_PASSWORD_NOT_SET".into());
        assert!(matches!(
            config(&b, "c"),
            Err(KafkaError::PasswordEnv { .. })
        ));
    }
}
