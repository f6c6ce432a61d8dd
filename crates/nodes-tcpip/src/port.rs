//! A server port: its listener and its connections. One manager exists per listening address
//! while any node holds it: a TCPIPServerInput from `start` to `stopped`, output and receive
//! nodes from their first use for as long as they live. Nodes of every flow that name the same
//! port share it, and so share its connections.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::watch;

use crate::TcpipError;
use crate::connection::{Connection, ConnectionSet, InputSink, read_connection, unserve};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The connections of one listening address.
pub struct PortManager {
    pub addr: SocketAddr,
    runtime: Handle,
    pub connections: Arc<ConnectionSet>,
    sink: watch::Sender<Option<Arc<InputSink>>>,
    accept: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// The managers by address; weak, so that a port is closed when its last node lets go.
static PORTS: LazyLock<Mutex<HashMap<SocketAddr, Weak<PortManager>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

impl PortManager {
    /// The manager of `addr`, listening from now on (opened when no node holds one).
    pub fn acquire(addr: SocketAddr, runtime: &Handle) -> Result<Arc<PortManager>, TcpipError> {
        let mut ports = lock(&PORTS);
        if let Some(m) = ports.get(&addr).and_then(Weak::upgrade) {
            return Ok(m);
        }
        let listener = {
            let _in_runtime = runtime.enter();
            bind_retrying(addr).map_err(|source| TcpipError::Bind { addr, source })?
        };
        let (sink, _) = watch::channel(None);
        let m = Arc::new(PortManager {
            addr,
            runtime: runtime.clone(),
            connections: Arc::default(),
            sink,
            accept: Mutex::new(None),
        });
        let task = runtime.spawn(accept_loop(listener, Arc::downgrade(&m)));
        *lock(&m.accept) = Some(task);
        ports.insert(addr, Arc::downgrade(&m));
        Ok(m)
    }

    pub fn runtime(&self) -> &Handle {
        &self.runtime
    }

    /// Send records to `sink` from now on (replacing the node that served the port before,
    /// as a redeployed flow replaces its old version).
    pub fn serve(&self, sink: Arc<InputSink>) {
        self.sink.send_replace(Some(sink));
    }

    /// Stop sending records to the node `owner`, if it is the one served.
    pub fn unserve(&self, owner: u64) {
        unserve(&self.sink, owner);
    }
}

impl Drop for PortManager {
    fn drop(&mut self) {
        if let Some(t) = lock(&self.accept).take() {
            t.abort();
        }
        self.connections.close_all(&self.runtime);
        let mut ports = lock(&PORTS);
        if ports.get(&self.addr).is_some_and(|w| w.strong_count() == 0) {
            ports.remove(&self.addr);
        }
    }
}

/// Bind, waiting a little while the port is still held: a manager just dropped (a flow
/// stopped before its next version starts) closes its listener on the runtime, a moment later.
fn bind_retrying(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let mut tries = 0;
    loop {
        match bind(addr) {
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && tries < 10 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            r => return r,
        }
    }
}

fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // Connections this server closed linger in TIME_WAIT; a restarted listener must not wait
    // for them.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

async fn accept_loop(listener: tokio::net::TcpListener, manager: Weak<PortManager>) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(a) => a,
            Err(error) => {
                // Out of descriptors, usually: wait rather than spin.
                tracing::warn!(%error, "Failed to accept a TCP/IP connection.");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Some(m) = manager.upgrade() else { return };
        let max = m.sink.borrow().as_ref().and_then(|s| s.max_connections);
        if let Some(max) = max
            && m.connections.len() >= max
        {
            tracing::warn!(%peer, port = m.addr.port(), max, "A TCP/IP port has its maximum number of connections; a new one is closed.");
            drop(stream);
            continue;
        }
        let tls = m.sink.borrow().as_ref().and_then(|s| s.tls.clone());
        let sinks = m.sink.subscribe();
        let (port, set) = (m.addr.port(), Arc::clone(&m.connections));
        drop(m);
        let Some(acceptor) = tls else {
            match Connection::open(stream, "TCPIPServer", peer.ip().to_string(), port, &set) {
                Ok(conn) => {
                    tokio::spawn(read_connection(conn, sinks));
                }
                Err(error) => {
                    tracing::warn!(%error, "Failed to set up an accepted TCP/IP connection.");
                }
            }
            continue;
        };
        // The handshake runs on the connection's own task, so that a slow or silent client
        // does not hold up accepting the next.
        tokio::spawn(async move {
            let _ = stream.set_nodelay(true);
            let session =
                tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await;
            let session = match session {
                Ok(Ok(s)) => s,
                Ok(Err(error)) => {
                    tracing::warn!(%error, %peer, port, "A TLS handshake on a TCP/IP port failed; the connection is closed.");
                    return;
                }
                Err(_) => {
                    tracing::warn!(%peer, port, "A TLS handshake on a TCP/IP port did not finish in time; the connection is closed.");
                    return;
                }
            };
            let (read, write) = tokio::io::split(session);
            let conn = Connection::open_halves(
                Box::new(read),
                Box::new(write),
                peer,
                "TCPIPServer",
                peer.ip().to_string(),
                port,
                &set,
            );
            read_connection(conn, sinks).await;
        });
    }
}

/// How long a client may take over its side of a TLS handshake.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
