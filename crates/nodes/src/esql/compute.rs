//! Compute: runs an ESQL COMPUTE MODULE that builds a new message from its input.

use std::sync::Arc;

use sluice_esql::runtime::{ComputeMode, Module, ModuleKind, RunOptions, ScalarValue};
use sluice_node_api::{
    BuildContext, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node, NodeConfig,
    NodeError, NodeExample, NodeImpl, NodeSpec, PropKind, PropSpec, Runs, Terminal, TerminalSpec,
    Tree,
};

use super::host::{CtxHost, Transaction};
use crate::terminals::{FAILURE, IN, OUT};

const MODES: &[&str] = &[
    "message",
    "local_environment",
    "exception",
    "message_local_environment",
    "message_exception",
    "local_environment_exception",
    "all",
];

pub static COMPUTE: NodeSpec = NodeSpec {
    type_name: "Compute",
    summary: "Runs an ESQL COMPUTE MODULE: its Main builds OutputRoot (and, per the compute mode, the output \
              LocalEnvironment and ExceptionList) and, when it returns TRUE, the result goes to `out`. PROPAGATE \
              sends messages to `out1`…`out4` or a Label.",
    inputs: &[IN],
    outputs: &[
        FAILURE,
        OUT,
        TerminalSpec {
            name: "out1",
            doc: "PROPAGATE TO TERMINAL 'out1'.",
        },
        TerminalSpec {
            name: "out2",
            doc: "PROPAGATE TO TERMINAL 'out2'.",
        },
        TerminalSpec {
            name: "out3",
            doc: "PROPAGATE TO TERMINAL 'out3'.",
        },
        TerminalSpec {
            name: "out4",
            doc: "PROPAGATE TO TERMINAL 'out4'.",
        },
    ],
    dynamic_outputs: false,
    properties: &[
        PropSpec {
            name: "module",
            kind: PropKind::String,
            default: None,
            required: true,
            doc: "The COMPUTE MODULE to run, `Name` or `schema.Name`, from the project's `esql/*.esql` files.",
        },
        PropSpec {
            name: "compute_mode",
            kind: PropKind::Enum(MODES),
            default: Some("message"),
            required: false,
            doc: "Which output trees the module builds and propagates; the others pass through from the input.",
        },
        super::USER_PROPERTIES,
        super::DATASOURCE,
        super::TRANSACTION,
    ],
    examples: &[NodeExample {
        title: "A COMPUTE module builds a confirmation from the order",
        properties: "module: Confirm",
        esql: "CREATE COMPUTE MODULE Confirm
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot.Properties = InputRoot.Properties;
		SET OutputRoot.XMLNSC.confirmation.order = InputRoot.XMLNSC.order.id;
		SET OutputRoot.XMLNSC.confirmation.status = 'accepted';
		RETURN TRUE;
	END;
END MODULE;",
        input: ExampleInput::xml("<order><id>7</id><amount>1500</amount></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[(
            "out",
            "<confirmation><order>7</order><status>accepted</status></confirmation>",
        )]),
        runs: Runs::Yes,
    }],
    build: build_compute,
};

/// The run options every ESQL node builds from `user_properties` and `datasource`.
pub(super) fn run_options(
    c: &NodeConfig,
    b: &BuildContext,
    module: &Module,
) -> Result<RunOptions, ConfigError> {
    let externals = module.externals();
    let mut values = Vec::new();
    for (k, v) in c.map("user_properties") {
        if !externals.iter().any(|e| e == k) {
            return Err(ConfigError::property(
                "user_properties",
                format!(
                    "module `{}` declares no EXTERNAL variable `{k}`",
                    module.name()
                ),
            )
            .with_hint(if externals.is_empty() {
                "declare it in the module: DECLARE name EXTERNAL CHARACTER 'default';".to_string()
            } else {
                format!("its EXTERNAL variables: {}", externals.join(", "))
            }));
        }
        values.push((k.clone(), ScalarValue::from_text(v)));
    }
    Ok(RunOptions {
        mode: ComputeMode::default(),
        externals: values,
        database: super::program::database(b, c.opt_str("datasource"))?,
    })
}

/// The node's `transaction` property.
pub(super) fn transaction(c: &NodeConfig) -> Result<Transaction, ConfigError> {
    Transaction::parse(c.opt_str("transaction").unwrap_or("automatic"))
        .ok_or_else(|| ConfigError::property("transaction", "expected `automatic` or `commit`"))
}

fn build_compute(c: &NodeConfig, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
    let module = super::program::module(b, c.str("module"), ModuleKind::Compute)?;
    let mut options = run_options(c, b, &module)?;
    options.mode = ComputeMode::parse(c.str("compute_mode"))
        .ok_or_else(|| ConfigError::property("compute_mode", "unknown compute mode"))?;
    let transaction = transaction(c)?;
    Ok(NodeImpl::Process(Arc::new(Compute {
        module,
        options,
        transaction,
    })))
}

struct Compute {
    module: Module,
    options: RunOptions,
    transaction: Transaction,
}

impl Node for Compute {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let mut env = std::mem::replace(&mut ctx.inv.environment, Tree::new("Environment"));
        let outcome = {
            let mut host = CtxHost::new(ctx, COMPUTE.outputs, self.transaction);
            let r = self.module.run(msg, &mut env, &mut host, &self.options);
            let ok = r.is_ok();
            r.and_then(|o| host.finish(ok).map(|_| o))
        };
        ctx.inv.environment = env;
        let outcome = outcome?;
        if outcome.result == Some(true)
            && let Some(mut out) = outcome.output
        {
            ctx.propagate(Terminal(1), &mut out)?;
        }
        Ok(())
    }
}
