//! Filter: sends the message unchanged to `true`, `false` or `unknown`, deciding with either an
//! XPath 1.0 `expression` over the message assembly or an ESQL FILTER MODULE.

use std::sync::Arc;

use sluice_esql::runtime::{Module, ModuleKind, RunOptions};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
    terminals,
};
use sluice_tree::xpath::{XPath, XPathContext, XPathError};

use super::EsqlProps;
use sluice_nodes_core::terminals::{FAILURE_DOC, In};

terminals! {
    /// Filter's outputs.
    pub enum FilterOutput {
        Failure = "failure": FAILURE_DOC,
        Unknown = "unknown": "The condition is unknown (NULL).",
        False = "false": "The condition is false.",
        True = "true": "The condition is true.",
    }
}

properties! {
    /// Filter's properties.
    pub struct FilterProps {
        /// An XPath 1.0 expression, for example `$Body/Parent/First = '1'`. Give this or
        /// `module`.
        expression: Option<String>,
        /// An ESQL FILTER MODULE whose Main returns BOOLEAN. Give this or `expression`.
        module: Option<String>,
        ..esql: EsqlProps,
    }
}

pub static FILTER: NodeSpec = NodeSpec {
    type_name: "Filter",
    summary: "Evaluates a condition — an XPath `expression` or an ESQL FILTER `module` — and propagates the \
              message unchanged to `true`, `false` or `unknown`.",
    inputs: In::SPECS,
    outputs: FilterOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "An XPath expression sends a large order to `true`",
            properties: "expression: '$Body/order/amount > 1000'",
            esql: "",
            input: ExampleInput::xml("<order><amount>1500</amount></order>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[(
                "true",
                "<order><amount>1500</amount></order>",
            )]),
            runs: Runs::Yes,
        },
        NodeExample {
            title: "An ESQL FILTER module sends an order that is not urgent to `false`",
            properties: "module: IsUrgent",
            esql: "CREATE FILTER MODULE IsUrgent
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		RETURN Body.order.priority = 'urgent';
	END;
END MODULE;",
            input: ExampleInput::xml("<order><priority>normal</priority></order>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[(
                "false",
                "<order><priority>normal</priority></order>",
            )]),
            runs: Runs::Yes,
        },
    ],
    builder: NodeBuilder::of::<FilterProps>(),
};

impl BuildNode for FilterProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let condition = match (self.expression.as_deref(), self.module.as_deref()) {
            (Some(src), None) => {
                let xpath = XPath::compile(src)
                    .map_err(|e| ConfigError::property("expression", format!("{e} in `{src}`")))?;
                Condition::XPath {
                    xpath,
                    src: src.to_string(),
                }
            }
            (None, Some(name)) => {
                let module = super::program::module(b, name, ModuleKind::Filter)?;
                let options = super::compute::run_options(&self.esql, b, &module)?;
                Condition::Esql {
                    module,
                    options,
                    transaction: self.esql.transaction,
                }
            }
            (Some(_), Some(_)) => {
                return Err(ConfigError::node(
                    "a Filter takes `expression` or `module`, not both",
                ));
            }
            (None, None) => {
                return Err(ConfigError::node(
                    "a Filter needs `expression` (XPath) or `module` (ESQL)",
                )
                .with_hint("for example `expression: \"$Body/Order/Qty > 2\"`"));
            }
        };
        Ok(NodeImpl::Process(Arc::new(Filter { condition })))
    }
}

enum Condition {
    XPath {
        xpath: XPath,
        src: String,
    },
    Esql {
        module: Module,
        options: RunOptions,
        transaction: super::host::Transaction,
    },
}

struct Filter {
    condition: Condition,
}

fn xpath_failed(e: XPathError, src: &str) -> NodeError {
    match e {
        XPathError::Tree(t) => NodeError::from(t),
        other => NodeError::recoverable(format!("evaluating `{src}`: {other}")),
    }
}

impl Node for Filter {
    fn reads_context(&self) -> bool {
        matches!(&self.condition, Condition::Esql { module, .. } if module.reads_context())
    }

    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let result = match &self.condition {
            Condition::XPath { xpath, src } => {
                let mut xc = XPathContext::new(msg, &mut ctx.inv.environment);
                Some(
                    xpath
                        .evaluate_bool(&mut xc)
                        .map_err(|e| xpath_failed(e, src))?,
                )
            }
            Condition::Esql {
                module,
                options,
                transaction,
            } => super::database::run_condition(module, options, *transaction, ctx, msg)?,
        };
        let t = match result {
            Some(true) => FilterOutput::True,
            Some(false) => FilterOutput::False,
            None => FilterOutput::Unknown,
        };
        ctx.propagate(t, msg)
    }
}
