//! The pairing of an asynchronous request node with its response node by their unique
//! identifier (SOAPAsyncRequest/SOAPAsyncResponse, RESTAsyncRequest/RESTAsyncResponse): the
//! requests sent and not yet answered, and the way their replies, answers on the request's own
//! connection, failures and timeouts reach the response node's instances.
//!
//! The state is in memory, as the product's is: a request in flight when the server stops is
//! forgotten, and its reply, should it come later, is one nobody waits for.
//!
//! A response node's instances wait on an HTTP request queue (a SOAPAsyncResponse's serves a
//! path of the shared listener, where services call back). Deliveries that do not come over
//! that path wait in the pairing's own queue; for each, a wake-up request with an empty path
//! (which the listener never produces) goes into the HTTP queue, so that one wait serves both
//! without polling.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use sluice_node_api::http_listener::{HttpRequest, HttpRouter, RequestQueue};
use sluice_node_api::{InstanceRunner, Invocation, Message, NodeError, Terminal};
use sluice_tree::{NodeId, Position, Text, Tree, Value, field_type};

/// A request sent and not yet answered.
pub struct InFlight {
    /// `LocalEnvironment` holding only the request's `UserContext`, when it had one.
    pub user_context: Option<Tree>,
    /// Where the request went.
    pub url: String,
    /// How long a reply may take.
    pub timeout: Duration,
    timer: Option<tokio::task::AbortHandle>,
}

impl InFlight {
    pub fn new(user_context: Option<Tree>, url: String, timeout: Duration) -> InFlight {
        InFlight {
            user_context,
            url,
            timeout,
            timer: None,
        }
    }
}

/// What a response node's instance receives besides HTTP requests.
pub enum Delivery {
    /// The service answered on the request's own connection instead of calling back.
    Answer {
        message_id: String,
        request: InFlight,
        status: u16,
        headers: Vec<(String, Bytes)>,
        body: Bytes,
    },
    /// No reply came within the request's timeout.
    Timeout {
        message_id: String,
        request: InFlight,
    },
    /// The request could not be completed (a connection refused, a response cut short): what
    /// the request node would have raised had it waited.
    Failed {
        message_id: String,
        request: InFlight,
        error: NodeError,
    },
}

/// The running response node of a pairing.
struct Endpoint {
    owner: u64,
    queue: Arc<RequestQueue>,
    /// The path it serves on the listener.
    path: String,
    /// The URL services call it on, when not the listener's own.
    reply_to_url: Option<String>,
}

/// The state one unique identifier's nodes share.
#[derive(Default)]
pub struct Pairing {
    endpoint: Mutex<Option<Endpoint>>,
    // Lock order: `endpoint` before `deliveries`, `deliveries` before the queue's own lock.
    deliveries: Mutex<VecDeque<Delivery>>,
    in_flight: Mutex<HashMap<String, InFlight>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section below leaves its data consistent even when it unwinds.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

static PAIRINGS: LazyLock<Mutex<HashMap<String, Arc<Pairing>>>> = LazyLock::new(Default::default);

/// The pairing of `unique_id` among the node pairs of `kind` (`SOAP`, `REST`), made on first
/// use; request and response nodes take it when they are built.
pub fn pairing(kind: &str, unique_id: &str) -> Arc<Pairing> {
    Arc::clone(
        lock(&PAIRINGS)
            .entry(format!("{kind} {unique_id}"))
            .or_default(),
    )
}

/// Whether an HTTP request is a wake-up for a delivery rather than one from the listener.
pub fn is_wake_up(req: &HttpRequest) -> bool {
    req.path.is_empty()
}

fn wake_up() -> HttpRequest {
    HttpRequest {
        method: String::new(),
        uri: String::new(),
        path: String::new(),
        query: String::new(),
        version: "",
        headers: Vec::new(),
        body: Bytes::new(),
        reply: tokio::sync::oneshot::channel().0,
    }
}

impl Pairing {
    /// A response node started: it receives this pairing's replies on `queue`, served at
    /// `path` of the listener, and requests name `reply_to_url` as their reply address, or
    /// `path` at the listener's URL.
    pub fn attach(
        &self,
        owner: u64,
        queue: Arc<RequestQueue>,
        path: String,
        reply_to_url: Option<String>,
    ) {
        *lock(&self.endpoint) = Some(Endpoint {
            owner,
            queue,
            path,
            reply_to_url,
        });
    }

