//! A small HTTP/1.1 server for the tests, on plain threads over std sockets (optionally TLS),
//! so that each test scripts exactly what the wire carries: chunked bodies, gzip, redirects,
//! a connection closed mid-body, a response that never comes.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A request as the server read it.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the server does with a request.
pub enum Reply {
    /// These bytes, written as they are (a whole response, or part of one).
    Raw(Vec<u8>),
    /// These bytes, then the connection is closed.
    RawThenClose(Vec<u8>),
    /// Nothing for this long, then the connection is closed.
    Stall(Duration),
}

/// A whole response with a Content-Length.
pub fn response(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut out = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\n", body.len()).into_bytes();
    for (n, v) in headers {
        out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    Reply::Raw(out)
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

pub struct Server {
    pub port: u16,
    /// Connections accepted so far.
    pub connections: Arc<AtomicUsize>,
    pub requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

impl Server {
    pub fn start(
        tls: Option<Arc<rustls::ServerConfig>>,
        handler: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listener.local_addr().expect("an address").port();
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let (c, r, s) = (connections.clone(), requests.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(tcp) = conn else { continue };
                c.fetch_add(1, Ordering::SeqCst);
                let (h, r, tls) = (handler.clone(), r.clone(), tls.clone());
                std::thread::spawn(move || {
                    let stream: Box<dyn Stream> = match tls {
                        Some(cfg) => match rustls::ServerConnection::new(cfg) {
                            Ok(sc) => Box::new(rustls::StreamOwned::new(sc, tcp)),
                            Err(_) => return,
                        },
                        None => Box::new(tcp),
                    };
                    serve(stream, &*h, &r);
                });
            }
        });
        Server {
            port,
            connections,
            requests,
            stop,
        }
    }

    pub fn url(&self, scheme: &str, path: &str) -> String {
        let host = if scheme == "https" {
            "localhost"
        } else {
            "127.0.0.1"
        };
        format!("{scheme}://{host}:{}{path}", self.port)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

/// Serve requests on one connection until the client closes it (keep-alive).
fn serve(mut s: Box<dyn Stream>, handler: &Handler, log: &Mutex<Vec<Request>>) {
    let mut buf = Vec::new();
    loop {
        let Some(req) = read_request(&mut s, &mut buf) else {
            return;
        };
        if let Ok(mut l) = log.lock() {
            l.push(req.clone());
        }
        match handler(&req) {
            Reply::Raw(b) => {
                if s.write_all(&b).and_then(|_| s.flush()).is_err() {
                    return;
                }
            }
            Reply::RawThenClose(b) => {
                let _ = s.write_all(&b);
                let _ = s.flush();
                return;
            }
            Reply::Stall(d) => {
                std::thread::sleep(d);
                return;
            }
        }
    }
}

fn read_request(s: &mut Box<dyn Stream>, buf: &mut Vec<u8>) -> Option<Request> {
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let start = head_end + 4;
    while buf.len() < start + len {
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf[start..start + len].to_vec();
    buf.drain(..start + len);
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}
