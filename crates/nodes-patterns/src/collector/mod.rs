//! Collector: gathers messages from any number of input terminals into collections, as the
//! product's Collector node does. Each input terminal has an event handler — how many messages
//! it takes (`quantity`), for how long it accepts them (`timeout_secs`), and which collection a
//! message belongs to (`correlation_path`, `correlation_pattern`); a collection is complete when
//! every terminal's handler is satisfied, and goes to `out` then (or when a control message asks,
//! with `event_coordination`), or to `expiry` when `collection_expiry_secs` passed first.
//!
//! The collection propagated is a message whose Root holds `Properties` (the first message's)
//! and a `Collection` folder: a `CollectionName` field, then one folder per message collected,
//! named by its input terminal, holding that message's Root. Collections are kept in the queue
//! manager (see [`store`]) so they survive a restart and are shared by the flow's instances.

mod store;

use std::sync::Arc;
use std::time::Duration;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, InputNode,
    InstanceRunner, Invocation, Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl,
    NodeSpec, Runs, StringMap, Terminal, Terminals, properties, property_enum, terminals,
};
use sluice_tree::xpath::{XPath, XPathContext};

use crate::PatternError;
use crate::state::{self, Queues, persistence_of};
use crate::stored::{folders_message, stored_form};
use store::{Collection, CollectorWork};

pub use store::{COLLECTIONS_QUEUE, EVENTS_QUEUE};

/// The folder of Root that holds a collection.
pub const COLLECTION_FOLDER: &str = "Collection";
/// How often the timer loop looks for collections whose time is up.
const TICK: Duration = Duration::from_millis(250);

terminals! {
    /// Collector's declared input; the collecting terminals are named in wires (`node.NAME`).
    pub enum CollectorInput {
        Control = "control": "A message here releases complete collections held by `event_coordination` (its content is ignored); with `disabled` it is ignored.",
    }
}

terminals! {
    /// Collector's outputs.
    pub enum CollectorOutput {
        Failure = "failure": "The node raised an exception: a correlation path does not evaluate or its value does not match the correlation pattern.",
        Out = "out": "A complete collection: `Root.Collection` with `CollectionName` and a folder per message, named by its input terminal.",
        Expiry = "expiry": "A collection still incomplete when `collection_expiry_secs` passed since its first message, built the same way.",
        Catch = "catch": "A collection the timer released (by a terminal's timeout or its expiry), with the exception raised downstream of `out` or `expiry`.",
    }
}

