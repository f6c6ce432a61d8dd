//! Test support for flows and node types: a harness that injects messages and captures what
//! reaches each output, a readable dump of the message tree, masking of values that vary from
//! run to run, a line diff, expected-output files that can be re-blessed, and the compliance
//! checks every node type passes, its examples among them.
//!
//! A crate of its own, used only as a dev-dependency, so that none of it is in the server: the
//! golden-flow runner and the node compliance test are integration tests of other crates.

pub mod compliance;
pub mod diff;
pub mod dump;
pub mod examples;
pub mod expected;
pub mod harness;
pub mod kafka;
pub mod mask;
pub mod postgres;
pub mod tool;

pub use compliance::{
    ComplianceCase, ComplianceEnv, Failing, FailingCase, MakeMessage, MessageError, SerializeBody,
    check_node,
};
pub use diff::line_diff;
pub use dump::{DumpOptions, dump_message, dump_tree};
pub use examples::check_examples;
pub use expected::{ExpectedError, bless_requested, check_outputs};
pub use harness::{CAPTURE, Captured, Harness, INJECT};
pub use kafka::KafkaServer;
pub use mask::Masker;
pub use postgres::PgServer;
pub use tool::require_tool;
