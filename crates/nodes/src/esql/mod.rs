//! ESQL nodes: Compute (builds a new message), Filter (ESQL or XPath condition) and Database
//! (ESQL with a database). Every `*.esql` file under the project's `esql/` folder is compiled
//! once per project and shared by the nodes that name its modules.

// `NodeError` is the node API's error type, returned by value across the whole workspace.

mod compute;
mod database;
mod filter;
mod host;
mod program;

pub use compute::COMPUTE;
pub use database::DATABASE;
pub use filter::FILTER;
pub use program::esql_files;

use sluice_node_api::NodeSpec;

pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    for s in [&COMPUTE, &FILTER, &DATABASE] {
        r(s);
    }
}

#[cfg(test)]
mod tests;

/// `user_properties`: the values of a module's `DECLARE … EXTERNAL` variables.
const USER_PROPERTIES: sluice_node_api::PropSpec = sluice_node_api::PropSpec {
    name: "user_properties",
    kind: sluice_node_api::PropKind::StringMap,
    default: None,
    required: false,
    doc: "Values of the module's `DECLARE … EXTERNAL` variables.",
};

/// `transaction`: when the node's database work commits.
const TRANSACTION: sluice_node_api::PropSpec = sluice_node_api::PropSpec {
    name: "transaction",
    kind: sluice_node_api::PropKind::Enum(&["automatic", "commit"]),
    default: Some("automatic"),
    required: false,
    doc: "When the node's database work commits: `automatic` with the flow's unit of work (committed when the \
          flow completes, rolled back when it fails), `commit` at the end of this node whatever happens after.",
};

/// `datasource`: the database of the `Database` correlation name.
const DATASOURCE: sluice_node_api::PropSpec = sluice_node_api::PropSpec {
    name: "datasource",
    kind: sluice_node_api::PropKind::String,
    default: None,
    required: false,
    doc: "An SQLite database file (relative to the project) or `:memory:`, for the Database correlation name.",
};
