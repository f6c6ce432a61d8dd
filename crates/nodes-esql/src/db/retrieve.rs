//! DatabaseRetrieve: looks a row up with a SELECT built from its properties and writes its
//! column values into the message (the product's data element table); no row sends the
//! message to `key_not_found` unchanged.

use std::sync::Arc;

use sluice_db::Datasource;
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, StringMap, Terminal, Terminals,
    properties, terminals,
};
use sluice_nodes_core::terminals::{FAILURE_DOC, In, OUT_DOC};

use super::query::{OwnedRow, Query, check_identifier, fetch_in_flow, tree_value};
use super::target::{ElementPath, nth_child, set, walk};

terminals! {
    /// DatabaseRetrieve's outputs.
    pub enum DatabaseRetrieveOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": OUT_DOC,
        KeyNotFound = "key_not_found": "The query found no row: the message, unchanged.",
    }
}

properties! {
    /// DatabaseRetrieve's properties.
    pub struct DatabaseRetrieveProps {
        /// The database: a datasource named in sluice.yaml's `datasources`, else an SQLite
        /// file (relative to the project) or `:memory:`.
        datasource: String,
        /// The table (or view) to read, `name` or `schema.name`.
        table: String,
        /// The WHERE conditions (the product's query elements), ANDed: `column` or
        /// `column OP` (`=`, `<>`, `<`, `<=`, `>`, `>=`, `like`, `is null`, `is not null`)
        /// → an XPath 1.0 expression over the message assembly giving the value, such as
        /// `$Body/order/customer` or `'EU'`.
        query_elements: StringMap = "{}",
        /// Columns to sort the rows by, each optionally followed by `asc` or `desc`.
        order_by: Vec<String> = "[]",
        /// Column → message element path (the product's data element table):
        /// `$Body/…`, `$Root/…`, `$LocalEnvironment/…` or `$Environment/…`; missing elements
        /// are created, present ones overwritten.
        data_elements: StringMap,
        /// Use every row the query returns, not only the first: each row fills its own repeat
        /// of the deepest element the data element paths share (with one data element, the
        /// element itself).
        multiple_rows: bool = "false",
    }
}

pub static DATABASE_RETRIEVE: NodeSpec = NodeSpec {
    type_name: "DatabaseRetrieve",
    summary: "Looks up rows with a SELECT built from `table`, `query_elements` (values from XPath over the \
              message) and `order_by`, and writes the columns of `data_elements` into the message; to \
              `key_not_found` when no row matches.",
    inputs: In::SPECS,
    outputs: DatabaseRetrieveOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "The customer's name and tier are added to the order from the CUSTOMERS table",
        properties: "datasource: SAMPLES, table: customers, query_elements: { id: '$Body/order/customer' }, \
                     data_elements: { name: '$Body/order/name', tier: '$Body/order/tier' }",
        esql: "",
        input: ExampleInput::xml("<order><customer>42</customer></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[(
            "out",
            "<order><customer>42</customer><name>Ada</name><tier>2</tier></order>",
        )]),
        runs: Runs::No("it needs a database with a customers table."),
    }],
    builder: NodeBuilder::of::<DatabaseRetrieveProps>(),
};

impl BuildNode for DatabaseRetrieveProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let mut columns = Vec::new();
        let mut targets = Vec::new();
        for (column, path) in &self.data_elements {
            check_identifier("data_elements", column)?;
            columns.push(column.clone());
            targets.push(ElementPath::parse("data_elements", path)?);
        }
        if targets.is_empty() {
            return Err(ConfigError::property(
                "data_elements",
                "name at least one column and the message element it goes to",
            ));
        }
        let query = Query::build(&self.table, &columns, &self.query_elements, &self.order_by)?;
        let repeat = if self.multiple_rows {
            Some(shared_depth(&targets)?)
        } else {
            None
        };
        let db = crate::program::database(b, Some(&self.datasource))?
            .ok_or_else(|| ConfigError::property("datasource", "a datasource is required"))?;
        Ok(NodeImpl::Process(Arc::new(DatabaseRetrieve {
            db,
            query,
            targets,
            repeat,
        })))
    }
}

