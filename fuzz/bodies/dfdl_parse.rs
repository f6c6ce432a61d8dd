//! The DFDL parser and serialiser on arbitrary bytes, with the sample models.
//!
//! The first byte picks the model, the rest is the message. Checks: no panic; a message that
//! parses writes data that parses again and writes the same data (parse ∘ unparse is stable).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use sluice_dfdl::{DfdlParser, Schema, parse_to_tree};
use sluice_tree::Parser;

const MODELS: [(&str, &str); 8] = [
    ("cwf-order.xsd", "Order"),
    ("tds-order.xsd", "Order"),
    ("sale-fixed.xsd", "SaleEnvelope"),
    ("sale-delimited.xsd", "SaleEnvelope"),
    ("copybook-payment.xsd", "Payment"),
    ("csv-quoted.xsd", "Contacts"),
    ("hl7-v2.xsd", "HL7"),
    ("swift-mt.xsd", "SWIFT"),
];

fn parsers() -> &'static Vec<Arc<DfdlParser>> {
    static P: OnceLock<Vec<Arc<DfdlParser>>> = OnceLock::new();
    P.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/models");
        let dir = if dir.exists() {
            dir
        } else {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/models")
        };
        MODELS
            .iter()
            .map(|(file, root)| {
                let schema = Schema::load(&dir.join(file)).expect("a sample model compiles");
                Arc::new(DfdlParser::new(Arc::new(schema), root).expect("its root exists"))
            })
            .collect()
    })
}

/// Parse completely and write from the tree (every element touched).
fn rewrite(p: &Arc<DfdlParser>, data: &[u8]) -> Option<Vec<u8>> {
    let (mut tree, id) = parse_to_tree(p, Bytes::copy_from_slice(data)).ok()?;
    let root = tree.first_child(id).ok()??;
    tree.touch(root);
    let mut out = Vec::new();
    p.serialize(&mut tree, id, &mut out).ok()?;
    Some(out)
}

pub fn run(data: &[u8]) {
    let Some((&pick, msg)) = data.split_first() else {
        return;
    };
    let ps = parsers();
    let p = &ps[usize::from(pick) % ps.len()];
    if let Some(once) = rewrite(p, msg) {
        let twice = rewrite(p, &once).expect("written data parses again");
        assert_eq!(once, twice, "parse and write is not stable");
    }
}