    /// A response node stopped; the deliveries still waiting for it are given back.
    pub fn detach(&self, owner: u64) -> Vec<Delivery> {
        let mut e = lock(&self.endpoint);
        if e.as_ref().is_some_and(|e| e.owner == owner) {
            *e = None;
            return lock(&self.deliveries).drain(..).collect();
        }
        Vec::new()
    }

    /// Whether a response node is running.
    pub fn is_attached(&self) -> bool {
        lock(&self.endpoint).is_some()
    }

    /// The reply address of the running response node; None when none runs, or the listener
    /// whose path it serves is not bound yet.
    pub fn reply_to(&self, router: &HttpRouter) -> Option<String> {
        let e = lock(&self.endpoint);
        let e = e.as_ref()?;
        match &e.reply_to_url {
            Some(u) => Some(u.clone()),
            None => router.base_url().map(|b| format!("{b}{}", e.path)),
        }
    }

    /// Record a request about to be sent; when no reply takes it within its timeout, the timer
    /// started on `runtime` delivers a timeout.
    pub fn expect(
        self: &Arc<Self>,
        message_id: String,
        mut request: InFlight,
        runtime: &tokio::runtime::Handle,
    ) {
        let me = Arc::clone(self);
        let id = message_id.clone();
        let timeout = request.timeout;
        let timer = runtime.spawn(async move {
            tokio::time::sleep(timeout).await;
            if let Some(request) = me.take(&id) {
                me.deliver(Delivery::Timeout {
                    message_id: id,
                    request,
                });
            }
        });
        request.timer = Some(timer.abort_handle());
        lock(&self.in_flight).insert(message_id, request);
    }

    /// The request `message_id` names, which is no longer waited for; None when no request
    /// with that MessageID is in flight (never sent, answered already, or timed out).
    pub fn take(&self, message_id: &str) -> Option<InFlight> {
        let mut r = lock(&self.in_flight).remove(message_id)?;
        if let Some(t) = r.timer.take() {
            t.abort();
        }
        Some(r)
    }

    /// How many requests are in flight.
    pub fn in_flight(&self) -> usize {
        lock(&self.in_flight).len()
    }

    /// Queue `d` for the response node's next free instance. With no response node running it
    /// cannot be processed: it is logged and dropped.
    pub fn deliver(&self, d: Delivery) {
        let e = lock(&self.endpoint);
        let Some(endpoint) = e.as_ref() else {
            drop(e);
            dropped(&d, "no response node is running");
            return;
        };
        let mut q = lock(&self.deliveries);
        q.push_back(d);
        if endpoint.queue.push(wake_up()).is_err()
            && let Some(d) = q.pop_back()
        {
            drop(q);
            drop(e);
            dropped(&d, "the response node's flow is stopping");
        }
    }

