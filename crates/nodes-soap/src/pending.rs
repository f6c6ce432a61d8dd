//! The open request of a SOAPInput invocation, answered by SOAPReply, and SOAP fault responses.

use bytes::Bytes;
use sluice_node_api::http_listener::HttpResponse;
use sluice_node_api::{Exception, Resource, ResourceError};
use sluice_parsers::soap::SoapVersion;
use sluice_parsers::soap::fault::{self, Fault, FaultCode};

use crate::wsa::Addressing;

/// The request SOAPReply answers. Like HTTPInput's, it holds no work to commit: it is in the
/// unit of work so that SOAPReply finds it, and SOAPInput answers it when the flow did not.
pub struct PendingSoapReply {
    pub sender: tokio::sync::oneshot::Sender<HttpResponse>,
    /// The request's SOAP version, which the reply keeps unless the flow changes it.
    pub version: SoapVersion,
    /// The request's WS-Addressing properties, when SOAPInput processes them.
    pub addressing: Option<Addressing>,
    /// The WS-Addressing Action of the reply.
    pub reply_action: String,
    /// SOAPInput's validator, which the reply's body must also satisfy.
    pub validator: Option<std::sync::Arc<sluice_nodes_core::validation::Validator>>,
    /// The base64Binary elements of SOAPInput's WSDL, which the reply may send as MTOM parts;
    /// `None` when SOAPInput does not validate (the product writes MTOM only then).
    pub binary_elements: Option<std::sync::Arc<std::collections::HashSet<(String, String)>>>,
}

impl PendingSoapReply {
    /// Its key in the unit of work: one request per invocation.
    pub const KEY: &str = "soap";

    /// Answer with a fault.
    pub fn fault(self, f: &Fault, detail_xml: Option<&str>) {
        let _ = self
            .sender
            .send(fault_response(self.version, f, detail_xml));
    }
}

impl Resource for PendingSoapReply {
    fn commit(&mut self) -> Result<(), ResourceError> {
        Ok(())
    }

    fn rollback(&mut self) {}
}

/// The HTTP status of a fault: SOAP 1.2 answers a sender's fault with 400, everything else is
/// 500 (SOAP 1.1 answers every fault with 500).
pub fn fault_status(version: SoapVersion, f: &Fault) -> u16 {
    match (version, f.class()) {
        (SoapVersion::V12, Some(FaultCode::Client)) => 400,
        _ => 500,
    }
}

/// A fault envelope as an HTTP response.
pub fn fault_response(version: SoapVersion, f: &Fault, detail_xml: Option<&str>) -> HttpResponse {
    let body = fault::envelope(version, f, detail_xml);
    HttpResponse {
        status: fault_status(version, f),
        headers: vec![(
            "Content-Type".into(),
            Bytes::from_static(version.content_type().as_bytes()),
        )],
        body: Bytes::from(body),
    }
}

/// The fault detail for an exception: its chain of causes, outermost first, as the
/// ExceptionList names them.
pub fn exception_detail(e: &Exception) -> String {
    let mut s = String::from("<ExceptionList xmlns=\"urn:sluice:exception-list\">");
    let mut at = Some(e);
    while let Some(x) = at {
        s.push('<');
        s.push_str(x.kind.element_name());
        s.push('>');
        for (name, v) in [
            ("Label", x.label.as_str()),
            ("NodeType", x.node_type.as_str()),
            ("Text", x.text.as_str()),
        ] {
            if v.is_empty() {
                continue;
            }
            s.push('<');
            s.push_str(name);
            s.push('>');
            fault::escape(v, &mut s);
            s.push_str("</");
            s.push_str(name);
            s.push('>');
        }
        s.push_str("<Number>");
        s.push_str(&x.number.to_string());
        s.push_str("</Number></");
        s.push_str(x.kind.element_name());
        s.push('>');
        at = x.cause.as_deref();
    }
    s.push_str("</ExceptionList>");
    s
}
