//! The XSLTransform node: its properties, declaration and runtime.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Exception,
    ExceptionKind, Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs,
    StringMap, Terminal, Terminals, properties, property_enum, terminals,
};
use sluice_nodes_core::domains::{
    BodyParsing, BodyParsingProps, Domain, ParseTiming, serialize_body,
};
use sluice_nodes_core::terminals::{FAILURE_DOC, In, OUT_DOC};

use crate::engine::OutputMethod;
use crate::{Stylesheet, XsltError, cache, select};

terminals! {
    /// XSLTransform's outputs.
    pub enum XslTransformOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": OUT_DOC,
    }
}

property_enum! {
    /// The domain the transformation's result is attached in.
    pub enum OutputDomain { Auto = "auto", Xmlnsc = "XMLNSC", Json = "JSON", Blob = "BLOB" }
}

properties! {
    /// XSLTransform's properties.
    pub struct XslTransformProps {
        /// The stylesheet: a file relative to the project folder (`xsl/orders.xsl`), compiled
        /// when the flow is deployed. It may be left out when every message names its own
        /// stylesheet (an `xml-stylesheet` instruction, or `LocalEnvironment.XSL.StyleSheetName`).
        stylesheet: Option<String>,
        /// The folder, relative to the project folder, that stylesheet names from messages and
        /// from the LocalEnvironment are resolved in; they cannot leave it.
        stylesheet_directory: String = "xsl",
        /// Stylesheet parameters, passed as strings (xsltproc's `--stringparam`).
        /// `LocalEnvironment.XSL.Parameters.NAME` overrides or adds one per message.
        parameters: StringMap = "{}",
        /// The domain the result is attached in: `auto` takes XMLNSC for xsl:output method
        /// `xml` in UTF-8, BLOB for `text`, `html` or another encoding.
        /// `LocalEnvironment.XSL.MessageDomain` overrides it per message.
        output_domain: OutputDomain = "auto",
    }
}

/// The stylesheet the node's example uses, at [`EXAMPLE_STYLESHEET_PATH`] in the project.
pub const EXAMPLE_STYLESHEET: &str = r#"<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output omit-xml-declaration="yes"/>
  <xsl:param name="status" select="'received'"/>
  <xsl:template match="/order">
    <summary id="{id}" status="{$status}"><total><xsl:value-of select="sum(item/price)"/></total></summary>
  </xsl:template>
</xsl:stylesheet>
"#;

/// Where the example's stylesheet is, relative to the project folder.
pub const EXAMPLE_STYLESHEET_PATH: &str = "xsl/order-summary.xsl";

pub static XSL_TRANSFORM: NodeSpec = NodeSpec {
    type_name: "XSLTransform",
    summary: "Transforms the XML body with an XSLT 1.0 stylesheet (libxslt): from the message's xml-stylesheet \
              instruction, LocalEnvironment.XSL.StyleSheetName or the `stylesheet` property, compiled once per \
              instance. The result replaces the body, in XMLNSC (xml output) or BLOB (text or html output).",
    inputs: In::SPECS,
    outputs: XslTransformOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "xsl/order-summary.xsl (in docs/transformation.md) sums an order, with a parameter",
            properties: "stylesheet: xsl/order-summary.xsl, parameters: { status: accepted }",
            esql: "",
            input: ExampleInput::xml(
                "<order><id>7</id><item><price>2</price></item><item><price>3.5</price></item></order>",
            ),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[(
                "out",
                "<summary id=\"7\" status=\"accepted\"><total>5.5</total></summary>\n",
            )]),
            runs: Runs::Yes,
        },
        NodeExample {
            title: "A body that is not XML raises an exception naming the parser's complaint",
            properties: "stylesheet: xsl/order-summary.xsl",
            esql: "",
            input: ExampleInput {
                domain: "BLOB",
                body: "not xml",
                local_environment: &[],
            },
            raising_downstream: &[],
            outcome: ExampleOutcome::Raises("the message is not well-formed XML"),
            runs: Runs::Yes,
        },
    ],
    builder: NodeBuilder::of::<XslTransformProps>(),
};

impl BuildNode for XslTransformProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let generation = cache::next_generation();
        let directory = b.project_dir.join(&self.stylesheet_directory);
        let configured = match self.stylesheet.as_deref().filter(|s| !s.is_empty()) {
            Some(name) => Some(configured_stylesheet(b.project_dir, name)?),
            None => None,
        };
        let fixed_domain = match self.output_domain {
            OutputDomain::Auto => None,
            OutputDomain::Xmlnsc => Some(Domain::Xmlnsc),
            OutputDomain::Json => Some(Domain::Json),
            OutputDomain::Blob => Some(Domain::Blob),
        };
        Ok(NodeImpl::Process(Arc::new(XslTransform {
            generation,
            configured,
            directory,
            parameters: self.parameters,
            fixed_domain,
            parsers: Parsers::new()?,
        })))
    }
}

