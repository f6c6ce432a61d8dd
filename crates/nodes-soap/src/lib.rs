//! SOAP nodes: SOAPInput and SOAPReply serving a WSDL's operations on the server's shared HTTP
//! listener, SOAPRequest calling a SOAP service, SOAPAsyncRequest and SOAPAsyncResponse calling
//! one asynchronously, SOAPEnvelope and SOAPExtract; and the WSDL 1.1 loader they share. The SOAP domain itself is `sluice_parsers::soap`.

pub mod async_request;
pub mod async_response;
mod attachments;
pub mod client;
pub mod envelope;
pub mod error;
pub mod input;
mod mtom;
mod must_understand;
pub mod pending;
pub mod reply;
pub mod request;
mod validation;
pub mod wsa;
pub mod wsdl;

pub use async_request::SOAP_ASYNC_REQUEST;
pub use async_response::SOAP_ASYNC_RESPONSE;
pub use envelope::{SOAP_ENVELOPE, SOAP_EXTRACT};
pub use error::WsdlError;
pub use input::SOAP_INPUT;
pub use reply::SOAP_REPLY;
pub use request::SOAP_REQUEST;

use sluice_node_api::NodeSpec;

/// Where the node examples expect their WSDL, relative to the project folder.
pub const EXAMPLE_WSDL_PATH: &str = "services/echo.wsdl";
/// The WSDL of the node examples: the samples' SOAP Echo service.
pub const EXAMPLE_WSDL: &str = include_str!("../../../samples/services/echo.wsdl");

/// Register this family's node types.
pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    for s in [
        &SOAP_INPUT,
        &SOAP_REPLY,
        &SOAP_REQUEST,
        &SOAP_ASYNC_REQUEST,
        &SOAP_ASYNC_RESPONSE,
        &SOAP_ENVELOPE,
        &SOAP_EXTRACT,
    ] {
        r(s);
    }
}
