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

const JSON: &[(&str, u32)] = &[
    ("Object", sluice_parsers::json::field_type::OBJECT),
    ("Array", sluice_parsers::json::field_type::ARRAY),
    ("NameValue", generic::NAME_VALUE),
    ("Value", generic::VALUE),
];

/// The value of `Domain.Type` (case-insensitive on the type name, as the product's toolkit
/// accepts either spelling).
pub fn qualified(domain: &str, name: &str) -> Option<u32> {
    let table = match domain.to_ascii_uppercase().as_str() {
        "XMLNSC" | "XMLNS" | "XML" => XMLNSC,
        "JSON" => JSON,
        _ => return None,
    };
    table
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| *v)
}

/// The generic types `Name`, `Value`, `NameValue`.
pub fn generic(name: &str) -> Option<u32> {
    match name {
        "Name" => Some(generic::NAME),
        "Value" => Some(generic::VALUE),
        "NameValue" => Some(generic::NAME_VALUE),
        _ => None,
    }
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
