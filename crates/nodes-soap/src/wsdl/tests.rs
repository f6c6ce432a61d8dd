use super::*;
use crate::error::WsdlError;
use sluice_parsers::soap::SoapVersion;

const ECHO: &str = include_str!("../../../../samples/services/echo.wsdl");

fn invalid_line(r: Result<Wsdl, WsdlError>) -> Option<(u32, String)> {
    match r {
        Err(WsdlError::Invalid { line, message, .. }) => Some((line, message)),
        _ => None,
    }
}

#[test]
fn wsdl_load_reads_document_literal_operation_when_echo() {
    let w = Wsdl::parse("echo.wsdl", ECHO);
    assert!(w.is_ok(), "{w:?}");
    let Ok(w) = w else { return };
    assert_eq!(w.operations.len(), 1);
    let op = &w.operations[0];
    assert_eq!(op.name, "echo");
    assert_eq!(op.port_type, "EchoPortType");
    assert_eq!(op.style, Style::Document);
    assert_eq!(op.version, SoapVersion::V11);
    assert_eq!(op.soap_action, "http://sluice.example/samples/echo/echo");
    assert_eq!(
        op.request_element,
        Some(("http://sluice.example/samples/echo".into(), "echo".into()))
    );
    assert_eq!(w.ports.len(), 1);
    assert_eq!(w.ports[0].service, "EchoService");
}

