//! ESQL nodes: Compute (builds a new message), Filter (ESQL or XPath condition) and Database
//! (ESQL with a database); and the database nodes that need no ESQL (DatabaseRetrieve,
//! DatabaseRoute, DatabaseInput), which share the ESQL nodes' datasources and transactions. Every `*.esql` file under the project's `esql/` folder is compiled
//! once per project and shared by the nodes that name its modules.

// `NodeError` is the node API's error type, returned by value across the whole workspace.

mod compute;
mod database;
mod db;
mod filter;
mod host;
mod program;
mod work;

pub use compute::COMPUTE;
pub use database::DATABASE;
pub use db::{DATABASE_INPUT, DATABASE_RETRIEVE, DATABASE_ROUTE};
pub use filter::FILTER;

use sluice_node_api::NodeSpec;

pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    for s in [
        &COMPUTE,
        &FILTER,
        &DATABASE,
        &DATABASE_RETRIEVE,
        &DATABASE_ROUTE,
        &DATABASE_INPUT,
    ] {
        r(s);
    }
}

#[cfg(test)]
mod tests;

use sluice_node_api::{StringMap, properties, property_enum};

property_enum! {
    /// When an ESQL node's database work commits.
    pub enum Transaction {
        /// With the flow: committed when the invocation completes, rolled back when it fails.
        Automatic = "automatic",
        /// At the end of the node, whatever happens to the flow afterwards.
        Commit = "commit",
    }
}

properties! {
    /// What every ESQL node takes besides its module.
    pub struct EsqlProps {
        /// Values of the module's `DECLARE … EXTERNAL` variables.
        user_properties: StringMap = "{}",
        /// The database of the Database correlation name: a datasource named in sluice.yaml's
        /// `datasources`, else an SQLite file (relative to the project) or `:memory:`.
        datasource: Option<String>,
        /// When the node's database work commits: `automatic` with the flow's unit of work
        /// (committed when the flow completes, rolled back when it fails), `commit` at the end of
        /// this node whatever happens after.
        transaction: Transaction = "automatic",
        /// A database error throws an exception (the flow goes to failure or catch); when false
        /// the statement ends with SQLCODE, SQLSTATE, SQLNATIVEERROR and SQLERRORTEXT set and
        /// the module goes on to read them.
        throw_exception_on_database_error: bool = "true",
        /// A warning the database gives with a statement (PostgreSQL's WARNING) is taken as an
        /// error; when false it only sets SQLSTATE and SQLERRORTEXT.
        treat_warnings_as_errors: bool = "false",
    }
}
