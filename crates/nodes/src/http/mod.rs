//! HTTP nodes: HTTPInput and HTTPReply on the server's shared listener, HTTPRequest as a client.

pub mod input;
mod queue;
pub mod reply;
pub mod request;
pub mod router;

pub use input::{HTTP_INPUT, PendingReply};
pub use reply::HTTP_REPLY;
pub use request::HTTP_REQUEST;
pub use router::{HttpRequest, HttpResponse, HttpRouter, RouteError};

/// `content-type` → `Content-Type`: header names as the product shows them in header folders.
pub fn canonical_header(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = true;
    for c in name.chars() {
        out.push(if upper { c.to_ascii_uppercase() } else { c });
        upper = c == '-';
    }
    out
}
