//! Database: runs an ESQL DATABASE MODULE against the node's database; TRUE sends the message
//! on unchanged.

use std::sync::Arc;

use sluice_esql::runtime::{Module, ModuleKind, RunOptions};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, Tree,
    properties,
};

use super::EsqlProps;
use super::host::{CtxHost, Transaction};
use sluice_nodes_core::terminals::{FailureOut, In};

properties! {
    /// Database's properties.
    pub struct DatabaseProps {
        /// The DATABASE MODULE to run, `Name` or `schema.Name`.
        module: String,
        ..esql: EsqlProps,
    }
}

pub static DATABASE: NodeSpec = NodeSpec {
    type_name: "Database",
    summary: "Runs an ESQL DATABASE MODULE (INSERT, UPDATE, DELETE FROM, SELECT and PASSTHRU on `Database.…`); \
              when Main returns TRUE the message goes to `out` unchanged.",
    inputs: In::SPECS,
    outputs: FailureOut::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "A DATABASE module records the order, which then goes on unchanged",
        properties: "module: RecordOrder, datasource: ':memory:'",
        esql: "CREATE DATABASE MODULE RecordOrder
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		PASSTHRU('CREATE TABLE IF NOT EXISTS orders(id TEXT, amount INTEGER)');
		INSERT INTO Database.orders(id, amount) VALUES(Body.order.id, Body.order.amount);
		RETURN TRUE;
	END;
END MODULE;",
        input: ExampleInput::xml("<order><id>7</id><amount>1500</amount></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[(
            "out",
            "<order><id>7</id><amount>1500</amount></order>",
        )]),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<DatabaseProps>(),
};

impl BuildNode for DatabaseProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let module = super::program::module(b, &self.module, ModuleKind::Database)?;
        let options = super::compute::run_options(&self.esql, b, &module)?;
        if options.database.is_none() {
            return Err(ConfigError::property(
                "datasource",
                "a Database node needs a datasource",
            ));
        }
        Ok(NodeImpl::Process(Arc::new(Database {
            module,
            options,
            transaction: self.esql.transaction,
        })))
    }
}

struct Database {
    module: Module,
    options: RunOptions,
    transaction: Transaction,
}

impl Node for Database {
    fn reads_context(&self) -> bool {
        self.module.reads_context()
    }

    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let r = run_condition(&self.module, &self.options, self.transaction, ctx, msg)?;
        if r == Some(true) {
            ctx.propagate(FailureOut::Out, msg)?;
        }
        Ok(())
    }
}

/// Run a module whose Main returns a BOOLEAN over the message itself.
pub(super) fn run_condition(
    module: &Module,
    options: &RunOptions,
    transaction: Transaction,
    ctx: &mut Ctx<'_>,
    msg: &mut Message,
) -> Result<Option<bool>, NodeError> {
    let mut env = std::mem::replace(&mut ctx.inv.environment, Tree::new("Environment"));
    let outcome = {
        let mut host = CtxHost::new(ctx, transaction);
        let r = module.run(msg, &mut env, &mut host, options);
        let ok = r.is_ok();
        r.and_then(|o| host.finish(ok).map(|_| o))
    };
    ctx.inv.environment = env;
    Ok(outcome?.result)
}
