//! Broker attributes: the product's read-only properties of the server, the flow and the node
//! (`BrokerName`, `MessageFlowLabel`, `NodeLabel` …), usable wherever an expression is, also
//! as `SQL.BrokerName` when a variable of the same name hides the attribute.
//!
//! Values that hold for the whole process fold to constants when the program compiles; the
//! others come from the [`BrokerAttributes`] the node running the module gives in its
//! [`super::RunOptions`], and are NULL when the host does not know them (a test host), as the
//! product returns NULL for an attribute without a value.

use std::sync::atomic::{AtomicI64, Ordering};

use sluice_esql_scalar::Value;

/// One broker attribute, by the host value it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerAttr {
    BrokerName,
    UserId,
    ServerLabel,
    ServerName,
    QueueManagerName,
    WorkPath,
    AdditionalInstances,
    MessageFlowLabel,
    ApplicationLabel,
    LibraryLabel,
    DataSource,
    NodeLabel,
    NodeType,
    ThreadId,
    Transaction,
}

/// How Sluice gives an attribute its value.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// The same value for every node of the process.
    Constant(fn() -> Value),
    /// A value of the node that runs the module.
    Node(BrokerAttr),
}

/// An attribute of the product's list: its name, its type, what Sluice gives it.
#[derive(Debug, Clone, Copy)]
pub struct AttributeSpec {
    pub name: &'static str,
    pub ty: &'static str,
    pub source: Source,
    /// The value Sluice gives, for docs/esql-coverage.md.
    pub value: &'static str,
}

fn null() -> Value {
    Value::Null
}

fn version() -> Value {
    Value::from_text("1200")
}

fn family() -> Value {
    Value::from_text(if cfg!(windows) { "WINDOWS" } else { "UNIX" })
}

fn process_id() -> Value {
    Value::Integer(i64::from(std::process::id()))
}

fn one() -> Value {
    Value::Integer(1)
}

fn zero() -> Value {
    Value::Integer(0)
}

fn no() -> Value {
    Value::Boolean(false)
}

const fn node(
    name: &'static str,
    ty: &'static str,
    attr: BrokerAttr,
    value: &'static str,
) -> AttributeSpec {
    AttributeSpec {
        name,
        ty,
        source: Source::Node(attr),
        value,
    }
}

const fn constant(
    name: &'static str,
    ty: &'static str,
    f: fn() -> Value,
    value: &'static str,
) -> AttributeSpec {
    AttributeSpec {
        name,
        ty,
        source: Source::Constant(f),
        value,
    }
}

/// The product's broker attributes, general ones first, then the flow's, then the node's.
pub const ATTRIBUTES: &[AttributeSpec] = &[
    constant(
        "BrokerDataSource",
        "CHARACTER",
        null,
        "NULL: Sluice keeps no broker database",
    ),
    constant(
        "BrokerDataSourceUserId",
        "CHARACTER",
        null,
        "NULL: Sluice keeps no broker database",
    ),
    node(
        "BrokerName",
        "CHARACTER",
        BrokerAttr::BrokerName,
        "the project's folder name",
    ),
    node(
        "BrokerUserId",
        "CHARACTER",
        BrokerAttr::UserId,
        "the user the server runs as (`USER` or `USERNAME`)",
    ),
    constant(
        "BrokerVersion",
        "CHARACTER",
        version,
        "`'1200'`, the product level Sluice follows",
    ),
    node(
        "ExecutionGroupLabel",
        "CHARACTER",
        BrokerAttr::ServerLabel,
        "the project's folder name (a Sluice server runs one project)",
    ),
    node(
        "ExecutionGroupName",
        "CHARACTER",
        BrokerAttr::ServerName,
        "the project's folder name",
    ),
    constant(
        "Family",
        "CHARACTER",
        family,
        "`'UNIX'`, or `'WINDOWS'` on Windows",
    ),
    constant(
        "ProcessId",
        "INTEGER",
        process_id,
        "the server's process id",
    ),
    node(
        "QueueManagerName",
        "CHARACTER",
        BrokerAttr::QueueManagerName,
        "the embedded queue manager's name; NULL when the server runs none",
    ),
    node(
        "WorkPath",
        "CHARACTER",
        BrokerAttr::WorkPath,
        "the server's data folder (`--data-dir`)",
    ),
    node(
        "AdditionalInstances",
        "INTEGER",
        BrokerAttr::AdditionalInstances,
        "NULL: a node is not told its flow's instance count",
    ),
    constant(
        "CommitCount",
        "INTEGER",
        one,
        "1: every input message is its own unit of work",
    ),
    constant(
        "CommitInterval",
        "INTEGER",
        zero,
        "0: every input message is its own unit of work",
    ),
    constant(
        "CoordinatedTransaction",
        "BOOLEAN",
        no,
        "FALSE: Sluice has no XA coordination",
    ),
    node(
        "MessageFlowLabel",
        "CHARACTER",
        BrokerAttr::MessageFlowLabel,
        "the flow's name",
    ),
    node(
        "ApplicationLabel",
        "CHARACTER",
        BrokerAttr::ApplicationLabel,
        "the project's folder name",
    ),
    node(
        "LibraryLabel",
        "CHARACTER",
        BrokerAttr::LibraryLabel,
        "NULL: a Sluice flow belongs to no library",
    ),
    node(
        "DataSource",
        "CHARACTER",
        BrokerAttr::DataSource,
        "the node's `datasource`; NULL when it has none",
    ),
    constant(
        "MessageOptions",
        "INTEGER",
        zero,
        "0: nodes have no parser options of their own",
    ),
    node(
        "NodeLabel",
        "CHARACTER",
        BrokerAttr::NodeLabel,
        "the node's label (its key in the flow file)",
    ),
    node(
        "NodeType",
        "CHARACTER",
        BrokerAttr::NodeType,
        "the product's class name of the node type (`ComIbmComputeNode`)",
    ),
    node(
        "ThreadId",
        "INTEGER",
        BrokerAttr::ThreadId,
        "a number of the flow thread that runs the node, from 1",
    ),
    node(
        "Transaction",
        "CHARACTER",
        BrokerAttr::Transaction,
        "the node's `transaction`: `'Automatic'` or `'Commit'`",
    ),
    constant(
        "TreatWarningsAsErrors",
        "BOOLEAN",
        no,
        "FALSE: database warnings are not errors",
    ),
];

