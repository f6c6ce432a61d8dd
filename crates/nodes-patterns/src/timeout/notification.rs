//! TimeoutNotification: propagates the stored message of each timer its TimeoutControl nodes
//! set, when it falls due (`controlled`), or a message every `timeout_interval_secs`
//! (`automatic`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, ExampleInput, ExampleOutcome, InputNode, InstanceRunner,
    Invocation, Message, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal,
    Terminals, properties, property_enum, terminals,
};
use sluice_nodes_mq::QueueWork;
use sluice_qm::{BrowseCursor, GetOptions, MsgId, PropertyValue, PutOptions, QueueManager};
use sluice_tree::{Text, Value, field_type};

use super::{
    P_DUE, P_IDENTIFIER, P_IGNORE_MISSED, P_INTERVAL, P_REMAINING, TIMEOUT_QUEUE, node_id,
};
use crate::PatternError;
use crate::state::{self, Queues};
use crate::stored::restore_message;

/// How often the node looks for timers that fell due.
const TICK: Duration = Duration::from_millis(100);
/// A timer whose propagation failed this many times is dropped, with an error logged.
const FIRE_ATTEMPTS: u32 = 3;

terminals! {
    /// TimeoutNotification's outputs.
    pub enum TimeoutNotificationOutput {
        Failure = "failure": "Propagating a timeout failed and `catch` is not wired (the timeout is tried again, three times in all).",
        Out = "out": "At each timeout: the message its TimeoutControl stored (`controlled`), with `LocalEnvironment.TimeoutRequest` giving its Identifier and the Count left; or a message with only Properties (`automatic`).",
        Catch = "catch": "A timeout's message with the exception raised downstream of `out`.",
    }
}

pub static TIMEOUT_NOTIFICATION: NodeSpec = NodeSpec {
    type_name: "TimeoutNotification",
    summary: "Starts an invocation at each timeout: of the timers TimeoutControl nodes with the same `unique_identifier` \
              set (kept in the queue manager, so they survive a restart), or every `timeout_interval_secs` on its own.",
    inputs: &[],
    outputs: TimeoutNotificationOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "On its own, it starts the flow every ten seconds",
        properties: "unique_identifier: TICK, operation_mode: automatic, timeout_interval_secs: 10",
        esql: "",
        input: ExampleInput::xml(""),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "")]),
        runs: Runs::No("it propagates when its interval passed, not when a message arrives."),
    }],
    builder: NodeBuilder::of::<TimeoutNotificationProps>(),
};

property_enum! {
    /// Where the timeouts come from.
    pub enum OperationMode { Automatic = "automatic", Controlled = "controlled" }
}

properties! {
    /// TimeoutNotification's properties.
    pub struct TimeoutNotificationProps {
        /// The name TimeoutControl nodes set this node's timers under (their
        /// `unique_identifier`); unique within the server.
        unique_identifier: String,
        /// `automatic`: a message every `timeout_interval_secs`; `controlled`: the messages of
        /// the timers TimeoutControl nodes set.
        operation_mode: OperationMode = "automatic",
        /// Seconds between the messages of `automatic` mode.
        timeout_interval_secs: u64 = "1",
    }
}

impl BuildNode for TimeoutNotificationProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let unique = self.unique_identifier.trim().to_string();
        if unique.is_empty() {
            return Err(ConfigError::property(
                "unique_identifier",
                "must not be empty",
            ));
        }
        if self.operation_mode == OperationMode::Automatic && self.timeout_interval_secs == 0 {
            return Err(ConfigError::property(
                "timeout_interval_secs",
                "must be at least 1 in automatic mode",
            ));
        }
        Ok(NodeImpl::Input(Arc::new(TimeoutNotification {
            qm: b.services.queue_manager()?,
            unique,
            mode: self.operation_mode,
            interval: Duration::from_secs(self.timeout_interval_secs),
            flow: b.flow.to_string(),
            looping: AtomicBool::new(false),
            queues: Queues::default(),
        })))
    }

    fn claims(&self) -> Vec<String> {
        vec![format!(
            "TimeoutNotification unique identifier {}",
            self.unique_identifier.trim()
        )]
    }
}

struct TimeoutNotification {
    qm: Arc<QueueManager>,
    unique: String,
    mode: OperationMode,
    interval: Duration,
    flow: String,
    /// One instance loop fires the timeouts; the others have nothing to do.
    looping: AtomicBool,
    queues: Queues,
}

