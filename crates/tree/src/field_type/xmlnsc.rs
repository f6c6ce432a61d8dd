//! The XMLNSC field types, with the product's values (ESQL `XMLNSC.Folder` and so on): the
//! parser builds and writes them, and XPath maps them to its node kinds.
//!
//! Values documented by the product are used as documented. `BIT_STREAM` and
//! `ASIS_ELEMENT_CONTENT` are not given numerically in the product's documentation; the values
//! below are this implementation's and only need to be distinct.

/// An element with child elements (a complex element).
pub const FOLDER: u32 = 0x0100_0000;
/// An element holding only text (a simple element); its value is the text.
pub const FIELD: u32 = 0x0300_0000;
/// The product's other name for [`FIELD`].
pub const PCDATA_FIELD: u32 = FIELD;
/// A simple element whose text was (and will be written as) a CDATA section.
pub const CDATA_FIELD: u32 = 0x0300_0001;
/// An attribute written with double quotes.
pub const ATTRIBUTE: u32 = 0x0300_0100;
/// The product's explicit name for the double-quoted attribute.
pub const DOUBLE_ATTRIBUTE: u32 = ATTRIBUTE;
/// An attribute written with single quotes.
pub const SINGLE_ATTRIBUTE: u32 = 0x0300_0101;
/// A namespace declaration written with single quotes.
pub const SINGLE_NAMESPACE_DECL: u32 = 0x0300_0102;
/// A namespace declaration (`xmlns:p="uri"` or `xmlns="uri"`), written with double quotes.
pub const NAMESPACE_DECL: u32 = 0x0300_0103;
/// The product's explicit name for the double-quoted namespace declaration.
pub const DOUBLE_NAMESPACE_DECL: u32 = NAMESPACE_DECL;
/// Mixed content: text between child elements (kept only with `retain_mixed`).
pub const VALUE: u32 = 0x0200_0000;
/// The product's other name for [`VALUE`].
pub const PCDATA_VALUE: u32 = VALUE;
/// Mixed content that was a CDATA section.
pub const CDATA_VALUE: u32 = 0x0200_0001;
/// An entity reference written as `&name;`.
pub const ENTITY_REFERENCE: u32 = 0x0200_0100;
/// An inline DTD (not built by the parser; DTDs are not processed).
pub const DOCUMENT_TYPE: u32 = 0x0100_0300;
/// The XML declaration; its children are attributes `Version`, `Encoding` and `StandAlone`.
pub const XML_DECLARATION: u32 = 0x0100_0400;
/// An entity definition of an inline DTD (not built by the parser: DTDs are not processed).
pub const ENTITY_DEFINITION: u32 = 0x0300_0300;
/// An entity definition written with single quotes.
pub const SINGLE_ENTITY_DEFINITION: u32 = 0x0300_0301;
/// A comment (kept only with `retain_comments`); the value is its text.
pub const COMMENT: u32 = 0x0300_0400;
/// A processing instruction (kept only with `retain_pis`); name is the target, value the data.
pub const PROCESSING_INSTRUCTION: u32 = 0x0300_0401;
/// Raw bytes written as they are: opaque elements hold their whole XML text in one of these.
pub const BIT_STREAM: u32 = 0x0300_0500;
/// Character data written without escaping.
pub const ASIS_ELEMENT_CONTENT: u32 = 0x0300_0600;

/// The XML declaration's attributes, as the product names them. The product defines no field
/// types of their own: they are [`ATTRIBUTE`] children of the [`XML_DECLARATION`] element,
/// recognised by name (case-insensitively when writing).
pub const DECL_VERSION: &str = "Version";
pub const DECL_ENCODING: &str = "Encoding";
pub const DECL_STANDALONE: &str = "StandAlone";

/// Whether an element of this type is written inside its parent's start tag.
pub fn is_attribute_like(t: u32) -> bool {
    matches!(
        t,
        ATTRIBUTE | SINGLE_ATTRIBUTE | NAMESPACE_DECL | SINGLE_NAMESPACE_DECL
    )
}

/// Whether the type is a namespace declaration.
pub fn is_namespace_decl(t: u32) -> bool {
    matches!(t, NAMESPACE_DECL | SINGLE_NAMESPACE_DECL)
}
