//! DatabaseRoute: looks a row up with a SELECT built from its properties, puts its columns in
//! the LocalEnvironment, and routes the message with XPath filter expressions over them (and
//! the rest of the message assembly), as Route does.

use std::sync::Arc;

use sluice_db::Datasource;
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, StringMap, Terminal, Terminals,
    properties, terminals,
};
use sluice_nodes_core::routing::{DistributionMode, compile, xpath_failed};
use sluice_nodes_core::terminals::{FAILURE_DOC, In};
use sluice_tree::xpath::{XPath, XPathContext};
use sluice_tree::{Text, Value, field_type};

use super::query::{OwnedRow, Query, check_identifier, fetch_in_flow, tree_value};

/// The LocalEnvironment folder that holds the row's columns.
pub const RESULT_FOLDER: &str = "DatabaseRoute";

terminals! {
    /// DatabaseRoute's declared outputs; each filter adds one named after it.
    pub enum DatabaseRouteOutput {
        Failure = "failure": FAILURE_DOC,
        Default = "default": "A row was found but no filter expression matched.",
        KeyNotFound = "key_not_found": "The query found no row: the message, unchanged.",
    }
}

properties! {
    /// DatabaseRoute's properties.
    pub struct DatabaseRouteProps {
        /// The database: a datasource named in sluice.yaml's `datasources`, else an SQLite
        /// file (relative to the project) or `:memory:`.
        datasource: String,
        /// The table (or view) to read, `name` or `schema.name`.
        table: String,
        /// The columns to read into `$LocalEnvironment/DatabaseRoute`; all when empty.
        columns: Vec<String> = "[]",
        /// The WHERE conditions (the product's query elements), ANDed: `column` or
        /// `column OP` (`=`, `<>`, `<`, `<=`, `>`, `>=`, `like`, `is null`, `is not null`)
        /// → an XPath 1.0 expression over the message assembly giving the value.
        query_elements: StringMap = "{}",
        /// Columns to sort the rows by (the first row is used), each optionally followed by
        /// `asc` or `desc`.
        order_by: Vec<String> = "[]",
        /// Terminal name → XPath 1.0 filter expression, tried in the order written; the row's
        /// columns are `$LocalEnvironment/DatabaseRoute/COLUMN` (named as the database names
        /// them: PostgreSQL folds unquoted names to lower case).
        filter_table: StringMap,
        /// `all` propagates to every matching filter's terminal; `first` stops at the first.
        distribution_mode: DistributionMode = "all",
    }
}

pub static DATABASE_ROUTE: NodeSpec = NodeSpec {
    type_name: "DatabaseRoute",
    summary: "Looks up a row with a SELECT built from `table`, `query_elements` and `order_by`, puts its columns \
              in `$LocalEnvironment/DatabaseRoute`, and propagates to the terminal of every filter expression \
              that is true (or the first, with `distribution_mode: first`); `default` when none is, \
              `key_not_found` when no row matches.",
    inputs: In::SPECS,
    outputs: DatabaseRouteOutput::SPECS,
    dynamic_outputs: true,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "The customer's region, read from the database, picks the terminal",
        properties: "datasource: SAMPLES, table: customers, query_elements: { id: '$Body/order/customer' }, \
                     filter_table: { europe: \"$LocalEnvironment/DatabaseRoute/region = 'EU'\", \
                     americas: \"$LocalEnvironment/DatabaseRoute/region = 'US'\" }",
        esql: "",
        input: ExampleInput::xml("<order><customer>42</customer></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[(
            "europe",
            "<order><customer>42</customer></order>",
        )]),
        runs: Runs::No("it needs a database with a customers table."),
    }],
    builder: NodeBuilder::of::<DatabaseRouteProps>(),
};

impl BuildNode for DatabaseRouteProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        for c in &self.columns {
            check_identifier("columns", c)?;
        }
        let query = Query::build(
            &self.table,
            &self.columns,
            &self.query_elements,
            &self.order_by,
        )?;
        let mut filters = Vec::new();
        for (name, src) in &self.filter_table {
            if DatabaseRouteOutput::SPECS.iter().any(|t| t.name == name) {
                return Err(ConfigError::property(
                    "filter_table",
                    format!("a filter cannot be named `{name}`"),
                ));
            }
            filters.push(Filter {
                xpath: compile("filter_table", src)?,
                src: src.clone(),
                terminal: b.output(name),
            });
        }
        if let Some(extra) = b
            .named_outputs(DatabaseRouteOutput::SPECS.len())
            .find(|o| !self.filter_table.iter().any(|(n, _)| n == o))
        {
            return Err(ConfigError::property(
                "filter_table",
                format!("terminal `{extra}` is wired but has no filter expression"),
            )
            .with_hint(format!(
                "add `{extra}: <XPath expression>` to `filter_table`"
            )));
        }
        let db = crate::program::database(b, Some(&self.datasource))?
            .ok_or_else(|| ConfigError::property("datasource", "a datasource is required"))?;
        Ok(NodeImpl::Process(Arc::new(DatabaseRoute {
            db,
            query,
            filters,
            first_only: self.distribution_mode == DistributionMode::First,
        })))
    }
}

struct Filter {
    xpath: XPath,
    src: String,
    /// `None` when the filter's terminal is not wired: a match then propagates nowhere.
    terminal: Option<Terminal>,
}

struct DatabaseRoute {
    db: Arc<Datasource>,
    query: Query,
    filters: Vec<Filter>,
    first_only: bool,
}

/// Replace `$LocalEnvironment/DatabaseRoute` with the row's columns.
fn write_row(msg: &mut Message, row: &OwnedRow) -> Result<(), NodeError> {
    let t = &mut msg.local_environment;
    let r = t.root();
    while let Some(old) = t.child_named(r, None, RESULT_FOLDER.as_bytes(), 0)? {
        t.delete(old)?;
    }
    let folder = t.create_last_child(
        r,
        field_type::NAME,
        Text::from_static(RESULT_FOLDER),
        Value::Null,
    )?;
    for (column, value) in row.columns.iter().zip(&row.values) {
        let name = t.alloc_text(column.as_bytes());
        let v = tree_value(t, value.as_ref());
        t.create_last_child(folder, field_type::NAME_VALUE, name, v)?;
    }
    Ok(())
}

impl Node for DatabaseRoute {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let params = self.query.parameters(msg, &mut ctx.inv.environment)?;
        let rows = fetch_in_flow(ctx, &self.db, &self.query.sql, &params, 1)?;
        let Some(row) = rows.first() else {
            return ctx.propagate(DatabaseRouteOutput::KeyNotFound, msg);
        };
        // The input message is the upstream node's: the row goes into a copy.
        let mut out = msg.clone();
        write_row(&mut out, row)?;
        let mut matched = false;
        for f in &self.filters {
            let hit = {
                let mut xc = XPathContext::new(&mut out, &mut ctx.inv.environment);
                f.xpath
                    .evaluate_bool(&mut xc)
                    .map_err(|e| xpath_failed(e, &f.src))?
            };
            if hit {
                matched = true;
                if let Some(t) = f.terminal {
                    ctx.propagate(t, &mut out)?;
                }
                if self.first_only {
                    break;
                }
            }
        }
        if !matched {
            ctx.propagate(DatabaseRouteOutput::Default, &mut out)?;
        }
        Ok(())
    }
}