pub static COLLECTOR: NodeSpec = NodeSpec {
    type_name: "Collector",
    summary: "Collects messages arriving on any number of named input terminals into collections (by quantity, \
              timeout and correlation per terminal), kept in the queue manager, and propagates each complete \
              collection as one message `Root.Collection`.",
    inputs: CollectorInput::SPECS,
    outputs: CollectorOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: true,
    examples: &[NodeExample {
        title: "A control message with event coordination disabled is ignored",
        properties: "event_coordination: disabled",
        esql: "",
        input: ExampleInput::xml("<go/>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[]),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<CollectorProps>(),
};

property_enum! {
    /// When complete collections are propagated.
    pub enum EventCoordination {
        Disabled = "disabled",
        AllComplete = "all_complete",
        FirstComplete = "first_complete",
    }
}

properties! {
    /// Collector's properties. The per-terminal settings are maps from an input terminal's
    /// name (as wires name it) to its value; a terminal not named takes the default.
    pub struct CollectorProps {
        /// Per terminal: how many messages it adds to a collection (default 1); 0 takes every
        /// message that arrives before its `timeout_secs`.
        quantity: StringMap = "{}",
        /// Per terminal: for how many seconds after a collection started it accepts messages
        /// for it (default 0, no limit); when it passes the terminal is satisfied, whatever
        /// its count.
        timeout_secs: StringMap = "{}",
        /// Per terminal: an XPath expression (`$Body/order/@customer`,
        /// `$LocalEnvironment/Variables/key`) whose string value is the message's correlation:
        /// a message joins only a collection of the same correlation. None: every message
        /// correlates.
        correlation_path: StringMap = "{}",
        /// Per terminal: a pattern the correlation path's value must match (`ORD-*`); the part
        /// `*` matches is the correlation. A value that does not match is an exception.
        correlation_pattern: StringMap = "{}",
        /// The collection's name (`CollectionName`); a `*` in it is replaced by the
        /// correlation.
        collection_name: String = "",
        /// `disabled`: a complete collection goes to `out` at once, control messages are
        /// ignored; `all_complete`: complete collections are held until a control message
        /// releases them all; `first_complete`: a control message releases the oldest one (or,
        /// when none is complete, the next one to complete).
        event_coordination: EventCoordination = "disabled",
        /// Seconds after its first message when a collection still incomplete goes to
        /// `expiry`; 0 waits for ever.
        collection_expiry_secs: u64 = "0",
        /// The name the collections are kept under; empty uses the flow's name and the node's
        /// label.
        collector_name: String = "",
    }
}

/// How a correlation path's value is matched: text before and after one `*`, or all of it.
struct Pattern {
    prefix: String,
    suffix: Option<String>,
}

impl Pattern {
    fn parse(src: &str) -> Result<Pattern, String> {
        match src.split_once('*') {
            None => Ok(Pattern {
                prefix: src.to_string(),
                suffix: None,
            }),
            Some((_, after)) if after.contains('*') => {
                Err("a correlation pattern has at most one `*`".into())
            }
            Some((before, after)) => Ok(Pattern {
                prefix: before.to_string(),
                suffix: Some(after.to_string()),
            }),
        }
    }

    /// The correlation a value gives, if it matches.
    fn correlation(&self, value: &str) -> Option<String> {
        match &self.suffix {
            None => (value == self.prefix).then(|| value.to_string()),
            Some(suffix) => value
                .strip_prefix(self.prefix.as_str())
                .and_then(|rest| rest.strip_suffix(suffix.as_str()))
                .map(str::to_string),
        }
    }
}

/// An input terminal's event handler.
struct Handler {
    terminal: String,
    quantity: u64,
    timeout_ms: i64,
    path: Option<XPath>,
    pattern: Option<Pattern>,
}

impl Handler {
    /// Whether the terminal takes no more messages for `c`.
    fn satisfied(&self, c: &Collection, t: usize, now: i64) -> bool {
        (self.quantity > 0 && c.counts[t] >= self.quantity)
            || (self.timeout_ms > 0 && now >= c.created_ms.saturating_add(self.timeout_ms))
    }
}

fn setting<'a>(map: &'a StringMap, terminal: &str) -> Option<&'a str> {
    map.iter()
        .find(|(k, _)| k == terminal)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

impl BuildNode for CollectorProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let declared = CollectorInput::SPECS.len();
        let terminals: Vec<String> = b.inputs.iter().skip(declared).cloned().collect();
        for (prop, map) in [
            ("quantity", &self.quantity),
            ("timeout_secs", &self.timeout_secs),
            ("correlation_path", &self.correlation_path),
            ("correlation_pattern", &self.correlation_pattern),
        ] {
            if let Some((k, _)) = map.iter().find(|(k, _)| !terminals.contains(k)) {
                return Err(ConfigError::property(
                    prop,
                    format!("no wire reaches an input terminal `{k}` of this node"),
                ));
            }
        }
        let mut handlers = Vec::with_capacity(terminals.len());
        for t in &terminals {
            let number = |prop: &str, map: &StringMap, default: u64| match setting(map, t) {
                None => Ok(default),
                Some(v) => v.parse::<u64>().map_err(|_| {
                    ConfigError::property(
                        prop,
                        format!("`{v}` (terminal `{t}`) is not a whole number"),
                    )
                }),
            };
            let quantity = number("quantity", &self.quantity, 1)?;
            let timeout = number("timeout_secs", &self.timeout_secs, 0)?;
            if quantity == 0 && timeout == 0 {
                return Err(ConfigError::property(
                    "quantity",
                    format!(
                        "terminal `{t}` takes any number of messages (quantity 0) without a timeout_secs, so no collection could complete"
                    ),
                ));
            }
            let path = setting(&self.correlation_path, t)
                .map(|src| {
                    XPath::compile(src).map_err(|e| {
                        ConfigError::property(
                            "correlation_path",
                            format!("{e} in `{src}` (terminal `{t}`)"),
                        )
                    })
                })
                .transpose()?;
            let pattern = setting(&self.correlation_pattern, t)
                .map(|src| {
                    Pattern::parse(src).map_err(|e| {
                        ConfigError::property(
                            "correlation_pattern",
                            format!("{e} (terminal `{t}`)"),
                        )
                    })
                })
                .transpose()?;
            if pattern.is_some() && path.is_none() {
                return Err(ConfigError::property(
                    "correlation_pattern",
                    format!(
                        "terminal `{t}` has a pattern but no correlation_path to match it against"
                    ),
                ));
            }
            handlers.push(Handler {
                terminal: t.clone(),
                quantity,
                timeout_ms: (timeout.saturating_mul(1000)).min(i64::MAX as u64) as i64,
                path,
                pattern,
            });
        }
        let name = match self.collector_name.trim() {
            "" => format!("{}/{}", b.flow, b.label),
            n => n.to_string(),
        };
        let node = Arc::new(Collector {
            qm: b.services.queue_manager()?,
            handlers,
            terminals,
            collection_name: self.collection_name,
            coordination: self.event_coordination,
            expiry_ms: (self.collection_expiry_secs.saturating_mul(1000)).min(i64::MAX as u64)
                as i64,
            name,
            flow: b.flow.to_string(),
            queues: Queues::default(),
        });
        Ok(NodeImpl::ProcessAndInput(node.clone(), node))
    }
}

