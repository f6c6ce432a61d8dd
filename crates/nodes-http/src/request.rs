//! HTTPRequest: calls an HTTP service with the message body and continues with its response.
//!
//! Connections are pooled and kept alive per host; HTTPS uses rustls with the Mozilla root
//! certificates (and the authorities of `tls_ca_file`). The call blocks the flow instance's
//! thread (the flow waits for the response, as the product's node does) while the I/O runs on
//! the server's runtime. The timeout covers the whole exchange, redirects included.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderName, HeaderValue};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, ExceptionKind,
    Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal,
    Terminals, properties, property_enum, terminals,
};
use sluice_tree::{Position, Text, Value, field_type};

use sluice_nodes_core::domains::{
    BodyParsing, BodyParsingProps, MessageModelProps, serialize_body_for_http,
};
use sluice_nodes_core::terminals::{FAILURE_DOC, In, OUT_DOC};

use crate::client::{self, HttpsClient};

terminals! {
    /// HTTPRequest's outputs.
    pub enum HttpRequestOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": OUT_DOC,
        Error = "error": "The service answered with a status of 400 or more.",
    }
}

property_enum! {
    /// The HTTP method of a request.
    pub enum HttpMethod {
        Post = "POST", Get = "GET", Put = "PUT", Delete = "DELETE", Patch = "PATCH", Head = "HEAD",
    }
}

properties! {
    /// HTTPRequest's properties.
    pub struct HttpRequestProps {
        /// The service's URL (http:// or https://).
        url: String,
        /// The HTTP method.
        method: HttpMethod = "POST",
        /// How long to wait for the whole response (redirects included); past it the node
        /// raises a SocketTimeout exception.
        timeout_secs: u64 = "120",
        /// Follow 301, 302, 303, 307 and 308 responses to their `Location` (at most 10 in a
        /// row; 303, and 301/302 to a POST, continue as a GET without a body). When off, a
        /// redirect response is propagated to `out` like any other below 400.
        follow_redirects: bool = "false",
        /// Ask for compressed responses (`Accept-Encoding: gzip, deflate`, unless the request
        /// headers name one) and decompress a gzip or deflate response body before parsing it,
        /// dropping its Content-Encoding and Content-Length headers. A response compressed when
        /// the request asked for it through `HTTPRequestHeader` is decompressed too.
        accept_compressed: bool = "false",
        /// A PEM file of certificate authorities to trust for https:// besides the public web
        /// roots (a private or test CA); relative to the project folder. Read at the first call.
        tls_ca_file: Option<String>,
        ..parsing: BodyParsingProps,
        ..model: MessageModelProps,
    }
}

pub static HTTP_REQUEST: NodeSpec = NodeSpec {
    type_name: "HTTPRequest",
    summary: "Sends the message body to an HTTP service and propagates its response: the response headers in \
              `Root.HTTPResponseHeader`, the body parsed in the chosen domain. A response with a status of 400 \
              or more goes to `error`. `LocalEnvironment.Destination.HTTP.RequestURL` overrides the URL.",
    inputs: In::SPECS,
    outputs: HttpRequestOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "The service's response continues the flow in place of the request",
            properties: "url: 'http://stock.example/check', domain: XMLNSC",
            esql: "",
            input: ExampleInput::xml("<order><item>A-1</item></order>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[(
                "out",
                "<stock><item>A-1</item><available>4</available></stock>",
            )]),
            runs: Runs::No("it needs an HTTP service to call."),
        },
        NodeExample {
            title: "A service that refuses the connection makes it raise",
            properties: "url: 'http://127.0.0.1:1/', timeout_secs: 2",
            esql: "",
            input: ExampleInput::xml("<order><item>A-1</item></order>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Raises("the request to http://127.0.0.1:1/ failed"),
            runs: Runs::Yes,
        },
    ],
    builder: NodeBuilder::of::<HttpRequestProps>(),
};

impl BuildNode for HttpRequestProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        build_http_request(self, b)
    }
}

/// How a [`Caller`] treats redirects, compression and certificate authorities.
#[derive(Default)]
pub(crate) struct CallOptions {
    /// A PEM file of authorities to trust besides the public web roots.
    pub(crate) ca_file: Option<PathBuf>,
    pub(crate) follow_redirects: bool,
    pub(crate) accept_compressed: bool,
}

