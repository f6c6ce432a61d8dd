//! Message domains as input and output nodes use them: the `domain`, `parse_timing`,
//! `opaque_elements`, `message_model` and `message_type` properties, attaching a body to Root,
//! and serialising Root's body.

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use sluice_dfdl::{DfdlParser, Schema};

use crate::validation::{FailureAction, Validation, ValidationProps, Validator};
use sluice_node_api::{ConfigError, Message, properties, property_enum};
use sluice_parsers::{blob, json, mime, soap, xmlnsc};
use sluice_tree::{NodeId, Parser, Tree, TreeError};

property_enum! {
    /// A message domain an input node parses bodies in.
    pub enum Domain {
        Blob = "BLOB", Xmlnsc = "XMLNSC", Json = "JSON", Dfdl = "DFDL", Mime = "MIME", Soap = "SOAP",
    }
}

property_enum! {
    /// When an input node parses the body.
    pub enum ParseTiming { OnDemand = "on_demand", Immediate = "immediate", Complete = "complete" }
}

properties! {
    /// How an input node parses the bodies it receives.
    pub struct BodyParsingProps {
        /// The message domain that parses the body.
        domain: Domain = "BLOB",
        /// `on_demand` parses only what the flow reads, when it reads it; `immediate` and
        /// `complete` parse the whole body on arrival, so a malformed message fails at the input
        /// node.
        parse_timing: ParseTiming = "on_demand",
        /// XMLNSC elements (names or paths such as `/Parent/SaleList`) kept as raw bytes, never
        /// parsed.
        opaque_elements: Vec<String> = "[]",
    }
}

properties! {
    /// The message model of an input node's bodies: the DFDL schema of `domain: DFDL`, the
    /// XML Schema that validates `domain: XMLNSC`.
    pub struct MessageModelProps {
        /// The schema (`models/NAME.xsd`, relative to the project folder): the DFDL schema that
        /// parses the body when `domain` is `DFDL`, the XML Schema that validates it when
        /// `domain` is `XMLNSC` and `validation` is not `none`; compiled when the flow is
        /// deployed.
        message_model: Option<String>,
        /// The global element of `message_model` that is the message's root (the message
        /// type) when `domain` is `DFDL`; optional when the model has one global element.
        message_type: Option<String>,
        ..validation: ValidationProps,
    }
}

/// The parser of a domain, with the options an input node set.
#[derive(Clone)]
enum DomainParser {
    Blob,
    Xml(Arc<xmlnsc::XmlnscParser>),
    Json(Arc<json::JsonParser>),
    Dfdl(Arc<DfdlParser>),
    Mime(Arc<mime::MimeParser>),
    Soap(Arc<soap::SoapParser>),
}

/// How an input node parses the bodies it receives.
pub struct BodyParsing {
    parser: DomainParser,
    complete: bool,
    /// Validates XMLNSC bodies before they are attached.
    validator: Option<Arc<Validator>>,
}

impl BodyParsing {
    /// From the node's `domain`, `parse_timing` and `opaque_elements` properties, for nodes
    /// that do not know their project folder (the DFDL domain is refused: its model is a file
    /// of the project).
    pub fn from_props(c: &BodyParsingProps) -> Result<BodyParsing, ConfigError> {
        if c.domain == Domain::Dfdl {
            return Err(ConfigError::property(
                "domain",
                "this node cannot parse `domain: DFDL` bodies",
            ));
        }
        let none = MessageModelProps {
            message_model: None,
            message_type: None,
            validation: ValidationProps {
                validation: Validation::None,
                failure_action: FailureAction::Exception,
            },
        };
        BodyParsing::with_model(c, &none, Path::new("."))
    }

