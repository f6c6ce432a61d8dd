//! Routing and control nodes that need no transport: Passthrough, Trace, Label, RouteToLabel,
//! Throw, TryCatch, FlowOrder.

use std::io::Write;
use std::sync::Arc;

use parking_lot::Mutex;
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, ExceptionKind,
    Message, Node, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal,
    Terminals, properties, property_enum, terminals,
};
use sluice_tree::{Tree, Value};

use crate::terminals::{CATCH_DOC, FAILURE_DOC, In, OutOnly};

pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    for s in [
        &PASSTHROUGH,
        &TRACE,
        &LABEL,
        &ROUTE_TO_LABEL,
        &THROW,
        &TRY_CATCH,
        &FLOW_ORDER,
    ] {
        r(s);
    }
}

// ----- Passthrough ------------------------------------------------------------------------

pub static PASSTHROUGH: NodeSpec = NodeSpec {
    type_name: "Passthrough",
    summary: "Propagates the message unchanged. Useful as a connector and for documentation.",
    inputs: In::SPECS,
    outputs: OutOnly::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "The message goes on unchanged",
        properties: "",
        esql: "",
        input: ExampleInput::xml("<order><id>7</id></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "<order><id>7</id></order>")]),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<PassthroughProps>(),
};

properties! {
    /// Passthrough takes no properties.
    pub struct PassthroughProps {}
}

impl BuildNode for PassthroughProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Passthrough)))
    }
}

struct Passthrough;

impl Node for Passthrough {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        ctx.propagate(OutOnly::Out, msg)
    }
}

// ----- Trace ------------------------------------------------------------------------------

pub static TRACE: NodeSpec = NodeSpec {
    type_name: "Trace",
    summary: "Writes a record built from a pattern to standard output or a file, then propagates the message \
              unchanged. With `destination: none` it only propagates.",
    inputs: In::SPECS,
    outputs: OutOnly::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Switched off with `destination: none`, it only propagates",
        properties: "destination: none",
        esql: "",
        input: ExampleInput::xml("<order><id>7</id></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "<order><id>7</id></order>")]),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<TraceProps>(),
};

property_enum! {
    /// Where Trace writes its records.
    pub enum TraceDestination { None = "none", Stdout = "stdout", File = "file" }
}

properties! {
    /// Trace's properties.
    pub struct TraceProps {
        /// Where records go; `none` disables the node.
        destination: TraceDestination = "stdout",
        /// The file records are appended to when `destination` is `file`; a relative path is
        /// in the server's data folder (`--data-dir`).
        file_path: Option<String>,
        /// The record. `${Root}`, `${Body}`, `${LocalEnvironment}`, `${Environment}`,
        /// `${ExceptionList}` insert that tree (parsed in full); `${CURRENT_TIMESTAMP}` the time.
        pattern: String = "${Root}",
    }
}

enum TraceSink {
    None,
    Stdout,
    File {
        path: std::path::PathBuf,
        file: Mutex<Option<std::fs::File>>,
    },
}

/// Append `record` to the file at `path`, opening it on first use.
fn append(
    path: &std::path::Path,
    file: &Mutex<Option<std::fs::File>>,
    record: &[u8],
) -> std::io::Result<()> {
    let mut f = file.lock();
    if f.is_none() {
        *f = Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?,
        );
    }
    match f.as_mut() {
        Some(f) => f.write_all(record),
        None => Ok(()),
    }
}

struct Trace {
    sink: TraceSink,
    pattern: Vec<PatternPart>,
}

enum PatternPart {
    Literal(String),
    Root,
    Body,
    LocalEnvironment,
    Environment,
    ExceptionList,
    Timestamp,
}

impl BuildNode for TraceProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        build_trace(self, b)
    }
}

