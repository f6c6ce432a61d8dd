//! Validation of SOAP bodies against the schemas of a WSDL's types (`validation:
//! content_and_value` on SOAPInput, for requests and the replies SOAPReply sends for them, and on
//! SOAPRequest, for what it sends and receives).

use std::path::Path;
use std::sync::Arc;

use sluice_node_api::{ConfigError, NodeError};
use sluice_nodes_core::validation::{Validation, ValidationProps, Validator};
use sluice_parsers::xmlnsc::{self, field_type as xft};
use sluice_tree::{NodeId, Tree};
use sluice_xsd::SchemaSet;

use crate::wsdl::{Operation, Style, Wsdl};

/// The validator `props` ask for over the schemas of `wsdl`, compiled now so that a schema the
/// validator cannot read fails deployment with its file and line; `None` when not validating.
pub(crate) fn wsdl_validator<'a>(
    props: &ValidationProps,
    wsdl: &Wsdl,
    operations: impl IntoIterator<Item = &'a Operation>,
    project_dir: &Path,
) -> Result<Option<Arc<Validator>>, ConfigError> {
    if props.validation == Validation::None {
        return Ok(None);
    }
    if let Some(op) = operations.into_iter().find(|o| o.style == Style::Rpc) {
        return Err(ConfigError::property(
            "validation",
            format!(
                "operation `{}` of {} is rpc/literal: its parts are typed, not elements, and only \
                 document/literal bodies are validated",
                op.name, wsdl.file
            ),
        ));
    }
    if wsdl.schemas.is_empty() {
        return Err(ConfigError::property(
            "validation",
            format!(
                "{} has no schema in its types to validate against",
                wsdl.file
            ),
        ));
    }
    let set = SchemaSet::from_parts(project_dir, &wsdl.schemas)
        .map_err(|e| ConfigError::property("wsdl_file", e.to_string()))?;
    Ok(Some(Arc::new(Validator::of_schema(
        Arc::new(set),
        wsdl.file.clone(),
        props.failure_action,
    ))))
}

/// Validate each element of the Body of the SOAP domain element `soap` as a document of its own,
/// the way the WSDL's parts declare them.
pub(crate) fn check_body(tree: &mut Tree, soap: NodeId, v: &Validator) -> Result<(), NodeError> {
    let Some(body) = tree.child_named(soap, None, b"Body", 0)? else {
        return Ok(());
    };
    let mut out = Vec::new();
    for c in tree.children(body)? {
        let t = tree.field_type(c);
        if t != xft::FOLDER && t != xft::FIELD && t != xft::CDATA_FIELD {
            continue;
        }
        out.clear();
        xmlnsc::serialize_to(tree, c, &mut out)?;
        v.check(&out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_nodes_core::validation::FailureAction;

    const ECHO: &str = include_str!("../../../samples/services/echo.wsdl");

    fn props() -> ValidationProps {
        ValidationProps {
            validation: Validation::ContentAndValue,
            failure_action: FailureAction::Exception,
        }
    }

    /// A project folder holding `services/x.wsdl` with `wsdl`.
    fn project(tag: &str, wsdl: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "sluice-soap-validation-{tag}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(dir.join("services")).unwrap();
        std::fs::write(dir.join("services/x.wsdl"), wsdl).unwrap();
        dir
    }

    fn validator_of(tag: &str, wsdl: &str) -> Result<bool, ConfigError> {
        let dir = project(tag, wsdl);
        let w = Wsdl::load(&dir, "services/x.wsdl").unwrap();
        let v = wsdl_validator(&props(), &w, &w.operations, &dir);
        let _ = std::fs::remove_dir_all(&dir);
        v.map(|v| v.is_some())
    }

    #[test]
    fn wsdl_validator_checks_elements_of_the_types_with_inherited_prefixes() {
        // The schema's `xsd:` prefix is declared on wsdl:definitions only.
        let dir = project("echo", ECHO);
        let w = Wsdl::load(&dir, "services/x.wsdl").unwrap();
        let v = wsdl_validator(&props(), &w, &w.operations, &dir)
            .unwrap()
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let ns = "http://sluice.example/samples/echo";
        v.check(format!(r#"<echo xmlns="{ns}"><text>hi</text></echo>"#).as_bytes())
            .unwrap();
        assert!(
            v.check(format!(r#"<echo xmlns="{ns}"><txt>hi</txt></echo>"#).as_bytes())
                .is_err()
        );
    }

    #[test]
    fn wsdl_validator_is_none_when_validation_is_off() {
        let dir = project("off", ECHO);
        let w = Wsdl::load(&dir, "services/x.wsdl").unwrap();
        let off = ValidationProps {
            validation: Validation::None,
            failure_action: FailureAction::Exception,
        };
        assert!(
            wsdl_validator(&off, &w, &w.operations, &dir)
                .unwrap()
                .is_none()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn wsdl_validator_fails_deployment_with_the_wsdls_line_when_a_schema_is_broken() {
        let broken = ECHO.replace(
            r#"<xsd:element name="text" type="xsd:string"/>"#,
            r#"<xsd:element name="text" type="xsd:noSuchType"/>"#,
        );
        let line = 1 + broken[..broken.find("noSuchType").unwrap()]
            .matches('\n')
            .count();
        let e = validator_of("broken", &broken).unwrap_err().to_string();
        assert!(e.contains(&format!("services/x.wsdl:{line}:")), "{e}");
    }

    #[test]
    fn wsdl_validator_refuses_rpc_operations() {
        let rpc = r#"<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" xmlns:s="http://schemas.xmlsoap.org/wsdl/soap/"
  xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:t="urn:calc" targetNamespace="urn:calc">
  <message name="addIn"><part name="a" type="xs:int"/></message>
  <portType name="Calc"><operation name="add"><input message="t:addIn"/></operation></portType>
  <binding name="B" type="t:Calc"><s:binding style="rpc" transport="http://schemas.xmlsoap.org/soap/http"/>
    <operation name="add"><s:operation soapAction="urn:add"/><input><s:body use="literal" namespace="urn:r"/></input></operation></binding>
</definitions>"#;
        let e = validator_of("rpc", rpc).unwrap_err().to_string();
        assert!(e.contains("rpc/literal"), "{e}");
    }
}
