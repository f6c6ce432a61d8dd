//! The JSON domain's field types, with the product's values.
//!
//! An object is a folder of name/value elements (the generic `Name` type); an array is an element of
//! type [`ARRAY`] whose children are named `Item`; strings, numbers, booleans and null are
//! name/value elements.

/// A JSON object (the same value as the generic `Name`).
pub const OBJECT: u32 = sluice_tree::field_type::NAME;
/// A JSON array (ESQL `JSON.Array`).
pub const ARRAY: u32 = 0x0100_1000;
/// A member or array item holding a string, number, boolean or null.
pub const NAME_VALUE: u32 = sluice_tree::field_type::NAME_VALUE;