fn build_trace(c: TraceProps, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
    let sink = match c.destination {
        TraceDestination::None => TraceSink::None,
        TraceDestination::Stdout => TraceSink::Stdout,
        TraceDestination::File => {
            let path = c.file_path.as_deref().ok_or_else(|| {
                ConfigError::property("destination", "`destination: file` needs `file_path`")
            })?;
            // Records are data the server writes, kept with its other data. The file opens
            // with the first record: building a node touches no file (`sluice validate`).
            let path = b.services.data_path(std::path::Path::new(path));
            TraceSink::File {
                path,
                file: Mutex::new(None),
            }
        }
    };
    Ok(NodeImpl::Process(Arc::new(Trace {
        sink,
        pattern: parse_pattern(&c.pattern)?,
    })))
}

fn parse_pattern(p: &str) -> Result<Vec<PatternPart>, ConfigError> {
    let mut parts = Vec::new();
    let mut rest = p;
    while let Some(i) = rest.find("${") {
        if i > 0 {
            parts.push(PatternPart::Literal(rest[..i].to_string()));
        }
        let Some(end) = rest[i..].find('}') else {
            return Err(ConfigError::property(
                "pattern",
                "`${` without a closing `}`",
            ));
        };
        let name = &rest[i + 2..i + end];
        parts.push(match name {
            "Root" => PatternPart::Root,
            "Body" => PatternPart::Body,
            "LocalEnvironment" => PatternPart::LocalEnvironment,
            "Environment" => PatternPart::Environment,
            "ExceptionList" => PatternPart::ExceptionList,
            "CURRENT_TIMESTAMP" => PatternPart::Timestamp,
            other => {
                return Err(ConfigError::property("pattern", format!("unknown insert `${{{other}}}`"))
                    .with_hint("use ${Root}, ${Body}, ${LocalEnvironment}, ${Environment}, ${ExceptionList} or ${CURRENT_TIMESTAMP}"))
            }
        });
        rest = &rest[i + end + 1..];
    }
    if !rest.is_empty() {
        parts.push(PatternPart::Literal(rest.to_string()));
    }
    Ok(parts)
}

fn render_tree(t: &mut Tree, out: &mut String) -> Result<(), NodeError> {
    let r = t.root();
    t.expand_all(r)?;
    out.push_str(&format!("{t:?}"));
    Ok(())
}

impl Node for Trace {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        if matches!(self.sink, TraceSink::None) {
            return ctx.propagate(OutOnly::Out, msg);
        }
        let mut out = String::new();
        for p in &self.pattern {
            match p {
                PatternPart::Literal(s) => out.push_str(s),
                PatternPart::Root => render_tree(&mut msg.root, &mut out)?,
                PatternPart::Body => {
                    if let Some(b) = msg.body()? {
                        msg.root.expand_all(b)?;
                        let mut sub = Tree::new("Body");
                        let r = sub.root();
                        sub.copy_from(&msg.root, b, r, sluice_tree::Position::LastChild)?;
                        out.push_str(&format!("{sub:?}"));
                    }
                }
                PatternPart::LocalEnvironment => render_tree(&mut msg.local_environment, &mut out)?,
                PatternPart::Environment => render_tree(&mut ctx.inv.environment, &mut out)?,
                PatternPart::ExceptionList => render_tree(&mut msg.exception_list, &mut out)?,
                PatternPart::Timestamp => out.push_str(&crate::time::now_rfc3339()),
            }
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
        let written = match &self.sink {
            TraceSink::Stdout => std::io::stdout().lock().write_all(out.as_bytes()),
            TraceSink::File { path, file } => append(path, file, out.as_bytes())
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
            TraceSink::None => Ok(()),
        };
        if let Err(e) = written {
            return Err(NodeError::recoverable(format!(
                "cannot write the trace record: {e}"
            )));
        }
        ctx.propagate(OutOnly::Out, msg)
    }
}

// ----- Label and RouteToLabel --------------------------------------------------------------

pub static LABEL: NodeSpec = NodeSpec {
    type_name: "Label",
    summary: "A named entry point that RouteToLabel (and ESQL `PROPAGATE TO LABEL`) jumps to.",
    inputs: &[],
    outputs: OutOnly::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "A jump to `big` (from RouteToLabel or PROPAGATE TO LABEL) continues from `out`",
        properties: "label_name: big",
        esql: "",
        input: ExampleInput::xml("<order><amount>1500</amount></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "<order><amount>1500</amount></order>")]),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<LabelProps>(),
};

properties! {
    /// Label's properties.
    pub struct LabelProps {
        /// The name RouteToLabel looks for.
        label_name: String,
    }
}

impl BuildNode for LabelProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Label {
            name: self.label_name,
        })))
    }
}