#[test]
fn wsdl_address_is_rewritten_when_served() {
    let Ok(w) = Wsdl::parse("echo.wsdl", ECHO) else {
        panic!("echo.wsdl loads");
    };
    let served = w.with_address("http://127.0.0.1:9/x?a=1&b=2");
    assert!(
        served.contains(r#"location="http://127.0.0.1:9/x?a=1&amp;b=2""#),
        "{served}"
    );
    assert!(!served.contains("localhost:7800"));
}

const RPC_12: &str = r#"<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" xmlns:s12="http://schemas.xmlsoap.org/wsdl/soap12/"
  xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:t="urn:calc" targetNamespace="urn:calc">
  <message name="addIn"><part name="a" type="xs:int"/><part name="b" type="xs:int"/></message>
  <message name="addOut"><part name="sum" type="xs:int"/></message>
  <portType name="Calc"><operation name="add"><input message="t:addIn"/><output message="t:addOut"/></operation></portType>
  <binding name="CalcB" type="t:Calc"><s12:binding style="rpc" transport="http://schemas.xmlsoap.org/soap/http"/>
    <operation name="add"><s12:operation soapAction="urn:add"/>
      <input><s12:body use="literal" namespace="urn:calc-rpc"/></input><output><s12:body use="literal" namespace="urn:calc-rpc"/></output>
    </operation></binding>
  <service name="CalcService"><port name="P" binding="t:CalcB"><s12:address location="http://x/calc"/></port></service>
</definitions>"#;

#[test]
fn wsdl_load_reads_rpc_literal_when_soap_12() {
    let w = Wsdl::parse("calc.wsdl", RPC_12);
    assert!(w.is_ok(), "{w:?}");
    let Ok(w) = w else { return };
    let op = &w.operations[0];
    assert_eq!(op.style, Style::Rpc);
    assert_eq!(op.version, SoapVersion::V12);
    assert_eq!(
        op.request_element,
        Some(("urn:calc-rpc".into(), "add".into()))
    );
    assert_eq!(
        op.response_element,
        Some(("urn:calc-rpc".into(), "addResponse".into()))
    );
}

#[test]
fn wsdl_load_fails_with_line_when_encoded() {
    let bad = RPC_12.replacen(r#"use="literal""#, r#"use="encoded""#, 1);
    let got = invalid_line(Wsdl::parse("calc.wsdl", &bad));
    assert!(
        got.as_ref()
            .is_some_and(|(l, m)| *l == 8 && m.contains("encoded")),
        "{got:?}"
    );
}

#[test]
fn wsdl_load_fails_with_line_when_part_element_is_undeclared() {
    let bad = ECHO.replacen(r#"element="tns:echo""#, r#"element="tns:nothing""#, 1);
    let got = invalid_line(Wsdl::parse("echo.wsdl", &bad));
    assert!(
        got.as_ref().is_some_and(|(_, m)| m.contains("nothing")),
        "{got:?}"
    );
}

#[test]
fn wsdl_load_fails_with_line_when_not_well_formed() {
    let got = invalid_line(Wsdl::parse("x.wsdl", "<definitions>\n<oops></definitions>"));
    assert!(got.is_some_and(|(l, _)| l == 2));
}

#[test]
fn wsdl_load_fails_when_wsdl_20() {
    let got = invalid_line(Wsdl::parse(
        "x.wsdl",
        r#"<description xmlns="http://www.w3.org/ns/wsdl"/>"#,
    ));
    assert!(got.is_some_and(|(_, m)| m.contains("2.0")));
}

#[test]
fn wsdl_load_reads_imported_schema_when_in_project() {
    let dir = std::env::temp_dir().join(format!("sluice-wsdl-{}", std::process::id()));
    let _ = std::fs::create_dir_all(dir.join("services"));
    let schema = r#"<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="http://sluice.example/samples/echo"><xsd:element name="echo" type="xsd:string"/></xsd:schema>"#;
    let wsdl = ECHO.replace(
        "<xsd:schema targetNamespace=\"http://sluice.example/samples/echo\" elementFormDefault=\"qualified\">",
        "<xsd:schema targetNamespace=\"urn:wrapper\"><xsd:import namespace=\"http://sluice.example/samples/echo\" schemaLocation=\"echo.xsd\"/>",
    );
    let _ = std::fs::write(dir.join("services/echo.xsd"), schema);
    let _ = std::fs::write(dir.join("services/echo.wsdl"), &wsdl);
    let w = Wsdl::load(&dir, "services/echo.wsdl");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(w.is_ok(), "{w:?}");
}

#[test]
fn wsdl_load_fails_when_imported_schema_is_missing() {
    let dir = std::env::temp_dir().join(format!("sluice-wsdl-missing-{}", std::process::id()));
    let _ = std::fs::create_dir_all(dir.join("services"));
    let wsdl = ECHO.replace(
        "elementFormDefault=\"qualified\">",
        "elementFormDefault=\"qualified\"><xsd:import namespace=\"urn:x\" schemaLocation=\"gone.xsd\"/>",
    );
    let _ = std::fs::write(dir.join("services/echo.wsdl"), &wsdl);
    let w = Wsdl::load(&dir, "services/echo.wsdl");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        matches!(w, Err(WsdlError::Read { ref file, .. }) if file.contains("gone.xsd")),
        "{w:?}"
    );
}

const SWA: &str = include_str!("../../../../samples/services/sale-swa.wsdl");

#[test]
fn wsdl_load_reads_a_mime_binding_and_leaves_attachment_parts_out_of_the_body() {
    let w = Wsdl::parse("sale-swa.wsdl", SWA);
    assert!(w.is_ok(), "{w:?}");
    let Ok(w) = w else { return };
    let op = &w.operations[0];
    assert_eq!(
        op.request_element,
        Some((
            "http://WssSale.miwssoap.broker.mqst.ibm.com".into(),
            "SaleRequest".into()
        ))
    );
}

#[test]
fn wsdl_load_fails_with_line_when_a_mime_binding_is_not_multipart_related() {
    let bad = SWA.replacen(
        "<mime:multipartRelated>",
        "<mime:mimeXml part=\"parameters\"/><mime:multipartRelated>",
        1,
    );
    let got = invalid_line(Wsdl::parse("sale-swa.wsdl", &bad));
    assert!(
        got.as_ref()
            .is_some_and(|(_, m)| m.contains("mime:mimeXml")),
        "{got:?}"
    );
}