/// What a due timer becomes when it fires.
struct Firing {
    /// Timeouts left after this one (-1: no end).
    remaining: i64,
    /// When the next one is due, if there is one.
    next_due: Option<i64>,
}

/// The timer's next state, when it is due at `due` and it is `now`. A timer with
/// `ignore_missed` that missed timeouts (the server was down) fires once for them, and the
/// missed ones count as done; otherwise each one fires in turn.
fn firing(due: i64, interval: i64, remaining: i64, ignore_missed: bool, now: i64) -> Firing {
    let skipped = if ignore_missed && interval > 0 && now >= due.saturating_add(interval) {
        (now - due) / interval
    } else {
        0
    };
    let remaining = match remaining {
        -1 => -1,
        r => (r - skipped - 1).max(0),
    };
    let next_due = (remaining != 0 && interval > 0)
        .then(|| due.saturating_add(interval.saturating_mul(skipped + 1)));
    Firing {
        remaining: if next_due.is_none() { 0 } else { remaining },
        next_due,
    }
}

impl TimeoutNotification {
    /// The timers of this node that are due.
    fn due(&self) -> Result<Vec<MsgId>, PatternError> {
        let now = state::now_ms() as i64;
        let mut cursor = BrowseCursor::new();
        let mut out = Vec::new();
        while let Some(m) = self
            .qm
            .browse(
                TIMEOUT_QUEUE,
                &GetOptions::new().correl_id(node_id(&self.unique)),
                &mut cursor,
            )
            .map_err(state::queue_error(TIMEOUT_QUEUE))?
        {
            if state::int_property(&m, P_DUE) <= now {
                out.push(m.md.msg_id);
            }
        }
        Ok(out)
    }

    /// Fire timer `id`, if it is still there.
    fn fire(&self, runner: &mut dyn InstanceRunner, id: MsgId) -> Result<(), NodeError> {
        let mut uow = self.qm.begin();
        let Some(timer) = uow
            .get(TIMEOUT_QUEUE, &GetOptions::new().msg_id(id))
            .map_err(state::queue_error(TIMEOUT_QUEUE))?
        else {
            return Ok(());
        };
        if timer.md.backout_count >= FIRE_ATTEMPTS {
            tracing::error!(
                flow = %self.flow,
                timer = %state::text_property(&timer, P_IDENTIFIER),
                attempts = timer.md.backout_count,
                "Dropped a timer whose timeout kept failing to propagate."
            );
            return uow
                .commit()
                .map_err(|e| NodeError::recoverable(e.to_string()));
        }
        let now = state::now_ms() as i64;
        let f = firing(
            state::int_property(&timer, P_DUE),
            state::int_property(&timer, P_INTERVAL),
            state::int_property(&timer, P_REMAINING),
            state::int_property(&timer, P_IGNORE_MISSED) != 0,
            now,
        );
        let identifier = state::text_property(&timer, P_IDENTIFIER);
        if let Some(next) = f.next_due {
            let mut again = timer.clone();
            again.set_property(P_DUE, PropertyValue::Int(next));
            again.set_property(P_REMAINING, PropertyValue::Int(f.remaining));
            uow.put(TIMEOUT_QUEUE, again, &PutOptions::default())
                .map_err(state::queue_error(TIMEOUT_QUEUE))?;
        }
        let mut msg = restore_message(timer)?;
        timeout_request(&mut msg, &identifier, f.remaining)?;
        let mut inv = Invocation::new();
        inv.unit_of_work.join(QueueWork::KEY, QueueWork::new(uow));
        self.propagate(runner, &mut inv, msg)
    }

