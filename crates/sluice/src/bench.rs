//! `sluice bench`: the harness of `sluice-bench`, given what only the binary knows — how to set a
//! flow's instances on a running server (its admin API), the queue-manager transport, and the
//! in-process transport that runs the project's flows inside the harness.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use sluice_bench::driver::{Transport, TransportFactory};
use sluice_bench::error::{BenchError, BoxError};
use sluice_bench::figures::MeasuredServer;
use sluice_bench::runner::ServerHooks;
use sluice_bench::server::ServerEndpoints;
use sluice_bench::suite::{Case, Persistence as BenchPersistence, TransportSpec};
use sluice_node_api::Services;
use sluice_node_api::http_listener::{HttpRequest, HttpRouter};
use sluice_qm::net::{Client, Credentials};
use sluice_qm::{GetOptions, Message, Persistence, PutOptions};
use sluice_server::deploy::Deployment;

/// The hooks `sluice bench` runs suites with.
pub struct Hooks;

fn admin(
    host: &str,
    port: u16,
    method: &str,
    path: &str,
    body: &[u8],
) -> Result<(u16, Vec<u8>), BenchError> {
    crate::admin_cli::http(host, port, method, path, &[], body)
        .map_err(|e| BenchError::io(format!("{method} {path} on the admin API"), e))
}

