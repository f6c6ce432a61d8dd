//! A minimal, cheap HTTP/1.1 client transport: one persistent connection
//! per requester, POST with Content-Length, status 200 or an error, and a
//! fresh connection after a set number of requests (PerfHarness recycles
//! every 5000, as seeds/002 describes).
//!
//! The client must cost far less CPU than the server it measures, so it
//! reuses its request header and read buffer, never keeps reply bodies, and
//! sends small requests in one write with TCP_NODELAY.

use std::io::Write;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::driver::{Transport, TransportFactory};
use crate::error::BenchError;
use crate::http1::ReadBuffer;

/// Where requests go: `http://host:port/path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    /// The host as written in the URL (sent in the Host header).
    pub host: String,
    /// The port (80 when the URL has none).
    pub port: u16,
    /// The path and query.
    pub path: String,
    /// The resolved address.
    pub addr: SocketAddr,
}

impl HttpTarget {
    /// Parses and resolves a URL; only plain `http://` is supported.
    pub fn parse(url: &str) -> Result<Self, BenchError> {
        let invalid = |reason| BenchError::InvalidUrl {
            url: url.to_string(),
            reason,
        };
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| invalid("only http:// URLs are supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err(invalid("no host"));
        }
        // An IPv6 literal is bracketed: [::1]:8080.
        let (host, port_text) = match authority.strip_prefix('[') {
            Some(rest) => {
                let close = rest
                    .find(']')
                    .ok_or_else(|| invalid("unclosed `[` in host"))?;
                let after = &rest[close + 1..];
                let port = match after.strip_prefix(':') {
                    Some(p) => Some(p),
                    None if after.is_empty() => None,
                    None => return Err(invalid("junk after `]`")),
                };
                (&authority[..close + 2], port)
            }
            None => match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            },
        };
        let port = match port_text {
            Some(p) => p.parse().map_err(|_| invalid("bad port"))?,
            None => 80,
        };
        let addr = (host.trim_start_matches('[').trim_end_matches(']'), port)
            .to_socket_addrs()
            .map_err(|_| invalid("host does not resolve"))?
            .next()
            .ok_or_else(|| invalid("host does not resolve"))?;
        Ok(HttpTarget {
            host: host.to_string(),
            port,
            path: path.to_string(),
            addr,
        })
    }

    /// The target as a URL.
    pub fn url(&self) -> String {
        format!("http://{}:{}{}", self.host, self.port, self.path)
    }
}

/// Client settings.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Open a new connection after this many requests (`None`: never).
    pub reconnect_after: Option<u64>,
    /// The Content-Type header sent.
    pub content_type: String,
    /// Time allowed to connect.
    pub connect_timeout: Duration,
    /// Time allowed for any one read or write.
    pub io_timeout: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            reconnect_after: Some(5_000),
            content_type: "application/octet-stream".to_string(),
            connect_timeout: Duration::from_secs(5),
            io_timeout: Duration::from_secs(60),
        }
    }
}

/// Counters shared by all clients of one factory.
#[derive(Debug, Default)]
pub struct HttpCounters {
    /// Connections opened.
    pub connections: AtomicU64,
    /// Requests sent.
    pub requests: AtomicU64,
    /// Replies with status 200 read completely.
    pub replies_ok: AtomicU64,
    /// Failed round trips (status not 200, I/O or protocol errors).
    pub errors: AtomicU64,
}

/// One requester's HTTP connection.
pub struct HttpClient {
    target: Arc<HttpTarget>,
    options: HttpOptions,
    counters: Arc<HttpCounters>,
    stream: Option<TcpStream>,
    sent_on_connection: u64,
    /// The request header for `header_body_len`, rebuilt only when the length changes.
    header: Vec<u8>,
    header_body_len: Option<usize>,
    /// Header and body copied together so small requests go in one write.
    send: Vec<u8>,
    read: ReadBuffer,
}

/// Requests up to this size are sent with a single write.
const SINGLE_WRITE_MAX: usize = 64 * 1024;

impl HttpClient {
    /// A client for `target` (it connects on first use).
    pub fn new(target: Arc<HttpTarget>, options: HttpOptions, counters: Arc<HttpCounters>) -> Self {
        HttpClient {
            target,
            options,
            counters,
            stream: None,
            sent_on_connection: 0,
            header: Vec::with_capacity(256),
            header_body_len: None,
            send: Vec::new(),
            read: ReadBuffer::new(),
        }
    }

    fn connect(&mut self) -> Result<TcpStream, BenchError> {
        let stream = TcpStream::connect_timeout(&self.target.addr, self.options.connect_timeout)
            .map_err(|e| BenchError::io(format!("connecting to {}", self.target.addr), e))?;
        let setup = |s: &TcpStream| {
            s.set_nodelay(true)?;
            s.set_read_timeout(Some(self.options.io_timeout))?;
            s.set_write_timeout(Some(self.options.io_timeout))
        };
        setup(&stream).map_err(|e| BenchError::io("configuring the connection", e))?;
        self.counters.connections.fetch_add(1, Ordering::Relaxed);
        self.sent_on_connection = 0;
        self.read.clear();
        Ok(stream)
    }

