//! The floor: a minimal HTTP/1.1 echo server, so that every report shows
//! what the same driver reaches on this machine against a server that does
//! nothing but echo — Sluice's cost is what it adds above that.
//!
//! One thread per connection with blocking std sockets: for the tens of
//! connections a benchmark opens this is the cheapest model there is (no
//! readiness polling, no wake-ups), and it is the simplest.

use std::collections::HashMap;
use std::io::Write;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};

use crate::error::BenchError;
use crate::http1::ReadBuffer;

/// Counters of a running floor server.
#[derive(Debug, Default)]
pub struct FloorStats {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Requests answered.
    pub requests: AtomicU64,
    /// Request bytes echoed.
    pub bytes: AtomicU64,
}

struct Shared {
    stopping: AtomicBool,
    stats: FloorStats,
    /// Open connections, so that stopping can close them. Locked only on
    /// connect and disconnect, never per request.
    open: Mutex<HashMap<u64, TcpStream>>,
}

/// A running echo server; stopped when dropped.
pub struct FloorServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl FloorServer {
    /// Starts an echo server on `bind` (`127.0.0.1:0` picks a free port).
    pub fn start(bind: &str) -> Result<FloorServer, BenchError> {
        let listener =
            TcpListener::bind(bind).map_err(|e| BenchError::io(format!("binding {bind}"), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| BenchError::io("reading the bound address", e))?;
        let shared = Arc::new(Shared {
            stopping: AtomicBool::new(false),
            stats: FloorStats::default(),
            open: Mutex::new(HashMap::new()),
        });
        let accept_shared = shared.clone();
        let acceptor = thread::Builder::new()
            .name("floor-accept".into())
            .spawn(move || accept_loop(listener, accept_shared))
            .map_err(|e| BenchError::io("starting the floor server thread", e))?;
        Ok(FloorServer {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A URL for `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Its counters.
    pub fn stats(&self) -> &FloorStats {
        &self.shared.stats
    }

    /// Stops accepting, closes every connection and waits for the acceptor.
    pub fn stop(&mut self) {
        if self.shared.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        // Wake the blocking accept() with a connection of our own.
        let _ = TcpStream::connect(self.addr);
        if let Some(handle) = self.acceptor.take() {
            let _ = handle.join();
        }
        let open = self
            .shared
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for stream in open.values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for FloorServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut next_id = 0u64;
    for stream in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else {
            continue;
        };
        shared.stats.connections.fetch_add(1, Ordering::Relaxed);
        let id = next_id;
        next_id += 1;
        if let Ok(clone) = stream.try_clone() {
            shared
                .open
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(id, clone);
        }
        let conn_shared = shared.clone();
        let spawned = thread::Builder::new()
            .name(format!("floor-conn-{id}"))
            .spawn(move || {
                serve_connection(stream, &conn_shared);
                conn_shared
                    .open
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&id);
            });
        if spawned.is_err() {
            shared
                .open
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id);
        }
    }
}

/// Echoes request bodies until the client closes or sends garbage.
fn serve_connection(mut stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let mut read = ReadBuffer::new();
    let mut reply: Vec<u8> = Vec::with_capacity(64 * 1024);
    loop {
        let head = match read.read_head(&mut stream, false) {
            Ok(Some(head)) => head,
            Ok(None) | Err(_) => return,
        };
        reply.clear();
        // Reserve the header's place; its length is known once the body is read.
        reply.resize(HEADER_ROOM, 0);
        let body = if head.chunked {
            read.read_chunked_body(&mut stream, &mut |b| reply.extend_from_slice(b))
        } else {
            let len = head.content_length.unwrap_or(0);
            read.read_exact_body(&mut stream, len, &mut |b| reply.extend_from_slice(b))
                .map(|_| len)
        };
        let Ok(body_len) = body else {
            return;
        };
        let header = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {body_len}\r\n{}\r\n",
            if head.close {
                "Connection: close\r\n"
            } else {
                ""
            }
        );
        let start = HEADER_ROOM - header.len();
        reply[start..HEADER_ROOM].copy_from_slice(header.as_bytes());
        // Counted before the reply goes out, so a client that has its reply
        // always sees it counted.
        shared.stats.requests.fetch_add(1, Ordering::Relaxed);
        shared.stats.bytes.fetch_add(body_len, Ordering::Relaxed);
        if stream.write_all(&reply[start..]).is_err() {
            return;
        }
        if head.close {
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
    }
}

/// Room left before the body for the reply header (always enough: the
/// header is under 150 bytes).
const HEADER_ROOM: usize = 160;

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn floor_echoes_body_and_keeps_connection() {
        let server = FloorServer::start("127.0.0.1:0").expect("start floor");
        let mut s = TcpStream::connect(server.addr()).expect("connect");
        for _ in 0..3 {
            s.write_all(b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello")
                .expect("write");
            let mut buf = ReadBuffer::new();
            let head = buf
                .read_head(&mut s, true)
                .ok()
                .flatten()
                .unwrap_or_default();
            assert_eq!(head.status, 200);
            assert_eq!(head.content_length, Some(5));
            let mut body = Vec::new();
            assert!(
                buf.read_exact_body(&mut s, 5, &mut |b| body.extend_from_slice(b))
                    .is_ok()
            );
            assert_eq!(body, b"hello");
        }
        assert_eq!(server.stats().requests.load(Ordering::Relaxed), 3);
        assert_eq!(server.stats().connections.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn floor_closes_after_connection_close_request() {
        let server = FloorServer::start("127.0.0.1:0").expect("start floor");
        let mut s = TcpStream::connect(server.addr()).expect("connect");
        s.write_all(b"POST / HTTP/1.1\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi")
            .expect("write");
        let mut all = Vec::new();
        assert!(s.read_to_end(&mut all).is_ok());
        let text = String::from_utf8_lossy(&all);
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"));
        assert!(text.contains("Connection: close"));
        assert!(text.ends_with("\r\n\r\nhi"));
    }
}
