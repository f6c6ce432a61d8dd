//! SOAP's mustUnderstand rule: a header block marked `mustUnderstand` and targeted at this node
//! (SOAP 1.1: no `actor`, or `…/actor/next`; SOAP 1.2: no `role`, `…/role/next` or
//! `…/role/ultimateReceiver`) that the node does not understand stops processing with a
//! MustUnderstand fault. A node understands the WS-Addressing blocks when it processes
//! WS-Addressing, and the blocks a flow declares with `understood_headers`.

use sluice_parsers::soap::fault::{self, Fault, FaultCode};
use sluice_parsers::soap::{ENV_11, ENV_12, SoapVersion};
use sluice_parsers::xmlnsc::field_type as xft;
use sluice_tree::{NodeId, Tree, TreeError};

use crate::wsa::{WSA_2004_NS, WSA_NS};

/// A header block's qualified name: (namespace, local name).
pub(crate) type QName = (String, String);

/// SOAP 1.1's actor that means "the next node", this one.
const ACTOR_NEXT: &str = "http://schemas.xmlsoap.org/soap/actor/next";
/// SOAP 1.2's roles every node (and the ultimate receiver) plays.
const ROLE_NEXT: &str = "http://www.w3.org/2003/05/soap-envelope/role/next";
const ROLE_ULTIMATE: &str = "http://www.w3.org/2003/05/soap-envelope/role/ultimateReceiver";

/// The header blocks a node understands.
#[derive(Clone, Debug, Default)]
pub(crate) struct Understood {
    /// The blocks declared by the node's `understood_headers`.
    pub names: Vec<QName>,
    /// Whether the node processes WS-Addressing, and so understands its blocks.
    pub wsa: bool,
}

impl Understood {
    /// The blocks named in `understood_headers` (each `{namespace}local`, or `local` for a block
    /// in no namespace), with WS-Addressing's when `wsa`; `Err` names the first malformed entry.
    pub(crate) fn from_property(list: &[String], wsa: bool) -> Result<Understood, String> {
        let mut names = Vec::with_capacity(list.len());
        for entry in list {
            names.push(parse_qname(entry).ok_or_else(|| {
                format!("`{entry}` is not a header block name of the form {{namespace}}localName")
            })?);
        }
        Ok(Understood { names, wsa })
    }

    fn understands(&self, ns: &str, local: &str) -> bool {
        (self.wsa && (ns == WSA_NS || ns == WSA_2004_NS))
            || self.names.iter().any(|(n, l)| n == ns && l == local)
    }
}

/// `{namespace}local` (Clark notation) or a bare `local`.
fn parse_qname(s: &str) -> Option<QName> {
    let s = s.trim();
    let (ns, local) = match s.strip_prefix('{') {
        Some(rest) => {
            let (ns, local) = rest.split_once('}')?;
            (ns.to_string(), local.to_string())
        }
        None => (String::new(), s.to_string()),
    };
    let valid = !local.is_empty()
        && !local
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, ':' | '{' | '}' | '<' | '>' | '"'));
    valid.then_some((ns, local))
}

/// The header blocks of the SOAP domain element `soap` (parsed) that are marked mustUnderstand,
/// are targeted at this node, and that `understood` does not cover, in document order.
pub(crate) fn not_understood(
    tree: &mut Tree,
    soap: NodeId,
    version: SoapVersion,
    understood: &Understood,
) -> Result<Vec<QName>, TreeError> {
    let Some(header) = tree.child_named(soap, None, b"Header", 0)? else {
        return Ok(Vec::new());
    };
    let env_ns = match version {
        SoapVersion::V11 => ENV_11,
        SoapVersion::V12 => ENV_12,
    };
    let mut out = Vec::new();
    for block in tree.children(header)? {
        let t = tree.field_type(block);
        if t != xft::FOLDER && t != xft::FIELD && t != xft::CDATA_FIELD {
            continue;
        }
        let mut must = false;
        let mut targeted = true;
        for a in tree.children(block)? {
            if tree.field_type(a) != xft::ATTRIBUTE || tree.namespace_bytes(a) != env_ns.as_bytes()
            {
                continue;
            }
            let value = String::from_utf8_lossy(tree.value_bytes(a).unwrap_or_default())
                .trim()
                .to_string();
            match (version, tree.name_bytes(a)) {
                (_, b"mustUnderstand") => must = value == "1" || value == "true",
                (SoapVersion::V11, b"actor") => targeted = value.is_empty() || value == ACTOR_NEXT,
                (SoapVersion::V12, b"role") => {
                    targeted = value.is_empty() || value == ROLE_NEXT || value == ROLE_ULTIMATE
                }
                _ => {}
            }
        }
        if !must || !targeted {
            continue;
        }
        let ns = String::from_utf8_lossy(tree.namespace_bytes(block)).into_owned();
        let local = String::from_utf8_lossy(tree.name_bytes(block)).into_owned();
        if !understood.understands(&ns, &local) {
            out.push((ns, local));
        }
    }
    Ok(out)
}

