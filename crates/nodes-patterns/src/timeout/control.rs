//! TimeoutControl: files the timeout request a message carries, with the message, for the
//! TimeoutNotification node of the same unique identifier.

use std::sync::Arc;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
    property_enum, terminals,
};
use sluice_qm::{GetOptions, Persistence, PropertyValue, PutOptions, QueueManager};

use super::request::{self, Action};
use super::{
    P_DUE, P_IDENTIFIER, P_IGNORE_MISSED, P_INTERVAL, P_REMAINING, P_UNIQUE, TIMEOUT_QUEUE,
    node_id, timer_id,
};
use crate::state::{self, Queues};
use crate::stored::stored_form;

terminals! {
    /// TimeoutControl's inputs.
    pub enum TimeoutControlInput {
        In = "in": "A message with a timeout request (by default in `LocalEnvironment.TimeoutRequest`).",
    }
}

terminals! {
    /// TimeoutControl's outputs.
    pub enum TimeoutControlOutput {
        Failure = "failure": "The node raised an exception: the request is missing or wrong, a SET would overwrite a timer that does not allow it, or a CANCEL names no timer.",
        Out = "out": "The message, unchanged, once its request is filed.",
    }
}

pub static TIMEOUT_CONTROL: NodeSpec = NodeSpec {
    type_name: "TimeoutControl",
    summary: "Files a timeout request (SET or CANCEL, `LocalEnvironment.TimeoutRequest`) and the message that carries it, \
              in the queue manager, for the TimeoutNotification node with the same `unique_identifier`.",
    inputs: TimeoutControlInput::SPECS,
    outputs: TimeoutControlOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "A message without a timeout request is an exception",
        properties: "unique_identifier: REMINDERS",
        esql: "",
        input: ExampleInput::xml("<order/>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Raises("no timeout request"),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<TimeoutControlProps>(),
};

property_enum! {
    /// Whether a filed timer survives a restart.
    pub enum RequestPersistence { Automatic = "automatic", Yes = "yes", No = "no" }
}

properties! {
    /// TimeoutControl's properties.
    pub struct TimeoutControlProps {
        /// The TimeoutNotification node whose timers this node sets (its `unique_identifier`).
        unique_identifier: String,
        /// Where the request is: a dotted path from `LocalEnvironment`, `Root` or
        /// `Environment`.
        request_location: String = "LocalEnvironment.TimeoutRequest",
        /// `automatic`: the timer persists when the message is persistent; `yes` or `no`.
        request_persistence: RequestPersistence = "automatic",
    }
}

/// Which tree a request location starts in.
#[derive(Clone, Copy)]
enum Start {
    Root,
    LocalEnvironment,
    Environment,
}

impl BuildNode for TimeoutControlProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let unique = self.unique_identifier.trim().to_string();
        if unique.is_empty() {
            return Err(ConfigError::property(
                "unique_identifier",
                "must not be empty",
            ));
        }
        let mut parts = self.request_location.trim().split('.');
        let start = match parts.next() {
            Some("Root" | "InputRoot") => Start::Root,
            Some("LocalEnvironment" | "InputLocalEnvironment") => Start::LocalEnvironment,
            Some("Environment") => Start::Environment,
            _ => {
                return Err(ConfigError::property(
                    "request_location",
                    "must start at LocalEnvironment, Root or Environment",
                ));
            }
        };
        let path: Vec<String> = parts.map(str::to_string).collect();
        if path.iter().any(|p| p.is_empty()) {
            return Err(ConfigError::property(
                "request_location",
                "has an empty step",
            ));
        }
        Ok(NodeImpl::Process(Arc::new(TimeoutControl {
            qm: b.services.queue_manager()?,
            unique,
            start,
            path,
            persistence: self.request_persistence,
            queues: Queues::default(),
        })))
    }
}

struct TimeoutControl {
    qm: Arc<QueueManager>,
    unique: String,
    start: Start,
    path: Vec<String>,
    persistence: RequestPersistence,
    queues: Queues,
}

impl TimeoutControl {
    fn request(
        &self,
        ctx: &mut Ctx<'_>,
        msg: &mut Message,
    ) -> Result<request::TimeoutRequest, NodeError> {
        let now = state::now_ms() as i64;
        let tree = match self.start {
            Start::Root => &mut msg.root,
            Start::LocalEnvironment => &mut msg.local_environment,
            Start::Environment => &mut ctx.inv.environment,
        };
        let steps: Vec<&str> = self.path.iter().map(String::as_str).collect();
        let r = tree.root();
        let folder = tree.path(r, &steps)?.ok_or_else(|| {
            NodeError::recoverable(format!(
                "the message has no timeout request at {}",
                self.location()
            ))
        })?;
        request::read(tree, folder, now).map_err(|e| {
            NodeError::recoverable(format!("the timeout request at {}: {e}", self.location()))
        })
    }

    fn location(&self) -> String {
        let start = match self.start {
            Start::Root => "Root",
            Start::LocalEnvironment => "LocalEnvironment",
            Start::Environment => "Environment",
        };
        std::iter::once(start)
            .chain(self.path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(".")
    }
}

impl Node for TimeoutControl {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        self.queues.ensure(&self.qm, &[TIMEOUT_QUEUE])?;
        let req = self.request(ctx, msg)?;
        let id = timer_id(&self.unique, &req.identifier);
        let persistence = match self.persistence {
            RequestPersistence::Automatic => state::persistence_of(msg),
            RequestPersistence::Yes => Persistence::Persistent,
            RequestPersistence::No => Persistence::NotPersistent,
        };
        let stored = match req.action {
            Action::Set => {
                let mut m = stored_form(msg, node_id(&self.unique))?;
                m.md.msg_id = id;
                m.md.persistence = persistence;
                m.set_property(P_UNIQUE, PropertyValue::String(self.unique.clone()));
                m.set_property(P_IDENTIFIER, PropertyValue::String(req.identifier.clone()));
                m.set_property(P_DUE, PropertyValue::Int(req.start_ms));
                m.set_property(P_INTERVAL, PropertyValue::Int(req.interval_ms));
                m.set_property(P_REMAINING, PropertyValue::Int(req.count));
                m.set_property(
                    P_IGNORE_MISSED,
                    PropertyValue::Int(i64::from(req.ignore_missed)),
                );
                Some(m)
            }
            Action::Cancel => None,
        };
        let uow = state::work(ctx.inv, &self.qm)?;
        let existing = uow
            .get(TIMEOUT_QUEUE, &GetOptions::new().msg_id(id))
            .map_err(state::queue_error(TIMEOUT_QUEUE))?;
        match (stored, existing) {
            (Some(_), Some(_)) if !req.allow_overwrite => {
                uow.release_last_get();
                return Err(NodeError::recoverable(format!(
                    "a timeout '{}' is set already and the request does not allow overwriting it",
                    req.identifier
                )));
            }
            (Some(m), _) => {
                uow.put(TIMEOUT_QUEUE, m, &PutOptions::default())
                    .map_err(state::queue_error(TIMEOUT_QUEUE))?;
            }
            (None, Some(_)) => {}
            (None, None) => {
                return Err(NodeError::recoverable(format!(
                    "there is no timeout '{}' to cancel",
                    req.identifier
                )));
            }
        }
        ctx.propagate(TimeoutControlOutput::Out, msg)
    }
}
