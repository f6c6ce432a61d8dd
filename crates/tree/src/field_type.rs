//! Field types shared by every domain, with the product's values.
//!
//! Each domain refines these with its own types (for example XMLNSC.Attribute); the generic ones
//! below are what ESQL's `Name`, `Value` and `NameValue` mean.

/// An element with a name and children but no value (a folder).
pub const NAME: u32 = 0x0100_0000;
/// An element with a value but no name.
pub const VALUE: u32 = 0x0200_0000;
/// An element with a name and a value.
pub const NAME_VALUE: u32 = 0x0300_0000;

pub mod xmlnsc;
