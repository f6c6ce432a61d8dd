//! HTTPReply: answers the request that started the invocation.

use std::sync::Arc;

use bytes::Bytes;
use sluice_node_api::http_listener::HttpResponse;
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
};
use sluice_tree::Value;

use super::input::PendingReply;
use sluice_nodes_core::domains::serialize_body_for_http;
use sluice_nodes_core::terminals::{FailureOut, In};

pub static HTTP_REPLY: NodeSpec = NodeSpec {
    type_name: "HTTPReply",
    summary: "Sends the message body, serialised in its domain, as the response to the request that started \
              the invocation. Headers come from `Root.HTTPReplyHeader` when present; the status from \
              `LocalEnvironment.Destination.HTTP.ReplyStatusCode`, else the `status` property.",
    inputs: In::SPECS,
    outputs: FailureOut::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "The body answers the request that started the flow, then goes on to `out`",
            properties: "status: 201",
            esql: "",
            input: ExampleInput::xml("<confirmation><order>7</order></confirmation>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[(
                "out",
                "<confirmation><order>7</order></confirmation>",
            )]),
            runs: Runs::No(
                "it answers the open request of an HTTPInput, which only an HTTP client gives.",
            ),
        },
        NodeExample {
            title: "Reached without an HTTPInput request to answer, it raises",
            properties: "",
            esql: "",
            input: ExampleInput::xml("<confirmation><order>7</order></confirmation>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Raises("there is no HTTP request to reply to"),
            runs: Runs::Yes,
        },
    ],
    builder: NodeBuilder::of::<HttpReplyProps>(),
};

properties! {
    /// HTTPReply's properties.
    pub struct HttpReplyProps {
        /// The HTTP status when the LocalEnvironment does not set one.
        status: u32 = "200",
        /// Whether a client that went away is ignored rather than raised as an exception.
        ignore_transport_failures: bool = "true",
    }
}

impl BuildNode for HttpReplyProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let status = u16::try_from(self.status)
            .ok()
            .filter(|s| (100..=599).contains(s))
            .ok_or_else(|| {
                ConfigError::property("status", format!("{} is not an HTTP status", self.status))
            })?;
        Ok(NodeImpl::Process(Arc::new(HttpReply {
            status,
            ignore_failures: self.ignore_transport_failures,
        })))
    }
}

struct HttpReply {
    status: u16,
    ignore_failures: bool,
}

fn reply_headers(msg: &mut Message) -> Result<Vec<(String, Bytes)>, NodeError> {
    let r = msg.root.root();
    let mut out = Vec::new();
    if let Some(h) = msg.root.child_named(r, None, b"HTTPReplyHeader", 0)? {
        for c in msg.root.children(h)? {
            let name = String::from_utf8_lossy(msg.root.name_bytes(c)).into_owned();
            if name.eq_ignore_ascii_case("content-length")
                || name.eq_ignore_ascii_case("transfer-encoding")
            {
                continue;
            }
            let v = match msg.root.value(c) {
                Value::Integer(i) => Bytes::from(i.to_string()),
                _ => Bytes::copy_from_slice(msg.root.value_bytes(c).unwrap_or_default()),
            };
            out.push((name, v));
        }
    }
    Ok(out)
}

fn status_override(msg: &mut Message) -> Result<Option<u16>, NodeError> {
    let le = &mut msg.local_environment;
    let r = le.root();
    let Some(s) = le.path(r, &["Destination", "HTTP", "ReplyStatusCode"])? else {
        return Ok(None);
    };
    let n = match le.value(s) {
        Value::Integer(i) => Some(i),
        _ => le
            .value_bytes(s)
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| s.trim().parse().ok()),
    };
    Ok(n.filter(|n| (100..=599).contains(n)).map(|n| n as u16))
}

impl Node for HttpReply {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let (body, content_type) = serialize_body_for_http(msg)?;
        let mut headers = reply_headers(msg)?;
        if !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        {
            headers.push((
                "Content-Type".into(),
                Bytes::from(content_type.into_owned()),
            ));
        }
        let status = status_override(msg)?.unwrap_or(self.status);
        // Taken only now, so that an error above is answered by the input node.
        let Some(pending) = ctx
            .inv
            .unit_of_work
            .leave::<PendingReply>(PendingReply::KEY)
        else {
            return Err(NodeError::recoverable(
                "there is no HTTP request to reply to (it was answered already, or no HTTPInput started this invocation)",
            ));
        };
        if pending
            .sender
            .send(HttpResponse {
                status,
                headers,
                body,
            })
            .is_err()
            && !self.ignore_failures
        {
            return Err(NodeError::new(
                sluice_node_api::ExceptionKind::Socket,
                3169,
                "the HTTP client closed the connection before the reply was sent",
            ));
        }
        ctx.propagate(FailureOut::Out, msg)
    }
}
