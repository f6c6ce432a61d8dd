//! Examples in a node type's declaration. The node reference shows them and the compliance check
//! runs them, so what the docs promise is what the node does.

/// One typical use of a node type: its properties, the message it is given, and what comes out.
#[derive(Clone, Copy, Debug)]
pub struct NodeExample {
    /// What the example shows, on one line.
    pub title: &'static str,
    /// The node's properties, as the entries of a YAML flow mapping (`queue: OUT, wait_ms: 0`).
    pub properties: &'static str,
    /// ESQL source for the modules the properties name, placed in the project's `esql/` folder;
    /// empty when the node needs none.
    pub esql: &'static str,
    pub input: ExampleInput,
    /// Output terminals whose downstream raises an exception, to show how the node handles one.
    pub raising_downstream: &'static [&'static str],
    pub outcome: ExampleOutcome,
    pub runs: Runs,
}

/// The message an example gives the node.
#[derive(Clone, Copy, Debug)]
pub struct ExampleInput {
    /// The domain the body is parsed in: `XMLNSC`, `JSON` or `BLOB`.
    pub domain: &'static str,
    pub body: &'static str,
    /// LocalEnvironment fields the node reads: a dotted path and its character value
    /// (`Destination.RouterList.DestinationData.labelName`, `big`). Folders on the path are
    /// shared between entries.
    pub local_environment: &'static [(&'static str, &'static str)],
}

impl ExampleInput {
    /// An XMLNSC message with an empty LocalEnvironment, as most examples take.
    pub const fn xml(body: &'static str) -> ExampleInput {
        ExampleInput {
            domain: "XMLNSC",
            body,
            local_environment: &[],
        }
    }
}

/// What an example expects of the node.
#[derive(Clone, Copy, Debug)]
pub enum ExampleOutcome {
    /// Everything that leaves the node, in order: the output terminal and the message body
    /// serialised in its domain.
    Propagates(&'static [(&'static str, &'static str)]),
    /// The node sends the message to the Label node whose `label_name` is `label`.
    ReachesLabel {
        label: &'static str,
        body: &'static str,
    },
    /// The node raises an exception whose text contains this.
    Raises(&'static str),
}

/// Whether the compliance check can run an example.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    Yes,
    /// Only its transport can drive the node this way; the reason is shown in the docs.
    No(&'static str),
}