struct Collector {
    qm: Arc<sluice_qm::QueueManager>,
    handlers: Vec<Handler>,
    terminals: Vec<String>,
    collection_name: String,
    coordination: EventCoordination,
    expiry_ms: i64,
    name: String,
    flow: String,
    queues: Queues,
}

/// A collection on its way out of the node.
struct Release {
    terminal: CollectorOutput,
    msg: Message,
}

impl Collector {
    fn ensure(&self) -> Result<(), PatternError> {
        self.queues
            .ensure(&self.qm, &[COLLECTIONS_QUEUE, EVENTS_QUEUE])
    }

    fn work<'a>(&self, inv: &'a mut Invocation) -> Result<&'a mut CollectorWork, PatternError> {
        CollectorWork::open(inv, &self.qm, &self.name, &self.terminals)
    }

    /// The correlation of `msg` arriving on handler `h`.
    fn correlation(
        &self,
        h: &Handler,
        msg: &mut Message,
        env: &mut sluice_tree::Tree,
    ) -> Result<String, NodeError> {
        let Some(path) = &h.path else {
            return Ok(String::new());
        };
        let mut xc = XPathContext::new(msg, env);
        let value = path.evaluate_string(&mut xc).map_err(|e| {
            NodeError::recoverable(format!(
                "correlation_path of terminal `{}`: {e}",
                h.terminal
            ))
        })?;
        match &h.pattern {
            None => Ok(value),
            Some(p) => p.correlation(&value).ok_or_else(|| {
                NodeError::recoverable(format!(
                    "the correlation value '{value}' of a message on terminal `{}` does not match its correlation pattern",
                    h.terminal
                ))
            }),
        }
    }

    fn is_done(&self, c: &Collection, now: i64) -> bool {
        self.handlers
            .iter()
            .enumerate()
            .all(|(t, h)| h.satisfied(c, t, now))
    }

    fn is_expired(&self, c: &Collection, now: i64) -> bool {
        self.expiry_ms > 0 && now >= c.created_ms.saturating_add(self.expiry_ms)
    }

    /// Complete what is complete, expire what expired, and take out what is to be propagated
    /// now; `control`: a control message arrived.
    fn settle(
        &self,
        work: &mut CollectorWork,
        now: i64,
        control: bool,
    ) -> Result<Vec<Release>, NodeError> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < work.state.collections.len() {
            let c = &mut work.state.collections[i];
            if !c.complete && self.is_done(c, now) {
                c.mark_complete();
                if self.coordination == EventCoordination::FirstComplete && work.state.pending_first
                {
                    work.state.set_pending(false);
                    out.push(self.release(work, i, CollectorOutput::Out)?);
                    continue;
                }
            }
            let c = &work.state.collections[i];
            if !c.complete && self.is_expired(c, now) {
                out.push(self.release(work, i, CollectorOutput::Expiry)?);
                continue;
            }
            if c.complete && self.coordination == EventCoordination::Disabled {
                out.push(self.release(work, i, CollectorOutput::Out)?);
                continue;
            }
            i += 1;
        }
        if control {
            match self.coordination {
                EventCoordination::Disabled => {}
                EventCoordination::AllComplete => {
                    while let Some(i) = work.state.collections.iter().position(|c| c.complete) {
                        out.push(self.release(work, i, CollectorOutput::Out)?);
                    }
                }
                EventCoordination::FirstComplete => {
                    match work.state.collections.iter().position(|c| c.complete) {
                        Some(i) => out.push(self.release(work, i, CollectorOutput::Out)?),
                        None => work.state.set_pending(true),
                    }
                }
            }
        }
        Ok(out)
    }

    fn release(
        &self,
        work: &mut CollectorWork,
        i: usize,
        terminal: CollectorOutput,
    ) -> Result<Release, NodeError> {
        let (c, messages) = work.take(i)?;
        let msg = folders_message(
            COLLECTION_FOLDER,
            &[("CollectionName", c.name.as_str())],
            messages,
        )?;
        Ok(Release { terminal, msg })
    }

    /// Add `msg`, arrived on handler `t`, to its collection.
    fn collect(
        &self,
        inv: &mut Invocation,
        t: usize,
        msg: &mut Message,
    ) -> Result<Vec<Release>, NodeError> {
        let h = &self.handlers[t];
        let correlation = self.correlation(h, msg, &mut inv.environment)?;
        let persistence = persistence_of(msg);
        let mut stored = stored_form(msg, sluice_qm::ID_NONE)?;
        stored.md.persistence = persistence;

        let now = state::now_ms() as i64;
        let work = self.work(inv)?;
        let found = work.state.collections.iter().position(|c| {
            !c.complete
                && c.correlation == correlation
                && !h.satisfied(c, t, now)
                && !self.is_expired(c, now)
        });
        let i = match found {
            Some(i) => i,
            None => {
                let name = self.collection_name.replace('*', &correlation);
                work.state
                    .start(&self.name, correlation, name, self.terminals.len(), now)
            }
        };
        work.state.collections[i].add(t, stored, &h.terminal);
        self.settle(work, now, false)
    }

    /// The timer's work: release what a terminal's timeout or the expiry made due.
    fn on_time(&self, runner: &mut dyn InstanceRunner) -> Result<(), NodeError> {
        let now = state::now_ms() as i64;
        let due = store::any_incomplete(&self.qm, &self.name, &self.terminals, |c| {
            self.is_done(c, now) || self.is_expired(c, now)
        })?;
        if !due {
            return Ok(());
        }
        let mut inv = Invocation::new();
        let released = match self.work(&mut inv).map_err(NodeError::from).and_then(|w| {
            let now = state::now_ms() as i64;
            self.settle(w, now, false)
        }) {
            Ok(r) => r,
            Err(e) => {
                inv.unit_of_work.rollback();
                return Err(e);
            }
        };
        let catch: Terminal = CollectorOutput::Catch.into();
        for mut r in released {
            let res = match runner.invoke(&mut inv, r.terminal.into(), &mut r.msg) {
                Err(e) if runner.is_wired(catch) => e
                    .exception
                    .write_to(&mut r.msg.exception_list)
                    .map_err(NodeError::from)
                    .and_then(|_| runner.invoke(&mut inv, catch, &mut r.msg)),
                res => res,
            };
            if let Err(e) = res {
                inv.unit_of_work.rollback();
                return Err(e);
            }
        }
        inv.unit_of_work
            .commit()
            .map_err(|e| NodeError::recoverable(e.to_string()))
    }
}

