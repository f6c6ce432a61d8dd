//! Message domain parsers and serialisers that build and write the message tree.
//!
//! - [`xmlnsc`]: the XMLNSC domain (XML with namespaces, compact tree, on-demand parsing).
//! - [`json`]: the JSON domain (objects, arrays and values under `JSON.Data`, on-demand parsing).
//! - [`blob`]: the BLOB domain (the body as one opaque byte string).
//! - [`mime`]: the MIME domain (multipart bodies, each part in its own domain).
//! - [`soap`]: the SOAP domain (an envelope as Context, Header and Body, XML inside).

pub mod blob;
pub mod error;
pub mod json;
pub mod mime;
pub mod soap;
mod swar;
pub mod xmlnsc;

pub use error::Error;
