//! The XMLNSC field types, defined with the message tree so that XPath uses the same ones.

pub use sluice_tree::field_type::xmlnsc::*;