/// An HTTP client as HTTPRequest and RESTRequest use it: pooled keep-alive connections, TLS
/// with the Mozilla roots (and a CA file's), a timeout for the whole exchange, I/O on the
/// server's runtime.
pub(crate) struct Caller {
    /// Built at the first call: building a flow reads no files.
    client: OnceLock<Result<HttpsClient, String>>,
    options: CallOptions,
    timeout: Duration,
    runtime: tokio::runtime::Handle,
}

impl Caller {
    /// A client for a node of `b` whose calls time out after `timeout_secs`.
    pub(crate) fn new(
        b: &BuildContext,
        timeout_secs: u64,
        options: CallOptions,
    ) -> Result<Caller, ConfigError> {
        if timeout_secs == 0 {
            return Err(ConfigError::property("timeout_secs", "must be at least 1"));
        }
        Ok(Caller {
            client: OnceLock::new(),
            options,
            timeout: Duration::from_secs(timeout_secs),
            runtime: b.services.runtime()?,
        })
    }
}

struct HttpRequestNode {
    caller: Caller,
    url: String,
    method: hyper::Method,
    parsing: BodyParsing,
}

fn build_http_request(c: HttpRequestProps, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
    let url = c.url;
    if url
        .parse::<hyper::Uri>()
        .ok()
        .and_then(|u| u.scheme().map(|s| s.as_str().to_string()))
        .is_none_or(|s| s != "http" && s != "https")
    {
        return Err(ConfigError::property(
            "url",
            format!("`{url}` is not an http:// or https:// URL"),
        ));
    }
    let options = CallOptions {
        ca_file: c
            .tls_ca_file
            .as_deref()
            .map(|f| client::ca_path(b.project_dir, f)),
        follow_redirects: c.follow_redirects,
        accept_compressed: c.accept_compressed,
    };
    Ok(NodeImpl::Process(Arc::new(HttpRequestNode {
        caller: Caller::new(b, c.timeout_secs, options)?,
        url,
        method: c.method.word().parse().unwrap_or(hyper::Method::POST),
        parsing: BodyParsing::with_model(&c.parsing, &c.model, b.project_dir)?,
    })))
}

fn url_override(msg: &mut Message) -> Result<Option<String>, NodeError> {
    let le = &mut msg.local_environment;
    let r = le.root();
    Ok(le
        .path(r, &["Destination", "HTTP", "RequestURL"])?
        .and_then(|u| le.value_bytes(u))
        .map(|b| String::from_utf8_lossy(b).into_owned()))
}

/// The headers of `Root.HTTPRequestHeader`, less those the client sets itself.
pub(crate) fn request_headers(msg: &mut Message) -> Result<Vec<(String, Bytes)>, NodeError> {
    let r = msg.root.root();
    let mut out = Vec::new();
    if let Some(h) = msg.root.child_named(r, None, b"HTTPRequestHeader", 0)? {
        for c in msg.root.children(h)? {
            let name = String::from_utf8_lossy(msg.root.name_bytes(c)).into_owned();
            if ["content-length", "host", "transfer-encoding"]
                .iter()
                .any(|x| name.eq_ignore_ascii_case(x))
            {
                continue;
            }
            out.push((
                name,
                Bytes::copy_from_slice(msg.root.value_bytes(c).unwrap_or_default()),
            ));
        }
    }
    Ok(out)
}

/// A service's response.
pub(crate) struct Answer {
    pub(crate) status: u16,
    reason: String,
    headers: Vec<(String, Bytes)>,
    body: Bytes,
}

impl Answer {
    /// A response as it came: its status (the reason phrase is the status's standard one),
    /// headers and body.
    pub(crate) fn new(status: u16, headers: Vec<(String, Bytes)>, body: Bytes) -> Answer {
        let reason = hyper::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("")
            .to_string();
        Answer {
            status,
            reason,
            headers,
            body,
        }
    }

    /// Its status, headers and body.
    pub(crate) fn into_parts(self) -> (u16, Vec<(String, Bytes)>, Bytes) {
        (self.status, self.headers, self.body)
    }
}

/// Why an exchange failed.
enum Failure {
    Timeout,
    Transport(String),
    Redirects,
}

impl Caller {
    fn client(&self) -> Result<&HttpsClient, NodeError> {
        self.client
            .get_or_init(|| client::build(self.options.ca_file.as_deref()))
            .as_ref()
            .map_err(|e| NodeError::recoverable(e.clone()))
    }