    /// The next delivery, for an instance that received a wake-up.
    pub fn next_delivery(&self) -> Option<Delivery> {
        lock(&self.deliveries).pop_front()
    }
}

/// Log a delivery nobody can process.
pub fn dropped(d: &Delivery, why: &str) {
    let (what, message_id, url) = match d {
        Delivery::Answer {
            message_id,
            request,
            ..
        } => ("reply", message_id, &request.url),
        Delivery::Timeout {
            message_id,
            request,
        } => ("timeout", message_id, &request.url),
        Delivery::Failed {
            message_id,
            request,
            ..
        } => ("failure", message_id, &request.url),
    };
    tracing::warn!(%message_id, %url, why, "Dropped the {what} of an asynchronous request.");
}

/// `LocalEnvironment.Destination.<kind>.Request.UserContext`, copied into a tree of its own.
pub fn user_context(le: &mut Tree, kind: &str) -> Result<Option<Tree>, NodeError> {
    let r = le.root();
    let Some(id) = le.path(r, &["Destination", kind, "Request", "UserContext"])? else {
        return Ok(None);
    };
    le.expand_all(id)?;
    let mut t = Tree::new("LocalEnvironment");
    let top = t.root();
    t.copy_from(le, id, top, Position::LastChild)?;
    Ok(Some(t))
}

/// `LocalEnvironment.<kind>.Response`, made, with the request's UserContext in it and
/// `Transport.HTTP.WebServiceURL` naming where the request went; gives the Response folder.
pub fn response_environment(
    le: &mut Tree,
    kind: &'static str,
    request: &mut InFlight,
) -> Result<NodeId, NodeError> {
    let r = le.root();
    let s = folder(le, r, kind)?;
    let resp = folder(le, s, "Response")?;
    if let Some(ctx) = request.user_context.as_mut() {
        let cr = ctx.root();
        if let Some(u) = ctx.first_child(cr)? {
            le.copy_from(ctx, u, resp, Position::LastChild)?;
        }
    }
    let t = folder(le, resp, "Transport")?;
    let h = folder(le, t, "HTTP")?;
    set_field(le, h, "WebServiceURL", &request.url)?;
    Ok(resp)
}

/// The child `name` of `parent`, made when there is none.
pub fn folder(tree: &mut Tree, parent: NodeId, name: &'static str) -> Result<NodeId, NodeError> {
    if let Some(f) = tree.child_named(parent, None, name.as_bytes(), 0)? {
        return Ok(f);
    }
    Ok(tree.create_last_child(
        parent,
        field_type::NAME,
        Text::from_static(name),
        Value::Null,
    )?)
}

/// Set the field `name` of `parent` to `v`.
pub fn set_field(
    tree: &mut Tree,
    parent: NodeId,
    name: &'static str,
    v: &str,
) -> Result<(), NodeError> {
    let t = tree.alloc_text(v.as_bytes());
    match tree.child_named(parent, None, name.as_bytes(), 0)? {
        Some(f) => tree.set_value(f, Value::Character(t)),
        None => {
            tree.create_last_child(
                parent,
                field_type::NAME_VALUE,
                Text::from_static(name),
                Value::Character(t),
            )?;
        }
    }
    Ok(())
}

/// How a response node's instance runs its flow: the names its exceptions and logs carry, and
/// its `failure` and `catch` terminals.
pub struct ResponseFlow<'a> {
    pub flow: &'a str,
    pub label: &'a str,
    pub node_type: &'static str,
    pub failure: Terminal,
    pub catch: Terminal,
}