/// A jump target: what reaches it goes on to `out`.
struct Label {
    name: String,
}

impl Node for Label {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        ctx.propagate(OutOnly::Out, msg)
    }

    fn label_name(&self) -> Option<&str> {
        Some(&self.name)
    }
}

pub static ROUTE_TO_LABEL: NodeSpec = NodeSpec {
    type_name: "RouteToLabel",
    summary: "Propagates the message to the Label nodes named in \
              `LocalEnvironment.Destination.RouterList.DestinationData[*].labelName`, in order.",
    inputs: In::SPECS,
    outputs: FailureOnly::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "The message jumps to the Label named in the RouterList",
        properties: "",
        esql: "",
        input: ExampleInput {
            domain: "XMLNSC",
            body: "<order><amount>1500</amount></order>",
            local_environment: &[("Destination.RouterList.DestinationData.labelName", "big")],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::ReachesLabel {
            label: "big",
            body: "<order><amount>1500</amount></order>",
        },
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<RouteToLabelProps>(),
};

terminals! {
    /// RouteToLabel's output: only its failure; the message goes on at a Label.
    pub enum FailureOnly {
        Failure = "failure": FAILURE_DOC,
    }
}

property_enum! {
    /// Which destination of the RouterList RouteToLabel uses.
    pub enum RouteToLabelMode { RouteToLast = "route_to_last", RouteToFirst = "route_to_first" }
}

properties! {
    /// RouteToLabel's properties.
    pub struct RouteToLabelProps {
        /// Which destination is used: the last in the list, or the first (the product's two
        /// modes).
        mode: RouteToLabelMode = "route_to_last",
    }
}

impl BuildNode for RouteToLabelProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(RouteToLabel {
            first: self.mode == RouteToLabelMode::RouteToFirst,
        })))
    }
}

struct RouteToLabel {
    first: bool,
}

impl Node for RouteToLabel {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let le = &mut msg.local_environment;
        let r = le.root();
        let Some(list) = le.path(r, &["Destination", "RouterList"])? else {
            return Err(NodeError::recoverable(
                "LocalEnvironment.Destination.RouterList is missing",
            ));
        };
        let mut labels = Vec::new();
        for d in le.children(list)? {
            if le.name_bytes(d) != b"DestinationData" {
                continue;
            }
            if let Some(n) = le.child_named(d, None, b"labelName", 0)?
                && let Some(v) = le.value_bytes(n)
            {
                labels.push(String::from_utf8_lossy(v).into_owned());
            }
        }
        let chosen = if self.first {
            labels.first()
        } else {
            labels.last()
        };
        match chosen {
            Some(l) => {
                let l = l.clone();
                ctx.propagate_to_label(&l, msg)
            }
            None => Err(NodeError::recoverable(
                "RouterList has no DestinationData with a labelName",
            )),
        }
    }
}

// ----- Throw ------------------------------------------------------------------------------

pub static THROW: NodeSpec = NodeSpec {
    type_name: "Throw",
    summary: "Raises a user exception, which follows the flow's catch handling.",
    inputs: In::SPECS,
    outputs: &[],
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "The message is rejected with the node's text",
        properties: "message_number: 3050, message_text: 'Orders over the credit limit are refused'",
        esql: "",
        input: ExampleInput::xml("<order><amount>1500</amount></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Raises("Orders over the credit limit are refused"),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<ThrowProps>(),
};

properties! {
    /// Throw's properties.
    pub struct ThrowProps {
        /// The exception's number.
        message_number: u32 = "3001",
        /// The exception's text.
        message_text: String = "User exception thrown by a Throw node",
    }
}

impl BuildNode for ThrowProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(Throw {
            number: self.message_number,
            text: self.message_text,
        })))
    }
}