    /// From the node's body parsing and message model properties; a DFDL `message_model` is
    /// read from `project_dir` and compiled now, so that a bad schema fails deployment.
    pub fn with_model(
        c: &BodyParsingProps,
        model: &MessageModelProps,
        project_dir: &Path,
    ) -> Result<BodyParsing, ConfigError> {
        let opaque = &c.opaque_elements;
        let validates = model.validation.validation != Validation::None;
        if validates && c.domain != Domain::Xmlnsc {
            return Err(ConfigError::property(
                "validation",
                "XML Schema validation needs `domain: XMLNSC`",
            ));
        }
        if c.domain != Domain::Dfdl {
            for (name, set, needs) in [
                (
                    "message_model",
                    model.message_model.is_some() && !validates,
                    "`domain: DFDL`, or `domain: XMLNSC` with `validation`",
                ),
                (
                    "message_type",
                    model.message_type.is_some(),
                    "`domain: DFDL`",
                ),
            ] {
                if set {
                    return Err(ConfigError::property(
                        name,
                        format!("`{name}` needs {needs}"),
                    ));
                }
            }
        }
        let validator = Validator::from_props(
            &model.validation,
            model.message_model.as_deref(),
            project_dir,
        )?
        .map(Arc::new);
        if !opaque.is_empty() && c.domain != Domain::Xmlnsc {
            return Err(ConfigError::property(
                "opaque_elements",
                "opaque elements need `domain: XMLNSC`",
            ));
        }
        let parser = match c.domain {
            Domain::Xmlnsc if opaque.is_empty() => DomainParser::Xml(shared_xml()),
            Domain::Xmlnsc => {
                let opts = xmlnsc::XmlnscOptions {
                    opaque_elements: opaque.clone(),
                    ..Default::default()
                };
                DomainParser::Xml(Arc::new(xmlnsc::XmlnscParser::new(opts)))
            }
            Domain::Json => DomainParser::Json(shared_json()),
            Domain::Blob => DomainParser::Blob,
            Domain::Dfdl => DomainParser::Dfdl(dfdl_parser(model, project_dir)?),
            Domain::Mime => DomainParser::Mime(shared_mime()),
            Domain::Soap => DomainParser::Soap(soap::SoapParser::shared()),
        };
        Ok(BodyParsing {
            parser,
            complete: c.parse_timing != ParseTiming::OnDemand,
            validator,
        })
    }

    /// `Some(true)` for XML, `Some(false)` for JSON: text domains, whose parsers read UTF-8;
    /// `None` for BLOB, whose bytes are taken as they are.
    pub fn text_domain(&self) -> Option<bool> {
        match self.parser {
            DomainParser::Xml(_) | DomainParser::Soap(_) => Some(true),
            DomainParser::Json(_) => Some(false),
            // DFDL models name their own encodings; MIME parts are bytes until reparsed.
            DomainParser::Blob | DomainParser::Dfdl(_) | DomainParser::Mime(_) => None,
        }
    }

    /// How this domain finds records in a stream (parsed record sequence): `None` for the
    /// domains that cannot (BLOB, MIME).
    pub fn record_scanner(&self) -> Option<crate::record_scan::RecordScanner> {
        use crate::record_scan::RecordScanner;
        match &self.parser {
            DomainParser::Xml(_) | DomainParser::Soap(_) => Some(RecordScanner::Xml),
            DomainParser::Json(_) => Some(RecordScanner::Json),
            DomainParser::Dfdl(p) => Some(RecordScanner::Dfdl(Arc::clone(p))),
            DomainParser::Blob | DomainParser::Mime(_) => None,
        }
    }

    /// The body kept as bytes (BLOB), as a message whose body did not parse is shown.
    pub fn blob() -> BodyParsing {
        BodyParsing {
            parser: DomainParser::Blob,
            complete: false,
            validator: None,
        }
    }

    /// Attach `bytes` as the body (last child of Root), parsing it now when the timing says so.
    /// A body that breaks its XML Schema (when the node validates) is not attached: the error
    /// names every violation kept.
    pub fn attach(&self, root: &mut Tree, bytes: Bytes) -> Result<NodeId, TreeError> {
        if let Some(v) = &self.validator {
            v.check(&bytes)?;
        }
        let r = root.root();
        let id = match &self.parser {
            DomainParser::Blob => blob::attach(root, r, bytes),
            DomainParser::Xml(p) => xmlnsc::attach(root, r, bytes, Arc::clone(p)),
            DomainParser::Json(p) => json::attach(root, r, bytes, p)?,
            DomainParser::Dfdl(p) => sluice_dfdl::attach(root, r, bytes, p),
            DomainParser::Mime(p) => mime::attach(root, r, bytes, p),
            DomainParser::Soap(p) => soap::attach(root, r, bytes, Arc::clone(p)),
        };
        if self.complete {
            root.expand_all(id)?;
        }
        Ok(id)
    }
}

/// The DFDL parser of a node's `message_model` and `message_type`.
fn dfdl_parser(c: &MessageModelProps, project_dir: &Path) -> Result<Arc<DfdlParser>, ConfigError> {
    let model = c.message_model.as_deref().ok_or_else(|| {
        ConfigError::property("message_model", "`domain: DFDL` needs `message_model`")
    })?;
    let path = project_dir.join(model);
    let schema =
        Schema::load(&path).map_err(|e| ConfigError::property("message_model", e.to_string()))?;
    let message_type = match c.message_type.as_deref() {
        Some(t) => t.to_string(),
        None => match schema.root_names().as_slice() {
            [only] => only.to_string(),
            names => {
                return Err(ConfigError::property(
                    "message_type",
                    format!(
                        "`domain: DFDL` needs `message_type`, one of: {}",
                        names.join(", ")
                    ),
                ));
            }
        },
    };
    let parser = DfdlParser::new(Arc::new(schema), &message_type)
        .map_err(|e| ConfigError::property("message_type", e.to_string()))?;
    Ok(Arc::new(parser))
}