impl Node for Collector {
    fn evaluate(
        &self,
        ctx: &mut Ctx<'_>,
        terminal: Terminal,
        msg: &mut Message,
    ) -> Result<(), NodeError> {
        self.ensure()?;
        let released = match CollectorInput::from_terminal(terminal) {
            Some(CollectorInput::Control) => {
                if self.coordination == EventCoordination::Disabled {
                    return Ok(());
                }
                let now = state::now_ms() as i64;
                let work = self.work(ctx.inv)?;
                self.settle(work, now, true)?
            }
            None => {
                let t = terminal.index() - CollectorInput::SPECS.len();
                if t >= self.handlers.len() {
                    return Err(NodeError::recoverable(format!(
                        "a message reached input terminal number {} of a Collector with {} collecting terminals (this is a bug, please report it)",
                        terminal.index(),
                        self.handlers.len()
                    )));
                }
                self.collect(ctx.inv, t, msg)?
            }
        };
        for mut r in released {
            ctx.propagate(r.terminal, &mut r.msg)?;
        }
        Ok(())
    }
}

impl InputNode for Collector {
    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        let timed = self.expiry_ms > 0 || self.handlers.iter().any(|h| h.timeout_ms > 0);
        if !timed {
            return;
        }
        while !runner.stop().sleep(TICK) {
            if let Err(error) = self.ensure() {
                tracing::error!(%error, flow = %self.flow, "Cannot define the Collector's queues.");
                continue;
            }
            if let Err(e) = self.on_time(runner) {
                tracing::warn!(error = %e.exception.describe(), flow = %self.flow, "Releasing a Collector's timed-out collections failed; it is tried again.");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_gives_the_part_the_wildcard_matched_when_the_value_matches() {
        let p = Pattern::parse("ORD-*-X").unwrap();
        assert_eq!(p.correlation("ORD-42-X").as_deref(), Some("42"));
        assert_eq!(p.correlation("INV-42-X"), None);
        assert_eq!(p.correlation("ORD-X"), None);
    }

    #[test]
    fn pattern_without_wildcard_matches_only_itself_when_parsed() {
        let p = Pattern::parse("A1").unwrap();
        assert_eq!(p.correlation("A1").as_deref(), Some("A1"));
        assert_eq!(p.correlation("A2"), None);
    }

    #[test]
    fn pattern_parse_fails_when_it_has_two_wildcards() {
        assert!(Pattern::parse("*-*").is_err());
    }
}
