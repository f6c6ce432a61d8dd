//! TimeoutControl and TimeoutNotification, as the product has them: TimeoutControl files timeout
//! requests (`LocalEnvironment.TimeoutRequest`: Action SET or CANCEL, Identifier, StartDate,
//! StartTime, Interval, Count, IgnoreMissed, AllowOverwrite) with the message to propagate, and
//! the TimeoutNotification node of the same `unique_identifier` propagates that message at each
//! due time. A TimeoutNotification in `automatic` mode needs no control node: it propagates a
//! message every `timeout_interval_secs`.
//!
//! Timers are messages on `SYSTEM.SLUICE.TIMEOUT` (one per identifier, its body the stored
//! message), so they survive a restart; TimeoutControl changes them in the invocation's unit of
//! work, and a notification takes its timer, propagates and puts it back (with its next due
//! time) in one unit of work, so a timeout is propagated once however many instances run.

mod control;
mod notification;
mod request;

pub use control::{TIMEOUT_CONTROL, TimeoutControlProps};
pub use notification::{TIMEOUT_NOTIFICATION, TimeoutNotificationProps};

pub const TIMEOUT_QUEUE: &str = "SYSTEM.SLUICE.TIMEOUT";

const P_UNIQUE: &str = "sluice.uniqueIdentifier";
const P_IDENTIFIER: &str = "sluice.identifier";
const P_DUE: &str = "sluice.due";
const P_INTERVAL: &str = "sluice.interval";
const P_REMAINING: &str = "sluice.remaining";
const P_IGNORE_MISSED: &str = "sluice.ignoreMissed";

/// A timer's key within its notification node's timers.
fn timer_id(unique: &str, identifier: &str) -> sluice_qm::MsgId {
    crate::state::key_id(&format!("timeout\n{unique}\n{identifier}"))
}

/// The notification node's timers' CorrelId.
fn node_id(unique: &str) -> sluice_qm::MsgId {
    crate::state::key_id(&format!("timeout\n{unique}"))
}
