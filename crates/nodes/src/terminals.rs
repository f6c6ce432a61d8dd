//! Terminals many node types share.

use sluice_node_api::TerminalSpec;

pub const IN: TerminalSpec = TerminalSpec {
    name: "in",
    doc: "The message to process.",
};
pub const OUT: TerminalSpec = TerminalSpec {
    name: "out",
    doc: "The message after processing.",
};
pub const FAILURE: TerminalSpec = TerminalSpec {
    name: "failure",
    doc: "Receives the input message and the ExceptionList when this node raises an exception.",
};
pub const CATCH: TerminalSpec = TerminalSpec {
    name: "catch",
    doc: "Receives the message and the ExceptionList when an exception comes back from downstream.",
};
pub const TRY: TerminalSpec = TerminalSpec {
    name: "try",
    doc: "The message is propagated here first.",
};
