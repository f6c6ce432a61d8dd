//! SOAPEnvelope and SOAPExtract: putting an XMLNSC body into a SOAP envelope and taking it out;
//! and the conversion of a body to the SOAP domain that SOAPReply and SOAPRequest share.

use std::sync::Arc;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
    property_enum,
};
use sluice_nodes_core::domains::default_parser;
use sluice_nodes_core::terminals::{FailureOut, In};
use sluice_parsers::soap::{self, SoapParser, SoapVersion};
use sluice_parsers::xmlnsc::field_type as xft;
use sluice_tree::{NodeId, Position, Text, Tree, Value};

fn is_element(tree: &Tree, id: NodeId) -> bool {
    matches!(
        tree.field_type(id),
        xft::FOLDER | xft::FIELD | xft::CDATA_FIELD | xft::BIT_STREAM
    ) && !tree.name_bytes(id).is_empty()
}

/// Move the element children of `from` to the end of `to` (same tree).
fn move_elements(tree: &mut Tree, from: NodeId, to: NodeId) -> Result<(), NodeError> {
    for c in tree.children(from)? {
        if is_element(tree, c) {
            tree.detach(c)?;
            tree.attach(c, to, Position::LastChild)?;
        }
    }
    Ok(())
}

/// A new body domain element `name` owned by `parser`, replacing `old` (Root's last child).
fn new_domain(
    tree: &mut Tree,
    name: &'static str,
    parser: Arc<dyn sluice_tree::Parser>,
) -> Result<NodeId, NodeError> {
    let r = tree.root();
    let id = tree.create_last_child(r, xft::FOLDER, Text::from_static(name), Value::Null)?;
    let i = tree.add_parser(parser);
    tree.set_parser(id, i);
    Ok(id)
}

fn folder(tree: &mut Tree, parent: NodeId, name: &'static str) -> Result<NodeId, NodeError> {
    Ok(tree.create_last_child(parent, xft::FOLDER, Text::from_static(name), Value::Null)?)
}

/// The message body as a SOAP domain element: a SOAP body as it is; an XMLNSC body moved into
/// the `Body` of a new SOAP domain element of `version`; anything else is refused.
pub fn body_as_soap(msg: &mut Message, version: SoapVersion) -> Result<NodeId, NodeError> {
    let Some(body) = msg.body()? else {
        return Err(NodeError::recoverable(
            "the message has no body to send as a SOAP envelope",
        ));
    };
    let t = &mut msg.root;
    match t.name_bytes(body) {
        b"SOAP" => Ok(body),
        b"XMLNSC" => {
            let soap_id = new_domain(t, soap::DOMAIN, SoapParser::shared())?;
            let ctx = folder(t, soap_id, "Context")?;
            let v = t.alloc_text(version.word().as_bytes());
            t.create_last_child(
                ctx,
                xft::FIELD,
                Text::from_static("SOAP_Version"),
                Value::Character(v),
            )?;
            let b = folder(t, soap_id, "Body")?;
            move_elements(t, body, b)?;
            t.delete(body)?;
            Ok(soap_id)
        }
        other => Err(NodeError::recoverable(format!(
            "a {} body cannot be sent as a SOAP envelope (give a SOAP or XMLNSC body)",
            String::from_utf8_lossy(other)
        ))),
    }
}

property_enum! {
    /// The SOAP version of an envelope a node builds.
    pub enum VersionProp { V11 = "1.1", V12 = "1.2" }
}

impl VersionProp {
    fn version(self) -> SoapVersion {
        match self {
            VersionProp::V11 => SoapVersion::V11,
            VersionProp::V12 => SoapVersion::V12,
        }
    }
}

pub static SOAP_ENVELOPE: NodeSpec = NodeSpec {
    type_name: "SOAPEnvelope",
    summary: "Puts the XMLNSC body into the Body of a SOAP envelope (the body becomes the SOAP domain, \
              `Context.SOAP_Version` from `soap_version`); header blocks under \
              `LocalEnvironment.SOAP.Envelope.Header` go into the envelope's Header. A SOAP body passes as it is.",
    inputs: In::SPECS,
    outputs: FailureOut::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "An XMLNSC body is wrapped in a SOAP 1.1 envelope",
        properties: "",
        esql: "",
        input: ExampleInput::xml("<echo><text>hi</text></echo>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[(
            "out",
            "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\"><soapenv:Body><echo><text>hi</text></echo></soapenv:Body></soapenv:Envelope>",
        )]),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<SoapEnvelopeProps>(),
};

