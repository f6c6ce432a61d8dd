//! Field type constants as ESQL names them (`XMLNSC.Attribute`, `JSON.Array`, `NameValue`), and
//! the matching rule of type-qualified path steps.

use sluice_parsers::xmlnsc::field_type as x;
use sluice_tree::field_type as generic;

const XMLNSC: &[(&str, u32)] = &[
    ("Folder", x::FOLDER),
    ("Field", x::FIELD),
    ("PCDataField", x::PCDATA_FIELD),
    ("CDataField", x::CDATA_FIELD),
    ("Attribute", x::ATTRIBUTE),
    ("DoubleAttribute", x::DOUBLE_ATTRIBUTE),
    ("SingleAttribute", x::SINGLE_ATTRIBUTE),
    ("NamespaceDecl", x::NAMESPACE_DECL),
    ("DoubleNamespaceDecl", x::DOUBLE_NAMESPACE_DECL),
    ("SingleNamespaceDecl", x::SINGLE_NAMESPACE_DECL),
    ("Value", x::VALUE),
    ("PCDataValue", x::PCDATA_VALUE),
    ("CDataValue", x::CDATA_VALUE),
    ("EntityReference", x::ENTITY_REFERENCE),
    ("DocumentType", x::DOCUMENT_TYPE),
    ("XmlDeclaration", x::XML_DECLARATION),
    ("XmlDecl", x::XML_DECLARATION),
    ("Comment", x::COMMENT),
    ("ProcessingInstruction", x::PROCESSING_INSTRUCTION),
    ("BitStream", x::BIT_STREAM),
    ("AsisElementContent", x::ASIS_ELEMENT_CONTENT),
];

/// XMLNSC types the tree module does not name: entity definitions of an inline DTD.
const XMLNSC_MORE: &[(&str, u32)] = &[
    ("EntityDefinition", 0x0300_0300),
    ("SingleEntityDefinition", 0x0300_0301),
    ("DoubleEntityDefinition", 0x0300_0302),
];

/// The XML and XMLNS domains' names. Sluice reads both with its XMLNSC parser, so each names
/// the XMLNSC type of the same construct (an element with children is a folder).
const XML: &[(&str, u32)] = &[
    ("Element", x::FOLDER),
    ("Attribute", x::ATTRIBUTE),
    ("attr", x::ATTRIBUTE),
    ("Content", x::VALUE),
    ("content", x::VALUE),
    ("CDataSection", x::CDATA_VALUE),
    ("AsisElementContent", x::ASIS_ELEMENT_CONTENT),
    ("BitStream", x::BIT_STREAM),
    ("Comment", x::COMMENT),
    ("ProcessingInstruction", x::PROCESSING_INSTRUCTION),
    ("pi", x::PROCESSING_INSTRUCTION),
    ("XmlDecl", x::XML_DECLARATION),
    ("XmlDeclaration", x::XML_DECLARATION),
    ("Version", x::ATTRIBUTE),
    ("Encoding", x::ATTRIBUTE),
    ("Standalone", x::ATTRIBUTE),
    ("NamespaceDecl", x::NAMESPACE_DECL),
    ("DocTypeDecl", x::DOCUMENT_TYPE),
    ("EntityReferenceStart", x::ENTITY_REFERENCE),
];

const JSON: &[(&str, u32)] = &[
    ("Object", sluice_parsers::json::field_type::OBJECT),
    ("Array", sluice_parsers::json::field_type::ARRAY),
    ("NameValue", generic::NAME_VALUE),
    ("Value", generic::VALUE),
];

/// Domains whose trees hold only the generic types: name-value headers (MQRFH2 and the
/// other MQ and HTTP headers) and the model-driven, MIME and binary domains.
const GENERIC: &[(&str, u32)] = &[
    ("Name", generic::NAME),
    ("Folder", generic::NAME),
    ("Value", generic::VALUE),
    ("NameValue", generic::NAME_VALUE),
    ("Field", generic::NAME_VALUE),
];

/// Every domain with field-type constants, and its table (for docs/esql-coverage.md).
pub const DOMAINS: &[(&str, &[(&str, u32)])] = &[
    ("XMLNSC", XMLNSC),
    ("XMLNSC", XMLNSC_MORE),
    ("XMLNS", XML),
    ("XML", XML),
    ("JSON", JSON),
    ("MQRFH2", GENERIC),
    ("MQRFH2C", GENERIC),
    ("MRM", GENERIC),
    ("DFDL", GENERIC),
    ("MIME", GENERIC),
    // The SOAP domain's trees are XML below its folders, with XMLNSC's types
    // (`SOAP.NamespaceDecl` declares a prefix on the envelope).
    ("SOAP", XMLNSC),
    ("BLOB", GENERIC),
];

/// The value of `Domain.Type` (case-insensitive on the type name, as the product's toolkit
/// accepts either spelling).
pub fn qualified(domain: &str, name: &str) -> Option<u32> {
    let domain = domain.to_ascii_uppercase();
    DOMAINS
        .iter()
        .filter(|(d, _)| *d == domain)
        .flat_map(|(_, table)| table.iter())
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| *v)
}

/// The generic types, usable without a domain.
pub const GENERIC_NAMES: &[(&str, u32)] = &[
    ("Name", generic::NAME),
    ("Value", generic::VALUE),
    ("NameValue", generic::NAME_VALUE),
];

/// The generic types `Name`, `Value`, `NameValue`.
pub fn generic(name: &str) -> Option<u32> {
    GENERIC_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
}

/// Whether an element of type `actual` matches a step qualified with `wanted`. The
/// product's generic XMLNSC types match every quoting and CDATA variant.
pub fn matches(wanted: u32, actual: u32) -> bool {
    if wanted == actual {
        return true;
    }
    match wanted {
        x::ATTRIBUTE => actual == x::SINGLE_ATTRIBUTE,
        x::NAMESPACE_DECL => actual == x::SINGLE_NAMESPACE_DECL,
        x::FIELD => actual == x::CDATA_FIELD,
        x::VALUE => actual == x::CDATA_VALUE,
        _ => false,
    }
}
