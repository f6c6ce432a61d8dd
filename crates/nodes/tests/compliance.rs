//! Every registered node type passes the compliance checks of `sluice_flow::testing::compliance`:
//! a complete declaration, building from minimal properties, propagating only to declared
//! terminals, passing downstream exceptions back, its own exceptions reaching its failure
//! terminal or the caller with an ExceptionList entry naming it, and its examples (the ones in its
//! `NodeSpec`, shown in docs/nodes.md) giving what they promise.
//!
//! The cases below give each type its minimal properties and a way to make it fail. A node type
//! registered without a case is checked with its defaults, and fails here when it needs more —
//! add a case for it. Queue nodes run against an in-memory queue manager; HTTPRequest calls a
//! local port that refuses connections; HTTPInput and MQInput are started and stopped in a flow.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use sluice_flow::Registry;
use sluice_flow::testing::{
    ComplianceCase, ComplianceEnv, Failing, FailingCase, Harness, check_node,
};
use sluice_node_api::{Message, NodeConfig, PropValue};
use sluice_nodes::Services;
use sluice_nodes::domains::BodyParsing;

const XML: &str = "<a>1</a>";
/// Well-formed up to the end tag, so that on-demand parsing fails when a node reads it.
const BROKEN_XML: &str = "<a>1</b>";

const fn case(
    type_name: &'static str,
    properties: &'static str,
    failing: Failing,
) -> ComplianceCase {
    ComplianceCase {
        type_name,
        properties,
        dynamic_outputs: &[],
        domain: "XMLNSC",
        body: XML,
        failing,
    }
}

const fn fails_with(properties: &'static str, body: &'static str) -> Failing {
    Failing::With(FailingCase {
        properties,
        domain: "XMLNSC",
        body,
    })
}

const CASES: &[ComplianceCase] = &[
    case("Passthrough", "", Failing::Never("it only propagates")),
    case(
        "Trace",
        "destination: none",
        // Appending to /dev/full fails with ENOSPC, without filling a disk.
        fails_with("destination: file, file_path: /dev/full", XML),
    ),
    case(
        "Label",
        "label_name: L",
        Failing::Never("it is only an entry point"),
    ),
    case("RouteToLabel", "", fails_with("", XML)),
    case("Throw", "", fails_with("message_text: compliance", XML)),
    case(
        "TryCatch",
        "",
        Failing::Never("it only propagates; exceptions downstream go to catch"),
    ),
    case(
        "FlowOrder",
        "",
        Failing::Never("it only propagates; exceptions downstream pass back to the caller"),
    ),
    case(
        "Filter",
        "expression: \"$Body/a = '1'\"",
        fails_with("expression: \"$Body/a = '1'\"", BROKEN_XML),
    ),
    ComplianceCase {
        dynamic_outputs: &["one"],
        ..case(
            "Route",
            "rules: { one: \"$Body/a = '1'\" }",
            fails_with("rules: { one: \"$Body/a = '1'\" }", BROKEN_XML),
        )
    },
    case(
        "Compute",
        "module: CopyAll",
        fails_with("module: Reject", XML),
    ),
    case(
        "Database",
        "module: Pass, datasource: ':memory:'",
        fails_with("module: RejectRow, datasource: ':memory:'", XML),
    ),
    case(
        "HTTPInput",
        "path: /compliance",
        Failing::Never("input node: started and stopped only"),
    ),
    // Reached without an HTTPInput, there is no request to answer.
    case("HTTPReply", "", fails_with("", XML)),
    // Port 1 on the loopback refuses connections at once.
    case(
        "HTTPRequest",
        "url: 'http://127.0.0.1:1/', timeout_secs: 2",
        fails_with("url: 'http://127.0.0.1:1/', timeout_secs: 2", XML),
    ),
    case(
        "MQInput",
        "queue: COMPLIANCE.IN",
        Failing::Never("input node: started and stopped only"),
    ),
    case(
        "MQOutput",
        "queue: COMPLIANCE.OUT",
        fails_with("queue: COMPLIANCE.SHORT", XML),
    ),
    // A message without an MQMD has no ReplyToQ to reply to.
    case("MQReply", "", fails_with("", XML)),
    case(
        "MQGet",
        "queue: COMPLIANCE.GET",
        fails_with("queue: COMPLIANCE.NOGET", XML),
    ),
];

