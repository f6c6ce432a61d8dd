//! MQOutput and MQReply: put the message on a queue, inside the invocation's unit of work when
//! there is one; MQGet: take a message from a queue in the middle of a flow.

use std::sync::Arc;
use std::time::Duration;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, ExceptionKind,
    Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal,
    Terminals, properties, property_enum, terminals,
};
use sluice_qm::{GetOptions, Persistence, PutOptions, QueueManager, msg_type};
use sluice_tree::{Text, Value, field_type};

use super::QueueWork;
use super::headers;
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps, MessageModelProps};
use sluice_nodes_core::terminals::{FAILURE_DOC, FailureOut, In, OUT_DOC};
use sluice_nodes_core::validation::{OutputValidationProps, Validator, serialize_validated};

property_enum! {
    /// The persistence of a message an output node puts.
    pub enum PersistenceProperty {
        AsInput = "as_input",
        Persistent = "persistent",
        NotPersistent = "not_persistent",
        AsQueueDefault = "as_queue_default",
    }
}

property_enum! {
    /// Whether a queue node's operation joins the invocation's unit of work.
    pub enum QueueTransaction { Automatic = "automatic", Yes = "yes", No = "no" }
}

properties! {
    /// How MQOutput and MQReply put.
    pub struct PutProps {
        /// The persistence of the message put: as `Root.MQMD.Persistence` says, or forced.
        persistence: PersistenceProperty = "as_input",
        /// `automatic`: under syncpoint when the invocation's unit of work has the queue
        /// manager's (a flow started by a transactional MQInput), else put at once; `yes`:
        /// under syncpoint always, committed or backed out when the flow ends, whatever started
        /// it; `no`: put at once, outside any unit of work.
        transaction_mode: QueueTransaction = "automatic",
    }
}

property_enum! {
    /// Where MQOutput puts.
    pub enum DestinationMode {
        QueueName = "queue_name",
        ReplyToQueue = "reply_to_queue",
        DestinationList = "destination_list",
    }
}

properties! {
    /// MQOutput's properties.
    pub struct MqOutputProps {
        /// The queue; required unless `destination_mode` is `reply_to_queue`.
        queue: Option<String>,
        /// Where to put: the `queue`, the message's ReplyToQ, or every queue in
        /// `LocalEnvironment.Destination.MQ.DestinationData[*].queueName`.
        destination_mode: DestinationMode = "queue_name",
        /// Have the queue manager generate a new MsgId. Off (the product's default), the MsgId
        /// of `Root.MQMD` is kept, and one is generated only when it is all zeros (MQMI_NONE).
        new_msg_id: bool = "false",
        ..put: PutProps,
        ..validation: OutputValidationProps,
    }
}

properties! {
    /// MQReply's properties.
    pub struct MqReplyProps {
        ..put: PutProps,
        ..validation: OutputValidationProps,
    }
}

/// Report options of a request that MQReply honours (MQ's values).
const MQRO_PASS_CORREL_ID: i32 = 64;
const MQRO_PASS_MSG_ID: i32 = 128;

pub static MQ_OUTPUT: NodeSpec = NodeSpec {
    type_name: "MQOutput",
    summary: "Puts the message on a queue: the descriptor from `Root.MQMD`, properties from `Root.MQRFH2.usr`, \
              the body serialised in its domain. Writes where each copy went (queueName, \
              queueManagerName) and its ids (msgId and replyIdentifier, correlId, GroupId) to \
              `LocalEnvironment.WrittenDestination.MQ.DestinationData`.",
    inputs: In::SPECS,
    outputs: FailureOut::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "The message is put on `ORDERS.OUT` and goes on to `out`",
            properties: "queue: ORDERS.OUT",
            esql: "",
            input: ExampleInput::xml("<order><id>7</id></order>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[("out", "<order><id>7</id></order>")]),
            runs: Runs::Yes,
        },
        NodeExample {
            title: "With `destination_mode: destination_list`, the LocalEnvironment names the queue",
            properties: "destination_mode: destination_list",
            esql: "",
            input: ExampleInput {
                domain: "XMLNSC",
                body: "<order><id>7</id></order>",
                local_environment: &[("Destination.MQ.DestinationData.queueName", "ORDERS.OUT")],
            },
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[("out", "<order><id>7</id></order>")]),
            runs: Runs::Yes,
        },
    ],
    builder: NodeBuilder::of::<MqOutputProps>(),
};