/// The flow whose input node serves the case's HTTP path or input queue.
fn flow_for(server: &ServerEndpoints, case: &Case) -> Result<String, BenchError> {
    let (status, body) = admin(&server.host, server.admin_port, "GET", "/api/v1/flows", b"")?;
    if status != 200 {
        return Err(BenchError::transport(format!(
            "the admin API answered {status} listing flows"
        )));
    }
    let flows: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| BenchError::transport_by("bad flow list", e))?;
    let (kind, prop, want) = match &case.transport {
        TransportSpec::Http { path } | TransportSpec::InProcess { path } => {
            ("HTTPInput", "path", path.clone())
        }
        TransportSpec::Qm { input, .. } => ("MQInput", "queue", input.clone()),
        // A TCPIPServerInput on the shared port names no port: its `port` is null.
        TransportSpec::Tcpip { port, .. } => (
            "TCPIPServerInput",
            "port",
            port.map(|p| p.to_string()).unwrap_or_default(),
        ),
        TransportSpec::File { input, .. } => ("FileInput", "directory", input.clone()),
        TransportSpec::Mqtt { .. } => {
            return Err(BenchError::Unsupported(
                "MQTT cases run the flow as deployed (leave out `instances`)".into(),
            ));
        }
        TransportSpec::Kafka { .. } => {
            return Err(BenchError::Unsupported(
                "Kafka cases run the flow as deployed (leave out `instances`)".into(),
            ));
        }
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
            f["nodes"].as_array().into_iter().flatten().any(|n| {
                let v = &n["properties"][prop];
                let same = match v {
                    serde_json::Value::Null => want.is_empty(),
                    serde_json::Value::Number(num) => num.to_string() == want,
                    _ => v == want.as_str(),
                };
                // SOAPInput serves its path on the same HTTP listener as HTTPInput, and a REST
                // API's RESTInput every path under its base path.
                let is_kind =
                    n["type"] == kind || (kind == "HTTPInput" && n["type"] == "SOAPInput");
                let api_serves = kind == "HTTPInput"
                    && n["type"] == "RESTInput"
                    && n["properties"]["base_path"].as_str().is_some_and(|base| {
                        want.strip_prefix(base)
                            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                    });
                (is_kind && same) || api_serves
            })
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
            return Err(BenchError::transport(format!(
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
        if let TransportSpec::InProcess { path } = &case.transport {
            let factory =
                InProcessFactory::start(&server.project, path, case.format.content_type())?;
            return Ok(Some(Box::new(factory)));
        }
        let TransportSpec::Qm {
            input,
            output,
            any_reply,
        } = &case.transport
        else {
            return Ok(None);
        };
        Ok(Some(Box::new(QmFactory {
            addr: server.qm_address(),
            input: input.clone(),
            output: output.clone(),
            persistent: case.persistence == BenchPersistence::Full,
            any_reply: *any_reply,
            pid: server.pid,
        })))
    }
}

struct QmFactory {
    addr: String,
    input: String,
    output: String,
    persistent: bool,
    any_reply: bool,
    pid: u32,
}

impl TransportFactory for QmFactory {
    fn create(&self, requester: usize) -> Result<Box<dyn Transport>, BenchError> {
        let client = Client::connect(&self.addr, Credentials::default()).map_err(|e| {
            BenchError::transport_by(
                format!("cannot connect to the queue manager at {}", self.addr),
                e,
            )
        })?;
        Ok(Box::new(QmTransport {
            client,
            input: self.input.clone(),
            output: self.output.clone(),
            persistent: self.persistent,
            any_reply: self.any_reply,
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

/// One requester: puts a request with its own CorrelId and waits for the reply with that CorrelId
/// (or, with `any_reply`, for whichever reply comes first).
struct QmTransport {
    client: Client,
    input: String,
    output: String,
    persistent: bool,
    any_reply: bool,
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
        let mut get = GetOptions::new().wait(Duration::from_secs(30));
        if !self.any_reply {
            get = get.correl_id(m.md.correl_id);
        }
        let (put, got) =
            self.client
                .put_then_get(&self.input, &m, &PutOptions::default(), &self.output, &get);
        put.map_err(|e| BenchError::transport_by(format!("put to {} failed", self.input), e))?;
        match got {
            Ok(Some(reply)) => Ok(reply.body.len()),
            Ok(None) => Err(BenchError::transport(format!(
                "no reply on {} within 30 s",
                self.output
            ))),
            Err(e) => Err(BenchError::transport_by(
                format!("get from {} failed", self.output),
                e,
            )),
        }
    }
}

/// The project deployed inside the harness: requests go straight to the flows' HTTPInput nodes
/// through the router, without sockets or HTTP, so the figures are the flow's own cost.
struct InProcessFactory {
    router: Arc<HttpRouter>,
    deployment: Arc<Deployment>,
    path: String,
    content_type: Bytes,
    _runtime: tokio::runtime::Runtime,
}

impl InProcessFactory {
    fn start(
        project: &Path,
        path: &str,
        content_type: &str,
    ) -> Result<InProcessFactory, BenchError> {
        // Project problems are diagnostics, reported together as the message.
        let problems = |what: &str, p: Vec<sluice_flow::Diagnostic>| {
            BenchError::transport(format!(
                "in-process {what}: {}",
                p.iter().map(|d| d.to_string()).collect::<String>()
            ))
        };
        let fail =
            |what: &str, e: BoxError| BenchError::transport_by(format!("in-process {what}"), e);
        let registry = Arc::new(crate::bundle::registry());
        let loaded =
            sluice_server::project::load(project, &registry).map_err(|p| problems("project", p))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| fail("runtime", e.into()))?;
        let qm = sluice_server::queues::open_in_memory(&loaded.settings)
            .map_err(|e| fail("queue manager", e.into()))?;
        let router = Arc::new(HttpRouter::new());
        let services = Arc::new(Services {
            http: Arc::clone(&router),
            runtime: Some(runtime.handle().clone()),
            queues: Some(qm),
            brokers: loaded.brokers(),
            datasources: loaded.datasources(),
            ..Services::none()
        });
        let deployment = Arc::new(Deployment::new(project, registry, services));
        deployment
            .deploy_all(&loaded.flows)
            .map_err(|p| problems("deploy", p))?;
        Ok(InProcessFactory {
            router,
            deployment,
            path: path.to_string(),
            content_type: Bytes::copy_from_slice(content_type.as_bytes()),
            _runtime: runtime,
        })
    }
}

impl Drop for InProcessFactory {
    fn drop(&mut self) {
        self.deployment.stop_all();
    }
}

impl TransportFactory for InProcessFactory {
    fn create(&self, _requester: usize) -> Result<Box<dyn Transport>, BenchError> {
        Ok(Box::new(InProcessTransport {
            router: Arc::clone(&self.router),
            path: self.path.clone(),
            content_type: self.content_type.clone(),
            body: Bytes::new(),
        }))
    }

    fn describe(&self) -> String {
        format!("in-process {}", self.path)
    }

    fn measured_server(&self) -> Option<MeasuredServer> {
        Some(MeasuredServer::InProcess)
    }
}

struct InProcessTransport {
    router: Arc<HttpRouter>,
    path: String,
    content_type: Bytes,
    body: Bytes,
}

impl Transport for InProcessTransport {
    fn round_trip(&mut self, msg: &[u8]) -> Result<usize, BenchError> {
        if self.body[..] != *msg {
            self.body = Bytes::copy_from_slice(msg);
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        let request = HttpRequest {
            method: "POST".into(),
            uri: self.path.clone(),
            path: self.path.clone(),
            query: String::new(),
            version: "HTTP/1.1",
            headers: vec![("Content-Type".into(), self.content_type.clone())],
            body: self.body.clone(),
            reply: tx,
        };
        if let Err(e) = self.router.dispatch(request) {
            return Err(BenchError::transport(format!(
                "no flow serves {} ({:?})",
                self.path, e.0
            )));
        }
        match rx.blocking_recv() {
            Ok(r) if r.status == 200 => Ok(r.body.len()),
            Ok(r) => Err(BenchError::HttpStatus(r.status)),
            Err(_) => Err(BenchError::transport("the flow ended without replying")),
        }
    }
}
