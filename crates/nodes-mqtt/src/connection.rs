//! One MQTT connection, 3.1.1 or 5, behind a single shape: rumqttc has a client and an event
//! loop per protocol level, with packets of their own; the nodes see only [`Client`], [`Events`]
//! and the normalised [`Event`].
//!
//! Nothing here opens a socket until [`Events::poll`] is first awaited: building the options is
//! all a node does while it is built.

use std::fs::File;
use std::io::BufReader;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rumqttc::v5;
use sluice_node_api::{BrokerTls, MqttBroker, property_enum};

use crate::MqttError;

property_enum! {
    /// The MQTT protocol level a node speaks.
    pub enum Protocol { V311 = "3.1.1", V5 = "5" }
}

property_enum! {
    /// MQTT's quality of service.
    pub enum Qos { AtMostOnce = "0", AtLeastOnce = "1", ExactlyOnce = "2" }
}

impl Qos {
    fn v4(self) -> rumqttc::QoS {
        match self {
            Qos::AtMostOnce => rumqttc::QoS::AtMostOnce,
            Qos::AtLeastOnce => rumqttc::QoS::AtLeastOnce,
            Qos::ExactlyOnce => rumqttc::QoS::ExactlyOnce,
        }
    }

    fn v5(self) -> v5::mqttbytes::QoS {
        match self {
            Qos::AtMostOnce => v5::mqttbytes::QoS::AtMostOnce,
            Qos::AtLeastOnce => v5::mqttbytes::QoS::AtLeastOnce,
            Qos::ExactlyOnce => v5::mqttbytes::QoS::ExactlyOnce,
        }
    }

    pub fn number(self) -> u8 {
        match self {
            Qos::AtMostOnce => 0,
            Qos::AtLeastOnce => 1,
            Qos::ExactlyOnce => 2,
        }
    }

    pub fn from_number(n: i64) -> Option<Qos> {
        match n {
            0 => Some(Qos::AtMostOnce),
            1 => Some(Qos::AtLeastOnce),
            2 => Some(Qos::ExactlyOnce),
            _ => None,
        }
    }
}

/// How a node connects, besides the broker's own settings.
#[derive(Clone, Debug)]
pub struct Session {
    pub protocol: Protocol,
    pub client_id: String,
    /// Clean session (3.1.1) or clean start (5).
    pub clean: bool,
    /// MQTT 5: how long the broker keeps a persistent session after a disconnection.
    pub session_expiry_secs: u32,
    /// Acknowledge received messages only when told (after the flow committed).
    pub manual_acks: bool,
}

/// A client of either protocol level.
#[derive(Clone)]
pub enum Client {
    V4(rumqttc::AsyncClient),
    V5(v5::AsyncClient),
}

/// The event loop of either protocol level.
pub enum Events {
    V4(Box<rumqttc::EventLoop>),
    V5(Box<v5::EventLoop>),
}

/// A message the broker delivered, as it came.
#[derive(Clone, Debug)]
pub enum Received {
    V4(rumqttc::Publish),
    V5(v5::mqttbytes::v5::Publish),
}

/// What the event loop reports that the nodes act on.
#[derive(Debug)]
pub enum Event {
    /// The broker accepted the connection.
    Connected { session_present: bool },
    /// A message on a subscribed topic.
    Message(Received),
    /// A publish of this client went onto the wire with this packet id (0 at QoS 0).
    Sent(u16),
    /// The broker acknowledged the publish with this packet id (PUBACK at QoS 1, PUBCOMP at QoS
    /// 2), or refused it (MQTT 5 reason codes).
    Acked(u16, Result<(), String>),
    /// The broker answered a subscription; the filters it refused, by position.
    Subscribed { refused: Vec<usize> },
    /// Anything else (pings, the protocol's own acknowledgements).
    Other,
}

/// Build a client and its event loop for `broker`; nothing is connected yet.
pub fn open(broker: &MqttBroker, s: &Session) -> Result<(Client, Events), MqttError> {
    let password = match &broker.password_env {
        Some(var) => {
            Some(std::env::var(var).map_err(|_| MqttError::PasswordEnv { var: var.clone() })?)
        }
        None => None,
    };
    let transport = match &broker.tls {
        Some(tls) => Some(rumqttc::Transport::tls_with_config(
            rumqttc::TlsConfiguration::Rustls(Arc::new(tls_config(tls)?)),
        )),
        None => None,
    };
    let keep_alive = Duration::from_secs(u64::from(broker.keep_alive_secs.max(5)));
    Ok(match s.protocol {
        Protocol::V311 => {
            let mut o = rumqttc::MqttOptions::new(&s.client_id, &broker.host, broker.port);
            o.set_keep_alive(keep_alive)
                .set_clean_session(s.clean)
                .set_manual_acks(s.manual_acks)
                .set_max_packet_size(256 * 1024 * 1024, 256 * 1024 * 1024);
            if let (Some(u), Some(p)) = (&broker.username, &password) {
                o.set_credentials(u, p);
            } else if let Some(u) = &broker.username {
                o.set_credentials(u, "");
            }
            if let Some(t) = transport {
                o.set_transport(t);
            }
            let (c, e) = rumqttc::AsyncClient::new(o, 64);
            (Client::V4(c), Events::V4(Box::new(e)))
        }
        Protocol::V5 => {
            let mut o = v5::MqttOptions::new(&s.client_id, &broker.host, broker.port);
            o.set_keep_alive(keep_alive)
                .set_clean_start(s.clean)
                .set_manual_acks(s.manual_acks)
                .set_max_packet_size(Some(256 * 1024 * 1024));
            // A persistent session outlives the connection only when it is given an expiry
            // (MQTT 5 ends it at the disconnection otherwise).
            if !s.clean {
                o.set_session_expiry_interval(Some(s.session_expiry_secs));
            }
            if let Some(u) = &broker.username {
                o.set_credentials(u, password.as_deref().unwrap_or_default());
            }
            if let Some(t) = transport {
                o.set_transport(t);
            }
            let (c, e) = v5::AsyncClient::new(o, 64);
            (Client::V5(c), Events::V5(Box::new(e)))
        }
    })
}