    /// Send one request (following redirects when the options say so) and wait for the whole
    /// response.
    pub(crate) fn call(
        &self,
        method: &hyper::Method,
        url: &str,
        headers: Vec<(String, Bytes)>,
        body: Bytes,
        content_type: &str,
    ) -> Result<Answer, NodeError> {
        self.runtime
            .block_on(self.call_async(method, url, headers, body, content_type))
    }

    /// The runtime the calls run on.
    pub(crate) fn runtime(&self) -> &tokio::runtime::Handle {
        &self.runtime
    }

    /// [`Caller::call`] as a future, for a node that does not wait for the response.
    pub(crate) async fn call_async(
        &self,
        method: &hyper::Method,
        url: &str,
        mut headers: Vec<(String, Bytes)>,
        body: Bytes,
        content_type: &str,
    ) -> Result<Answer, NodeError> {
        let client = self.client()?;
        if !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        {
            headers.push((
                "Content-Type".into(),
                Bytes::copy_from_slice(content_type.as_bytes()),
            ));
        }
        let asked_encoding = headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("accept-encoding"));
        if self.options.accept_compressed && !asked_encoding {
            headers.push((
                "Accept-Encoding".into(),
                Bytes::from_static(b"gzip, deflate"),
            ));
        }
        let exchange = self.exchange(client, method, url, headers, body);
        let (parts, body) = match tokio::time::timeout(self.timeout, exchange)
            .await
            .unwrap_or(Err(Failure::Timeout))
        {
            Ok(r) => r,
            Err(Failure::Timeout) => {
                return Err(NodeError::new(
                    ExceptionKind::SocketTimeout,
                    3162,
                    format!(
                        "no response from {url} within the timeout of {} seconds (timeout_secs)",
                        self.timeout.as_secs()
                    ),
                ));
            }
            Err(Failure::Transport(e)) => {
                return Err(NodeError::new(
                    ExceptionKind::Socket,
                    3152,
                    format!("the request to {url} failed: {e}"),
                ));
            }
            Err(Failure::Redirects) => {
                return Err(NodeError::new(
                    ExceptionKind::Socket,
                    3152,
                    format!(
                        "the request to {url} was redirected more than {} times",
                        client::MAX_REDIRECTS
                    ),
                ));
            }
        };
        let mut headers: Vec<(String, Bytes)> = parts
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    sluice_node_api::http_listener::canonical_header(n.as_str()),
                    Bytes::copy_from_slice(v.as_bytes()),
                )
            })
            .collect();
        let mut body = body;
        let encoding = parts
            .headers
            .get(hyper::header::CONTENT_ENCODING)
            .and_then(|v| v.to_str().ok());
        if let Some(enc) = encoding
            && (self.options.accept_compressed || asked_encoding)
            && let Some(inflated) = client::inflate(enc, &body)
        {
            let inflated = inflated
                .map_err(|e| NodeError::new(ExceptionKind::Socket, 3152, format!("{url}: {e}")))?;
            body = Bytes::from(inflated);
            headers.retain(|(n, _)| {
                !n.eq_ignore_ascii_case("content-encoding")
                    && !n.eq_ignore_ascii_case("content-length")
            });
        }
        Ok(Answer {
            status: parts.status.as_u16(),
            reason: parts.status.canonical_reason().unwrap_or("").to_string(),
            headers,
            body,
        })
    }

    /// Send the request, following redirects when the node does; the last response's head
    /// and whole body.
    async fn exchange(
        &self,
        client: &HttpsClient,
        method: &hyper::Method,
        url: &str,
        headers: Vec<(String, Bytes)>,
        body: Bytes,
    ) -> Result<(hyper::http::response::Parts, Bytes), Failure> {
        let mut url = url.to_string();
        let mut method = method.clone();
        let mut body = body;
        let mut with_body = true;
        for _ in 0..=client::MAX_REDIRECTS {
            let mut req = hyper::Request::builder().method(method.clone()).uri(&url);
            for (n, v) in &headers {
                if !with_body
                    && (n.eq_ignore_ascii_case("content-type")
                        || n.eq_ignore_ascii_case("content-encoding"))
                {
                    continue;
                }
                if let (Ok(n), Ok(v)) = (
                    HeaderName::from_bytes(n.as_bytes()),
                    HeaderValue::from_maybe_shared(v.clone()),
                ) {
                    req = req.header(n, v);
                }
            }
            let req = req
                .body(Full::new(body.clone()))
                .map_err(|e| Failure::Transport(format!("cannot build the request: {e}")))?;
            let resp = client
                .request(req)
                .await
                .map_err(|e| Failure::Transport(client::describe(&e)))?;
            let (parts, incoming) = resp.into_parts();
            let bytes = incoming
                .collect()
                .await
                .map_err(|e| {
                    Failure::Transport(format!(
                        "the response body was cut short: {}",
                        client::describe(&e)
                    ))
                })?
                .to_bytes();
            let status = parts.status.as_u16();
            let location = parts
                .headers
                .get(hyper::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| client::resolve(&url, l));
            match location {
                Some(next)
                    if self.options.follow_redirects
                        && [301, 302, 303, 307, 308].contains(&status) =>
                {
                    if status == 303
                        || (status != 307 && status != 308 && method == hyper::Method::POST)
                    {
                        method = hyper::Method::GET;
                        body = Bytes::new();
                        with_body = false;
                    }
                    url = next;
                }
                _ => return Ok((parts, bytes)),
            }
        }
        Err(Failure::Redirects)
    }
}

