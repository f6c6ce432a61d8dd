//! The WSDL 1.1 loader: a service description in the project (`services/NAME.wsdl`, with the
//! WSDL and XSD files it imports or includes) read into what SOAPInput dispatches on and what
//! SOAPRequest calls.
//!
//! Supported: SOAP 1.1 and SOAP 1.2 bindings in the document/literal (wrapped or not) and
//! rpc/literal styles; `wsdl:import` of other WSDL files; `xsd:import` and `xsd:include` of
//! schema files by `schemaLocation`. Refused, with the file and line: WSDL 2.0, `use="encoded"`,
//! document-style parts given by `type` (unless a MIME binding carries them as attachments), a
//! part naming an element no schema declares, a binding or port naming something that does not
//! exist, and files that are not well-formed XML.
//! Non-SOAP bindings (HTTP GET/POST) are skipped.

mod binary;
mod dom;
mod model;
mod served;

#[cfg(test)]
mod tests;

pub use model::{Operation, Port, Style, Wsdl};

/// WSDL 1.1's namespace.
pub const WSDL_NS: &str = "http://schemas.xmlsoap.org/wsdl/";
/// The SOAP 1.1 binding namespace.
pub const SOAP11_BINDING_NS: &str = "http://schemas.xmlsoap.org/wsdl/soap/";
/// The SOAP 1.2 binding namespace.
pub const SOAP12_BINDING_NS: &str = "http://schemas.xmlsoap.org/wsdl/soap12/";
/// The WSDL 1.1 MIME binding namespace (SOAP with Attachments).
pub const MIME_NS: &str = "http://schemas.xmlsoap.org/wsdl/mime/";
/// XML Schema's namespace.
pub const XSD_NS: &str = "http://www.w3.org/2001/XMLSchema";
