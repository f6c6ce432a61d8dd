//! `sluice bench`: the harness of `sluice-bench`, given what only the binary knows — how to set a
//! flow's instances on a running server (its admin API) and the queue-manager transport.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bytes::Bytes;
use sluice_bench::driver::{Transport, TransportFactory};
use sluice_bench::error::BenchError;
use sluice_bench::figures::MeasuredServer;
use sluice_bench::runner::ServerHooks;
use sluice_bench::server::ServerEndpoints;
use sluice_bench::suite::{Case, Persistence as BenchPersistence, TransportSpec};
use sluice_qm::net::{Client, Credentials};
use sluice_qm::{GetOptions, Message, Persistence, PutOptions};

/// The hooks `sluice bench` runs suites with.
pub struct Hooks;

fn admin(
    host: &str,
    port: u16,
    method: &str,
    path: &str,
    body: &[u8],
) -> Result<(u16, Vec<u8>), BenchError> {
    let io = |e: std::io::Error| BenchError::io(format!("{method} {path} on the admin API"), e);
    let mut s = TcpStream::connect((host, port)).map_err(io)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .map_err(io)?;
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes())
        .and_then(|_| s.write_all(body))
        .map_err(io)?;
    let mut all = Vec::new();
    s.read_to_end(&mut all).map_err(io)?;
    let end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| BenchError::Transport("the admin API sent a malformed response".into()))?;
    let status = std::str::from_utf8(&all[..end])
        .ok()
        .and_then(|h| h.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Ok((status, all[end + 4..].to_vec()))
}

/// The flow whose input node serves the case's HTTP path or input queue.
fn flow_for(server: &ServerEndpoints, case: &Case) -> Result<String, BenchError> {
    let (status, body) = admin(&server.host, server.admin_port, "GET", "/api/v1/flows", b"")?;
    if status != 200 {
        return Err(BenchError::Transport(format!(
            "the admin API answered {status} listing flows"
        )));
    }
    let flows: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| BenchError::Transport(format!("bad flow list: {e}")))?;
    let (kind, prop, want) = match &case.transport {
        TransportSpec::Http { path } => ("HTTPInput", "path", path.clone()),
        TransportSpec::Qm { input, .. } => ("MQInput", "queue", input.clone()),
        TransportSpec::Floor => {
            return Err(BenchError::Unsupported(
                "the floor has no flow instances".into(),
            ));
        }
    };
    flows
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| {
            f["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|n| n["type"] == kind && n["properties"][prop] == want.as_str())
        })
        .and_then(|f| f["name"].as_str().map(str::to_string))
        .ok_or_else(|| BenchError::Unsupported(format!("no deployed flow has a {kind} on {want}")))
}

impl ServerHooks for Hooks {
    fn set_instances(
        &self,
        server: &ServerEndpoints,
        case: &Case,
        instances: u32,
    ) -> Result<(), BenchError> {
        let flow = flow_for(server, case)?;
        let path = format!("/api/v1/flows/{flow}/instances");
        let (status, body) = admin(
            &server.host,
            server.admin_port,
            "PUT",
            &path,
            instances.to_string().as_bytes(),
        )?;
        if status != 200 {
            return Err(BenchError::Transport(format!(
                "setting {instances} instances of {flow} failed: {}",
                String::from_utf8_lossy(&body)
            )));
        }
        Ok(())
    }

    fn transport(
        &self,
        server: &ServerEndpoints,
        case: &Case,
    ) -> Result<Option<Box<dyn TransportFactory>>, BenchError> {
        let TransportSpec::Qm { input, output } = &case.transport else {
            return Ok(None);
        };
        Ok(Some(Box::new(QmFactory {
            addr: format!("{}:{}", server.host, server.qm_port),
            input: input.clone(),
            output: output.clone(),
            persistent: case.persistence == BenchPersistence::Full,
            pid: server.pid,
        })))
    }
}

struct QmFactory {
    addr: String,
    input: String,
    output: String,
    persistent: bool,
    pid: u32,
}

impl TransportFactory for QmFactory {
    fn create(&self, requester: usize) -> Result<Box<dyn Transport>, BenchError> {
        let client = Client::connect(&self.addr, Credentials::default()).map_err(|e| {
            BenchError::Transport(format!(
                "cannot connect to the queue manager at {}: {e}",
                self.addr
            ))
        })?;
        Ok(Box::new(QmTransport {
            client,
            input: self.input.clone(),
            output: self.output.clone(),
            persistent: self.persistent,
            requester: requester as u32,
            sent: 0,
            body: Bytes::new(),
        }))
    }

    fn describe(&self) -> String {
        format!("qm {} {}->{}", self.addr, self.input, self.output)
    }

    fn measured_server(&self) -> Option<MeasuredServer> {
        (self.pid != 0).then_some(MeasuredServer::External(self.pid))
    }
}

/// One requester: puts a request with its own CorrelId and waits for the reply with that CorrelId.
struct QmTransport {
    client: Client,
    input: String,
    output: String,
    persistent: bool,
    requester: u32,
    sent: u64,
    body: Bytes,
}

impl Transport for QmTransport {
    fn round_trip(&mut self, msg: &[u8]) -> Result<usize, BenchError> {
        if self.body[..] != *msg {
            self.body = Bytes::copy_from_slice(msg);
        }
        self.sent += 1;
        let mut m = Message::new(self.body.clone());
        m.md.persistence = if self.persistent {
            Persistence::Persistent
        } else {
            Persistence::NotPersistent
        };
        m.md.correl_id[..4].copy_from_slice(&self.requester.to_be_bytes());
        m.md.correl_id[4..12].copy_from_slice(&self.sent.to_be_bytes());
        m.md.correl_id[12..16].copy_from_slice(&std::process::id().to_be_bytes());
        let get = GetOptions::new()
            .correl_id(m.md.correl_id)
            .wait(Duration::from_secs(30));
        let (put, got) =
            self.client
                .put_then_get(&self.input, &m, &PutOptions::default(), &self.output, &get);
        put.map_err(|e| BenchError::Transport(format!("put to {} failed: {e}", self.input)))?;
        match got {
            Ok(Some(reply)) => Ok(reply.body.len()),
            Ok(None) => Err(BenchError::Transport(format!(
                "no reply on {} within 30 s",
                self.output
            ))),
            Err(e) => Err(BenchError::Transport(format!(
                "get from {} failed: {e}",
                self.output
            ))),
        }
    }
}
