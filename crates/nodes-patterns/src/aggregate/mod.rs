//! Aggregation, as the product defines it: AggregateControl starts an aggregation and records
//! it, AggregateRequest records each request sent for it (after the MQOutput that sent it),
//! AggregateReply takes the replies — matched by their CorrelId to the requests' MsgIds — and
//! propagates one combined message, `Root.ComIbmAggregateReplyBody.<folder>` per reply, when
//! the last one arrived, or what arrived when the aggregation's timeout passes.

mod control;
mod reply;
mod request;

pub use control::{AGGREGATE_CONTROL, AggregateControlProps};
pub use reply::{AGGREGATE_REPLY, AggregateReplyOutput, AggregateReplyProps};
pub use request::{AGGREGATE_REQUEST, AggregateRequestProps};

/// The LocalEnvironment folder AggregateControl writes and AggregateRequest reads (the
/// product's name; flows must pass it on unchanged).
pub const CONTROL_FOLDER: &str = "ComIbmAggregateControlNode";

/// The body folder of the combined reply.
pub const REPLY_BODY: &str = "ComIbmAggregateReplyBody";
