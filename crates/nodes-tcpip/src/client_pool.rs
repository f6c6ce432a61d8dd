//! The connection pool of a remote `host:port`, shared by the client nodes of every flow that
//! name the same connection details (the first node that opens the pool sets its limits).
//!
//! A flow that sends (TCPIPClientOutput) or receives (TCPIPClientReceive) holds a connection
//! for the rest of its invocation — a *lease* in its unit of work, given back when the
//! invocation ends — so a request and the receive of its reply use the same connection and no
//! other invocation writes between them. While a connection is leased, the TCPIPClientInput
//! reading the pool's connections for unsolicited data leaves it alone.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, LazyLock, Mutex, Weak};
use std::time::{Duration, Instant};

use sluice_node_api::{Resource, ResourceError};
use tokio::runtime::Handle;
use tokio::sync::watch;

use crate::TcpipError;
use crate::connection::{Connection, ConnectionSet, InputSink, read_connection};
use crate::tls::ClientTls;

/// How a pool connects and how many connections it keeps.
#[derive(Clone, Copy, Debug)]
pub struct PoolLimits {
    /// Connections opened when an input node starts, and kept open.
    pub min: usize,
    /// Connections open at most; a lease waits for one to come free beyond it.
    pub max: usize,
    pub connect_timeout: Duration,
    /// Further attempts after a failed connect.
    pub retries: u32,
    pub retry_interval: Duration,
}

/// The connections to one `host:port`.
pub struct ClientPool {
    pub host: String,
    pub port: u16,
    limits: PoolLimits,
    tls: Option<ClientTls>,
    runtime: Handle,
    pub connections: Arc<ConnectionSet>,
    /// Connections not leased; the lock is taken only briefly, never across I/O.
    free: Mutex<Vec<Arc<Connection>>>,
    freed: Condvar,
    sink: watch::Sender<Option<Arc<InputSink>>>,
}

/// The pools by host and port; weak, so that a pool closes when its last node lets go.
type Pools = HashMap<(String, u16), Weak<ClientPool>>;

static POOLS: LazyLock<Mutex<Pools>> = LazyLock::new(|| Mutex::new(HashMap::new()));

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// `host:port`, or a port alone (on localhost), as the product writes connection details.
pub fn parse_details(s: &str) -> Option<(String, u16)> {
    let s = s.trim();
    match s.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() => Some((h.to_string(), p.parse().ok().filter(|p| *p != 0)?)),
        Some(_) => None,
        None => Some(("localhost".into(), s.parse().ok().filter(|p| *p != 0)?)),
    }
}

impl ClientPool {
    /// The pool of `host:port`, created with `limits` and `tls` when there is none.
    pub fn acquire(
        host: &str,
        port: u16,
        limits: PoolLimits,
        tls: Option<ClientTls>,
        runtime: &Handle,
    ) -> Arc<ClientPool> {
        let mut pools = lock(&POOLS);
        let key = (host.to_string(), port);
        if let Some(p) = pools.get(&key).and_then(Weak::upgrade) {
            return p;
        }
        let p = Arc::new(ClientPool {
            host: host.to_string(),
            port,
            limits,
            tls,
            runtime: runtime.clone(),
            connections: Arc::default(),
            free: Mutex::new(Vec::new()),
            freed: Condvar::new(),
            sink: watch::channel(None).0,
        });
        pools.insert(key, Arc::downgrade(&p));
        p
    }

    pub fn runtime(&self) -> &Handle {
        &self.runtime
    }