/// The output message: the input's Properties, the response headers, the response body parsed
/// by `parsing`.
pub(crate) fn response_message(
    parsing: &BodyParsing,
    input: &mut Message,
    a: Answer,
) -> Result<Message, NodeError> {
    {
        let mut out = Message::new();
        let ir = input.root.root();
        let or = out.root.root();
        if let Some(p) = input.root.first_child(ir)? {
            input.root.expand_all(p)?;
            if let Some(old) = out.root.first_child(or)? {
                out.root.delete(old)?;
            }
            out.root
                .copy_from(&input.root, p, or, Position::FirstChild)?;
        }
        // Properties.ContentType is the response's: the MIME domain reads its boundary there.
        if let Some(p) = out.root.first_child(or)?
            && out.root.name_is(p, b"Properties")
        {
            if let Some(old) = out.root.child_named(p, None, b"ContentType", 0)? {
                out.root.delete(old)?;
            }
            if let Some((_, ct)) = a
                .headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            {
                let v = out.root.alloc_text(ct);
                out.root.create_last_child(
                    p,
                    field_type::NAME_VALUE,
                    Text::from_static("ContentType"),
                    Value::Character(v),
                )?;
            }
        }
        let h = out.root.create_last_child(
            or,
            field_type::NAME,
            Text::from_static("HTTPResponseHeader"),
            Value::Null,
        )?;
        let line = format!("HTTP/1.1 {} {}", a.status, a.reason);
        let v = out.root.alloc_text(line.as_bytes());
        out.root.create_last_child(
            h,
            field_type::NAME_VALUE,
            Text::from_static("X-Original-HTTP-Status-Line"),
            Value::Character(v),
        )?;
        out.root.create_last_child(
            h,
            field_type::NAME_VALUE,
            Text::from_static("X-Original-HTTP-Status-Code"),
            Value::Integer(a.status as i64),
        )?;
        for (n, v) in &a.headers {
            let n = out.root.alloc_text(n.as_bytes());
            let v = out.root.alloc_text(v);
            out.root
                .create_last_child(h, field_type::NAME_VALUE, n, Value::Character(v))?;
        }
        parsing.attach(&mut out.root, a.body)?;
        out.local_environment = input.local_environment.clone();
        out.exception_list = input.exception_list.clone();
        Ok(out)
    }
}

impl Node for HttpRequestNode {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let url = url_override(msg)?.unwrap_or_else(|| self.url.clone());
        let (body, content_type) = serialize_body_for_http(msg)?;
        let headers = request_headers(msg)?;
        let answer = self
            .caller
            .call(&self.method, &url, headers, body, &content_type)?;
        let status = answer.status;
        let mut out = response_message(&self.parsing, msg, answer)?;
        if status >= 400 {
            let error = HttpRequestOutput::Error;
            if !ctx.is_wired(error) {
                return Err(NodeError::new(
                    ExceptionKind::Socket,
                    3151,
                    format!("{url} answered with status {status}"),
                ));
            }
            return ctx.propagate(error, &mut out);
        }
        ctx.propagate(HttpRequestOutput::Out, &mut out)
    }
}
