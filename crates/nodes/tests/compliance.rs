//! Every registered node type passes the compliance checks of `sluice_flow_testing::compliance`:
//! a complete declaration, building from minimal properties, propagating only to declared
//! terminals, passing downstream exceptions back, its own exceptions reaching its failure
//! terminal or the caller with an ExceptionList entry naming it, and its examples (the ones in its
//! `NodeSpec`, shown in docs/nodes.md) giving what they promise.
//!
//! The cases below give each type its minimal properties and a way to make it fail. A node type
//! registered without a case is checked with its defaults, and fails here when it needs more —
//! add a case for it. Queue nodes run against an in-memory queue manager; HTTPRequest calls a
//! local port that refuses connections, and so do RESTRequest's API, MQTTPublish's broker and
//! the Kafka nodes' cluster; HTTPInput, RESTInput, MQInput, MQTTSubscribe and KafkaConsumer are
//! started and stopped in a flow.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use sluice_flow::Registry;
use sluice_flow_testing::{
    ComplianceCase, ComplianceEnv, Failing, FailingCase, Harness, MessageError, check_node,
};
use sluice_node_api::Message;
use sluice_node_api::Services;
use sluice_nodes::domains::{BodyParsing, BodyParsingProps, Domain, ParseTiming};

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
        "HTTPHeader",
        "reply: add, reply_headers: { X-Id: $Body/a }",
        fails_with("reply: add, reply_headers: { X-Id: $Body/a }", BROKEN_XML),
    ),
    case(
        "ResetContentDescriptor",
        "domain: BLOB",
        fails_with("domain: JSON, parse_timing: immediate", XML),
    ),
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
    // sqlite_master is there in every SQLite database: no row is named `1`, so the message
    // goes to key_not_found; a missing table fails.
    case(
        "DatabaseRetrieve",
        "datasource: ':memory:', table: sqlite_master, query_elements: { name: '$Body/a' }, \
         data_elements: { type: '$Body/type' }",
        fails_with(
            "datasource: ':memory:', table: missing, data_elements: { type: '$Body/type' }",
            XML,
        ),
    ),
    ComplianceCase {
        dynamic_outputs: &["hit"],
        ..case(
            "DatabaseRoute",
            "datasource: ':memory:', table: sqlite_master, query_elements: { name: '$Body/a' }, \
             filter_table: { hit: \"$LocalEnvironment/DatabaseRoute/type = 'table'\" }",
            fails_with(
                "datasource: ':memory:', table: missing, filter_table: { hit: 'true()' }",
                XML,
            ),
        )
    },
    case(
        "DatabaseInput",
        "datasource: events.sqlite, event_query: 'SELECT 1 AS id WHERE 0', \
         end_event: 'DELETE FROM sqlite_master WHERE 0'",
        Failing::Never("input node: started and stopped only"),
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
    ComplianceCase {
        dynamic_outputs: &["getOrder"],
        ..case(
            "RESTInput",
            "api: apis/orders.yaml, base_path: /compliance-api",
            Failing::Never("input node: started and stopped only"),
        )
    },
    // The API's server is port 1 on the loopback, which refuses connections at once.
    case(
        "RESTRequest",
        "api: apis/orders.yaml, operation: createOrder, base_url: 'http://127.0.0.1:1', timeout_secs: 2",
        fails_with(
            "api: apis/orders.yaml, operation: createOrder, base_url: 'http://127.0.0.1:1', timeout_secs: 2",
            XML,
        ),
    ),
    // No RESTAsyncResponse node with its identifier runs, so there is nowhere for a response
    // to go.
    case(
        "RESTAsyncRequest",
        "unique_identifier: compliance-request, api: apis/orders.yaml, operation: createOrder, base_url: 'http://127.0.0.1:1'",
        fails_with(
            "unique_identifier: compliance-request, api: apis/orders.yaml, operation: createOrder, base_url: 'http://127.0.0.1:1'",
            XML,
        ),
    ),
    case(
        "RESTAsyncResponse",
        "unique_identifier: compliance-response",
        Failing::Never("input node: started and stopped only"),
    ),
    // The broker `local` is port 1 on the loopback, which refuses connections at once: the
    // subscriber keeps trying in the background, the publisher fails.
    case(
        "MQTTSubscribe",
        "broker: local, topics: [compliance/#]",
        Failing::Never("input node: started and stopped only"),
    ),
    case(
        "MQTTPublish",
        "broker: local, topic: compliance, ack_timeout_secs: 2",
        fails_with("broker: local, topic: compliance, ack_timeout_secs: 2", XML),
    ),
    case(
        "KafkaConsumer",
        "broker: events, topics: [compliance], group_id: compliance",
        Failing::Never("input node: started and stopped only"),
    ),
    case(
        "KafkaProducer",
        "broker: events, topic: compliance, delivery_timeout_ms: 2000",
        fails_with(
            "broker: events, topic: compliance, delivery_timeout_ms: 2000",
            XML,
        ),
    ),
    case(
        "KafkaRead",
        "broker: events, topic: compliance, timeout_ms: 2000",
        fails_with("broker: events, topic: compliance, timeout_ms: 2000", XML),
    ),
    case(
        "FileInput",
        "directory: /nonexistent/sluice-compliance",
        Failing::Never("input node: started and stopped only"),
    ),
    // The whole-file record lands in the temporary folder; no directory can be made under
    // /dev/null.
    case(
        "FileOutput",
        "directory: /tmp/sluice-compliance-file-output, file_name: record.xml",
        fails_with("directory: /dev/null, file_name: record.xml", XML),
    ),
    // No such file goes to no_match; a file longer than the record limit fails.
    case(
        "FileRead",
        "directory: /nonexistent/sluice-compliance, file_name: none.txt",
        fails_with(
            "directory: ../../samples, file_name: sluice.yaml, max_record_bytes: 1",
            XML,
        ),
    ),
    // The example's stylesheet is written into the compliance project; a body that is not
    // XML fails the transformation.
    case(
        "Validate",
        "",
        fails_with(
            "validation: content_and_value, message_model: models/example-order.xsd",
            XML,
        ),
    ),
    case(
        "XSLTransform",
        "stylesheet: xsl/order-summary.xsl",
        fails_with("stylesheet: xsl/order-summary.xsl", BROKEN_XML),
    ),
    // The example's WSDL is written into the compliance project.
    case(
        "SOAPInput",
        "wsdl_file: services/echo.wsdl, path: /compliance-soap",
        Failing::Never("input node: started and stopped only"),
    ),
    // Reached without a SOAPInput, there is no request to answer.
    case("SOAPReply", "", fails_with("", XML)),
    // A BLOB body cannot go into an envelope.
    case(
        "SOAPEnvelope",
        "",
        Failing::With(FailingCase {
            properties: "",
            domain: "BLOB",
            body: XML,
        }),
    ),
    // Port 1 on the loopback refuses connections at once.
    case(
        "SOAPRequest",
        "wsdl_file: services/echo.wsdl, operation: echo, url: 'http://127.0.0.1:1/', timeout_secs: 2",
        fails_with(
            "wsdl_file: services/echo.wsdl, operation: echo, url: 'http://127.0.0.1:1/', timeout_secs: 2",
            XML,
        ),
    ),
    // No SOAPAsyncResponse node with its identifier runs, so there is nowhere for a reply to go.
    case(
        "SOAPAsyncRequest",
        "unique_identifier: compliance-request, wsdl_file: services/echo.wsdl, operation: echo",
        fails_with(
            "unique_identifier: compliance-request, wsdl_file: services/echo.wsdl, operation: echo",
            XML,
        ),
    ),
    case(
        "SOAPAsyncResponse",
        "unique_identifier: compliance-response",
        Failing::Never("input node: started and stopped only"),
    ),
    // An XML body that is not an envelope has nothing to extract.
    case("SOAPExtract", "", fails_with("", XML)),
    case(
        "TCPIPServerInput",
        "record_detection: fixed_length, record_length_bytes: 2048",
        Failing::Never("input node: started and stopped only"),
    ),
    // Built without the server's TCP/IP address (as here) and without a port, they have no
    // port to use.
    case("TCPIPServerOutput", "", fails_with("", XML)),
    case("TCPIPServerReceive", "", fails_with("", XML)),
    case(
        "TCPIPClientInput",
        "connection_details: '127.0.0.1:1', retry_attempts: 0",
        Failing::Never("input node: started and stopped only"),
    ),
    // Port 1 on the loopback refuses connections at once.
    case(
        "TCPIPClientOutput",
        "connection_details: '127.0.0.1:1', retry_attempts: 0",
        fails_with("connection_details: '127.0.0.1:1', retry_attempts: 0", XML),
    ),
    case(
        "TCPIPClientReceive",
        "connection_details: '127.0.0.1:1', retry_attempts: 0",
        fails_with("connection_details: '127.0.0.1:1', retry_attempts: 0", XML),
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
    case(
        "AggregateControl",
        "aggregate_name: COMPLIANCE, timeout_secs: 5",
        Failing::Never("it fails only when the queue manager refuses its state"),
    ),
    // A message that passed no AggregateControl node belongs to no aggregation.
    case(
        "AggregateRequest",
        "folder_name: Part",
        fails_with("folder_name: Part", XML),
    ),
    case(
        "AggregateReply",
        "aggregate_name: COMPLIANCE",
        Failing::Never(
            "a message that answers no request goes to `unknown`; it fails only when the queue manager refuses its state",
        ),
    ),
    case(
        "Resequence",
        "sequence_number_path: '$Body/a'",
        fails_with("sequence_number_path: '$Body/a'", BROKEN_XML),
    ),
    case(
        "Sequence",
        "sequence_group_path: '$Body/a'",
        fails_with("sequence_group_path: '$Body/a'", BROKEN_XML),
    ),
    // The check feeds the declared `control` terminal; the collecting ones are named in wires.
    case(
        "Collector",
        "event_coordination: all_complete",
        Failing::Never(
            "a control message only releases complete collections; it fails only when the queue manager refuses its state",
        ),
    ),
    // A message without a timeout request raises.
    case(
        "TimeoutControl",
        "unique_identifier: COMPLIANCE",
        fails_with("unique_identifier: COMPLIANCE", XML),
    ),
    case(
        "TimeoutNotification",
        "unique_identifier: COMPLIANCE, operation_mode: controlled",
        Failing::Never("input node: started and stopped only"),
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
    let xsl = dir.join(sluice_nodes::xslt::EXAMPLE_STYLESHEET_PATH);
    std::fs::create_dir_all(xsl.parent().expect("a folder")).expect("create the xsl folder");
    std::fs::write(xsl, sluice_nodes::xslt::EXAMPLE_STYLESHEET).expect("write the stylesheet");
    let xsd = dir.join(sluice_nodes::validate::EXAMPLE_SCHEMA_PATH);
    std::fs::create_dir_all(xsd.parent().expect("a folder")).expect("create the models folder");
    std::fs::write(xsd, sluice_nodes::validate::EXAMPLE_SCHEMA).expect("write the schema");
    let api = dir.join(sluice_nodes::http::rest::EXAMPLE_DOCUMENT_PATH);
    std::fs::create_dir_all(api.parent().expect("a folder")).expect("create the apis folder");
    std::fs::write(api, sluice_nodes::http::rest::EXAMPLE_DOCUMENT).expect("write the API");
    let wsdl = dir.join(sluice_nodes::soap::EXAMPLE_WSDL_PATH);
    std::fs::create_dir_all(wsdl.parent().expect("a folder")).expect("create the services folder");
    std::fs::write(wsdl, sluice_nodes::soap::EXAMPLE_WSDL).expect("write the WSDL");
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

fn make_message(domain: &str, body: &[u8]) -> Result<Message, MessageError> {
    let domain = match domain {
        "XMLNSC" => Domain::Xmlnsc,
        "JSON" => Domain::Json,
        "BLOB" => Domain::Blob,
        other => return Err(format!("no domain {other}").into()),
    };
    let props = BodyParsingProps {
        domain,
        parse_timing: ParseTiming::OnDemand,
        opaque_elements: Vec::new(),
    };
    let parsing = BodyParsing::from_props(&props)?;
    let mut msg = Message::new();
    parsing.attach(&mut msg.root, Bytes::copy_from_slice(body))?;
    Ok(msg)
}

fn serialize_body(msg: &mut Message) -> Result<String, MessageError> {
    let (body, _) = sluice_nodes::domains::serialize_body(msg)?;
    Ok(String::from_utf8(body.to_vec())?)
}

fn run_compliance(registry: &Registry, project: &Path) -> Vec<String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let services = Services {
        http: Arc::new(sluice_node_api::http_listener::HttpRouter::new()),
        runtime: Some(runtime.handle().clone()),
        queues: Some(queue_manager()),
        brokers: [
            (
                "local".to_string(),
                sluice_node_api::BrokerDef::Mqtt(sluice_node_api::MqttBroker {
                    url: "tcp://127.0.0.1:1".into(),
                    host: "127.0.0.1".into(),
                    port: 1,
                    client_id: None,
                    username: None,
                    password_env: None,
                    tls: None,
                    keep_alive_secs: 30,
                }),
            ),
            (
                "events".to_string(),
                sluice_node_api::BrokerDef::Kafka(sluice_node_api::KafkaBroker {
                    bootstrap_servers: "127.0.0.1:1".into(),
                    client_id: None,
                    username: None,
                    password_env: None,
                    sasl_mechanism: sluice_node_api::KafkaSasl::Plain,
                    tls: None,
                }),
            ),
        ]
        .into(),
        ..Services::none()
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
        BuildContext, BuildNode, ConfigError, Ctx, Message, Node, NodeBuilder, NodeError, NodeImpl,
        NodeSpec, Terminal, Terminals, properties, terminals,
    };

    terminals! {
        enum Input {
            In = "in": "Input.",
        }
    }

    terminals! {
        enum Output {
            Out = "out": "Output.",
        }
    }

    terminals! {
        enum UndescribedOutput {
            Failure = "failure": "Failures.",
            Out = "out": "Output.",
        }
    }

    properties! {
        struct MisbehavingProps {}
    }

    properties! {
        struct UndescribedProps {
            needed: String,
        }
    }

    impl BuildNode for MisbehavingProps {
        fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
            Ok(NodeImpl::Process(Arc::new(Misbehaving)))
        }
    }

    impl BuildNode for UndescribedProps {
        fn build(self, _: &BuildContext) -> Result<NodeImpl, ConfigError> {
            Ok(NodeImpl::Process(Arc::new(Misbehaving)))
        }
    }

    pub static SPEC: NodeSpec = NodeSpec {
        type_name: "Misbehaving",
        summary: "Propagates to an undeclared terminal and drops downstream exceptions.",
        inputs: Input::SPECS,
        outputs: Output::SPECS,
        dynamic_outputs: false,
        dynamic_inputs: false,
        examples: &[],
        builder: NodeBuilder::of::<MisbehavingProps>(),
    };

    /// Declares a failure terminal and a required property, and has no compliance case.
    pub static UNDESCRIBED: NodeSpec = NodeSpec {
        type_name: "Undescribed",
        summary: "A node type added without a compliance case.",
        inputs: Input::SPECS,
        outputs: UndescribedOutput::SPECS,
        dynamic_outputs: false,
        dynamic_inputs: false,
        examples: &[],
        builder: NodeBuilder::of::<UndescribedProps>(),
    };

    struct Misbehaving;

    impl Node for Misbehaving {
        fn evaluate(
            &self,
            ctx: &mut Ctx<'_>,
            _: Terminal,
            msg: &mut Message,
        ) -> Result<(), NodeError> {
            let _ = ctx.propagate(Output::Out, msg);
            // A terminal it never declared, which the compliance check must catch.
            let _ = ctx.propagate(Terminal::at(5), msg);
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