/// The attribute called `name` (case-sensitive, as in the product).
pub fn lookup(name: &str) -> Option<&'static AttributeSpec> {
    ATTRIBUTES.iter().find(|a| a.name == name)
}

/// What the node running a module knows of itself, for the broker attributes.
#[derive(Debug, Clone, Default)]
pub struct BrokerAttributes {
    /// The project's name: `BrokerName`, `ExecutionGroupLabel`, `ExecutionGroupName`,
    /// `ApplicationLabel`.
    pub project: Option<String>,
    pub queue_manager: Option<String>,
    pub work_path: Option<String>,
    pub flow: Option<String>,
    pub library: Option<String>,
    pub node_label: Option<String>,
    /// The node's type as a flow file names it (`Compute`).
    pub node_type: Option<String>,
    pub data_source: Option<String>,
    /// `Automatic` or `Commit`.
    pub transaction: Option<String>,
    pub additional_instances: Option<i64>,
}

fn text(v: &Option<String>) -> Value {
    v.as_deref().map_or(Value::Null, Value::from_text)
}

static NEXT_THREAD: AtomicI64 = AtomicI64::new(1);

thread_local! {
    static THREAD_ID: i64 = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
}

impl BrokerAttributes {
    /// The value of a per-node attribute.
    pub fn value(&self, attr: BrokerAttr) -> Value {
        match attr {
            BrokerAttr::BrokerName
            | BrokerAttr::ServerLabel
            | BrokerAttr::ServerName
            | BrokerAttr::ApplicationLabel => text(&self.project),
            BrokerAttr::UserId => std::env::var("USER")
                .or_else(|_| std::env::var("USERNAME"))
                .map_or(Value::Null, |u| Value::from_text(&u)),
            BrokerAttr::QueueManagerName => text(&self.queue_manager),
            BrokerAttr::WorkPath => text(&self.work_path),
            BrokerAttr::AdditionalInstances => self
                .additional_instances
                .map_or(Value::Null, Value::Integer),
            BrokerAttr::MessageFlowLabel => text(&self.flow),
            BrokerAttr::LibraryLabel => text(&self.library),
            BrokerAttr::DataSource => text(&self.data_source),
            BrokerAttr::NodeLabel => text(&self.node_label),
            BrokerAttr::NodeType => self
                .node_type
                .as_deref()
                .map_or(Value::Null, |t| Value::from_text(&format!("ComIbm{t}Node"))),
            BrokerAttr::ThreadId => Value::Integer(THREAD_ID.with(|t| *t)),
            BrokerAttr::Transaction => text(&self.transaction),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_is_case_sensitive_as_in_the_product() {
        assert!(lookup("BrokerName").is_some());
        assert!(lookup("brokername").is_none());
    }

    #[test]
    fn node_type_is_the_product_class_name_when_the_host_names_the_type() {
        let a = BrokerAttributes {
            node_type: Some("Compute".into()),
            ..Default::default()
        };
        assert_eq!(
            a.value(BrokerAttr::NodeType),
            Value::from_text("ComIbmComputeNode")
        );
        assert_eq!(
            BrokerAttributes::default().value(BrokerAttr::NodeType),
            Value::Null
        );
    }

    #[test]
    fn every_attribute_name_is_listed_once() {
        for (i, a) in ATTRIBUTES.iter().enumerate() {
            assert!(
                ATTRIBUTES[i + 1..].iter().all(|b| b.name != a.name),
                "{}",
                a.name
            );
        }
    }
}