    /// Propagate `msg` to `out` (to `catch` with the exception when that fails), and end the
    /// invocation.
    fn propagate(
        &self,
        runner: &mut dyn InstanceRunner,
        inv: &mut Invocation,
        mut msg: Message,
    ) -> Result<(), NodeError> {
        let catch: Terminal = TimeoutNotificationOutput::Catch.into();
        let failure: Terminal = TimeoutNotificationOutput::Failure.into();
        let r = match runner.invoke(inv, TimeoutNotificationOutput::Out.into(), &mut msg) {
            Err(e) if runner.is_wired(catch) || runner.is_wired(failure) => {
                let to = if runner.is_wired(catch) {
                    catch
                } else {
                    failure
                };
                e.exception
                    .write_to(&mut msg.exception_list)
                    .map_err(NodeError::from)
                    .and_then(|_| runner.invoke(inv, to, &mut msg))
            }
            r => r,
        };
        match r.and_then(|_| {
            inv.unit_of_work
                .commit()
                .map_err(|e| NodeError::recoverable(e.to_string()))
        }) {
            Ok(()) => Ok(()),
            Err(e) => {
                inv.unit_of_work.rollback();
                Err(e)
            }
        }
    }

    fn run_controlled(&self, runner: &mut dyn InstanceRunner) {
        while !runner.stop().sleep(TICK) {
            let due = match self
                .queues
                .ensure(&self.qm, &[TIMEOUT_QUEUE])
                .and_then(|_| self.due())
            {
                Ok(d) => d,
                Err(error) => {
                    tracing::error!(%error, flow = %self.flow, "Failed to look for timeouts that are due.");
                    continue;
                }
            };
            for id in due {
                if let Err(e) = self.fire(runner, id) {
                    tracing::warn!(error = %e.exception.describe(), flow = %self.flow, "A timeout's propagation failed; it is tried again.");
                }
            }
        }
    }

    fn run_automatic(&self, runner: &mut dyn InstanceRunner) {
        let mut next = std::time::Instant::now() + self.interval;
        loop {
            let left = next.saturating_duration_since(std::time::Instant::now());
            if runner.stop().sleep(left.min(TICK)) {
                return;
            }
            if std::time::Instant::now() < next {
                continue;
            }
            next += self.interval;
            let mut inv = Invocation::new();
            if let Err(e) = self.propagate(runner, &mut inv, Message::new()) {
                tracing::warn!(error = %e.exception.describe(), flow = %self.flow, "An automatic timeout's propagation failed.");
            }
        }
    }
}

/// `LocalEnvironment.TimeoutRequest` of a timeout's message: which timer, how many are left.
fn timeout_request(msg: &mut Message, identifier: &str, remaining: i64) -> Result<(), NodeError> {
    let t = &mut msg.local_environment;
    let r = t.root();
    let folder = t.create_last_child(
        r,
        field_type::NAME,
        Text::from_static("TimeoutRequest"),
        Value::Null,
    )?;
    let id = Value::Character(t.alloc_text(identifier.as_bytes()));
    t.create_last_child(
        folder,
        field_type::NAME_VALUE,
        Text::from_static("Identifier"),
        id,
    )?;
    t.create_last_child(
        folder,
        field_type::NAME_VALUE,
        Text::from_static("Count"),
        Value::Integer(remaining),
    )?;
    Ok(())
}

impl InputNode for TimeoutNotification {
    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        if self.looping.swap(true, Ordering::AcqRel) {
            return;
        }
        match self.mode {
            OperationMode::Automatic => self.run_automatic(runner),
            OperationMode::Controlled => self.run_controlled(runner),
        }
        self.looping.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn firing_ends_the_timer_when_its_count_is_used() {
        let f = firing(1_000, 0, 1, true, 1_000);
        assert_eq!((f.remaining, f.next_due), (0, None));
    }

    #[test]
    fn firing_schedules_the_next_when_the_count_has_more() {
        let f = firing(1_000, 500, 3, true, 1_100);
        assert_eq!((f.remaining, f.next_due), (2, Some(1_500)));
    }

    #[test]
    fn firing_counts_missed_timeouts_as_done_when_they_are_ignored() {
        // Due at 1000, 1500, 2000, 2500: at 2100 the first two were missed.
        let f = firing(1_000, 500, 4, true, 2_100);
        assert_eq!((f.remaining, f.next_due), (1, Some(2_500)));
    }

    #[test]
    fn firing_fires_each_missed_timeout_when_they_are_not_ignored() {
        let f = firing(1_000, 500, 4, false, 2_100);
        assert_eq!((f.remaining, f.next_due), (3, Some(1_500)));
    }

    #[test]
    fn firing_runs_for_ever_when_the_count_is_minus_one() {
        let f = firing(1_000, 500, -1, true, 1_000);
        assert_eq!((f.remaining, f.next_due), (-1, Some(1_500)));
    }
}