impl BuildNode for MqOutputProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let dest = match self.destination_mode {
            DestinationMode::QueueName => Dest::Queue,
            DestinationMode::ReplyToQueue => Dest::ReplyTo,
            DestinationMode::DestinationList => Dest::List,
        };
        let validator = self.validation.validator(b.project_dir)?;
        build_output(&self.put, b, dest, self.queue, self.new_msg_id, validator)
    }
}

impl BuildNode for MqReplyProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let validator = self.validation.validator(b.project_dir)?;
        build_output(&self.put, b, Dest::Reply, None, false, validator)
    }
}

pub static MQ_REPLY: NodeSpec = NodeSpec {
    type_name: "MQReply",
    summary: "Puts the message on the ReplyToQ of `Root.MQMD` as a reply: MsgType reply, and the request's \
              MsgId as the CorrelId, as queue applications expect — or, when the request's Report asks \
              (MQRO_PASS_CORREL_ID, MQRO_PASS_MSG_ID), its CorrelId and its MsgId.",
    inputs: In::SPECS,
    outputs: FailureOut::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "The answer goes to the request's ReplyToQ, correlated with its MsgId",
            properties: "",
            esql: "",
            input: ExampleInput::xml("<confirmation><order>7</order></confirmation>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[(
                "out",
                "<confirmation><order>7</order></confirmation>",
            )]),
            runs: Runs::No(
                "it needs a request's `Root.MQMD`, which MQInput or MQGet gives, and the example's input has only a body.",
            ),
        },
        NodeExample {
            title: "A message without an MQMD has no ReplyToQ, so it raises",
            properties: "",
            esql: "",
            input: ExampleInput::xml("<confirmation><order>7</order></confirmation>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Raises("the message has no ReplyToQ in Root.MQMD"),
            runs: Runs::Yes,
        },
    ],
    builder: NodeBuilder::of::<MqReplyProps>(),
};

#[derive(Clone, Copy, PartialEq)]
enum Dest {
    Queue,
    ReplyTo,
    List,
    /// MQReply: the ReplyToQ, as a reply.
    Reply,
}

struct MqOutput {
    qm: Arc<QueueManager>,
    queue: String,
    dest: Dest,
    reply: bool,
    persistence: Option<Persistence>,
    transactional: Option<bool>,
    /// Generate a new MsgId (MQReply: unless the request's Report says MQRO_PASS_MSG_ID).
    new_msg_id: bool,
    /// Who puts a message that has no `Root.MQMD` (the server's user and program).
    context: sluice_qm::PutContext,
    /// Validates the XML body written, when the node validates.
    validator: Option<Validator>,
}

