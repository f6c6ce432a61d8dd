//! XML Schema validation as nodes use it: the `validation` and `failure_action` properties, the
//! schema set a node's `message_model` names, and what a failure does to the message.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use sluice_node_api::{ConfigError, Message, properties, property_enum};
use sluice_tree::{TreeError, Violation};
use sluice_xsd::SchemaSet;

use crate::domains::serialize_body;

property_enum! {
    /// How far a body is validated against its XML Schema.
    pub enum Validation {
        None = "none",
        ContentAndValue = "content_and_value",
        Content = "content",
    }
}

property_enum! {
    /// What a validation failure does.
    pub enum FailureAction {
        Exception = "exception",
        ExceptionList = "exception_list",
        LocalErrorLog = "local_error_log",
        UserTrace = "user_trace",
    }
}

properties! {
    /// Validation of XMLNSC bodies against the XML Schema in `message_model`.
    pub struct ValidationProps {
        /// `content_and_value` (or `content`, which the XMLNSC domain validates the same way)
        /// validates the body against the XML Schema `message_model` names; `none` does not.
        validation: Validation = "none",
        /// On a violation: `exception` raises an exception naming the first one;
        /// `exception_list` one naming every violation; `local_error_log` logs them as warnings
        /// and `user_trace` as debug events, and the message goes on.
        failure_action: FailureAction = "exception",
    }
}

/// A compiled schema set and what to do when a body breaks it.
pub struct Validator {
    schema: Arc<SchemaSet>,
    /// The schema as the flow named it, for messages.
    name: String,
    action: FailureAction,
}

impl Validator {
    /// From a node's validation properties and the `message_model` it names: `None` when the
    /// node does not validate. The schema set is compiled now, so that a bad schema fails
    /// deployment with its file and line.
    pub fn from_props(
        props: &ValidationProps,
        model: Option<&str>,
        project_dir: &Path,
    ) -> Result<Option<Validator>, ConfigError> {
        if props.validation == Validation::None {
            return Ok(None);
        }
        let name = model.ok_or_else(|| {
            ConfigError::property(
                "message_model",
                "validation needs `message_model`: the XML Schema (models/NAME.xsd) to validate against",
            )
        })?;
        let schema = SchemaSet::load(project_dir, name)
            .map_err(|e| ConfigError::property("message_model", e.to_string()))?;
        Ok(Some(Validator {
            schema: Arc::new(schema),
            name: name.to_string(),
            action: props.failure_action,
        }))
    }

    /// A validator of a schema set compiled elsewhere (a WSDL's types); `name` names it in
    /// messages.
    pub fn of_schema(
        schema: Arc<SchemaSet>,
        name: impl Into<String>,
        action: FailureAction,
    ) -> Validator {
        Validator {
            schema,
            name: name.into(),
            action,
        }
    }

    /// The schema set.
    pub fn schema(&self) -> &Arc<SchemaSet> {
        &self.schema
    }

    /// Validate an XML document's bytes; a failure is an error unless the failure action only
    /// logs it.
    pub fn check(&self, document: &[u8]) -> Result<(), TreeError> {
        let Err(errors) = self.schema.validate(document) else {
            return Ok(());
        };
        let mut violations: Vec<Violation> = errors
            .into_iter()
            .map(|e| Violation {
                line: e.line,
                column: e.column,
                path: e.path,
                message: e.message,
            })
            .collect();
        match self.action {
            FailureAction::Exception => {
                violations.truncate(1);
            }
            FailureAction::ExceptionList => {}
            FailureAction::LocalErrorLog => {
                for v in &violations {
                    tracing::warn!(violation = %v, schema = %self.name, "A message does not match its XML Schema.");
                }
                return Ok(());
            }
            FailureAction::UserTrace => {
                for v in &violations {
                    tracing::debug!(violation = %v, schema = %self.name, "A message does not match its XML Schema.");
                }
                return Ok(());
            }
        }
        Err(TreeError::Validation {
            domain: "XMLNSC",
            schema: self.name.clone(),
            violations,
        })
    }
}

properties! {
    /// Validation of the XMLNSC body an output node writes.
    pub struct OutputValidationProps {
        /// The XML Schema (`models/NAME.xsd`, relative to the project folder) the written body
        /// is validated against when `validation` is not `none`; compiled when the flow is
        /// deployed.
        message_model: Option<String>,
        ..validation: ValidationProps,
    }
}

impl OutputValidationProps {
    /// The validator these properties ask for, if any.
    pub fn validator(&self, project_dir: &Path) -> Result<Option<Validator>, ConfigError> {
        if self.validation.validation == Validation::None && self.message_model.is_some() {
            return Err(ConfigError::property(
                "message_model",
                "`message_model` is only read with `validation`",
            ));
        }
        Validator::from_props(&self.validation, self.message_model.as_deref(), project_dir)
    }
}