/// How many steps all `targets` share (and start in the same tree): the element at that depth
/// repeats per row.
fn shared_depth(targets: &[ElementPath]) -> Result<usize, ConfigError> {
    let first = &targets[0];
    let mut depth = first.steps.len();
    for t in &targets[1..] {
        if t.start != first.start {
            depth = 0;
            break;
        }
        depth = depth.min(
            first
                .steps
                .iter()
                .zip(&t.steps)
                .take_while(|(a, b)| a == b)
                .count(),
        );
    }
    // With several columns the shared element is a parent: the columns' own elements differ.
    if targets.len() > 1 && targets.iter().any(|t| t.steps.len() == depth) {
        depth = depth.saturating_sub(1);
    }
    if depth == 0 {
        return Err(ConfigError::property(
            "multiple_rows",
            "with multiple rows the data element paths must share an element to repeat per row",
        )
        .with_hint("for example $Body/order/item/name and $Body/order/item/price repeat item"));
    }
    Ok(depth)
}

struct DatabaseRetrieve {
    db: Arc<Datasource>,
    query: Query,
    /// Where each selected column goes, in select order.
    targets: Vec<ElementPath>,
    /// With `multiple_rows`: the depth of the element that repeats per row.
    repeat: Option<usize>,
}

impl DatabaseRetrieve {
    fn write(
        &self,
        msg: &mut Message,
        environment: &mut sluice_node_api::Tree,
        rows: &[OwnedRow],
    ) -> Result<(), NodeError> {
        for (i, row) in rows.iter().enumerate() {
            for (target, value) in self.targets.iter().zip(&row.values) {
                let (tree, start) = target.start_at(msg, environment)?;
                let at = match self.repeat {
                    None => walk(tree, start, &target.steps)?,
                    Some(depth) => {
                        let parent = walk(tree, start, &target.steps[..depth - 1])?;
                        let repeated = nth_child(tree, parent, &target.steps[depth - 1], i)?;
                        walk(tree, repeated, &target.steps[depth..])?
                    }
                };
                let v = tree_value(tree, value.as_ref());
                set(tree, at, v);
            }
        }
        Ok(())
    }
}

impl Node for DatabaseRetrieve {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let params = self.query.parameters(msg, &mut ctx.inv.environment)?;
        let limit = if self.repeat.is_some() { usize::MAX } else { 1 };
        let rows = fetch_in_flow(ctx, &self.db, &self.query.sql, &params, limit)?;
        if rows.is_empty() {
            return ctx.propagate(DatabaseRetrieveOutput::KeyNotFound, msg);
        }
        // The input message is the upstream node's: the changes go on a copy.
        let mut out = msg.clone();
        self.write(&mut out, &mut ctx.inv.environment, &rows)?;
        ctx.propagate(DatabaseRetrieveOutput::Out, &mut out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(src: &[&str]) -> Vec<ElementPath> {
        src.iter()
            .map(|s| ElementPath::parse("data_elements", s).expect("path"))
            .collect()
    }

    #[test]
    fn shared_depth_repeats_the_common_parent_when_columns_are_siblings() {
        let t = paths(&["$Body/order/item/name", "$Body/order/item/price"]);
        assert_eq!(shared_depth(&t).expect("depth"), 2);
    }

    #[test]
    fn shared_depth_repeats_the_element_itself_when_there_is_one_column() {
        let t = paths(&["$Body/order/names/name"]);
        assert_eq!(shared_depth(&t).expect("depth"), 3);
    }

    #[test]
    fn shared_depth_fails_when_the_paths_share_nothing() {
        let t = paths(&["$Body/a", "$LocalEnvironment/b"]);
        assert!(shared_depth(&t).is_err());
    }
}
