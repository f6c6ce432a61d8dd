//! What each of the product's node types becomes in Sluice: the node type, each property and
//! terminal. docs/migration.md is generated from these tables.

/// How a property's value is carried across.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Conv {
    /// The text as it is.
    Text,
    /// A whole number, in the same unit on both sides.
    Int,
    /// `true` or `false`.
    Bool,
    /// `esql://routine/SCHEMA#Module.Main` → `SCHEMA.Module` (or `Module`).
    EsqlModule,
    /// A message domain: XMLNSC, JSON and BLOB as they are; XMLNS and XML read as XMLNSC.
    Domain,
    /// One of the listed product values, each with Sluice's.
    Words(&'static [(&'static str, &'static str)]),
    /// A setting Sluice's node always has: this value maps (to nothing), any other is refused.
    Expect(&'static str),
    /// A file of the workspace, carried into this project folder (`xsl/`): the path below it.
    Under(&'static str),
    /// A message type `{namespace}:name` (or `name`): the global element's name.
    MessageType,
    /// The text as a one-item list.
    List,
    /// Part of the broker the node names (host, port, TLS): written as `broker:` and a
    /// `brokers:` entry of sluice.yaml.
    Broker,
    /// A property Sluice keeps elsewhere: any value but the empty one is reported, with why.
    Elsewhere(&'static str),
    /// A check box that, ticked (`true`), sets the Sluice property to this value.
    Flag(&'static str),
    /// Seconds in the product, milliseconds in Sluice.
    SecondsAsMillis,
    /// A setting another one implies in Sluice (the reason says which): any value maps to
    /// nothing.
    Implied(&'static str),
}

/// One property of a node type: the product's attribute name, Sluice's property, how.
#[derive(Debug, Clone, Copy)]
pub struct Prop {
    pub product: &'static str,
    pub sluice: &'static str,
    pub conv: Conv,
}

/// A node type of the product and what it becomes.
#[derive(Debug, Clone, Copy)]
pub struct NodeType {
    /// The product's type: `ComIbmMQInput`.
    pub product: &'static str,
    /// The name the toolkit shows.
    pub title: &'static str,
    pub sluice: &'static str,
    pub props: &'static [Prop],
    /// Terminals whose names differ (product, Sluice); the others keep their names.
    pub terminals: &'static [(&'static str, &'static str)],
}

const fn p(product: &'static str, sluice: &'static str, conv: Conv) -> Prop {
    Prop {
        product,
        sluice,
        conv,
    }
}

const DOMAIN: Prop = p("messageDomainProperty", "domain", Conv::Domain);
const MESSAGE_TYPE: Prop = p("messageTypeProperty", "message_type", Conv::MessageType);
const MQTT_BROKER: [Prop; 4] = [
    p("hostName", "broker", Conv::Broker),
    p("port", "broker", Conv::Broker),
    p("useSSL", "broker", Conv::Broker),
    p(
        "securityIdentity",
        "",
        Conv::Elsewhere(
            "credentials belong to the broker: set `username` and `password_env` on its entry in sluice.yaml",
        ),
    ),
];
const KAFKA_BROKER: [Prop; 5] = [
    p("bootstrapServers", "broker", Conv::Broker),
    p("securityProtocol", "broker", Conv::Broker),
    p("sslProtocol", "broker", Conv::Broker),
    p("saslMechanism", "broker", Conv::Broker),
    p(
        "securityIdentity",
        "",
        Conv::Elsewhere(
            "credentials belong to the broker: set `username` and `password_env` on its entry in sluice.yaml",
        ),
    ),
];
const CLIENT_ID_SUFFIX: Prop = p("useClientIdSuffix", "", Conv::Expect("true"));
const WSDL: Prop = p("wsdlFileName", "wsdl_file", Conv::Under("services/"));
const WSDL_IMPLIED: [Prop; 3] = [
    p(
        "selectedPortType",
        "",
        Conv::Implied("the binding names its port type"),
    ),
    p(
        "selectedPort",
        "",
        Conv::Implied("the path serves the binding"),
    ),
    p(
        "targetNamespace",
        "",
        Conv::Implied("the WSDL file gives it"),
    ),
];
const HEADER_ACTION: &[(&str, &str)] = &[
    ("CarryForward", "carry_forward"),
    ("Add", "add"),
    // Sluice's `add` sets the listed headers in the folder, creating it when missing.
    ("Modify", "add"),
    ("DeleteHeader", "delete"),
];
const YES_NO: &[(&str, &str)] = &[("yes", "yes"), ("no", "no"), ("automatic", "automatic")];
const PERSISTENCE: &[(&str, &str)] = &[
    ("automatic", "as_input"),
    ("yes", "persistent"),
    ("no", "not_persistent"),
    ("asDefined", "as_queue_default"),
];
const COMPUTE_MODE: &[(&str, &str)] = &[
    ("message", "message"),
    ("destination", "local_environment"),
    ("exception", "exception"),
    ("destinationAndMessage", "message_local_environment"),
    ("exceptionAndMessage", "message_exception"),
    ("exceptionAndDestination", "local_environment_exception"),
    ("all", "all"),
];
const TRANSACTION: &[(&str, &str)] = &[("automatic", "automatic"), ("commit", "commit")];
const ESQL_COMMON: [Prop; 3] = [
    p("dataSource", "datasource", Conv::Text),
    p("transaction", "transaction", Conv::Words(TRANSACTION)),
    p(
        "throwExceptionOnDatabaseError",
        "throw_exception_on_database_error",
        Conv::Bool,
    ),
];
/// Validation settings whose product value means no validation, which is what Sluice's nodes
/// do.
const NO_VALIDATION: Prop = p("validateMaster", "", Conv::Expect("none"));
const TCPIP_DETECTION: [Prop; 2] = [
    p(
        "recordDetection",
        "record_detection",
        Conv::Words(&[
            ("fixedLength", "fixed_length"),
            ("delimited", "delimited"),
            ("connectionClosed", "connection_closed"),
        ]),
    ),
    p("recordLength", "record_length_bytes", Conv::Int),
];

/// Attributes every node may carry that change nothing Sluice does.
pub const NO_EFFECT: &[&str] = &[
    "componentLevel",
    // The toolkit's diagram: which way the node's terminals face.
    "rotation",
    "nodeLayoutStyle",
    "parserXmlnscBuildTreeUsingXMLSchema",
    "parserXmlnscMixedContentRetainMode",
    "parserXmlnscCommentsRetainMode",
    "parserXmlnscProcessingInstructionsRetainMode",
    "parserXmlnscUseForXmlnsDomain",
];

/// The product's node types Sluice has, as they map.
pub static NODE_TYPES: &[NodeType] = &[
    NodeType {
        product: "ComIbmMQInput",
        title: "MQ Input",
        sluice: "MQInput",
        props: &[
            p("queueName", "queue", Conv::Text),
            p("transactionMode", "transaction_mode", Conv::Words(YES_NO)),
            p("commitCount", "commit_count", Conv::Int),
            DOMAIN,
            MESSAGE_TYPE,
            NO_VALIDATION,
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmMQOutput",
        title: "MQ Output",
        sluice: "MQOutput",
        props: &[
            p("queueName", "queue", Conv::Text),
            p(
                "destinationMode",
                "destination_mode",
                Conv::Words(&[
                    ("queueName", "queue_name"),
                    ("replyToQueue", "reply_to_queue"),
                    ("list", "destination_list"),
                    ("destinationList", "destination_list"),
                    ("reply", "reply_to_queue"),
                ]),
            ),
            p("newMsgId", "new_msg_id", Conv::Bool),
            p("persistenceMode", "persistence", Conv::Words(PERSISTENCE)),
            p("transactionMode", "transaction_mode", Conv::Words(YES_NO)),
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmMQReply",
        title: "MQ Reply",
        sluice: "MQReply",
        props: &[
            p("persistenceMode", "persistence", Conv::Words(PERSISTENCE)),
            p("transactionMode", "transaction_mode", Conv::Words(YES_NO)),
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmMQGet",
        title: "MQ Get",
        sluice: "MQGet",
        props: &[
            p("queueName", "queue", Conv::Text),
            p("waitInterval", "wait_ms", Conv::Int),
            p("browse", "browse", Conv::Bool),
            p("getWithCorrelID", "match", Conv::Flag("correl_id")),
            p("getWithMessageID", "match", Conv::Flag("msg_id")),
            DOMAIN,
        ],
        terminals: &[("noMessage", "no_message")],
    },
    NodeType {
        product: "ComIbmWSInput",
        title: "HTTP Input",
        sluice: "HTTPInput",
        props: &[
            p("URLSpecifier", "path", Conv::Text),
            DOMAIN,
            MESSAGE_TYPE,
            NO_VALIDATION,
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmWSReply",
        title: "HTTP Reply",
        sluice: "HTTPReply",
        props: &[p(
            "ignoreTransportFailures",
            "ignore_transport_failures",
            Conv::Bool,
        )],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmWSRequest",
        title: "HTTP Request",
        sluice: "HTTPRequest",
        props: &[
            p("URLSpecifier", "url", Conv::Text),
            p("httpMethod", "method", Conv::Text),
            p("timeoutForServer", "timeout_secs", Conv::Int),
            DOMAIN,
            MESSAGE_TYPE,
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmCompute",
        title: "Compute",
        sluice: "Compute",
        props: &[
            p("computeExpression", "module", Conv::EsqlModule),
            p("computeMode", "compute_mode", Conv::Words(COMPUTE_MODE)),
            ESQL_COMMON[0],
            ESQL_COMMON[1],
            ESQL_COMMON[2],
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmFilter",
        title: "Filter",
        sluice: "Filter",
        props: &[
            p("filterExpression", "module", Conv::EsqlModule),
            ESQL_COMMON[0],
            ESQL_COMMON[1],
            ESQL_COMMON[2],
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmDatabase",
        title: "Database",
        sluice: "Database",
        props: &[
            p("statement", "module", Conv::EsqlModule),
            ESQL_COMMON[0],
            ESQL_COMMON[1],
            ESQL_COMMON[2],
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmTrace",
        title: "Trace",
        sluice: "Trace",
        props: &[
            p(
                "destination",
                "destination",
                Conv::Words(&[
                    ("none", "none"),
                    ("file", "file"),
                    ("userTrace", "stdout"),
                    ("localError", "stdout"),
                ]),
            ),
            p("filePath", "file_path", Conv::Text),
            p("pattern", "pattern", Conv::Text),
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmTryCatch",
        title: "TryCatch",
        sluice: "TryCatch",
        props: &[],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmThrow",
        title: "Throw",
        sluice: "Throw",
        props: &[
            p("messageNumber", "message_number", Conv::Int),
            p("messageText", "message_text", Conv::Text),
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmLabel",
        title: "Label",
        sluice: "Label",
        props: &[p("labelName", "label_name", Conv::Text)],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmRouteToLabel",
        title: "RouteToLabel",
        sluice: "RouteToLabel",
        props: &[p(
            "mode",
            "mode",
            Conv::Words(&[
                ("routeToLast", "route_to_last"),
                ("routeToFirst", "route_to_first"),
            ]),
        )],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmRoute",
        title: "Route",
        sluice: "Route",
        props: &[p(
            "distributionMode",
            "distribution_mode",
            Conv::Words(&[("all", "all"), ("first", "first")]),
        )],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmFlowOrder",
        title: "Flow Order",
        sluice: "FlowOrder",
        props: &[],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmPassthru",
        title: "Passthrough",
        sluice: "Passthrough",
        props: &[],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmFileInput",
        title: "File Input",
        sluice: "FileInput",
        props: &[
            p("inputDirectory", "directory", Conv::Text),
            p("filenamePattern", "file_name_pattern", Conv::Text),
            p("archiveDirectory", "archive_directory", Conv::Text),
            p(
                "recordDetection",
                "record_detection",
                Conv::Words(&[
                    ("wholeFile", "whole_file"),
                    ("fixedLength", "fixed_length"),
                    ("delimited", "delimited"),
                ]),
            ),
            p("recordLength", "record_length_bytes", Conv::Int),
            p(
                "recordDelimiter",
                "delimiter",
                Conv::Words(&[("lineEnd", "line_end"), ("customDelimiter", "custom")]),
            ),
            p(
                "replaceDuplicateArchives",
                "replace_duplicate_archives",
                Conv::Bool,
            ),
            p(
                "processedFileAction",
                "action_on_success",
                Conv::Words(&[("moveToArchive", "archive"), ("delete", "delete")]),
            ),
            DOMAIN,
            MESSAGE_TYPE,
            NO_VALIDATION,
        ],
        terminals: &[("EndOfData", "end_of_data"), ("EOD", "end_of_data")],
    },
    NodeType {
        product: "ComIbmFileOutput",
        title: "File Output",
        sluice: "FileOutput",
        props: &[
            p("outputDirectory", "directory", Conv::Text),
            p("outputFilename", "file_name", Conv::Text),
            p(
                "outputMode",
                "output_file_action",
                Conv::Words(&[("archiveAndReplace", "archive_and_replace")]),
            ),
            p(
                "replaceDuplicateArchives",
                "replace_duplicate_archives",
                Conv::Bool,
            ),
        ],
        terminals: &[
            ("finish", "finish_file"),
            ("EOD", "finish_file"),
            ("EndOfData", "end_of_data"),
        ],
    },
    NodeType {
        product: "ComIbmFileRead",
        title: "File Read",
        sluice: "FileRead",
        props: &[
            p("inputDirectory", "directory", Conv::Text),
            p("filenamePattern", "file_name", Conv::Text),
            DOMAIN,
            MESSAGE_TYPE,
        ],
        terminals: &[("noMatch", "no_match")],
    },
    NodeType {
        product: "ComIbmResetContentDescriptor",
        title: "Reset Content Descriptor",
        sluice: "ResetContentDescriptor",
        props: &[
            DOMAIN,
            p("messageDomain", "domain", Conv::Domain),
            p("resetMessageDomain", "", Conv::Expect("true")),
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmXslMqsi",
        title: "XSL Transform",
        sluice: "XSLTransform",
        props: &[p("stylesheetName", "stylesheet", Conv::Under("xsl/"))],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmTimeoutControl",
        title: "Timeout Control",
        sluice: "TimeoutControl",
        props: &[
            p("uniqueIdentifier", "unique_identifier", Conv::Text),
            p("requestLocation", "request_location", Conv::Text),
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmTimeoutNotification",
        title: "Timeout Notification",
        sluice: "TimeoutNotification",
        props: &[
            p("uniqueIdentifier", "unique_identifier", Conv::Text),
            p(
                "operationMode",
                "operation_mode",
                Conv::Words(&[("controlled", "controlled"), ("automatic", "automatic")]),
            ),
            p("timeoutInterval", "timeout_interval_secs", Conv::Int),
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmTCPIPClientInput",
        title: "TCPIP Client Input",
        sluice: "TCPIPClientInput",
        props: &[
            p("connectionDetails", "connection_details", Conv::Text),
            TCPIP_DETECTION[0],
            TCPIP_DETECTION[1],
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmTCPIPClientOutput",
        title: "TCPIP Client Output",
        sluice: "TCPIPClientOutput",
        props: &[
            p("connectionDetails", "connection_details", Conv::Text),
            p("timeoutSendingData", "write_timeout_secs", Conv::Int),
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmTCPIPClientReceive",
        title: "TCPIP Client Receive",
        sluice: "TCPIPClientReceive",
        props: &[
            p("connectionDetails", "connection_details", Conv::Text),
            p("timeoutWaitingForData", "read_timeout_secs", Conv::Int),
            TCPIP_DETECTION[0],
            TCPIP_DETECTION[1],
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmTCPIPServerInput",
        title: "TCPIP Server Input",
        sluice: "TCPIPServerInput",
        props: &[p("connectionDetails", "port", Conv::Int)],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmTCPIPServerOutput",
        title: "TCPIP Server Output",
        sluice: "TCPIPServerOutput",
        props: &[p("connectionDetails", "port", Conv::Int)],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmTCPIPServerReceive",
        title: "TCPIP Server Receive",
        sluice: "TCPIPServerReceive",
        props: &[p("connectionDetails", "port", Conv::Int)],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmAggregateControl",
        title: "Aggregate Control",
        sluice: "AggregateControl",
        props: &[
            p("aggregateName", "aggregate_name", Conv::Text),
            p("timeoutInterval", "timeout_secs", Conv::Int),
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmAggregateRequest",
        title: "Aggregate Request",
        sluice: "AggregateRequest",
        props: &[p("folderName", "folder_name", Conv::Text)],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmAggregateReply",
        title: "Aggregate Reply",
        sluice: "AggregateReply",
        props: &[p("aggregateName", "aggregate_name", Conv::Text)],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmSequence",
        title: "Sequence",
        sluice: "Sequence",
        props: &[
            p("sequenceGroup", "sequence_group_path", Conv::Text),
            p("sequenceName", "sequence_name", Conv::Text),
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmReSequence",
        title: "Resequence",
        sluice: "Resequence",
        props: &[
            p("sequenceNumber", "sequence_number_path", Conv::Text),
            p("sequenceGroup", "sequence_group_path", Conv::Text),
            p("sequenceName", "sequence_name", Conv::Text),
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmCollector",
        title: "Collector",
        sluice: "Collector",
        props: &[
            p("collectionName", "collection_name", Conv::Text),
            p("collectionExpiry", "collection_expiry_secs", Conv::Int),
            p(
                "eventCoordination",
                "event_coordination",
                Conv::Words(&[
                    ("disabled", "disabled"),
                    ("allComplete", "all_complete"),
                    ("firstComplete", "first_complete"),
                ]),
            ),
        ],
        terminals: &[("expire", "expiry")],
    },
    NodeType {
        product: "com_ibm_connector_kafka_ComIbmEventInput",
        title: "Kafka Consumer",
        sluice: "KafkaConsumer",
        props: &[
            p("connectorName", "", Conv::Expect("Kafka")),
            p("topicName", "topics", Conv::List),
            p("groupId", "group_id", Conv::Text),
            p(
                "initialOffset",
                "initial_offset",
                Conv::Words(&[("earliest", "earliest"), ("latest", "latest")]),
            ),
            p("clientId", "client_id", Conv::Text),
            p(
                "sessionTimeout",
                "session_timeout_ms",
                Conv::SecondsAsMillis,
            ),
            // Sluice commits a message's offset after the flow's unit of work, as the product
            // does with automatic commits off.
            p("enableAutoCommit", "", Conv::Expect("false")),
            CLIENT_ID_SUFFIX,
            KAFKA_BROKER[0],
            KAFKA_BROKER[1],
            KAFKA_BROKER[2],
            KAFKA_BROKER[3],
            KAFKA_BROKER[4],
            DOMAIN,
            NO_VALIDATION,
        ],
        terminals: &[],
    },
    NodeType {
        product: "com_ibm_connector_kafka_ComIbmOutput",
        title: "Kafka Producer",
        sluice: "KafkaProducer",
        props: &[
            p("connectorName", "", Conv::Expect("Kafka")),
            p("topicName", "topic", Conv::Text),
            p("clientId", "client_id", Conv::Text),
            p(
                "acks",
                "acks",
                Conv::Words(&[("0", "0"), ("1", "1"), ("-1", "all"), ("all", "all")]),
            ),
            p("timeout", "delivery_timeout_ms", Conv::SecondsAsMillis),
            CLIENT_ID_SUFFIX,
            KAFKA_BROKER[0],
            KAFKA_BROKER[1],
            KAFKA_BROKER[2],
            KAFKA_BROKER[3],
            KAFKA_BROKER[4],
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmSOAPInput",
        title: "SOAP Input",
        sluice: "SOAPInput",
        props: &[
            WSDL,
            p("urlSelector", "path", Conv::Text),
            p("selectedBinding", "binding", Conv::Text),
            WSDL_IMPLIED[0],
            WSDL_IMPLIED[1],
            WSDL_IMPLIED[2],
            p("useHTTPTransport", "", Conv::Expect("true")),
            NO_VALIDATION,
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmSOAPReply",
        title: "SOAP Reply",
        sluice: "SOAPReply",
        props: &[],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmSOAPRequest",
        title: "SOAP Request",
        sluice: "SOAPRequest",
        props: &[
            WSDL,
            p("selectedOperation", "operation", Conv::Text),
            p("selectedBinding", "binding", Conv::Text),
            p("webServiceURL", "url", Conv::Text),
            p("requestTimeout", "timeout_secs", Conv::Int),
            WSDL_IMPLIED[0],
            WSDL_IMPLIED[1],
            WSDL_IMPLIED[2],
            p("useHTTPTransport", "", Conv::Expect("true")),
        ],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmSOAPExtract",
        title: "SOAP Extract",
        sluice: "SOAPExtract",
        props: &[],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmSOAPEnvelope",
        title: "SOAP Envelope",
        sluice: "SOAPEnvelope",
        props: &[],
        terminals: &[],
    },
    NodeType {
        product: "ComIbmHTTPHeader",
        title: "HTTP Header",
        sluice: "HTTPHeader",
        props: &[
            p("httpInputHeader", "input", Conv::Words(HEADER_ACTION)),
            p("httpReplyHeader", "reply", Conv::Words(HEADER_ACTION)),
            p("httpRequestHeader", "request", Conv::Words(HEADER_ACTION)),
            p("httpResponseHeader", "response", Conv::Words(HEADER_ACTION)),
        ],
        terminals: &[],
    },
    NodeType {
        product: "com_ibm_connector_mqtt_ComIbmEventInput",
        title: "MQTT Subscribe",
        sluice: "MQTTSubscribe",
        props: &[
            p("connectorName", "", Conv::Expect("MQTT")),
            p("topicName", "topics", Conv::List),
            p("clientId", "client_id", Conv::Text),
            p("qos", "qos", Conv::Int),
            MQTT_BROKER[0],
            MQTT_BROKER[1],
            MQTT_BROKER[2],
            MQTT_BROKER[3],
            DOMAIN,
        ],
        terminals: &[],
    },
    NodeType {
        product: "com_ibm_connector_mqtt_ComIbmOutput",
        title: "MQTT Publish",
        sluice: "MQTTPublish",
        props: &[
            p("connectorName", "", Conv::Expect("MQTT")),
            p("topicName", "topic", Conv::Text),
            p("clientId", "client_id", Conv::Text),
            p("qos", "qos", Conv::Int),
            MQTT_BROKER[0],
            MQTT_BROKER[1],
            MQTT_BROKER[2],
            MQTT_BROKER[3],
        ],
        terminals: &[],
    },
];

/// The `brokers:` entry a connector node's settings make: its name and its lines. MQTT: host,
/// port and TLS (`mqtt_HOST_PORT`, `mqtts_…` with TLS). Kafka: the bootstrap servers and TLS
/// (`kafka_HOST_PORT` of the first server).
pub fn broker(product: &str, attrs: &[(String, String)]) -> (String, Vec<String>) {
    let get = |k: &str| {
        attrs
            .iter()
            .find(|(a, _)| a == k)
            .map_or("", |(_, v)| v.trim())
    };
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    };
    if product.contains("_kafka_") {
        let servers = match get("bootstrapServers") {
            "" => "localhost:9092",
            s => s,
        };
        let first = servers.split(',').next().unwrap_or(servers).trim();
        let mut lines = vec![format!("kafka: {}", crate::convert::scalar(servers))];
        if get("securityProtocol").ends_with("SSL") {
            lines.push("tls: {}".to_string());
        }
        if get("securityProtocol").starts_with("SASL") && !get("saslMechanism").is_empty() {
            lines.push(format!("sasl_mechanism: {}", get("saslMechanism")));
        }
        return (format!("kafka_{}", safe(first)), lines);
    }
    let host = match get("hostName") {
        "" => "localhost",
        h => h,
    };
    let tls = get("useSSL") == "true";
    let port = match get("port") {
        "" if tls => "8883",
        "" => "1883",
        p => p,
    };
    let scheme = if tls { "ssl" } else { "tcp" };
    (
        format!(
            "mqtt{}_{}",
            if tls { "s" } else { "" },
            safe(&format!("{host}_{port}"))
        ),
        vec![format!(
            "mqtt: {}",
            crate::convert::scalar(&format!("{scheme}://{host}:{port}"))
        )],
    )
}

/// The node type the product calls `product`, when Sluice has it.
pub fn node_type(product: &str) -> Option<&'static NodeType> {
    NODE_TYPES.iter().find(|t| t.product == product)
}

impl NodeType {
    /// Sluice's name for the terminal the product calls `name`.
    pub fn terminal(&self, name: &str) -> String {
        self.terminals
            .iter()
            .find(|(p, _)| *p == name)
            .map_or_else(|| name.to_string(), |(_, s)| s.to_string())
    }
}

/// A product value carried across by `conv`; Err with the reason when it cannot be.
pub fn convert(conv: Conv, value: &str) -> Result<Value, String> {
    Ok(match conv {
        Conv::Text => Value::Text(value.to_string()),
        Conv::Int => Value::Int(
            value
                .trim()
                .parse()
                .map_err(|_| format!("`{value}` is not a whole number"))?,
        ),
        Conv::Bool => match value {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return Err(format!("`{value}` is not true or false")),
        },
        Conv::EsqlModule => Value::Text(esql_module(value)?),
        Conv::Domain => match value {
            "XMLNSC" | "JSON" | "BLOB" | "MIME" => Value::Text(value.to_string()),
            "XMLNS" | "XML" => Value::Text("XMLNSC".into()),
            "DFDL" => Value::Text("DFDL".into()),
            "" => Value::Text("BLOB".into()),
            other => return Err(format!("the {other} domain is not in Sluice yet")),
        },
        Conv::Words(words) => match words.iter().find(|(p, _)| *p == value) {
            Some((_, s)) => Value::Text(s.to_string()),
            None => return Err(format!("`{value}` has no counterpart")),
        },
        Conv::Expect(v) if v == value => Value::None,
        Conv::Expect(v) => {
            return Err(format!("only `{v}` has a counterpart in Sluice's node"));
        }
        Conv::Under(dir) => {
            let file = value.trim_start_matches('/');
            Value::Text(if file.starts_with(dir) {
                file.to_string()
            } else {
                format!("{dir}{file}")
            })
        }
        Conv::MessageType => {
            let name = value.rsplit_once(':').map_or(value, |(_, n)| n);
            if name.is_empty() || value.starts_with('{') && !value.contains("}:") {
                return Err(format!("`{value}` is not a message type"));
            }
            Value::Text(name.to_string())
        }
        Conv::List => Value::List(vec![value.to_string()]),
        Conv::Broker => Value::None,
        Conv::Flag(word) => match value {
            "true" => Value::Text(word.to_string()),
            "false" => Value::None,
            _ => return Err(format!("`{value}` is not true or false")),
        },
        Conv::SecondsAsMillis => Value::Int(
            value
                .trim()
                .parse::<i64>()
                .map_err(|_| format!("`{value}` is not a whole number"))?
                .saturating_mul(1000),
        ),
        Conv::Implied(_) => Value::None,
        Conv::Elsewhere(_) if value.is_empty() => Value::None,
        Conv::Elsewhere(why) => return Err(why.to_string()),
    })
}

/// `esql://routine/shop.orders#Enrich.Main` → `shop.orders.Enrich`; without a schema
/// (`esql://routine/#Enrich.Main`) → `Enrich`.
pub fn esql_module(expr: &str) -> Result<String, String> {
    let rest = expr
        .strip_prefix("esql://routine/")
        .ok_or_else(|| format!("`{expr}` is not an ESQL routine reference"))?;
    let (schema, routine) = rest.split_once('#').unwrap_or(("", rest));
    let module = routine.rsplit_once('.').map_or(routine, |(m, _)| m);
    Ok(if schema.is_empty() {
        module.to_string()
    } else {
        format!("{schema}.{module}")
    })
}

/// A property value as a flow file writes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(String),
    Int(i64),
    Bool(bool),
    List(Vec<String>),
    /// Nothing to write: the setting is what Sluice's node always does.
    None,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esql_module_reads_schema_and_module_when_both_are_given() {
        assert_eq!(
            esql_module("esql://routine/shop.orders#Enrich.Main").unwrap(),
            "shop.orders.Enrich"
        );
        assert_eq!(
            esql_module("esql://routine/#Enrich.Main").unwrap(),
            "Enrich"
        );
        assert!(esql_module("java://x").is_err());
    }

    #[test]
    fn convert_refuses_values_without_counterpart() {
        assert_eq!(
            convert(Conv::Domain, "XMLNS").unwrap(),
            Value::Text("XMLNSC".into())
        );
        assert!(convert(Conv::Domain, "MRM").is_err());
        assert!(convert(Conv::Int, "ten").is_err());
        assert_eq!(
            convert(Conv::Words(COMPUTE_MODE), "destinationAndMessage").unwrap(),
            Value::Text("message_local_environment".into())
        );
    }

    #[test]
    fn broker_names_an_entry_for_each_connection() {
        let a = |kv: &[(&str, &str)]| -> Vec<(String, String)> {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            broker(
                "com_ibm_connector_kafka_ComIbmOutput",
                &a(&[
                    ("bootstrapServers", "k1:9093,k2:9093"),
                    ("securityProtocol", "SASL_SSL"),
                    ("saslMechanism", "SCRAM-SHA-512"),
                ])
            ),
            (
                "kafka_k1_9093".to_string(),
                vec![
                    "kafka: 'k1:9093,k2:9093'".to_string(),
                    "tls: {}".to_string(),
                    "sasl_mechanism: SCRAM-SHA-512".to_string()
                ]
            )
        );
        assert_eq!(
            broker(
                "com_ibm_connector_mqtt_ComIbmEventInput",
                &a(&[("hostName", "mq.example"), ("useSSL", "true")])
            ),
            (
                "mqtts_mq_example_8883".to_string(),
                vec!["mqtt: 'ssl://mq.example:8883'".to_string()]
            )
        );
        assert_eq!(convert(Conv::SecondsAsMillis, "15"), Ok(Value::Int(15_000)));
    }
}
