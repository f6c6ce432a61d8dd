//! The message assembly a flow carries from node to node.
//!
//! The names and meanings are the product's: `Root` holds `Properties`, then the transport headers
//! (for example `HTTPInputHeader` or `MQMD`), then the body under its domain element (`XMLNSC`,
//! `JSON`, `BLOB`, …); `LocalEnvironment` holds per-path data such as `Destination`;
//! `ExceptionList` describes the last error caught. `Environment` lives with the flow invocation,
//! not with each message, so it is not part of [`Message`].

use crate::TreeError;
use crate::field_type;
use crate::text::Text;
use crate::tree::{NodeId, Tree};
use crate::value::Value;

/// One message: Root, LocalEnvironment and ExceptionList trees.
#[derive(Clone, Debug)]
pub struct Message {
    pub root: Tree,
    pub local_environment: Tree,
    pub exception_list: Tree,
}

impl Default for Message {
    fn default() -> Self {
        Message::new()
    }
}

impl Message {
    /// An empty message: a Root with an empty Properties folder.
    pub fn new() -> Message {
        let mut root = Tree::new("Root");
        let r = root.root();
        // Creating the first child of a fresh root cannot fail.
        let _ = root.create_last_child(
            r,
            field_type::NAME,
            Text::from_static("Properties"),
            Value::Null,
        );
        Message {
            root,
            local_environment: Tree::new("LocalEnvironment"),
            exception_list: Tree::new("ExceptionList"),
        }
    }

    /// The Properties folder, when present.
    pub fn properties(&mut self) -> Result<Option<NodeId>, TreeError> {
        let r = self.root.root();
        self.root.child_named(r, None, b"Properties", 0)
    }

    /// The body: the last child of Root when it is a message domain's element (`XMLNSC`,
    /// `JSON`, `BLOB`, …); a message with only headers has none.
    pub fn body(&mut self) -> Result<Option<NodeId>, TreeError> {
        let r = self.root.root();
        let last = self.root.last_child(r)?;
        Ok(last.filter(|&l| is_domain(self.root.name_bytes(l))))
    }
}

/// The names of the body domains' elements under Root, as the product names them.
pub const DOMAINS: &[&str] = &[
    "XMLNSC",
    "XMLNS",
    "XML",
    "JSON",
    "BLOB",
    "DFDL",
    "MRM",
    "MIME",
    "SOAP",
    "DataObject",
];

/// Whether an element of Root with this name is a message body.
pub fn is_domain(name: &[u8]) -> bool {
    DOMAINS.iter().any(|d| d.as_bytes() == name)
}