    fn build_header(&mut self, body_len: usize) {
        if self.header_body_len == Some(body_len) {
            return;
        }
        self.header.clear();
        // Writing into a Vec cannot fail.
        let _ = write!(
            self.header,
            "POST {} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\r\n",
            self.target.path,
            self.target.host,
            self.target.port,
            self.options.content_type,
            body_len
        );
        self.header_body_len = Some(body_len);
    }

    fn exchange(
        &mut self,
        stream: &mut TcpStream,
        msg: &[u8],
    ) -> Result<(usize, bool), BenchError> {
        self.build_header(msg.len());
        let write_err = |e| BenchError::io("sending the request", e);
        if msg.len() <= SINGLE_WRITE_MAX {
            self.send.clear();
            self.send.extend_from_slice(&self.header);
            self.send.extend_from_slice(msg);
            stream.write_all(&self.send).map_err(write_err)?;
        } else {
            stream.write_all(&self.header).map_err(write_err)?;
            stream.write_all(msg).map_err(write_err)?;
        }
        self.counters.requests.fetch_add(1, Ordering::Relaxed);
        let head = self
            .read
            .read_head(stream, true)?
            .ok_or(BenchError::ConnectionClosed)?;
        let mut discard = |_: &[u8]| {};
        let body_len = if head.chunked {
            self.read.read_chunked_body(stream, &mut discard)?
        } else if let Some(len) = head.content_length {
            self.read.read_exact_body(stream, len, &mut discard)?;
            len
        } else if head.status == 204 || head.status == 304 || (100..200).contains(&head.status) {
            0
        } else {
            // No framing: the body runs to the end of the connection.
            let len = self.read.read_to_close(stream, &mut discard)?;
            status_ok(head.status)?;
            return Ok((len as usize, true));
        };
        status_ok(head.status)?;
        Ok((body_len as usize, head.close))
    }
}

fn status_ok(status: u16) -> Result<(), BenchError> {
    if status == 200 {
        Ok(())
    } else {
        Err(BenchError::HttpStatus(status))
    }
}

impl Transport for HttpClient {
    fn round_trip(&mut self, msg: &[u8]) -> Result<usize, BenchError> {
        let mut stream = match self.stream.take() {
            Some(s) => s,
            None => self.connect()?,
        };
        self.sent_on_connection += 1;
        let result = self.exchange(&mut stream, msg);
        match &result {
            Ok((_, close)) => {
                self.counters.replies_ok.fetch_add(1, Ordering::Relaxed);
                let recycle = self
                    .options
                    .reconnect_after
                    .is_some_and(|n| self.sent_on_connection >= n);
                if !close && !recycle {
                    self.stream = Some(stream);
                }
            }
            Err(BenchError::HttpStatus(_)) => {
                // The reply was read in full, so the connection is still usable.
                self.counters.errors.fetch_add(1, Ordering::Relaxed);
                self.stream = Some(stream);
            }
            Err(_) => {
                // Unknown state: drop the connection; the next request reconnects.
                self.counters.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        result.map(|(len, _)| len)
    }
}

/// Makes one [`HttpClient`] per requester, all sharing [`HttpCounters`].
pub struct HttpFactory {
    target: Arc<HttpTarget>,
    options: HttpOptions,
    counters: Arc<HttpCounters>,
}

impl HttpFactory {
    /// A factory for `url`.
    pub fn new(url: &str, options: HttpOptions) -> Result<Self, BenchError> {
        Ok(HttpFactory {
            target: Arc::new(HttpTarget::parse(url)?),
            options,
            counters: Arc::new(HttpCounters::default()),
        })
    }

    /// The counters of every client made so far.
    pub fn counters(&self) -> &Arc<HttpCounters> {
        &self.counters
    }

    /// The target.
    pub fn target(&self) -> &HttpTarget {
        &self.target
    }
}

impl TransportFactory for HttpFactory {
    fn create(&self, _requester: usize) -> Result<Box<dyn Transport>, BenchError> {
        Ok(Box::new(HttpClient::new(
            self.target.clone(),
            self.options.clone(),
            self.counters.clone(),
        )))
    }

    fn describe(&self) -> String {
        self.target.url()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_url_splits_host_port_and_path() {
        let t = HttpTarget::parse("http://127.0.0.1:8080/samples/xml-echo?x=1");
        let t = t.expect("valid URL");
        assert_eq!(t.host, "127.0.0.1");
        assert_eq!(t.port, 8080);
        assert_eq!(t.path, "/samples/xml-echo?x=1");
        let t = HttpTarget::parse("http://localhost:9").expect("valid URL");
        assert_eq!(t.path, "/");
    }

    #[test]
    fn parse_url_rejects_other_schemes_and_bad_ports() {
        assert!(HttpTarget::parse("https://127.0.0.1/").is_err());
        assert!(HttpTarget::parse("http://127.0.0.1:http/").is_err());
        assert!(HttpTarget::parse("http:///x").is_err());
        assert!(HttpTarget::parse("http://[::1/x").is_err());
        let v6 = HttpTarget::parse("http://[::1]:8080/x").expect("IPv6 literal");
        assert_eq!((v6.host.as_str(), v6.port), ("[::1]", 8080));
        let v6 = HttpTarget::parse("http://[::1]/x").expect("IPv6 literal");
        assert_eq!(v6.port, 80);
    }
}
