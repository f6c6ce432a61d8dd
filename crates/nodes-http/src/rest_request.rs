//! RESTRequest: calls one operation of a REST API described by an OpenAPI document, with the
//! parameters the flow set in `LocalEnvironment.Destination.REST.Request.Parameters`, through
//! HTTPRequest's client (pooled keep-alive connections, TLS, the timeout).

use std::sync::Arc;

use bytes::Bytes;
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, ExceptionKind,
    Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal,
    Terminals, properties,
};
use sluice_nodes_core::domains::{
    BodyParsing, BodyParsingProps, MessageModelProps, serialize_body_for_http,
};
use sluice_nodes_core::terminals::In;
use sluice_openapi::{Location, Operation, Segment};

use crate::request::{CallOptions, Caller, HttpRequestOutput, request_headers, response_message};

pub static REST_REQUEST: NodeSpec = NodeSpec {
    type_name: "RESTRequest",
    summary: "Calls an operation of a REST API described by an OpenAPI document: the operation's method and \
              path template, with path, query and header parameters from \
              `LocalEnvironment.Destination.REST.Request.Parameters` and the message body as the request \
              body when the operation takes one. The response continues the flow as HTTPRequest's does \
              (`Root.HTTPResponseHeader`, the body parsed in the chosen domain; status 400 or more to `error`).",
    inputs: In::SPECS,
    outputs: HttpRequestOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Reads order 7 with the orders API's getOrder operation",
        properties: "api: apis/orders.yaml, operation: getOrder, base_url: 'http://shop.example/api/v1', domain: JSON",
        esql: "",
        input: ExampleInput {
            domain: "JSON",
            body: "{}",
            local_environment: &[("Destination.REST.Request.Parameters.id", "7")],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[(
            "out",
            "{\"id\":7,\"item\":\"pen\",\"quantity\":3}",
        )]),
        runs: Runs::No("it needs the REST API it calls."),
    }],
    builder: NodeBuilder::of::<RestRequestProps>(),
};

properties! {
    /// RESTRequest's properties.
    pub struct RestRequestProps {
        /// The OpenAPI document of the API called, relative to the project folder.
        api: String,
        /// The operationId of the operation called.
        operation: String,
        /// The API's base URL (`http://host:port/base`); by default the document's first
        /// `servers[].url` (OpenAPI 3) or `schemes`/`host`/`basePath` (Swagger 2.0).
        /// `LocalEnvironment.Destination.REST.Request.BaseURL` overrides it per message.
        base_url: Option<String>,
        /// How long to wait for the whole response.
        timeout_secs: u64 = "120",
        ..parsing: BodyParsingProps,
        ..model: MessageModelProps,
    }
}

/// The document's own base URL, when it gives an absolute one.
fn document_base_url(api: &sluice_openapi::Api) -> Option<String> {
    let d = &api.document;
    let url = match api.version {
        sluice_openapi::SpecVersion::Swagger2 => {
            let host = d.get("host")?.as_str()?;
            let scheme = d
                .get("schemes")
                .and_then(|s| s.get(0))
                .and_then(|s| s.as_str())
                .unwrap_or("http");
            let base = d.get("basePath").and_then(|b| b.as_str()).unwrap_or("");
            format!("{scheme}://{host}{base}")
        }
        _ => d.get("servers")?.get(0)?.get("url")?.as_str()?.to_string(),
    };
    url.contains("://").then_some(url)
}

impl BuildNode for RestRequestProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(RestRequest {
            caller: Caller::new(b, self.timeout_secs, CallOptions::default())?,
            call: RestCall::resolve(b, &self.api, &self.operation, self.base_url)?,
            parsing: BodyParsing::with_model(&self.parsing, &self.model, b.project_dir)?,
        })))
    }
}

/// One operation of an OpenAPI document and where its API is: what RESTRequest and
/// RESTAsyncRequest resolve from their properties when the flow is deployed.
pub(crate) struct RestCall {
    base_url: String,
    method: hyper::Method,
    op: Operation,
}

impl RestCall {
    pub(crate) fn resolve(
        b: &BuildContext,
        api_file: &str,
        operation: &str,
        base_url: Option<String>,
    ) -> Result<RestCall, ConfigError> {
        let api = sluice_openapi::load_file(api_file, &b.project_dir.join(api_file))
            .map_err(|e| ConfigError::property("api", e.to_string()))?;
        let Some(op) = api.operations.iter().find(|o| o.id == operation).cloned() else {
            let ids: Vec<&str> = api.operations.iter().map(|o| o.id.as_str()).collect();
            return Err(ConfigError::property(
                "operation",
                format!("{api_file} has no operation `{operation}`"),
            )
            .with_hint(format!("its operations are {}", ids.join(", "))));
        };
        let base_url = match base_url.or_else(|| document_base_url(&api)) {
            Some(u) if u.starts_with("http://") || u.starts_with("https://") => {
                u.trim_end_matches('/').to_string()
            }
            Some(u) => {
                return Err(ConfigError::property(
                    "base_url",
                    format!("`{u}` is not an http:// or https:// URL"),
                ));
            }
            None => {
                return Err(ConfigError::property(
                    "base_url",
                    format!("{api_file} names no absolute server URL"),
                )
                .with_hint("set `base_url: http://host:port/base`"));
            }
        };
        let method = op
            .method
            .parse::<hyper::Method>()
            .map_err(|e| ConfigError::property("operation", e.to_string()))?;
        Ok(RestCall {
            base_url,
            method,
            op,
        })
    }

    pub(crate) fn method(&self) -> &hyper::Method {
        &self.method
    }

