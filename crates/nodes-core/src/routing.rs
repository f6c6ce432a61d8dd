//! Route: decides where a message goes with XPath 1.0 expressions over the message
//! assembly (`$Root`, `$Body`, `$LocalEnvironment`, `$Environment`, `$ExceptionList`).

use std::sync::Arc;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, StringMap, Terminal, Terminals,
    properties, property_enum, terminals,
};
use sluice_tree::xpath::{XPath, XPathContext, XPathError};

use crate::terminals::{FAILURE_DOC, In};

pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    r(&ROUTE);
}

/// An XPath expression of property `property`, compiled; a bad one names the property.
pub fn compile(property: &str, src: &str) -> Result<XPath, ConfigError> {
    XPath::compile(src).map_err(|e| ConfigError::property(property, format!("{e} in `{src}`")))
}

/// An XPath expression that failed at run time, as an exception naming it.
pub fn xpath_failed(e: XPathError, src: &str) -> NodeError {
    match e {
        XPathError::Tree(t) => NodeError::from(t),
        other => NodeError::recoverable(format!("evaluating `{src}`: {other}")),
    }
}

// ----- Route ------------------------------------------------------------------------------

/// The rules of Route's examples.
const RULES: &str =
    "rules: { big: '$Body/order/amount > 1000', express: \"$Body/order/shipping = 'express'\" }";

pub static ROUTE: NodeSpec = NodeSpec {
    type_name: "Route",
    summary: "Propagates the message to the terminal of every rule whose XPath expression is true (or only the \
              first, with `distribution_mode: first`); to `default` when none is.",
    inputs: In::SPECS,
    outputs: RouteOutput::SPECS,
    dynamic_outputs: true,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "A large express order matches both rules and goes to `big`, then `express`",
            properties: RULES,
            esql: "",
            input: ExampleInput::xml(
                "<order><amount>1500</amount><shipping>express</shipping></order>",
            ),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[
                (
                    "big",
                    "<order><amount>1500</amount><shipping>express</shipping></order>",
                ),
                (
                    "express",
                    "<order><amount>1500</amount><shipping>express</shipping></order>",
                ),
            ]),
            runs: Runs::Yes,
        },
        NodeExample {
            title: "When no rule matches, the message goes to `default`",
            properties: RULES,
            esql: "",
            input: ExampleInput::xml(
                "<order><amount>20</amount><shipping>standard</shipping></order>",
            ),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[(
                "default",
                "<order><amount>20</amount><shipping>standard</shipping></order>",
            )]),
            runs: Runs::Yes,
        },
    ],
    builder: NodeBuilder::of::<RouteProps>(),
};

terminals! {
    /// Route's declared outputs; each rule adds one named after it.
    pub enum RouteOutput {
        Failure = "failure": FAILURE_DOC,
        Default = "default": "No rule matched.",
    }
}

property_enum! {
    /// Whether Route stops at the first matching rule.
    pub enum DistributionMode { All = "all", First = "first" }
}

properties! {
    /// Route's properties.
    pub struct RouteProps {
        /// Terminal name → XPath expression, tried in the order written.
        rules: StringMap,
        /// `all` propagates to every matching rule's terminal; `first` stops at the first match.
        distribution_mode: DistributionMode = "all",
    }
}

impl BuildNode for RouteProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let mut rules = Vec::new();
        for (name, src) in &self.rules {
            if RouteOutput::SPECS.iter().any(|t| t.name == name) {
                return Err(ConfigError::property(
                    "rules",
                    format!("a rule cannot be named `{name}`"),
                ));
            }
            rules.push(Rule {
                xpath: compile("rules", src)?,
                src: src.clone(),
                terminal: b.output(name),
            });
        }
        if let Some(extra) = b
            .named_outputs(RouteOutput::SPECS.len())
            .find(|o| !self.rules.iter().any(|(n, _)| n == o))
        {
            return Err(ConfigError::property(
                "rules",
                format!("terminal `{extra}` is wired but has no rule"),
            )
            .with_hint(format!("add `{extra}: <XPath expression>` to `rules`")));
        }
        Ok(NodeImpl::Process(Arc::new(Route {
            rules,
            first_only: self.distribution_mode == DistributionMode::First,
        })))
    }
}

struct Rule {
    xpath: XPath,
    src: String,
    /// `None` when the rule's terminal is not wired: a match then propagates nowhere.
    terminal: Option<Terminal>,
}

struct Route {
    rules: Vec<Rule>,
    first_only: bool,
}

impl Node for Route {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let mut matched = false;
        for r in &self.rules {
            let hit = {
                let mut xc = XPathContext::new(msg, &mut ctx.inv.environment);
                r.xpath
                    .evaluate_bool(&mut xc)
                    .map_err(|e| xpath_failed(e, &r.src))?
            };
            if hit {
                matched = true;
                if let Some(t) = r.terminal {
                    ctx.propagate(t, msg)?;
                }
                if self.first_only {
                    break;
                }
            }
        }
        if !matched {
            ctx.propagate(RouteOutput::Default, msg)?;
        }
        Ok(())
    }
}
