//! Terminals many node types share: their docs, and the sets that recur.

use sluice_node_api::{InstanceRunner, Invocation, Message, NodeError, terminals};

pub const IN_DOC: &str = "The message to process.";
pub const OUT_DOC: &str = "The message after processing.";
pub const FAILURE_DOC: &str =
    "Receives the input message and the ExceptionList when this node raises an exception.";
pub const CATCH_DOC: &str =
    "Receives the message and the ExceptionList when an exception comes back from downstream.";

terminals! {
    /// The one input terminal of most node types.
    pub enum In {
        In = "in": IN_DOC,
    }
}

terminals! {
    /// A single output.
    pub enum OutOnly {
        Out = "out": OUT_DOC,
    }
}

terminals! {
    /// A node that can fail, and otherwise goes on.
    pub enum FailureOut {
        Failure = "failure": FAILURE_DOC,
        Out = "out": OUT_DOC,
    }
}

terminals! {
    /// An input node's outputs.
    pub enum InputOutputs {
        Failure = "failure": FAILURE_DOC,
        Out = "out": OUT_DOC,
        Catch = "catch": CATCH_DOC,
    }
}

/// An input node's own failure (not one from downstream), named after the node: to its
/// `failure` terminal with the exception in the ExceptionList when that is wired, else the
/// error, which the node's transport then handles (backout, redelivery).
pub fn own_failure(
    runner: &mut dyn InstanceRunner,
    inv: &mut Invocation,
    msg: &mut Message,
    mut e: NodeError,
    label: &str,
    node_type: &str,
) -> Result<(), NodeError> {
    e.exception.label = label.to_string();
    e.exception.node_type = node_type.to_string();
    if !runner.is_wired(InputOutputs::Failure.into()) {
        return Err(e);
    }
    e.exception
        .write_to(&mut msg.exception_list)
        .map_err(NodeError::from)
        .and_then(|_| runner.invoke(inv, InputOutputs::Failure.into(), msg))
}

/// Propagate an input node's message to `out`; an exception from downstream goes to `catch`
/// with the exception in the ExceptionList when that is wired, else back as the error.
pub fn propagate_out(
    runner: &mut dyn InstanceRunner,
    inv: &mut Invocation,
    msg: &mut Message,
) -> Result<(), NodeError> {
    match runner.invoke(inv, InputOutputs::Out.into(), msg) {
        Err(e) if runner.is_wired(InputOutputs::Catch.into()) => e
            .exception
            .write_to(&mut msg.exception_list)
            .map_err(NodeError::from)
            .and_then(|_| runner.invoke(inv, InputOutputs::Catch.into(), msg)),
        r => r,
    }
}

/// End an input node's unit of work after the flow's `result`: commit what it did when it
/// succeeded (a failed commit is the error), roll it back when it failed.
pub fn end_unit_of_work(
    inv: &mut Invocation,
    result: Result<(), NodeError>,
) -> Result<(), NodeError> {
    match result {
        Ok(()) => inv
            .unit_of_work
            .commit()
            .map_err(|e| NodeError::recoverable(e.to_string())),
        Err(e) => {
            inv.unit_of_work.rollback();
            Err(e)
        }
    }
}
