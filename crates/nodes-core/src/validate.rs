//! Validate: checks a message's domain and message model properties and validates its body
//! against an XML Schema mid-flow, as the product's Validate node does.

use std::sync::Arc;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
    terminals,
};

use crate::domains::serialize_body;
use crate::terminals::{FAILURE_DOC, In};
use crate::validation::{ValidationProps, Validator};

pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    r(&VALIDATE);
}

/// The XML Schema the node's examples validate against, at [`EXAMPLE_SCHEMA_PATH`] in the
/// project.
pub const EXAMPLE_SCHEMA: &str = r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:element name="order">
    <xs:complexType>
      <xs:sequence>
        <xs:element name="id" type="xs:positiveInteger"/>
        <xs:element name="item" type="xs:string" maxOccurs="unbounded"/>
      </xs:sequence>
    </xs:complexType>
  </xs:element>
</xs:schema>
"#;

/// Where the examples' schema is, relative to the project folder.
pub const EXAMPLE_SCHEMA_PATH: &str = "models/example-order.xsd";

terminals! {
    /// Validate's outputs.
    pub enum ValidateOutput {
        Failure = "failure": FAILURE_DOC,
        Match = "match": "The message, when it passes every check and its body the validation.",
    }
}

pub static VALIDATE: NodeSpec = NodeSpec {
    type_name: "Validate",
    summary: "Checks the body's domain and the message set, type and format in `Root.Properties` against \
              the values given (each only when its `check_…` is on), and validates an XMLNSC body against \
              the XML Schema `message_model` names. A message that passes goes to `match` unchanged; one \
              that fails raises an exception naming each violation's line, column and element, which goes \
              to `failure` when that is wired.",
    inputs: In::SPECS,
    outputs: ValidateOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "An order that matches the schema goes to `match`",
            properties: "validation: content_and_value, message_model: models/example-order.xsd",
            esql: "",
            input: ExampleInput::xml("<order><id>7</id><item>pen</item></order>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[(
                "match",
                "<order><id>7</id><item>pen</item></order>",
            )]),
            runs: Runs::Yes,
        },
        NodeExample {
            title: "An order without items breaks the schema: the exception names the element",
            properties: "validation: content_and_value, message_model: models/example-order.xsd",
            esql: "",
            input: ExampleInput::xml("<order><id>7</id></order>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Raises("when parsing element '/order'"),
            runs: Runs::Yes,
        },
        NodeExample {
            title: "A JSON body fails the domain check",
            properties: "domain: XMLNSC, check_domain: true",
            esql: "",
            input: ExampleInput {
                domain: "JSON",
                body: r#"{"order":{"id":7}}"#,
                local_environment: &[],
            },
            raising_downstream: &[],
            outcome: ExampleOutcome::Raises("the body's domain is JSON, not XMLNSC"),
            runs: Runs::Yes,
        },
    ],
    builder: NodeBuilder::of::<ValidateProps>(),
};

properties! {
    /// Validate's properties.
    pub struct ValidateProps {
        /// The domain the body must be in, when `check_domain` is on.
        domain: Option<String>,
        /// Check the body's domain against `domain`.
        check_domain: bool = "false",
        /// The message set `Root.Properties.MessageSet` must name, when `check_set` is on.
        message_set: Option<String>,
        /// Check `Root.Properties.MessageSet` against `message_set`.
        check_set: bool = "false",
        /// The message type `Root.Properties.MessageType` must name, when `check_type` is on.
        message_type: Option<String>,
        /// Check `Root.Properties.MessageType` against `message_type`.
        check_type: bool = "false",
        /// The message format `Root.Properties.MessageFormat` must name, when `check_format`
        /// is on.
        message_format: Option<String>,
        /// Check `Root.Properties.MessageFormat` against `message_format`.
        check_format: bool = "false",
        /// The XML Schema (`models/NAME.xsd`, relative to the project folder) an XMLNSC body is
        /// validated against; compiled when the flow is deployed.
        message_model: Option<String>,
        ..validation: ValidationProps,
    }
}

/// One property check: the Properties field, the expected value.
struct Check {
    field: &'static str,
    expected: String,
}

impl BuildNode for ValidateProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let mut checks = Vec::new();
        for (on, name, value, field) in [
            (
                self.check_set,
                "message_set",
                &self.message_set,
                "MessageSet",
            ),
            (
                self.check_type,
                "message_type",
                &self.message_type,
                "MessageType",
            ),
            (
                self.check_format,
                "message_format",
                &self.message_format,
                "MessageFormat",
            ),
        ] {
            if on {
                checks.push(Check {
                    field,
                    expected: value.clone().unwrap_or_default(),
                });
            } else if value.is_some() {
                return Err(ConfigError::property(
                    name,
                    format!("`{name}` is only read with `check_{}`", &name[8..]),
                ));
            }
        }
        let domain = match (self.check_domain, self.domain) {
            (true, Some(d)) => Some(d),
            (true, None) => {
                return Err(ConfigError::property(
                    "domain",
                    "`check_domain` needs the `domain` to check for",
                ));
            }
            (false, Some(_)) => {
                return Err(ConfigError::property(
                    "domain",
                    "`domain` is only read with `check_domain: true`",
                ));
            }
            (false, None) => None,
        };
        let validator = Validator::from_props(
            &self.validation,
            self.message_model.as_deref(),
            b.project_dir,
        )?;
        if validator.is_none() && self.message_model.is_some() {
            return Err(ConfigError::property(
                "message_model",
                "`message_model` is only read with `validation`",
            ));
        }
        Ok(NodeImpl::Process(Arc::new(Validate {
            domain,
            checks,
            validator,
        })))
    }
}

struct Validate {
    domain: Option<String>,
    checks: Vec<Check>,
    validator: Option<Validator>,
}

impl Validate {
    fn check_properties(&self, msg: &mut Message) -> Result<(), NodeError> {
        let body = msg.body()?;
        let actual = body
            .map(|b| String::from_utf8_lossy(msg.root.name_bytes(b)).into_owned())
            .unwrap_or_default();
        if let Some(d) = &self.domain
            && !actual.eq_ignore_ascii_case(d)
        {
            return Err(NodeError::recoverable(format!(
                "the body's domain is {}, not {d}",
                if actual.is_empty() { "none" } else { &actual }
            )));
        }
        for c in &self.checks {
            let value = match msg.properties()? {
                Some(p) => msg
                    .root
                    .child_named(p, None, c.field.as_bytes(), 0)?
                    .and_then(|f| msg.root.value_bytes(f).map(|v| v.to_vec())),
                None => None,
            };
            let value = value
                .map(|v| String::from_utf8_lossy(&v).trim().to_string())
                .unwrap_or_default();
            if value != c.expected {
                return Err(NodeError::recoverable(format!(
                    "Root.Properties.{} is '{value}', not '{}'",
                    c.field, c.expected
                )));
            }
        }
        Ok(())
    }
}

impl Node for Validate {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        self.check_properties(msg)?;
        if let Some(v) = &self.validator {
            let domain = match msg.body()? {
                Some(b) => String::from_utf8_lossy(msg.root.name_bytes(b)).into_owned(),
                None => String::new(),
            };
            if domain != "XMLNSC" {
                return Err(NodeError::recoverable(format!(
                    "XML Schema validation needs an XMLNSC body, not {}",
                    if domain.is_empty() { "none" } else { &domain }
                )));
            }
            // The body as it would be written: its bytes as they came when nobody changed it.
            let (bytes, _) = serialize_body(msg)?;
            v.check(&bytes)?;
        }
        ctx.propagate(ValidateOutput::Match, msg)
    }
}