struct Throw {
    number: u32,
    text: String,
}

impl Node for Throw {
    fn evaluate(&self, _: &mut Ctx<'_>, _: Terminal, _: &mut Message) -> Result<(), NodeError> {
        Err(NodeError::new(
            ExceptionKind::User,
            self.number,
            self.text.clone(),
        ))
    }
}

// ----- TryCatch ---------------------------------------------------------------------------

pub static TRY_CATCH: NodeSpec = NodeSpec {
    type_name: "TryCatch",
    summary: "Propagates to `try`; an exception from anything downstream of it is caught and the message \
              (with the ExceptionList) goes to `catch` instead.",
    inputs: In::SPECS,
    outputs: TryCatchOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[
        NodeExample {
            title: "Without an exception the message takes `try` only",
            properties: "",
            esql: "",
            input: ExampleInput::xml("<order><id>7</id></order>"),
            raising_downstream: &[],
            outcome: ExampleOutcome::Propagates(&[("try", "<order><id>7</id></order>")]),
            runs: Runs::Yes,
        },
        NodeExample {
            title: "An exception downstream of `try` sends the message on to `catch`",
            properties: "",
            esql: "",
            input: ExampleInput::xml("<order><id>7</id></order>"),
            raising_downstream: &["try"],
            outcome: ExampleOutcome::Propagates(&[
                ("try", "<order><id>7</id></order>"),
                ("catch", "<order><id>7</id></order>"),
            ]),
            runs: Runs::Yes,
        },
    ],
    builder: NodeBuilder::of::<TryCatchProps>(),
};

terminals! {
    /// TryCatch's outputs.
    pub enum TryCatchOutput {
        Try = "try": "The message is propagated here first.",
        Catch = "catch": CATCH_DOC,
    }
}

properties! {
    /// TryCatch takes no properties.
    pub struct TryCatchProps {}
}

impl BuildNode for TryCatchProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(TryCatch)))
    }
}

struct TryCatch;

impl Node for TryCatch {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        match ctx.propagate(TryCatchOutput::Try, msg) {
            Ok(()) => Ok(()),
            Err(e) => {
                let mut cm = msg.clone();
                e.exception.write_to(&mut cm.exception_list)?;
                ctx.propagate(TryCatchOutput::Catch, &mut cm)
                    .map_err(|mut e| {
                        e.passed_up = true;
                        e
                    })
            }
        }
    }
}

// ----- FlowOrder --------------------------------------------------------------------------

pub static FLOW_ORDER: NodeSpec = NodeSpec {
    type_name: "FlowOrder",
    summary: "Propagates the message to `first`, then (if that succeeded) the same message to `second`.",
    inputs: In::SPECS,
    outputs: FlowOrderOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "The message goes to `first`, then to `second`",
        properties: "",
        esql: "",
        input: ExampleInput::xml("<order><id>7</id></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[
            ("first", "<order><id>7</id></order>"),
            ("second", "<order><id>7</id></order>"),
        ]),
        runs: Runs::Yes,
    }],
    builder: NodeBuilder::of::<FlowOrderProps>(),
};

terminals! {
    /// FlowOrder's outputs.
    pub enum FlowOrderOutput {
        Failure = "failure": FAILURE_DOC,
        First = "first": "Receives the message first.",
        Second = "second": "Receives the message after `first` completed.",
    }
}

properties! {
    /// FlowOrder takes no properties.
    pub struct FlowOrderProps {}
}

impl BuildNode for FlowOrderProps {
    fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
        Ok(NodeImpl::Process(Arc::new(FlowOrder)))
    }
}

struct FlowOrder;

impl Node for FlowOrder {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        ctx.propagate(FlowOrderOutput::First, msg)?;
        ctx.propagate(FlowOrderOutput::Second, msg)
    }
}

/// Set a character value from a string (used by nodes that fill in trees).
pub fn set_text(t: &mut Tree, id: sluice_tree::NodeId, s: &str) {
    let txt = t.alloc_text(s.as_bytes());
    t.set_value(id, Value::Character(txt));
}