fn build_output(
    c: &PutProps,
    b: &BuildContext,
    dest: Dest,
    queue: Option<String>,
    new_msg_id: bool,
    validator: Option<Validator>,
) -> Result<NodeImpl, ConfigError> {
    let qm = b.services.queue_manager()?;
    let queue = queue.unwrap_or_default();
    if dest == Dest::Queue {
        if queue.is_empty() {
            return Err(ConfigError::property(
                "queue",
                "MQOutput needs a `queue` (or another `destination_mode`)",
            ));
        }
        qm.queue_def(&queue).map_err(|e| {
            ConfigError::property("queue", e.to_string())
                .with_hint("define the queue in sluice.yaml under `queues`")
        })?;
    }
    let persistence = match c.persistence {
        PersistenceProperty::Persistent => Some(Persistence::Persistent),
        PersistenceProperty::NotPersistent => Some(Persistence::NotPersistent),
        PersistenceProperty::AsQueueDefault => Some(Persistence::AsQueueDef),
        PersistenceProperty::AsInput => None,
    };
    let transactional = match c.transaction_mode {
        QueueTransaction::Yes => Some(true),
        QueueTransaction::No => Some(false),
        QueueTransaction::Automatic => None,
    };
    Ok(NodeImpl::Process(Arc::new(MqOutput {
        qm,
        queue,
        dest: if dest == Dest::Reply {
            Dest::ReplyTo
        } else {
            dest
        },
        reply: dest == Dest::Reply,
        persistence,
        transactional,
        new_msg_id,
        context: sluice_qm::PutContext::of_this_process(),
        validator,
    })))
}

fn mq_error(e: sluice_qm::QmError, queue: &str) -> NodeError {
    NodeError::new(
        ExceptionKind::Recoverable,
        2230,
        format!("put to queue '{queue}' failed: {e}"),
    )
    .with_insert(e.reason_code().to_string())
}

trait WithInsert {
    fn with_insert(self, s: String) -> Self;
}

impl WithInsert for NodeError {
    fn with_insert(mut self, s: String) -> NodeError {
        self.exception.inserts.push(s);
        self
    }
}

impl MqOutput {
    fn destinations(
        &self,
        msg: &mut Message,
        qmsg: &sluice_qm::Message,
    ) -> Result<Vec<String>, NodeError> {
        Ok(match self.dest {
            Dest::Queue => vec![self.queue.clone()],
            Dest::ReplyTo | Dest::Reply => {
                if qmsg.md.reply_to_q.is_empty() {
                    return Err(NodeError::recoverable(
                        "the message has no ReplyToQ in Root.MQMD",
                    ));
                }
                // There are no channels to other queue managers: a reply for another one has
                // no route (MQRC_UNKNOWN_REMOTE_Q_MGR), rather than landing on a local queue
                // of the same name.
                let qmgr = qmsg.md.reply_to_qmgr.trim();
                if !qmgr.is_empty() && qmgr != self.qm.name() {
                    let e = sluice_qm::QmError::UnknownRemoteQmgr(qmgr.to_string());
                    return Err(mq_error(e, &qmsg.md.reply_to_q));
                }
                vec![qmsg.md.reply_to_q.clone()]
            }
            Dest::List => {
                let le = &mut msg.local_environment;
                let r = le.root();
                let mut out = Vec::new();
                if let Some(mq) = le.path(r, &["Destination", "MQ"])? {
                    for d in le.children(mq)? {
                        if le.name_bytes(d) != b"DestinationData" {
                            continue;
                        }
                        if let Some(q) = le.child_named(d, None, b"queueName", 0)?
                            && let Some(v) = le.value_bytes(q)
                        {
                            out.push(String::from_utf8_lossy(v).trim().to_string());
                        }
                    }
                }
                if out.is_empty() {
                    return Err(NodeError::recoverable(
                        "LocalEnvironment.Destination.MQ has no DestinationData with a queueName",
                    ));
                }
                out
            }
        })
    }
}

