//! The bridge between the server's one HTTP listener and the nodes that serve paths on it
//! (HTTPInput today; SOAP and REST inputs share it): requests are routed by path to the flow that
//! registered it, and answered through a one-shot reply channel.

mod queue;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use parking_lot::RwLock;

pub use queue::RequestQueue;

/// A request as an HTTPInput node receives it.
pub struct HttpRequest {
    pub method: String,
    /// The path and query as sent.
    pub uri: String,
    pub path: String,
    pub query: String,
    pub version: &'static str,
    pub headers: Vec<(String, Bytes)>,
    pub body: Bytes,
    pub reply: tokio::sync::oneshot::Sender<HttpResponse>,
}

/// A response for the server to send.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, Bytes)>,
    pub body: Bytes,
}

impl HttpResponse {
    /// A plain-text error response.
    pub fn error(status: u16, text: impl Into<String>) -> HttpResponse {
        let mut body = text.into();
        body.push('\n');
        HttpResponse {
            status,
            headers: vec![(
                "Content-Type".into(),
                Bytes::from_static(b"text/plain; charset=utf-8"),
            )],
            body: Bytes::from(body),
        }
    }
}

struct Route {
    queue: Arc<RequestQueue>,
    owner: u64,
}

/// Paths served by HTTPInput nodes. A path ending in `*` matches every path with that prefix.
#[derive(Default)]
pub struct HttpRouter {
    exact: RwLock<HashMap<String, Route>>,
    prefixes: RwLock<Vec<(String, Route)>>,
    next_owner: AtomicU64,
    /// The listener's URL (`http://HOST:PORT`), once it is bound.
    base_url: RwLock<Option<String>>,
}

/// Why a request found no flow.
#[derive(Debug, PartialEq, Eq)]
pub enum RouteError {
    /// No HTTPInput node serves the path.
    NotFound,
    /// The flow serving it is stopping.
    Unavailable,
}

impl HttpRouter {
    pub fn new() -> HttpRouter {
        HttpRouter::default()
    }

    /// A new queue for an HTTPInput node and an owner token for [`HttpRouter::register`].
    pub fn queue(&self) -> (Arc<RequestQueue>, u64) {
        (
            Arc::default(),
            self.next_owner.fetch_add(1, Ordering::Relaxed) + 1,
        )
    }

    /// Serve `path` by `queue`, replacing whoever served it (a redeployed flow takes over).
    pub fn register(&self, path: &str, queue: Arc<RequestQueue>, owner: u64) {
        let route = Route { queue, owner };
        if let Some(prefix) = path.strip_suffix('*') {
            let mut p = self.prefixes.write();
            p.retain(|(x, _)| x != prefix);
            p.push((prefix.to_string(), route));
            // Longest prefix first, so the most specific wins.
            p.sort_by_key(|r| std::cmp::Reverse(r.0.len()));
        } else {
            self.exact.write().insert(path.to_string(), route);
        }
    }

    /// Record the listener's URL, `http://HOST:PORT` or `https://…` (the server does, once the
    /// listener is bound).
    pub fn set_base_url(&self, url: String) {
        *self.base_url.write() = Some(url);
    }

    /// The listener's URL: what a node gives a remote service as the address to call this
    /// server back on. None until the listener is bound (and under `sluice validate`).
    pub fn base_url(&self) -> Option<String> {
        self.base_url.read().clone()
    }

    /// Stop serving `path` if `owner` still serves it.
    pub fn unregister(&self, path: &str, owner: u64) {
        if let Some(prefix) = path.strip_suffix('*') {
            self.prefixes
                .write()
                .retain(|(x, r)| !(x == prefix && r.owner == owner));
        } else {
            let mut e = self.exact.write();
            if e.get(path).is_some_and(|r| r.owner == owner) {
                e.remove(path);
            }
        }
    }

    /// Hand a request to the flow serving its path; gives the request back when none does.
    pub fn dispatch(&self, req: HttpRequest) -> Result<(), Box<(RouteError, HttpRequest)>> {
        let queue = {
            let e = self.exact.read();
            match e.get(&req.path) {
                Some(r) => Some(Arc::clone(&r.queue)),
                None => self
                    .prefixes
                    .read()
                    .iter()
                    .find(|(p, _)| req.path.starts_with(p.as_str()))
                    .map(|(_, r)| Arc::clone(&r.queue)),
            }
        };
        match queue {
            None => Err(Box::new((RouteError::NotFound, req))),
            Some(q) => q
                .push(req)
                .map_err(|req| Box::new((RouteError::Unavailable, *req))),
        }
    }
}

/// `content-type` → `Content-Type`: header names as the product shows them in header folders.
pub fn canonical_header(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = true;
    for c in name.chars() {
        out.push(if upper { c.to_ascii_uppercase() } else { c });
        upper = c == '-';
    }
    out
}
