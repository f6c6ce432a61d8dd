//! Flows built and started in process with the server's TCP/IP address on a free port, and
//! helpers for plain std clients.

#![allow(dead_code)]

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sluice_flow::{Flow, Registry, RunningFlow, load_flow};
use sluice_flow_testing::{Captured, Harness};
use sluice_node_api::Services;

pub struct Running {
    pub harness: Arc<Harness>,
    pub addr: SocketAddr,
    running: Option<RunningFlow>,
    _flow: Arc<Flow>,
    _runtime: tokio::runtime::Runtime,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(r) = self.running.take() {
            r.stop();
        }
    }
}

pub fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
}

/// Start the flow in `src` with the server's TCP/IP address on a free port.
pub fn start(src: &str) -> Running {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let addr = free_addr();
    let (harness, flow) = build(src, runtime.handle(), addr);
    let running = flow.start();
    Running {
        harness,
        addr,
        running: Some(running),
        _flow: flow,
        _runtime: runtime,
    }
}

/// Build (not start) the flow in `src` with the server's TCP/IP address `addr`.
pub fn build(
    src: &str,
    runtime: &tokio::runtime::Handle,
    addr: SocketAddr,
) -> (Arc<Harness>, Arc<Flow>) {
    let mut registry = Registry::new();
    sluice_nodes_core::register(&mut |s| registry.register(s));
    sluice_nodes_tcpip::register(&mut |s| registry.register(s));
    Harness::register(&mut registry);
    let services = Services {
        runtime: Some(runtime.clone()),
        tcpip: Some(addr),
        ..Services::none()
    };
    let def = load_flow("tcpip.yaml", src, &registry).unwrap_or_else(|d| panic!("{}", d[0]));
    let harness = Harness::new();
    let flow = harness
        .build(&def, std::path::Path::new("."), &services)
        .unwrap_or_else(|d| panic!("{}", d[0]));
    (harness, flow)
}

pub fn connect(addr: SocketAddr) -> TcpStream {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match TcpStream::connect(addr) {
            Ok(s) => {
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                return s;
            }
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("connect {addr}: {e}"),
        }
    }
}

pub fn read_n(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut buf = vec![0; n];
    s.read_exact(&mut buf).expect("read the echo");
    buf
}

/// Wait until `n` messages were captured.
pub fn captured(r: &Running, n: usize) -> Vec<Captured> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut got = Vec::new();
    while got.len() < n && Instant::now() < deadline {
        got.extend(r.harness.take_captured());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(got.len() >= n, "captured {} of {n}", got.len());
    got
}

pub fn le_text(c: &mut Captured, path: &[&str]) -> Option<String> {
    let le = &mut c.message.local_environment;
    let r = le.root();
    let n = le.path(r, path).unwrap()?;
    le.value_bytes(n)
        .map(|b| String::from_utf8_lossy(b).into_owned())
}

pub fn exception_text(c: &Captured) -> String {
    sluice_flow_testing::dump::dump_tree(&c.message.exception_list, &Default::default())
}

pub fn body_text(c: &mut Captured) -> String {
    let (b, _) = sluice_nodes_core::domains::serialize_body(&mut c.message).expect("a body");
    String::from_utf8_lossy(&b).into_owned()
}