fn shared_xml() -> Arc<xmlnsc::XmlnscParser> {
    static XML: OnceLock<Arc<xmlnsc::XmlnscParser>> = OnceLock::new();
    XML.get_or_init(|| Arc::new(xmlnsc::XmlnscParser::default()))
        .clone()
}

fn shared_json() -> Arc<json::JsonParser> {
    static JSON: OnceLock<Arc<json::JsonParser>> = OnceLock::new();
    JSON.get_or_init(|| Arc::new(json::JsonParser::default()))
        .clone()
}

fn shared_mime() -> Arc<mime::MimeParser> {
    static MIME: OnceLock<Arc<mime::MimeParser>> = OnceLock::new();
    MIME.get_or_init(|| Arc::new(mime::MimeParser::default()))
        .clone()
}

/// The parser of a domain with default options, for serialising bodies that flows built.
pub fn default_parser(domain: &str) -> Option<Arc<dyn Parser>> {
    static BLOB: OnceLock<Arc<dyn Parser>> = OnceLock::new();
    match domain {
        "XMLNSC" => Some(shared_xml()),
        "JSON" => Some(shared_json()),
        "MIME" => Some(shared_mime()),
        "BLOB" => Some(BLOB.get_or_init(|| Arc::new(blob::BlobParser)).clone()),
        "SOAP" => Some(soap::SoapParser::shared()),
        _ => None,
    }
}

/// Serialise Root's body (its last child) in its domain, with its Content-Type; empty when
/// there is no body. A MIME body is written as the MIME domain reads one: its content alone
/// when `Properties.ContentType` is set (which then carries the Content-Type), otherwise a
/// whole MIME entity, its header block first, as MQ and files carry MIME.
pub fn serialize_body(msg: &mut Message) -> Result<(Bytes, Cow<'static, str>), TreeError> {
    let r = msg.root.root();
    let in_properties = match msg.root.path(r, &["Properties", "ContentType"])? {
        Some(c) => msg
            .root
            .value_bytes(c)
            .is_some_and(|v| !v.trim_ascii().is_empty()),
        None => false,
    };
    serialize_body_as(msg, !in_properties)
}

/// [`serialize_body`] for HTTP, which carries a MIME body's Content-Type (with its boundary)
/// as a header: a MIME body is its content alone.
pub fn serialize_body_for_http(msg: &mut Message) -> Result<(Bytes, Cow<'static, str>), TreeError> {
    serialize_body_as(msg, false)
}

fn serialize_body_as(
    msg: &mut Message,
    mime_headers: bool,
) -> Result<(Bytes, Cow<'static, str>), TreeError> {
    let Some(body) = msg.body()? else {
        return Ok((Bytes::new(), Cow::Borrowed("application/octet-stream")));
    };
    if msg.root.name_bytes(body) == mime::DOMAIN.as_bytes() {
        let mut out = Vec::new();
        let ct = if mime_headers {
            mime::serialize_entity(&mut msg.root, body, &mut out)?
        } else {
            mime::serialize_content(&mut msg.root, body, &mut out)?
        };
        return Ok((Bytes::from(out), Cow::Owned(ct)));
    }
    let name = String::from_utf8_lossy(msg.root.name_bytes(body)).into_owned();
    let content_type = match name.as_str() {
        "XMLNSC" | "SOAP" => "text/xml; charset=utf-8",
        "JSON" => "application/json; charset=utf-8",
        _ => "application/octet-stream",
    };
    // A body nobody changed goes out as the bytes it came in, without a copy.
    if let Some(b) = msg.root.original_shared(body) {
        return Ok((b, Cow::Borrowed(content_type)));
    }
    let parser = msg
        .root
        .parser_of(body)
        .or_else(|| default_parser(&name))
        .ok_or_else(|| TreeError::Serialize {
            domain: "Root",
            message: format!("no serialiser for domain '{name}'"),
        })?;
    let mut out = Vec::new();
    parser.serialize(&mut msg.root, body, &mut out)?;
    Ok((Bytes::from(out), Cow::Borrowed(content_type)))
}