/// The node's own stylesheet, read and compiled at deploy so that a bad one fails the
/// deployment with its file and line.
struct Configured {
    path: PathBuf,
    source: Arc<[u8]>,
}

fn configured_stylesheet(project: &Path, name: &str) -> Result<Configured, ConfigError> {
    let path = project.join(name);
    let source: Arc<[u8]> = std::fs::read(&path)
        .map_err(|e| {
            ConfigError::property("stylesheet", format!("cannot read {}: {e}", path.display()))
                .with_hint("the path is relative to the project folder, for example xsl/orders.xsl")
        })?
        .into();
    // Compiled here only to check it: the flow's instances are other threads, and each compiles
    // its own copy on its first message (see cache.rs).
    Stylesheet::compile(&source, &path)
        .map_err(|e| ConfigError::property("stylesheet", e.to_string()))?;
    Ok(Configured { path, source })
}

/// The body parsers for the output domains.
struct Parsers {
    xml: BodyParsing,
    json: BodyParsing,
    blob: BodyParsing,
}

impl Parsers {
    fn new() -> Result<Parsers, ConfigError> {
        let on_demand = |domain| {
            BodyParsing::from_props(&BodyParsingProps {
                domain,
                parse_timing: ParseTiming::OnDemand,
                opaque_elements: Vec::new(),
            })
        };
        Ok(Parsers {
            xml: on_demand(Domain::Xmlnsc)?,
            json: on_demand(Domain::Json)?,
            blob: BodyParsing::blob(),
        })
    }

    fn of(&self, d: Domain) -> &BodyParsing {
        match d {
            Domain::Xmlnsc => &self.xml,
            Domain::Json => &self.json,
            // DFDL needs a message model, which this node has no way to name, and a
            // stylesheet's result is never a MIME entity or a SOAP tree: it chooses none of
            // these domains.
            Domain::Blob | Domain::Dfdl | Domain::Mime | Domain::Soap => &self.blob,
        }
    }
}

struct XslTransform {
    generation: u64,
    configured: Option<Configured>,
    directory: PathBuf,
    parameters: StringMap,
    fixed_domain: Option<Domain>,
    parsers: Parsers,
}

impl Node for XslTransform {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let (input, _) = serialize_body(msg)?;
        let from_message = match select::stylesheet_instruction(&input) {
            Some(name) => Some(name),
            None => select::local_environment_stylesheet(&mut msg.local_environment)?,
        };
        let sheet = match (&from_message, &self.configured) {
            (Some(name), _) => {
                let path = select::resolve_message_name(&self.directory, name).map_err(failure)?;
                cache::stylesheet(self.generation, &path, None)
            }
            (None, Some(c)) => cache::stylesheet(self.generation, &c.path, Some(&c.source)),
            (None, None) => Err(XsltError::NoStylesheet),
        }
        .map_err(failure)?;

        let mut params = self.parameters.clone();
        for (name, value) in select::local_environment_parameters(&mut msg.local_environment)? {
            match params.iter_mut().find(|(n, _)| *n == name) {
                Some(p) => p.1 = value,
                None => params.push((name, value)),
            }
        }
        let result = sheet.transform(&input, &params).map_err(failure)?;

        let domain = match select::local_environment_value(
            &mut msg.local_environment,
            &["XSL", "MessageDomain"],
        )? {
            Some(d) => match d.as_str() {
                "XMLNSC" => Domain::Xmlnsc,
                "JSON" => Domain::Json,
                "BLOB" => Domain::Blob,
                other => {
                    return Err(NodeError::recoverable(format!(
                        "LocalEnvironment.XSL.MessageDomain `{other}` is not one of XMLNSC, JSON, BLOB"
                    )));
                }
            },
            None => self.fixed_domain.unwrap_or(
                if sheet.method() == OutputMethod::Xml && sheet.writes_utf8() {
                    Domain::Xmlnsc
                } else {
                    Domain::Blob
                },
            ),
        };
        drop(sheet);

        // The input's headers stay; its body is replaced by the result.
        let mut out = msg.clone();
        if let Some(body) = out.body()? {
            out.root.delete(body)?;
        }
        self.parsers
            .of(domain)
            .attach(&mut out.root, Bytes::from(result))?;
        ctx.propagate(XslTransformOutput::Out, &mut out)
    }
}

/// An XSLT error as the exception the flow sees: the node's exception (the engine names the
/// node in it) caused by a parser exception for a body that is not XML, or by the stylesheet's
/// error.
fn failure(e: XsltError) -> NodeError {
    let (kind, number) = match e {
        XsltError::Input { .. } => (ExceptionKind::Parser, 5009),
        _ => (ExceptionKind::Recoverable, 4390),
    };
    Exception::new(
        ExceptionKind::Recoverable,
        2230,
        "the XSLTransform node could not transform the message",
    )
    .caused_by(Exception::new(kind, number, e.to_string()))
    .into()
}