    /// `host:port`, for keys and messages.
    pub fn key(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// Open one more connection, with the pool's retries.
    async fn connect(&self) -> Result<Arc<Connection>, TcpipError> {
        let mut attempt = 0;
        loop {
            let tried = tokio::time::timeout(
                self.limits.connect_timeout,
                tokio::net::TcpStream::connect((self.host.as_str(), self.port)),
            )
            .await;
            let error = match tried {
                Ok(Ok(stream)) => {
                    let conn = match &self.tls {
                        None => Connection::open(
                            stream,
                            "TCPIPClient",
                            self.host.clone(),
                            self.port,
                            &self.connections,
                        )
                        .map_err(|e| self.connect_error(e))?,
                        Some(tls) => self.handshake(tls, stream).await?,
                    };
                    tokio::spawn(read_connection(Arc::clone(&conn), self.sink.subscribe()));
                    return Ok(conn);
                }
                Ok(Err(e)) => e,
                Err(_) => std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out"),
            };
            if attempt >= self.limits.retries {
                return Err(self.connect_error(error));
            }
            attempt += 1;
            tokio::time::sleep(self.limits.retry_interval).await;
        }
    }

    /// A TLS session over `stream`. A failed handshake is not retried: the same server
    /// would present the same certificate.
    async fn handshake(
        &self,
        tls: &ClientTls,
        stream: tokio::net::TcpStream,
    ) -> Result<Arc<Connection>, TcpipError> {
        let peer = stream.peer_addr().map_err(|e| self.connect_error(e))?;
        let _ = stream.set_nodelay(true);
        let session = tokio::time::timeout(
            self.limits.connect_timeout,
            tls.connector.connect(tls.server_name.clone(), stream),
        )
        .await
        .unwrap_or_else(|_| {
            Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the handshake timed out",
            ))
        })
        .map_err(|source| TcpipError::TlsHandshake {
            to: self.key(),
            source,
        })?;
        let (read, write) = tokio::io::split(session);
        Ok(Connection::open_halves(
            Box::new(read),
            Box::new(write),
            peer,
            "TCPIPClient",
            self.host.clone(),
            self.port,
            &self.connections,
        ))
    }

    fn connect_error(&self, source: std::io::Error) -> TcpipError {
        TcpipError::Connect {
            to: self.key(),
            source,
        }
    }

    /// A connection for a flow to hold: a free one, a new one while under `max`, or the first
    /// freed within the connect timeout. Called from flow threads.
    pub fn lease(&self) -> Result<Arc<Connection>, TcpipError> {
        let deadline = Instant::now() + self.limits.connect_timeout;
        let mut free = lock(&self.free);
        loop {
            free.retain(|c| !c.is_closed());
            // A connection whose stream another flow thread reserved is that thread's.
            if let Some(i) = free.iter().rposition(|c| !c.reserved_by_other()) {
                let c = free.remove(i);
                c.lease(true);
                return Ok(c);
            }
            if self.connections.len() < self.limits.max.max(1) {
                drop(free);
                let c = self.runtime.block_on(self.connect())?;
                c.lease(true);
                return Ok(c);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(TcpipError::PoolExhausted {
                    to: self.key(),
                    max: self.limits.max,
                });
            }
            free = self
                .freed
                .wait_timeout(free, left)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// Give a leased connection back.
    pub fn release(&self, c: Arc<Connection>) {
        c.lease(false);
        if !c.is_closed() {
            lock(&self.free).push(c);
        }
        self.freed.notify_one();
    }

    /// Read unsolicited data of the pool's connections for `sink` (a TCPIPClientInput), and
    /// keep `min` connections open (retrying every retry interval) while the input node runs.
    pub fn serve(self: &Arc<Self>, sink: Arc<InputSink>) {
        self.sink.send_replace(Some(sink));
        let pool = Arc::downgrade(self);
        self.runtime.spawn(async move {
            loop {
                let Some(p) = pool.upgrade() else { return };
                if p.sink.borrow().is_none() {
                    return;
                }
                while p.connections.len() < p.limits.min {
                    match p.connect().await {
                        Ok(c) => lock(&p.free).push(c),
                        Err(error) => {
                            tracing::warn!(%error, "Failed to open a TCP/IP client connection; retrying.");
                            break;
                        }
                    }
                }
                let wait = p.limits.retry_interval.max(Duration::from_millis(100));
                drop(p);
                tokio::time::sleep(wait).await;
            }
        });
    }

    /// Stop reading for the input node `owner`.
    pub fn unserve(&self, owner: u64) {
        crate::connection::unserve(&self.sink, owner);
    }
}

impl Drop for ClientPool {
    fn drop(&mut self) {
        self.connections.close_all(&self.runtime);
        let mut pools = lock(&POOLS);
        let key = (self.host.clone(), self.port);
        if pools.get(&key).is_some_and(|w| w.strong_count() == 0) {
            pools.remove(&key);
        }
    }
}

/// A connection an invocation holds, given back to its pool when the invocation ends.
pub struct Lease {
    pool: Arc<ClientPool>,
    pub conn: Arc<Connection>,
    given_back: bool,
}

impl Lease {
    pub fn take(pool: &Arc<ClientPool>) -> Result<Lease, TcpipError> {
        Ok(Lease {
            pool: Arc::clone(pool),
            conn: pool.lease()?,
            given_back: false,
        })
    }

    fn give_back(&mut self) {
        if !self.given_back {
            self.given_back = true;
            self.pool.release(Arc::clone(&self.conn));
        }
    }
}

impl Resource for Lease {
    fn commit(&mut self) -> Result<(), ResourceError> {
        self.give_back();
        Ok(())
    }

    fn rollback(&mut self) {
        self.give_back();
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.give_back();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_details_parse_when_host_and_port_or_port_alone() {
        assert_eq!(
            parse_details("example.com:7000"),
            Some(("example.com".into(), 7000))
        );
        assert_eq!(parse_details("7000"), Some(("localhost".into(), 7000)));
        assert_eq!(parse_details("host:0"), None);
        assert_eq!(parse_details(":80"), None);
        assert_eq!(parse_details("host:port"), None);
    }
}