/// Serialise Root's body as [`serialize_body`] does, then validate it when `validator` is set
/// and the body is XML: the bytes checked are the bytes written.
pub fn serialize_validated(
    msg: &mut Message,
    validator: Option<&Validator>,
) -> Result<(Bytes, std::borrow::Cow<'static, str>), TreeError> {
    let (bytes, content_type) = serialize_body(msg)?;
    if let Some(v) = validator
        && content_type.starts_with("text/xml")
    {
        v.check(&bytes)?;
    }
    Ok((bytes, content_type))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::domains::{BodyParsing, BodyParsingProps, Domain, MessageModelProps, ParseTiming};

    const SCHEMA: &str = r#"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:element name="a"><xs:complexType><xs:sequence>
    <xs:element name="n" type="xs:int" maxOccurs="3"/>
  </xs:sequence></xs:complexType></xs:element>
</xs:schema>"#;

    /// One project folder for the tests of this process, written once.
    fn project() -> PathBuf {
        static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
        DIR.get_or_init(|| {
            let dir =
                std::env::temp_dir().join(format!("sluice-validation-{}", std::process::id()));
            std::fs::create_dir_all(dir.join("models")).unwrap();
            std::fs::write(dir.join("models/a.xsd"), SCHEMA).unwrap();
            dir
        })
        .clone()
    }

    fn validator(action: FailureAction) -> Validator {
        let props = ValidationProps {
            validation: Validation::ContentAndValue,
            failure_action: action,
        };
        Validator::from_props(&props, Some("models/a.xsd"), &project())
            .unwrap()
            .unwrap()
    }

    fn violations(e: TreeError) -> Vec<Violation> {
        match e {
            TreeError::Validation { violations, .. } => violations,
            other => panic!("{other}"),
        }
    }

    #[test]
    fn check_keeps_the_first_violation_when_the_action_is_exception() {
        let bad = b"<a><n>x</n><n>y</n></a>";
        let v = violations(validator(FailureAction::Exception).check(bad).unwrap_err());
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].path, "/a/n");
    }

    #[test]
    fn check_keeps_every_violation_when_the_action_is_exception_list() {
        let bad = b"<a><n>x</n><n>y</n></a>";
        let v = violations(
            validator(FailureAction::ExceptionList)
                .check(bad)
                .unwrap_err(),
        );
        assert_eq!(v.len(), 2);
    }

    #[test]
    fn check_lets_the_message_go_on_when_the_action_only_logs() {
        let bad = b"<a><n>x</n></a>";
        assert_eq!(validator(FailureAction::LocalErrorLog).check(bad), Ok(()));
        assert_eq!(validator(FailureAction::UserTrace).check(bad), Ok(()));
    }

    #[test]
    fn from_props_needs_a_model_when_validating() {
        let props = ValidationProps {
            validation: Validation::Content,
            failure_action: FailureAction::Exception,
        };
        let err = Validator::from_props(&props, None, &project())
            .err()
            .unwrap();
        assert!(err.to_string().contains("message_model"), "{err}");
    }

    fn parsing(domain: Domain, validation: Validation) -> Result<BodyParsing, ConfigError> {
        let c = BodyParsingProps {
            domain,
            parse_timing: ParseTiming::OnDemand,
            opaque_elements: Vec::new(),
        };
        let m = MessageModelProps {
            message_model: Some("models/a.xsd".into()),
            message_type: None,
            validation: ValidationProps {
                validation,
                failure_action: FailureAction::ExceptionList,
            },
        };
        BodyParsing::with_model(&c, &m, &project())
    }

    #[test]
    fn attach_refuses_the_body_when_it_breaks_the_schema() {
        let p = parsing(Domain::Xmlnsc, Validation::ContentAndValue).unwrap();
        let mut msg = Message::new();
        let bad = bytes::Bytes::from_static(b"<a><m/></a>");
        assert!(matches!(
            p.attach(&mut msg.root, bad),
            Err(TreeError::Validation { .. })
        ));
        let good = bytes::Bytes::from_static(b"<a><n>1</n></a>");
        assert!(p.attach(&mut msg.root, good).is_ok());
    }

    #[test]
    fn with_model_refuses_validation_when_the_domain_is_not_xmlnsc() {
        let err = parsing(Domain::Json, Validation::ContentAndValue)
            .err()
            .unwrap();
        assert!(err.to_string().contains("XMLNSC"), "{err}");
        let err = parsing(Domain::Xmlnsc, Validation::None).err().unwrap();
        assert!(err.to_string().contains("message_model"), "{err}");
    }
}