impl Node for MqOutput {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let (body, content_type) = serialize_validated(msg, self.validator.as_ref())?;
        let r = msg.root.root();
        let has_mqmd = msg.root.child_named(r, None, b"MQMD", 0)?.is_some();
        let mut qmsg = headers::from_tree(msg, body)?;
        // A message built without a descriptor (from HTTP, say) is put in the server's
        // context, as the product's MQOutput gives such a message a default MQMD.
        if !has_mqmd {
            self.context.apply(&mut qmsg);
        }
        // XML and JSON bodies are held and written as UTF-8: they go out in the CCSID the
        // descriptor declares.
        let xml = content_type.starts_with("text/xml");
        if xml || content_type.starts_with("application/json") {
            let ccsid = i64::from(qmsg.md.coded_char_set_id);
            qmsg.body = sluice_codepage::body_from_utf8(qmsg.body, ccsid, xml)
                .map_err(|e| NodeError::recoverable(format!("the message body: {e}")))?;
        }
        let mut new_msg_id = self.new_msg_id;
        if self.reply {
            // The request's Report options say how its reply is identified: its CorrelId
            // (MQRO_PASS_CORREL_ID) or else its MsgId as the reply's CorrelId; its MsgId
            // (MQRO_PASS_MSG_ID) or else a new one as the reply's MsgId.
            let report = qmsg.md.report;
            if report & MQRO_PASS_CORREL_ID == 0 {
                qmsg.md.correl_id = qmsg.md.msg_id;
            }
            new_msg_id = report & MQRO_PASS_MSG_ID == 0;
            qmsg.md.msg_type = msg_type::REPLY;
        }
        if new_msg_id {
            qmsg.md.msg_id = sluice_qm::ID_NONE;
        }
        if let Some(p) = self.persistence {
            qmsg.md.persistence = p;
        }
        let dests = self.destinations(msg, &qmsg)?;
        let opts = PutOptions::default();
        let mut written = Vec::new();
        for q in dests {
            let uow = &mut ctx.inv.unit_of_work;
            let work = match self.transactional {
                Some(false) => None,
                None => uow.get_mut::<QueueWork>(QueueWork::KEY),
                Some(true) => uow
                    .get_or_join(QueueWork::KEY, || {
                        Ok::<_, std::convert::Infallible>(QueueWork::new(self.qm.begin()))
                    })
                    .ok(),
            };
            let id = match work.and_then(QueueWork::uow) {
                Some(u) => u.put(&q, qmsg.clone(), &opts),
                None => self.qm.put(&q, qmsg.clone(), &opts),
            }
            .map_err(|e| mq_error(e, &q))?;
            written.push((q, id));
        }
        let mut out = msg.clone();
        let le = &mut out.local_environment;
        let r = le.root();
        let wd = le.create_last_child(
            r,
            field_type::NAME,
            Text::from_static("WrittenDestination"),
            Value::Null,
        )?;
        let mq =
            le.create_last_child(wd, field_type::NAME, Text::from_static("MQ"), Value::Null)?;
        // As the product writes it: where each copy went and the ids it was put with.
        for (q, id) in written {
            let dd = le.create_last_child(
                mq,
                field_type::NAME,
                Text::from_static("DestinationData"),
                Value::Null,
            )?;
            let qn = le.alloc_text(q.as_bytes());
            let qmgr = le.alloc_text(self.qm.name().as_bytes());
            let msg_id = le.alloc_text(&id);
            let correl_id = le.alloc_text(&qmsg.md.correl_id);
            let group_id = le.alloc_text(&qmsg.md.group_id);
            for (name, v) in [
                ("queueName", Value::Character(qn)),
                ("queueManagerName", Value::Character(qmgr)),
                ("replyIdentifier", Value::Blob(msg_id)),
                ("msgId", Value::Blob(msg_id)),
                ("correlId", Value::Blob(correl_id)),
                ("GroupId", Value::Blob(group_id)),
            ] {
                le.create_last_child(dd, field_type::NAME_VALUE, Text::from_static(name), v)?;
            }
        }
        ctx.propagate(FailureOut::Out, &mut out)
    }
}

// ----- MQGet ------------------------------------------------------------------------------