    pub(crate) fn operation_id(&self) -> &str {
        &self.op.id
    }

    /// The request `msg` makes: URL, headers, body and its content type.
    pub(crate) fn prepare(&self, msg: &mut Message) -> Result<Prepared, NodeError> {
        let params = parameters(msg)?;
        let base = base_url_override(msg)?;
        let (url, mut headers) = self.target(base.as_deref().unwrap_or(&self.base_url), &params)?;
        headers.extend(request_headers(msg)?);
        // Operations that take no body get none, whatever the message holds.
        let (body, content_type) = if self.op.request_body.is_some()
            || matches!(
                self.method,
                hyper::Method::POST | hyper::Method::PUT | hyper::Method::PATCH
            ) {
            serialize_body_for_http(msg)?
        } else {
            (Bytes::new(), "application/json".into())
        };
        Ok(Prepared {
            url,
            headers,
            body,
            content_type,
        })
    }
}

/// A request ready to send.
pub(crate) struct Prepared {
    pub(crate) url: String,
    pub(crate) headers: Vec<(String, Bytes)>,
    pub(crate) body: Bytes,
    pub(crate) content_type: std::borrow::Cow<'static, str>,
}

struct RestRequest {
    caller: Caller,
    call: RestCall,
    parsing: BodyParsing,
}

/// Characters a path segment or query value keeps as they are (RFC 3986 unreserved).
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Each parameter the flow set, by name, as text (a repeated element gives several values).
fn parameters(msg: &mut Message) -> Result<Vec<(String, String)>, NodeError> {
    let le = &mut msg.local_environment;
    let r = le.root();
    let Some(p) = le.path(r, &["Destination", "REST", "Request", "Parameters"])? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for c in le.children(p)? {
        let name = String::from_utf8_lossy(le.name_bytes(c)).into_owned();
        let value = match le.value(c) {
            sluice_tree::Value::Integer(i) => i.to_string(),
            sluice_tree::Value::Float(f) => f.to_string(),
            sluice_tree::Value::Boolean(b) => b.to_string(),
            _ => String::from_utf8_lossy(le.value_bytes(c).unwrap_or_default()).into_owned(),
        };
        out.push((name, value));
    }
    Ok(out)
}

/// `LocalEnvironment.Destination.REST.Request.BaseURL`: the flow's override of `base_url`.
fn base_url_override(msg: &mut Message) -> Result<Option<String>, NodeError> {
    let le = &mut msg.local_environment;
    let r = le.root();
    let Some(id) = le.path(r, &["Destination", "REST", "Request", "BaseURL"])? else {
        return Ok(None);
    };
    let url = String::from_utf8_lossy(le.value_bytes(id).unwrap_or_default())
        .trim()
        .to_string();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(NodeError::recoverable(format!(
            "LocalEnvironment.Destination.REST.Request.BaseURL `{url}` is not an http:// or https:// URL"
        )));
    }
    Ok(Some(url))
}

/// The values the flow set for parameter `name`.
fn values<'a>(params: &'a [(String, String)], name: &'a str) -> impl Iterator<Item = &'a str> {
    params
        .iter()
        .filter(move |(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

impl RestCall {
    /// The URL and extra headers of a call with `params`; a missing path parameter raises.
    fn target(
        &self,
        base_url: &str,
        params: &[(String, String)],
    ) -> Result<(String, Vec<(String, Bytes)>), NodeError> {
        let mut url = base_url.trim_end_matches('/').to_string();
        for s in &self.op.template.segments {
            url.push('/');
            match s {
                Segment::Literal(l) => url.push_str(l),
                Segment::Parameter(name) => match values(params, name).next() {
                    Some(v) => url.push_str(&encode(v)),
                    None => {
                        return Err(NodeError::recoverable(format!(
                            "operation {} needs path parameter `{name}`: set LocalEnvironment.Destination.REST.Request.Parameters.{name}",
                            self.op.id
                        )));
                    }
                },
            }
        }
        let mut query = Vec::new();
        let mut headers = Vec::new();
        for p in &self.op.parameters {
            for v in values(params, &p.name) {
                match p.location {
                    Location::Query => query.push(format!("{}={}", encode(&p.name), encode(v))),
                    Location::Header => {
                        headers.push((p.name.clone(), Bytes::copy_from_slice(v.as_bytes())))
                    }
                    Location::Cookie => {
                        headers.push(("Cookie".into(), Bytes::from(format!("{}={v}", p.name))))
                    }
                    Location::Path => {}
                }
            }
        }
        if !query.is_empty() {
            url.push('?');
            url.push_str(&query.join("&"));
        }
        Ok((url, headers))
    }
}

impl Node for RestRequest {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let p = self.call.prepare(msg)?;
        let url = p.url;
        let answer =
            self.caller
                .call(self.call.method(), &url, p.headers, p.body, &p.content_type)?;
        let status = answer.status;
        let mut out = response_message(&self.parsing, msg, answer)?;
        if status >= 400 {
            let error = HttpRequestOutput::Error;
            if !ctx.is_wired(error) {
                return Err(NodeError::new(
                    ExceptionKind::Socket,
                    3151,
                    format!(
                        "operation {} ({url}) answered with status {status}",
                        self.call.operation_id()
                    ),
                ));
            }
            return ctx.propagate(error, &mut out);
        }
        ctx.propagate(HttpRequestOutput::Out, &mut out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_escapes_reserved_characters_when_in_a_segment() {
        assert_eq!(encode("a b/c?d=é"), "a%20b%2Fc%3Fd%3D%C3%A9");
        assert_eq!(encode("A-z_0.9~"), "A-z_0.9~");
    }
}