const ESQL: &str = "
CREATE COMPUTE MODULE CopyAll
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		SET OutputRoot = InputRoot;
		RETURN TRUE;
	END;
END MODULE;

CREATE COMPUTE MODULE Reject
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		THROW USER EXCEPTION VALUES ('rejected by compliance');
	END;
END MODULE;

CREATE DATABASE MODULE Pass
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		RETURN TRUE;
	END;
END MODULE;

CREATE DATABASE MODULE RejectRow
	CREATE FUNCTION Main() RETURNS BOOLEAN
	BEGIN
		THROW USER EXCEPTION VALUES ('rejected by compliance');
	END;
END MODULE;
";

fn project_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sluice-compliance-{tag}-{}", std::process::id()));
    let esql = dir.join("esql");
    std::fs::create_dir_all(&esql).expect("create the compliance project");
    std::fs::write(esql.join("compliance.esql"), ESQL).expect("write the compliance ESQL");
    dir
}

fn queue_manager() -> Arc<sluice_qm::QueueManager> {
    let qm = sluice_qm::QueueManager::open_in_memory(sluice_qm::QmConfig::default())
        .expect("an in-memory queue manager");
    // The ORDERS queues are the ones the node types' examples name.
    for q in [
        "COMPLIANCE.IN",
        "COMPLIANCE.OUT",
        "COMPLIANCE.GET",
        "ORDERS.OUT",
        "ORDERS.REPLIES",
    ] {
        qm.define(sluice_qm::QueueDef::local(q))
            .expect("define a queue");
    }
    // A queue whose longest message is one byte: every put of a real message fails.
    let full = sluice_qm::QueueDef {
        max_msg_length: 1,
        ..sluice_qm::QueueDef::local("COMPLIANCE.SHORT")
    };
    qm.define(full).expect("define a queue for short messages");
    // A queue that refuses gets.
    let no_get = sluice_qm::QueueDef {
        get_inhibited: true,
        ..sluice_qm::QueueDef::local("COMPLIANCE.NOGET")
    };
    qm.define(no_get).expect("define a get-inhibited queue");
    qm
}

fn make_message(domain: &str, body: &[u8]) -> Result<Message, String> {
    let mut cfg = NodeConfig::default();
    cfg.insert("domain", PropValue::String(domain.into()));
    cfg.insert("parse_timing", PropValue::String("on_demand".into()));
    let parsing = BodyParsing::from_config(&cfg).map_err(|e| e.message)?;
    let mut msg = Message::new();
    parsing
        .attach(&mut msg.root, Bytes::copy_from_slice(body))
        .map_err(|e| e.to_string())?;
    Ok(msg)
}

fn serialize_body(msg: &mut Message) -> Result<String, String> {
    let (body, _) = sluice_nodes::domains::serialize_body(msg).map_err(|e| e.to_string())?;
    String::from_utf8(body.to_vec()).map_err(|e| e.to_string())
}

fn run_compliance(registry: &Registry, project: &Path) -> Vec<String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let services = Services {
        http: Arc::new(sluice_nodes::http::HttpRouter::new()),
        runtime: runtime.handle().clone(),
        qm: Some(queue_manager()),
    };
    let env = ComplianceEnv {
        registry,
        services: &services,
        project_dir: project,
        make_message: &make_message,
        serialize_body: &serialize_body,
    };
    let mut problems = Vec::new();
    for spec in registry.specs() {
        if ["Inject", "Capture"].contains(&spec.type_name) {
            continue;
        }
        let case = CASES.iter().find(|c| c.type_name == spec.type_name);
        if let Err(p) = check_node(spec, case, &env) {
            problems.extend(p);
        }
    }
    problems
}

