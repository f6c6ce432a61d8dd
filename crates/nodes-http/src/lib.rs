//! HTTP nodes: HTTPInput, RESTInput and HTTPReply on the server's shared listener (the bridge to it is
//! `sluice_node_api::http_listener`), HTTPRequest and RESTRequest as clients, RESTAsyncRequest and
//! RESTAsyncResponse as an asynchronous pair (sharing `async_pair` with the SOAP pair).

pub mod async_pair;
mod client;
pub mod header;
pub mod input;
pub mod reply;
pub mod request;
pub mod rest;
pub mod rest_async;
pub mod rest_request;

pub use input::{HTTP_INPUT, PendingReply};
pub use reply::HTTP_REPLY;
pub use request::HTTP_REQUEST;
pub use rest::REST_INPUT;
pub use rest_async::{REST_ASYNC_REQUEST, REST_ASYNC_RESPONSE};
pub use rest_request::REST_REQUEST;

use sluice_node_api::NodeSpec;

/// Register this family's node types.
pub fn register(r: &mut impl FnMut(&'static NodeSpec)) {
    for s in [
        &HTTP_INPUT,
        &HTTP_REPLY,
        &HTTP_REQUEST,
        &REST_INPUT,
        &REST_REQUEST,
        &REST_ASYNC_REQUEST,
        &REST_ASYNC_RESPONSE,
        &header::HTTP_HEADER,
    ] {
        r(s);
    }
}