pub static MQ_GET: NodeSpec = NodeSpec {
    type_name: "MQGet",
    summary: "Takes (or browses) a message from a queue in the middle of a flow — for example the reply matching \
              a request's CorrelId — and propagates it in place of the input message's Root.",
    inputs: In::SPECS,
    outputs: MqGetOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "The reply to the request replaces the message",
            properties: "queue: ORDERS.REPLIES, match: msg_id_as_correl_id, wait_ms: 5000, domain: XMLNSC",
            esql: "",
            input: ExampleInput::xml("<order><id>7</id></order>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[(
                "out",
                "<confirmation><order>7</order></confirmation>",
            )]),
            runs: Runs::No(
                "it needs a request's `Root.MQMD` and a reply waiting on the queue, which the example's input cannot give.",
            ),
        },
        NodeExample {
            title: "An empty queue sends the message on to `no_message`",
            properties: "queue: ORDERS.REPLIES",
            esql: "",
            input: ExampleInput::xml("<order><id>7</id></order>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[("no_message", "<order><id>7</id></order>")]),
            runs: Runs::Yes,
        },
    ],
    builder: NodeBuilder::of::<MqGetProps>(),
};

terminals! {
    /// MQGet's outputs.
    pub enum MqGetOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": OUT_DOC,
        NoMessage = "no_message": "No matching message arrived in time.",
    }
}

property_enum! {
    /// Which message MQGet takes.
    pub enum GetMatch {
        None = "none",
        CorrelId = "correl_id",
        MsgId = "msg_id",
        MsgIdAsCorrelId = "msg_id_as_correl_id",
    }
}

properties! {
    /// MQGet's properties.
    pub struct MqGetProps {
        /// The queue to read.
        queue: String,
        /// How long to wait for a message.
        wait_ms: u64 = "0",
        /// Match on the input message's `Root.MQMD.CorrelId` or `MsgId`, or find replies whose
        /// CorrelId is the input's MsgId.
        r#match: GetMatch = "none",
        /// Read without removing.
        browse: bool = "false",
        ..parsing: BodyParsingProps,
        ..model: MessageModelProps,
    }
}

impl BuildNode for MqGetProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let qm = b.services.queue_manager()?;
        qm.queue_def(&self.queue)
            .map_err(|e| ConfigError::property("queue", e.to_string()))?;
        Ok(NodeImpl::Process(Arc::new(MqGet {
            qm,
            queue: self.queue,
            wait: Duration::from_millis(self.wait_ms),
            matching: self.r#match,
            browse: self.browse,
            parsing: BodyParsing::with_model(&self.parsing, &self.model, b.project_dir)?,
        })))
    }
}

struct MqGet {
    qm: Arc<QueueManager>,
    queue: String,
    wait: Duration,
    matching: GetMatch,
    browse: bool,
    parsing: BodyParsing,
}

impl Node for MqGet {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let mut opts = GetOptions::new();
        if !self.wait.is_zero() {
            opts = opts.wait(self.wait);
        }
        match self.matching {
            GetMatch::CorrelId => opts.correl_id = headers::md_id(msg, "CorrelId")?,
            GetMatch::MsgId => opts.msg_id = headers::md_id(msg, "MsgId")?,
            GetMatch::MsgIdAsCorrelId => opts.correl_id = headers::md_id(msg, "MsgId")?,
            GetMatch::None => {}
        }
        let got = if self.browse {
            self.qm
                .browse(&self.queue, &opts, &mut sluice_qm::BrowseCursor::new())
        } else {
            let work = ctx
                .inv
                .unit_of_work
                .get_mut::<QueueWork>(QueueWork::KEY)
                .and_then(QueueWork::uow);
            match work {
                Some(u) => u.get(&self.queue, &opts),
                None => self.qm.get(&self.queue, &opts),
            }
        }
        .map_err(|e| {
            NodeError::recoverable(format!("get from queue '{}' failed: {e}", self.queue))
        })?;
        match got {
            None => ctx.propagate(MqGetOutput::NoMessage, msg),
            Some(m) => {
                let mut out = headers::to_tree(&m, &self.parsing)?;
                out.local_environment = msg.local_environment.clone();
                out.exception_list = msg.exception_list.clone();
                ctx.propagate(MqGetOutput::Out, &mut out)
            }
        }
    }
}