impl ResponseFlow<'_> {
    /// Propagate `msg` from `terminal`; an exception from downstream goes to `catch` when that
    /// is wired. The unit of work commits, or rolls back with the error logged: there is no
    /// client left to tell.
    pub fn run(&self, runner: &mut dyn InstanceRunner, terminal: Terminal, msg: &mut Message) {
        let mut inv = Invocation::new();
        let result = match runner.invoke(&mut inv, terminal, msg) {
            Err(e) if runner.is_wired(self.catch) => e
                .exception
                .write_to(&mut msg.exception_list)
                .map_err(NodeError::from)
                .and_then(|_| runner.invoke(&mut inv, self.catch, msg)),
            r => r,
        };
        self.finish(inv, result);
    }

    /// Propagate `msg` from `failure` with `e`, named after the node, in the ExceptionList;
    /// when `failure` is not wired, the error is logged.
    pub fn fail(&self, runner: &mut dyn InstanceRunner, msg: &mut Message, mut e: NodeError) {
        e.exception.label = self.label.to_string();
        e.exception.node_type = self.node_type.to_string();
        if !runner.is_wired(self.failure) {
            tracing::warn!(error = %e, flow = %self.flow, node = %self.label, "Failed to process an asynchronous reply.");
            return;
        }
        let mut inv = Invocation::new();
        let result = e
            .exception
            .write_to(&mut msg.exception_list)
            .map_err(NodeError::from)
            .and_then(|_| runner.invoke(&mut inv, self.failure, msg));
        self.finish(inv, result);
    }

    fn finish(&self, mut inv: Invocation, result: Result<(), NodeError>) {
        match result {
            Ok(()) => {
                if let Err(error) = inv.unit_of_work.commit() {
                    tracing::warn!(%error, flow = %self.flow, "Failed to commit the unit of work.");
                }
            }
            Err(error) => {
                inv.unit_of_work.rollback();
                tracing::warn!(%error, flow = %self.flow, "Message processing failed.");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime")
    }

    #[test]
    fn take_returns_the_request_once_when_it_is_in_flight() {
        let rt = runtime();
        let p = pairing("test", "take");
        let r = InFlight::new(None, "http://x/".into(), Duration::from_secs(60));
        p.expect("m1".into(), r, rt.handle());
        assert_eq!(p.in_flight(), 1);
        assert!(p.take("m1").is_some());
        assert!(p.take("m1").is_none());
        assert!(p.take("unknown").is_none());
    }

    #[test]
    fn expect_delivers_a_timeout_when_no_reply_takes_the_request() {
        let rt = runtime();
        let p = pairing("test", "timeout");
        let (queue, owner) = (Arc::new(RequestQueue::default()), 7);
        queue.open();
        p.attach(owner, Arc::clone(&queue), "/r".into(), None);
        let r = InFlight::new(None, "http://x/".into(), Duration::from_millis(10));
        p.expect("m2".into(), r, rt.handle());
        rt.block_on(async { tokio::time::sleep(Duration::from_millis(50)).await });
        let wake = queue.pop(Duration::from_secs(1)).expect("a wake-up");
        assert!(is_wake_up(&wake));
        match p.next_delivery() {
            Some(Delivery::Timeout { message_id, .. }) => assert_eq!(message_id, "m2"),
            _ => panic!("expected a timeout"),
        }
        assert_eq!(p.in_flight(), 0);
    }

    #[test]
    fn detach_keeps_a_newer_endpoint_when_an_older_owner_stops() {
        let p = pairing("test", "detach");
        let router = HttpRouter::new();
        router.set_base_url("http://127.0.0.1:7800".into());
        p.attach(1, Arc::new(RequestQueue::default()), "/a".into(), None);
        p.attach(2, Arc::new(RequestQueue::default()), "/b".into(), None);
        p.detach(1);
        assert_eq!(
            p.reply_to(&router).as_deref(),
            Some("http://127.0.0.1:7800/b")
        );
        p.detach(2);
        assert_eq!(p.reply_to(&router), None);
    }

    #[test]
    fn user_context_copies_the_subtree_when_present() {
        let mut le = Tree::new("LocalEnvironment");
        let r = le.root();
        let d = folder(&mut le, r, "Destination").expect("d");
        let s = folder(&mut le, d, "SOAP").expect("s");
        let q = folder(&mut le, s, "Request").expect("q");
        let u = folder(&mut le, q, "UserContext").expect("u");
        set_field(&mut le, u, "order", "42").expect("field");
        let mut t = user_context(&mut le, "SOAP").expect("ok").expect("some");
        let tr = t.root();
        let uc = t
            .path(tr, &["UserContext", "order"])
            .expect("path")
            .expect("order");
        assert_eq!(t.value_bytes(uc), Some(&b"42"[..]));
    }

    #[test]
    fn user_context_is_none_when_the_flow_set_none() {
        let mut le = Tree::new("LocalEnvironment");
        assert!(user_context(&mut le, "SOAP").expect("ok").is_none());
    }
}