/// A rustls client configuration on the ring provider, trusting `ca_file` or the web roots.
fn tls_config(tls: &BrokerTls) -> Result<rustls::ClientConfig, MqttError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(MqttError::Tls)?;
    let mut roots = rustls::RootCertStore::empty();
    match &tls.ca_file {
        Some(path) => {
            for cert in read_certs(path)? {
                roots.add(cert).map_err(MqttError::Tls)?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let builder = builder.with_root_certificates(roots);
    match (&tls.cert_file, &tls.key_file) {
        (Some(cert), Some(key)) => {
            let certs = read_certs(cert)?;
            let file = File::open(key).map_err(|e| MqttError::TlsFile {
                path: key.clone(),
                source: e,
            })?;
            let key_der = rustls_pemfile::private_key(&mut BufReader::new(file))
                .map_err(|e| MqttError::TlsFile {
                    path: key.clone(),
                    source: e,
                })?
                .ok_or_else(|| MqttError::TlsFile {
                    path: key.clone(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "no private key in the file",
                    ),
                })?;
            builder
                .with_client_auth_cert(certs, key_der)
                .map_err(MqttError::Tls)
        }
        _ => Ok(builder.with_no_client_auth()),
    }
}

fn read_certs(
    path: &std::path::Path,
) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, MqttError> {
    let file_error = |source| MqttError::TlsFile {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(file_error)?;
    rustls_pemfile::certs(&mut BufReader::new(file))
        .collect::<Result<Vec<_>, _>>()
        .map_err(file_error)
}

impl Client {
    /// Subscribe to every filter, each at its QoS.
    pub async fn subscribe(&self, filters: &[(String, Qos)]) -> Result<(), MqttError> {
        match self {
            Client::V4(c) => c
                .subscribe_many(
                    filters
                        .iter()
                        .map(|(f, q)| rumqttc::SubscribeFilter::new(f.clone(), q.v4())),
                )
                .await
                .map_err(|e| MqttError::Client(e.to_string())),
            Client::V5(c) => c
                .subscribe_many(
                    filters
                        .iter()
                        .map(|(f, q)| v5::mqttbytes::v5::Filter::new(f.clone(), q.v5())),
                )
                .await
                .map_err(|e| MqttError::Client(e.to_string())),
        }
    }

    /// Acknowledge a received message (PUBACK at QoS 1, PUBREC at QoS 2; nothing at QoS 0).
    pub async fn ack(&self, m: &Received) -> Result<(), MqttError> {
        let failed = |e: &dyn std::error::Error| MqttError::Client(e.to_string());
        match (self, m) {
            (Client::V4(c), Received::V4(p)) => c.ack(p).await.map_err(|e| failed(&e)),
            (Client::V5(c), Received::V5(p)) => c.ack(p).await.map_err(|e| failed(&e)),
            _ => Err(MqttError::Client(
                "a message of another protocol level".into(),
            )),
        }
    }

    /// Hand a publish to the event loop.
    pub async fn publish(&self, p: Outgoing) -> Result<(), MqttError> {
        let failed = |e: &dyn std::error::Error| MqttError::Client(e.to_string());
        match self {
            Client::V4(c) => c
                .publish_bytes(p.topic, p.qos.v4(), p.retain, p.payload)
                .await
                .map_err(|e| failed(&e)),
            Client::V5(c) => {
                let props = v5::mqttbytes::v5::PublishProperties {
                    user_properties: p.user_properties,
                    content_type: p.content_type,
                    ..Default::default()
                };
                c.publish_bytes_with_properties(p.topic, p.qos.v5(), p.retain, p.payload, props)
                    .await
                    .map_err(|e| failed(&e))
            }
        }
    }

    /// Say goodbye (DISCONNECT), so that the broker drops no will and knows the client left.
    pub async fn disconnect(&self) {
        match self {
            Client::V4(c) => {
                let _ = c.disconnect().await;
            }
            Client::V5(c) => {
                let _ = c.disconnect().await;
            }
        }
    }
}

/// A message to publish.
#[derive(Clone, Debug)]
pub struct Outgoing {
    pub topic: String,
    pub qos: Qos,
    pub retain: bool,
    pub payload: Bytes,
    /// MQTT 5 only; ignored at 3.1.1.
    pub user_properties: Vec<(String, String)>,
    pub content_type: Option<String>,
}

impl Events {
    /// The next event; an error means the connection is gone.
    pub async fn poll(&mut self) -> Result<Event, MqttError> {
        match self {
            Events::V4(e) => {
                use rumqttc::{Event as E, Outgoing as O, Packet as P};
                let ev = e
                    .poll()
                    .await
                    .map_err(|e| MqttError::Connection(e.to_string()))?;
                Ok(match ev {
                    E::Incoming(P::ConnAck(c)) => Event::Connected {
                        session_present: c.session_present,
                    },
                    E::Incoming(P::Publish(p)) => Event::Message(Received::V4(p)),
                    E::Incoming(P::PubAck(a)) => Event::Acked(a.pkid, Ok(())),
                    E::Incoming(P::PubComp(a)) => Event::Acked(a.pkid, Ok(())),
                    E::Incoming(P::SubAck(s)) => Event::Subscribed {
                        refused: refused(
                            s.return_codes
                                .iter()
                                .map(|c| matches!(c, rumqttc::SubscribeReasonCode::Failure)),
                        ),
                    },
                    E::Outgoing(O::Publish(pkid)) => Event::Sent(pkid),
                    _ => Event::Other,
                })
            }
            Events::V5(e) => {
                use v5::Event as E;
                use v5::mqttbytes::v5::{
                    Packet as P, PubAckReason, PubCompReason, PubRecReason, SubscribeReasonCode,
                };
                let ev = e
                    .poll()
                    .await
                    .map_err(|e| MqttError::Connection(e.to_string()))?;
                Ok(match ev {
                    E::Incoming(P::ConnAck(c)) => Event::Connected {
                        session_present: c.session_present,
                    },
                    E::Incoming(P::Publish(p)) => Event::Message(Received::V5(p)),
                    E::Incoming(P::PubAck(a)) => Event::Acked(
                        a.pkid,
                        match a.reason {
                            PubAckReason::Success | PubAckReason::NoMatchingSubscribers => Ok(()),
                            r => Err(format!("{r:?}")),
                        },
                    ),
                    // A refused QoS 2 publish ends at its PUBREC: no PUBCOMP follows.
                    E::Incoming(P::PubRec(a))
                        if !matches!(
                            a.reason,
                            PubRecReason::Success | PubRecReason::NoMatchingSubscribers
                        ) =>
                    {
                        Event::Acked(a.pkid, Err(format!("{:?}", a.reason)))
                    }
                    E::Incoming(P::PubComp(a)) => Event::Acked(
                        a.pkid,
                        match a.reason {
                            PubCompReason::Success => Ok(()),
                            r => Err(format!("{r:?}")),
                        },
                    ),
                    E::Incoming(P::SubAck(s)) => Event::Subscribed {
                        refused: refused(
                            s.return_codes
                                .iter()
                                .map(|c| !matches!(c, SubscribeReasonCode::Success(_))),
                        ),
                    },
                    E::Outgoing(rumqttc::Outgoing::Publish(pkid)) => Event::Sent(pkid),
                    _ => Event::Other,
                })
            }
        }
    }
}

fn refused(codes: impl Iterator<Item = bool>) -> Vec<usize> {
    codes
        .enumerate()
        .filter(|(_, r)| *r)
        .map(|(i, _)| i)
        .collect()
}

impl Received {
    pub fn topic(&self) -> String {
        match self {
            Received::V4(p) => p.topic.clone(),
            Received::V5(p) => String::from_utf8_lossy(&p.topic).into_owned(),
        }
    }

    pub fn payload(&self) -> Bytes {
        match self {
            Received::V4(p) => p.payload.clone(),
            Received::V5(p) => p.payload.clone(),
        }
    }

    pub fn qos(&self) -> u8 {
        match self {
            Received::V4(p) => p.qos as u8,
            Received::V5(p) => p.qos as u8,
        }
    }

    pub fn retain(&self) -> bool {
        match self {
            Received::V4(p) => p.retain,
            Received::V5(p) => p.retain,
        }
    }

    pub fn dup(&self) -> bool {
        match self {
            Received::V4(p) => p.dup,
            Received::V5(p) => p.dup,
        }
    }

    pub fn pkid(&self) -> u16 {
        match self {
            Received::V4(p) => p.pkid,
            Received::V5(p) => p.pkid,
        }
    }

    /// MQTT 5's user properties, in their order (names may repeat).
    pub fn user_properties(&self) -> &[(String, String)] {
        match self {
            Received::V5(p) => p
                .properties
                .as_ref()
                .map_or(&[][..], |p| &p.user_properties),
            Received::V4(_) => &[],
        }
    }

    pub fn content_type(&self) -> Option<&str> {
        match self {
            Received::V5(p) => p.properties.as_ref()?.content_type.as_deref(),
            Received::V4(_) => None,
        }
    }
}