properties! {
    /// SOAPEnvelope's properties.
    pub struct SoapEnvelopeProps {
        /// The SOAP version of the envelope.
        soap_version: VersionProp = "1.1",
    }
}

impl BuildNode for SoapEnvelopeProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(SoapEnvelope {
            version: self.soap_version.version(),
        })))
    }
}

struct SoapEnvelope {
    version: SoapVersion,
}

impl Node for SoapEnvelope {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let soap_id = body_as_soap(msg, self.version)?;
        let le = &mut msg.local_environment;
        let r = le.root();
        if let Some(h) = le.path(r, &["SOAP", "Envelope", "Header"])? {
            le.expand_all(h)?;
            let t = &mut msg.root;
            let header = match t.child_named(soap_id, None, b"Header", 0)? {
                Some(h) => h,
                None => {
                    let c = t
                        .child_named(soap_id, None, b"Context", 0)?
                        .ok_or_else(|| NodeError::recoverable("the SOAP body has no Context"))?;
                    t.create_next_sibling(c, xft::FOLDER, Text::from_static("Header"), Value::Null)?
                }
            };
            for c in msg.local_environment.children(h)? {
                msg.root
                    .copy_from(&msg.local_environment, c, header, Position::LastChild)?;
            }
        }
        ctx.propagate(FailureOut::Out, msg)
    }
}

pub static SOAP_EXTRACT: NodeSpec = NodeSpec {
    type_name: "SOAPExtract",
    summary: "Takes the payload out of a SOAP envelope (a SOAP domain body, or an XMLNSC body holding an \
              Envelope): the Body's elements become the XMLNSC body, and the envelope's header blocks are kept \
              under `LocalEnvironment.SOAP.Envelope.Header`. A fault stays a fault: the `Fault` element is the body.",
    inputs: In::SPECS,
    outputs: FailureOut::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "The payload of an envelope becomes the body",
        properties: "",
        esql: "",
        input: ExampleInput::xml(
            "<soapenv:Envelope xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\"><soapenv:Body><echo><text>hi</text></echo></soapenv:Body></soapenv:Envelope>",
        ),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "<echo><text>hi</text></echo>")]),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<SoapExtractProps>(),
};

properties! {
    /// SOAPExtract's properties (it has none of its own).
    pub struct SoapExtractProps {}
}

impl BuildNode for SoapExtractProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(SoapExtract)))
    }
}

struct SoapExtract;

/// The (Header, Body) parts of the body: a SOAP domain's folders, or an XMLNSC Envelope's.
fn parts(t: &mut Tree, body: NodeId) -> Result<(Option<NodeId>, NodeId), NodeError> {
    let holder = if t.name_bytes(body) == b"SOAP" {
        body
    } else {
        let mut env = None;
        for c in t.children(body)? {
            if is_element(t, c) {
                env = Some(c);
                break;
            }
        }
        env.filter(|&e| {
            t.name_bytes(e) == b"Envelope" && SoapVersion::from_ns(t.namespace_bytes(e)).is_some()
        })
        .ok_or_else(|| NodeError::recoverable("the body is not a SOAP envelope"))?
    };
    let header = t.child_named(holder, None, b"Header", 0)?;
    let b = t
        .child_named(holder, None, b"Body", 0)?
        .ok_or_else(|| NodeError::recoverable("the SOAP envelope has no Body"))?;
    Ok((header, b))
}

impl Node for SoapExtract {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let Some(body) = msg.body()? else {
            return Err(NodeError::recoverable("the message has no body"));
        };
        msg.root.expand_all(body)?;
        let (header, b) = parts(&mut msg.root, body)?;
        if let Some(h) = header {
            let le = &mut msg.local_environment;
            let r = le.root();
            let s = le.create_last_child(r, xft::FOLDER, Text::from_static("SOAP"), Value::Null)?;
            let e =
                le.create_last_child(s, xft::FOLDER, Text::from_static("Envelope"), Value::Null)?;
            let lh =
                le.create_last_child(e, xft::FOLDER, Text::from_static("Header"), Value::Null)?;
            for c in msg.root.children(h)? {
                msg.local_environment
                    .copy_from(&msg.root, c, lh, Position::LastChild)?;
            }
        }
        let parser = default_parser("XMLNSC").ok_or_else(|| {
            NodeError::recoverable("no XMLNSC parser (this is a bug, please report it)")
        })?;
        let x = new_domain(&mut msg.root, "XMLNSC", parser)?;
        move_elements(&mut msg.root, b, x)?;
        msg.root.delete(body)?;
        ctx.propagate(FailureOut::Out, msg)
    }
}