/// `{namespace}local` for messages.
pub(crate) fn display(names: &[QName]) -> String {
    names
        .iter()
        .map(|(ns, l)| {
            if ns.is_empty() {
                l.clone()
            } else {
                format!("{{{ns}}}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The MustUnderstand fault envelope for the blocks `names`: SOAP 1.1's `soapenv:MustUnderstand`
/// faultcode, or SOAP 1.2's Code with one `NotUnderstood` header block per name.
pub(crate) fn fault_envelope(version: SoapVersion, names: &[QName]) -> String {
    let f = Fault::new(
        FaultCode::MustUnderstand,
        version,
        format!(
            "header block(s) marked mustUnderstand were not understood: {}",
            display(names)
        ),
    );
    let body = fault::envelope(version, &f, None);
    if version == SoapVersion::V11 {
        return body;
    }
    let mut header = String::from("<soapenv:Header>");
    for (i, (ns, local)) in names.iter().enumerate() {
        if ns.is_empty() {
            header.push_str("<soapenv:NotUnderstood qname=\"");
            fault::escape(local, &mut header);
            header.push_str("\"/>");
        } else {
            header.push_str(&format!("<soapenv:NotUnderstood qname=\"nu{i}:"));
            fault::escape(local, &mut header);
            header.push_str(&format!("\" xmlns:nu{i}=\""));
            fault::escape(ns, &mut header);
            header.push_str("\"/>");
        }
    }
    header.push_str("</soapenv:Header>");
    // The fault envelope is written by `fault::envelope` with the Body straight after the
    // Envelope's start tag; the NotUnderstood blocks go in a Header before it.
    match body.find("<soapenv:Body>") {
        Some(at) => format!("{}{header}{}", &body[..at], &body[at..]),
        None => body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use sluice_parsers::soap::{self, SoapParser};

    fn parsed(text: &str) -> (Tree, NodeId) {
        let mut t = Tree::new("Root");
        let r = t.root();
        let id = soap::attach(
            &mut t,
            r,
            Bytes::copy_from_slice(text.as_bytes()),
            SoapParser::shared(),
        );
        t.expand_all(id).unwrap();
        (t, id)
    }

    const H11: &str = r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" xmlns:h="urn:h"><s:Header>
        <h:auth s:mustUnderstand="1">x</h:auth>
        <h:trace s:mustUnderstand="0">y</h:trace>
        <h:other s:mustUnderstand="1" s:actor="urn:somebody-else">z</h:other>
        <h:next s:mustUnderstand="true" s:actor="http://schemas.xmlsoap.org/soap/actor/next">n</h:next>
        </s:Header><s:Body><a/></s:Body></s:Envelope>"#;

    #[test]
    fn not_understood_names_targeted_mandatory_blocks_when_nothing_is_declared() {
        let (mut t, id) = parsed(H11);
        let n = not_understood(&mut t, id, SoapVersion::V11, &Understood::default()).unwrap();
        assert_eq!(
            n,
            vec![
                ("urn:h".to_string(), "auth".to_string()),
                ("urn:h".to_string(), "next".to_string())
            ]
        );
    }

    #[test]
    fn not_understood_is_empty_when_the_blocks_are_declared() {
        let (mut t, id) = parsed(H11);
        let u = Understood::from_property(&["{urn:h}auth".into(), "{urn:h}next".into()], false)
            .unwrap();
        assert!(
            not_understood(&mut t, id, SoapVersion::V11, &u)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn not_understood_checks_12_roles_and_skips_wsa_when_wsa_is_on() {
        let env = r#"<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope" xmlns:w="http://www.w3.org/2005/08/addressing" xmlns:h="urn:h"><e:Header>
            <w:MessageID e:mustUnderstand="true">urn:uuid:1</w:MessageID>
            <h:ult e:mustUnderstand="1" e:role="http://www.w3.org/2003/05/soap-envelope/role/ultimateReceiver"/>
            <h:none e:mustUnderstand="1" e:role="http://www.w3.org/2003/05/soap-envelope/role/none"/>
            </e:Header><e:Body><a/></e:Body></e:Envelope>"#;
        let (mut t, id) = parsed(env);
        let u = Understood::from_property(&[], true).unwrap();
        let n = not_understood(&mut t, id, SoapVersion::V12, &u).unwrap();
        assert_eq!(n, vec![("urn:h".to_string(), "ult".to_string())]);
        let n = not_understood(&mut t, id, SoapVersion::V12, &Understood::default()).unwrap();
        assert_eq!(n.len(), 2, "{n:?}");
    }

    #[test]
    fn from_property_refuses_a_name_that_is_not_a_qname() {
        let e = Understood::from_property(&["{urn:x}".into()], false).unwrap_err();
        assert!(e.contains("{urn:x}"), "{e}");
        assert!(Understood::from_property(&["p:local".into()], false).is_err());
        assert!(Understood::from_property(&["local".into()], false).is_ok());
    }

    #[test]
    fn fault_envelope_12_carries_not_understood_blocks() {
        let e = fault_envelope(SoapVersion::V12, &[("urn:h".into(), "auth".into())]);
        assert!(
            e.contains("<soapenv:Value>soapenv:MustUnderstand</soapenv:Value>"),
            "{e}"
        );
        assert!(
            e.contains(r#"<soapenv:Header><soapenv:NotUnderstood qname="nu0:auth" xmlns:nu0="urn:h"/></soapenv:Header><soapenv:Body>"#),
            "{e}"
        );
        let e = fault_envelope(SoapVersion::V11, &[("urn:h".into(), "auth".into())]);
        assert!(
            e.contains("<faultcode>soapenv:MustUnderstand</faultcode>"),
            "{e}"
        );
        assert!(e.contains("{urn:h}auth"), "{e}");
    }
}
