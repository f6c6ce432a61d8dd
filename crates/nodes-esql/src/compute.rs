//! Compute: runs an ESQL COMPUTE MODULE that builds a new message from its input.

use std::sync::Arc;

use sluice_esql::runtime::broker::BrokerAttributes;
use sluice_esql::runtime::{ComputeMode, Module, ModuleKind, RunOptions, ScalarValue};
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, Tree,
    properties, property_enum, terminals,
};

use super::EsqlProps;
use super::host::{CtxHost, Transaction};
use sluice_nodes_core::terminals::{FAILURE_DOC, In, OUT_DOC};

terminals! {
    /// Compute's outputs.
    pub enum ComputeOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": OUT_DOC,
        Out1 = "out1": "PROPAGATE TO TERMINAL 'out1'.",
        Out2 = "out2": "PROPAGATE TO TERMINAL 'out2'.",
        Out3 = "out3": "PROPAGATE TO TERMINAL 'out3'.",
        Out4 = "out4": "PROPAGATE TO TERMINAL 'out4'.",
    }
}

property_enum! {
    /// Which output trees a Compute module builds (the product's compute mode).
    pub enum ComputeModeProperty {
        Message = "message",
        LocalEnvironment = "local_environment",
        Exception = "exception",
        MessageLocalEnvironment = "message_local_environment",
        MessageException = "message_exception",
        LocalEnvironmentException = "local_environment_exception",
        All = "all",
    }
}

properties! {
    /// Compute's properties.
    pub struct ComputeProps {
        /// The COMPUTE MODULE to run, `Name` or `schema.Name`, from the project's
        /// `esql/*.esql` files.
        module: String,
        /// Which output trees the module builds and propagates; the others pass through from
        /// the input.
        compute_mode: ComputeModeProperty = "message",
        ..esql: EsqlProps,
    }
}

pub static COMPUTE: NodeSpec = NodeSpec {
    type_name: "Compute",
    summary: "Runs an ESQL COMPUTE MODULE: its Main builds OutputRoot (and, per the compute mode, the output \
              LocalEnvironment and ExceptionList) and, when it returns TRUE, the result goes to `out`. PROPAGATE \
              sends messages to `out1`…`out4` or a Label.",
    inputs: In::SPECS,
    outputs: ComputeOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
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
    builder: NodeBuilder::of::<ComputeProps>(),
};

/// The run options every ESQL node builds from `user_properties` and `datasource`.
pub(super) fn run_options(
    c: &EsqlProps,
    b: &BuildContext,
    module: &Module,
) -> Result<RunOptions, ConfigError> {
    let externals = module.externals();
    let mut values = Vec::new();
    for (k, v) in &c.user_properties {
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
    let project = b
        .project_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let attributes = BrokerAttributes {
        project,
        queue_manager: b.services.queues.as_ref().map(|q| q.name().to_string()),
        work_path: b
            .services
            .data_dir
            .as_ref()
            .map(|d| d.display().to_string()),
        flow: Some(b.flow.to_string()),
        library: None,
        node_label: Some(b.label.to_string()),
        node_type: Some(
            match module.kind() {
                ModuleKind::Compute => "Compute",
                ModuleKind::Filter => "Filter",
                ModuleKind::Database => "Database",
            }
            .to_string(),
        ),
        data_source: c.datasource.clone(),
        transaction: Some(
            match c.transaction {
                Transaction::Automatic => "Automatic",
                Transaction::Commit => "Commit",
            }
            .to_string(),
        ),
        additional_instances: None,
    };
    Ok(RunOptions {
        mode: ComputeMode::default(),
        externals: values,
        database: super::program::database(b, c.datasource.as_deref())?,
        attributes: Arc::new(attributes),
        database_errors: sluice_esql::runtime::DatabaseErrors {
            throw: c.throw_exception_on_database_error,
            warnings_as_errors: c.treat_warnings_as_errors,
        },
        models: Arc::new(sluice_esql::runtime::MessageModels::new(b.project_dir)),
        cache: Some(Arc::clone(&b.services.cache)),
    })
}

impl BuildNode for ComputeProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let module = super::program::module(b, &self.module, ModuleKind::Compute)?;
        let mut options = run_options(&self.esql, b, &module)?;
        options.mode = ComputeMode::parse(self.compute_mode.word())
            .ok_or_else(|| ConfigError::property("compute_mode", "unknown compute mode"))?;
        Ok(NodeImpl::Process(Arc::new(Compute {
            module,
            options,
            transaction: self.esql.transaction,
        })))
    }
}

struct Compute {
    module: Module,
    options: RunOptions,
    transaction: Transaction,
}

impl Node for Compute {
    fn reads_context(&self) -> bool {
        self.module.reads_context()
    }

    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let mut env = std::mem::replace(&mut ctx.inv.environment, Tree::new("Environment"));
        let outcome = {
            let mut host = CtxHost::new(ctx, self.transaction);
            let r = self.module.run(msg, &mut env, &mut host, &self.options);
            let ok = r.is_ok();
            r.and_then(|o| host.finish(ok).map(|_| o))
        };
        ctx.inv.environment = env;
        let outcome = outcome?;
        if outcome.result == Some(true)
            && let Some(mut out) = outcome.output
        {
            ctx.propagate(ComputeOutput::Out, &mut out)?;
        }
        Ok(())
    }
}
