//! The elements a WSDL's schemas declare as binary (`xsd:base64Binary`, or XML-binary
//! Optimized Packaging's `xmime:base64Binary`), by qualified name: what SOAPReply and
//! SOAPRequest may move out of the Body as MTOM parts.

use std::collections::HashSet;

use super::XSD_NS;
use super::dom::Element;

/// The `xmime` namespace of the W3C's "Describing Media Content of Binary Data in XML".
const XMIME_NS: &str = "http://www.w3.org/2005/05/xmlmime";
/// How deep a schema's declarations are searched.
const MAX_DEPTH: usize = 64;

/// Add to `out` every element declaration of the `xsd:schema` element `schema` (namespace
/// `tns`) whose type is base64Binary: global ones in `tns`, local ones in `tns` when they are
/// qualified (`form`, or the schema's `elementFormDefault`) and in no namespace otherwise.
pub(super) fn collect(schema: &Element, tns: &str, out: &mut HashSet<(String, String)>) {
    let qualified_default = schema.attr("elementFormDefault") == Some("qualified");
    let mut stack: Vec<(&Element, usize)> = schema.children_in(XSD_NS).map(|c| (c, 0)).collect();
    while let Some((el, depth)) = stack.pop() {
        if el.local == "element"
            && let (Some(name), Some(t)) = (el.attr("name"), el.attr("type"))
            && el.qname(t).is_some_and(|(ns, local)| {
                local == "base64Binary" && (ns == XSD_NS || ns == XMIME_NS)
            })
        {
            let qualified = depth == 0
                || el
                    .attr("form")
                    .map_or(qualified_default, |f| f == "qualified");
            let ns = if qualified { tns } else { "" };
            out.insert((ns.to_string(), name.to_string()));
        }
        if depth < MAX_DEPTH {
            stack.extend(el.children_in(XSD_NS).map(|c| (c, depth + 1)));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::wsdl::Wsdl;

    #[test]
    fn binary_elements_are_found_by_qualified_name_at_every_depth() {
        let text = r#"<wsdl:definitions targetNamespace="urn:t" xmlns:tns="urn:t"
            xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:xs="http://www.w3.org/2001/XMLSchema"
            xmlns:xmime="http://www.w3.org/2005/05/xmlmime">
          <wsdl:types>
            <xs:schema targetNamespace="urn:t">
              <xs:element name="blob" type="xs:base64Binary"/>
              <xs:element name="doc">
                <xs:complexType><xs:sequence>
                  <xs:element name="local" type="xs:base64Binary"/>
                  <xs:element name="qualified" type="xmime:base64Binary" form="qualified"/>
                  <xs:element name="text" type="xs:string"/>
                </xs:sequence></xs:complexType>
              </xs:element>
            </xs:schema>
          </wsdl:types>
        </wsdl:definitions>"#;
        let w = Wsdl::parse("t.wsdl", text).unwrap();
        let mut found: Vec<(String, String)> = w.binary_elements.into_iter().collect();
        found.sort();
        let want = [("", "local"), ("urn:t", "blob"), ("urn:t", "qualified")];
        assert_eq!(
            found,
            want.map(|(n, l)| (n.to_string(), l.to_string())).to_vec()
        );
    }
}
