//! Filter: sends the message unchanged to `true`, `false` or `unknown`, deciding with either an
//! XPath 1.0 `expression` over the message assembly or an ESQL FILTER MODULE.

use std::sync::Arc;

use sluice_esql::runtime::{Module, ModuleKind, RunOptions};
use sluice_node_api::{
    ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node, NodeError, NodeExample,
    NodeImpl, NodeSpec, PropKind, PropSpec, Runs, Terminal, TerminalSpec,
};
use sluice_tree::xpath::{XPath, XPathContext, XPathError};

use crate::terminals::{FAILURE, IN};

pub static FILTER: NodeSpec = NodeSpec {
    type_name: "Filter",
    summary: "Evaluates a condition — an XPath `expression` or an ESQL FILTER `module` — and propagates the \
              message unchanged to `true`, `false` or `unknown`.",
    inputs: &[IN],
    outputs: &[
        FAILURE,
        TerminalSpec {
            name: "unknown",
            doc: "The condition is unknown (NULL).",
        },
        TerminalSpec {
            name: "false",
            doc: "The condition is false.",
        },
        TerminalSpec {
            name: "true",
            doc: "The condition is true.",
        },
    ],
    dynamic_outputs: false,
    properties: &[
        PropSpec {
            name: "expression",
            kind: PropKind::String,
            default: None,
            required: false,
            doc: "An XPath 1.0 expression, for example `$Body/Parent/First = '1'`. Give this or `module`.",
        },
        PropSpec {
            name: "module",
            kind: PropKind::String,
            default: None,
            required: false,
            doc: "An ESQL FILTER MODULE whose Main returns BOOLEAN. Give this or `expression`.",
        },
        super::USER_PROPERTIES,
        super::DATASOURCE,
        super::TRANSACTION,
    ],
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
    build: |c, b| {
        let condition = match (c.opt_str("expression"), c.opt_str("module")) {
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
                let options = super::compute::run_options(c, b, &module)?;
                let transaction = super::compute::transaction(c)?;
                Condition::Esql {
                    module,
                    options,
                    transaction,
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
    },
};

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
            } => super::database::run_condition(
                module,
                options,
                *transaction,
                ctx,
                msg,
                FILTER.outputs,
            )?,
        };
        let t = match result {
            Some(true) => Terminal(3),
            Some(false) => Terminal(2),
            None => Terminal(1),
        };
        ctx.propagate(t, msg)
    }
}