#[test]
fn every_registered_node_type_is_compliant() {
    let mut registry = Registry::new();
    sluice_nodes::register(&mut |s| registry.register(s));
    Harness::register(&mut registry);
    for c in CASES {
        assert!(
            registry.get(c.type_name).is_some(),
            "the compliance case for `{}` names no registered node type",
            c.type_name
        );
    }
    let project = project_dir("all");
    let problems = run_compliance(&registry, &project);
    let _ = std::fs::remove_dir_all(&project);
    assert!(
        problems.is_empty(),
        "node types fail compliance:\n  {}",
        problems.join("\n  ")
    );
}

/// A node type that propagates to a terminal it never declared, and swallows exceptions.
mod misbehaving {
    use std::sync::Arc;

    use sluice_node_api::{
        Ctx, Message, Node, NodeError, NodeImpl, NodeSpec, PropKind, PropSpec, Terminal,
        TerminalSpec,
    };

    pub static SPEC: NodeSpec = NodeSpec {
        type_name: "Misbehaving",
        summary: "Propagates to an undeclared terminal and drops downstream exceptions.",
        inputs: &[TerminalSpec {
            name: "in",
            doc: "Input.",
        }],
        outputs: &[TerminalSpec {
            name: "out",
            doc: "Output.",
        }],
        dynamic_outputs: false,
        properties: &[],
        examples: &[],
        build: |_, _| Ok(NodeImpl::Process(Arc::new(Misbehaving))),
    };

    /// Declares a failure terminal and a required property, and has no compliance case.
    pub static UNDESCRIBED: NodeSpec = NodeSpec {
        type_name: "Undescribed",
        summary: "A node type added without a compliance case.",
        inputs: &[TerminalSpec {
            name: "in",
            doc: "Input.",
        }],
        outputs: &[
            TerminalSpec {
                name: "failure",
                doc: "Failures.",
            },
            TerminalSpec {
                name: "out",
                doc: "Output.",
            },
        ],
        dynamic_outputs: false,
        properties: &[PropSpec {
            name: "needed",
            kind: PropKind::String,
            default: None,
            required: true,
            doc: "",
        }],
        examples: &[],
        build: |_, _| Ok(NodeImpl::Process(Arc::new(Misbehaving))),
    };

    struct Misbehaving;

    impl Node for Misbehaving {
        fn evaluate(
            &self,
            ctx: &mut Ctx<'_>,
            _: Terminal,
            msg: &mut Message,
        ) -> Result<(), NodeError> {
            let _ = ctx.propagate(Terminal(0), msg);
            let _ = ctx.propagate(Terminal(5), msg);
            Ok(())
        }
    }
}

#[test]
fn compliance_rejects_a_node_that_breaks_the_rules() {
    let mut registry = Registry::new();
    registry.register(&misbehaving::SPEC);
    registry.register(&misbehaving::UNDESCRIBED);
    Harness::register(&mut registry);
    let project = project_dir("misbehaving");
    let problems = run_compliance(&registry, &project);
    let _ = std::fs::remove_dir_all(&project);
    let text = problems.join("\n");
    assert!(
        text.contains("terminal #5, which it does not declare"),
        "{text}"
    );
    assert!(
        text.contains("dropped an exception raised downstream"),
        "{text}"
    );
    assert!(
        text.contains("Undescribed: declares a `failure` terminal but its compliance case"),
        "{text}"
    );
    assert!(
        text.contains("Undescribed: property `needed` is not documented"),
        "{text}"
    );
    assert!(
        text.contains("Undescribed: does not build from its compliance case"),
        "{text}"
    );
    assert!(
        text.contains("Undescribed: has no example of its use"),
        "{text}"
    );
}
