//! HTTPHeader: sets, keeps or removes the HTTP header folders of the message
//! (HTTPInputHeader, HTTPReplyHeader, HTTPRequestHeader, HTTPResponseHeader), as the product's
//! node does, so that a flow needs no Compute node to add a header to a reply or a request.

use std::sync::Arc;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, StringMap, Terminal, Terminals,
    properties, property_enum,
};
use sluice_nodes_core::routing::{compile, xpath_failed};
use sluice_nodes_core::terminals::{FailureOut, In};
use sluice_tree::xpath::{XPath, XPathContext};
use sluice_tree::{NodeId, Text, Tree, Value, field_type};

pub static HTTP_HEADER: NodeSpec = NodeSpec {
    type_name: "HTTPHeader",
    summary: "Sets, keeps or removes the message's HTTP header folders — HTTPInputHeader, \
              HTTPReplyHeader, HTTPRequestHeader, HTTPResponseHeader — one setting each: \
              `carry_forward` keeps the folder as it is, `add` creates it when missing and sets \
              the listed headers, `delete` removes it. A header value that starts with `$` is an \
              XPath expression over the message (`$Body/order/id`), else the text itself.",
    inputs: In::SPECS,
    outputs: FailureOut::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "A reply header from the body, and the request's headers dropped",
        properties: "reply: add, reply_headers: { X-Order: $Body/order/id, Cache-Control: no-store }, input: delete",
        esql: "",
        input: ExampleInput::xml("<order><id>7</id></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "<order><id>7</id></order>")]),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<HttpHeaderProps>(),
};

property_enum! {
    /// What HTTPHeader does with one header folder.
    pub enum HeaderAction { CarryForward = "carry_forward", Add = "add", Delete = "delete" }
}

properties! {
    /// HTTPHeader's properties: an action and headers for each folder.
    pub struct HttpHeaderProps {
        /// What happens to `HTTPInputHeader`.
        input: HeaderAction = "carry_forward",
        /// Headers set in `HTTPInputHeader` when `input` is `add`: name → text or `$` XPath.
        input_headers: StringMap = "{}",
        /// What happens to `HTTPReplyHeader` (the headers HTTPReply sends).
        reply: HeaderAction = "carry_forward",
        /// Headers set in `HTTPReplyHeader` when `reply` is `add`.
        reply_headers: StringMap = "{}",
        /// What happens to `HTTPRequestHeader` (the headers HTTPRequest sends).
        request: HeaderAction = "carry_forward",
        /// Headers set in `HTTPRequestHeader` when `request` is `add`.
        request_headers: StringMap = "{}",
        /// What happens to `HTTPResponseHeader` (the headers an HTTPRequest received).
        response: HeaderAction = "carry_forward",
        /// Headers set in `HTTPResponseHeader` when `response` is `add`.
        response_headers: StringMap = "{}",
    }
}

/// A header's value: fixed text, or an XPath expression evaluated per message.
enum HeaderValue {
    Text(String),
    XPath { xpath: XPath, src: String },
}

struct Folder {
    name: &'static str,
    action: HeaderAction,
    headers: Vec<(String, HeaderValue)>,
}

fn folder(
    name: &'static str,
    property: &str,
    action: HeaderAction,
    headers: &StringMap,
) -> Result<Folder, ConfigError> {
    if action != HeaderAction::Add && !headers.is_empty() {
        return Err(ConfigError::property(
            property,
            "headers are set only when the folder's action is `add`",
        ));
    }
    let headers = headers
        .iter()
        .map(|(k, v)| {
            let value = if v.starts_with('$') {
                HeaderValue::XPath {
                    xpath: compile(property, v)?,
                    src: v.clone(),
                }
            } else {
                HeaderValue::Text(v.clone())
            };
            Ok((k.clone(), value))
        })
        .collect::<Result<_, ConfigError>>()?;
    Ok(Folder {
        name,
        action,
        headers,
    })
}

impl BuildNode for HttpHeaderProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let folders = vec![
            folder(
                "HTTPInputHeader",
                "input_headers",
                self.input,
                &self.input_headers,
            )?,
            folder(
                "HTTPReplyHeader",
                "reply_headers",
                self.reply,
                &self.reply_headers,
            )?,
            folder(
                "HTTPRequestHeader",
                "request_headers",
                self.request,
                &self.request_headers,
            )?,
            folder(
                "HTTPResponseHeader",
                "response_headers",
                self.response,
                &self.response_headers,
            )?,
        ];
        Ok(NodeImpl::Process(Arc::new(HttpHeader {
            folders: folders
                .into_iter()
                .filter(|f| f.action != HeaderAction::CarryForward)
                .collect(),
        })))
    }
}

struct HttpHeader {
    folders: Vec<Folder>,
}

impl Node for HttpHeader {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let mut out = msg.clone();
        for f in &self.folders {
            // Values are read from the message as it came in.
            let mut values = Vec::with_capacity(f.headers.len());
            for (name, v) in &f.headers {
                let text = match v {
                    HeaderValue::Text(t) => t.clone(),
                    HeaderValue::XPath { xpath, src } => {
                        let mut xc = XPathContext::new(msg, &mut ctx.inv.environment);
                        xpath
                            .evaluate_string(&mut xc)
                            .map_err(|e| xpath_failed(e, src))?
                    }
                };
                values.push((name.as_str(), text));
            }
            apply(&mut out.root, f, &values)?;
        }
        ctx.propagate(FailureOut::Out, &mut out)
    }
}

fn apply(root: &mut Tree, f: &Folder, values: &[(&str, String)]) -> Result<(), NodeError> {
    let r = root.root();
    let existing = root.child_named(r, None, f.name.as_bytes(), 0)?;
    match f.action {
        HeaderAction::CarryForward => {}
        HeaderAction::Delete => {
            if let Some(id) = existing {
                root.delete(id)?;
            }
        }
        HeaderAction::Add => {
            let id = match existing {
                Some(id) => id,
                None => create_folder(root, f.name)?,
            };
            for (name, text) in values {
                let v = Value::Character(root.alloc_text(text.as_bytes()));
                match root.child_named(id, None, name.as_bytes(), 0)? {
                    Some(h) => root.set_value(h, v),
                    None => {
                        let n = root.alloc_text(name.as_bytes());
                        root.create_last_child(id, field_type::NAME_VALUE, n, v)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// A header folder goes after Properties and the other headers, before the body.
fn create_folder(root: &mut Tree, name: &'static str) -> Result<NodeId, NodeError> {
    let r = root.root();
    let body = root.last_child(r)?.filter(|&b| {
        sluice_tree::assembly::DOMAINS
            .iter()
            .any(|d| root.name_bytes(b) == d.as_bytes())
    });
    Ok(match body {
        Some(b) => {
            root.create_prev_sibling(b, field_type::NAME, Text::from_static(name), Value::Null)?
        }
        None => {
            root.create_last_child(r, field_type::NAME, Text::from_static(name), Value::Null)?
        }
    })
}
