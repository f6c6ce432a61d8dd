//! The sample DFDL models read the bench's payloads — the seeds' SaleEnvelope in the `fixed`
//! and `delimited` layouts, the `hl7` order and the `swift` MT543 — and write them back byte for byte, at every
//! size the suites send.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use sluice_bench::message::{Format, generate};
use sluice_dfdl::{DfdlParser, Schema, parse_to_tree};
use sluice_tree::Parser;

fn round_trip(model: &str, root: &str, format: Format) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../samples/models")
        .join(model);
    let schema = Arc::new(Schema::load(&path).unwrap());
    let parser = Arc::new(DfdlParser::new(schema, root).unwrap());
    for size in [2_000, 6_543, 16_384, 20_000, 200_000] {
        let data = generate(format, size, 1).unwrap();
        let (mut tree, id) = parse_to_tree(&parser, Bytes::from(data.clone()))
            .unwrap_or_else(|e| panic!("{model} at {size} bytes: {e}"));
        // Change a value so that the body is written from the tree.
        let env = tree.first_child(id).unwrap().unwrap();
        let first = tree.first_child(env).unwrap().unwrap();
        let v = tree.value(first);
        tree.set_value(first, v);
        let mut out = Vec::new();
        parser.serialize(&mut tree, id, &mut out).unwrap();
        assert!(
            out == data,
            "{model} at {size} bytes does not write back the same bytes"
        );
    }
}

#[test]
fn fixed_sale_model_round_trips_when_bench_payloads_parsed() {
    round_trip("sale-fixed.xsd", "SaleEnvelope", Format::Fixed);
}

#[test]
fn delimited_sale_model_round_trips_when_bench_payloads_parsed() {
    round_trip("sale-delimited.xsd", "SaleEnvelope", Format::Delimited);
}

#[test]
fn hl7_model_round_trips_when_bench_payloads_parsed() {
    round_trip("hl7-v2.xsd", "HL7", Format::Hl7);
}

#[test]
fn swift_model_round_trips_when_bench_payloads_parsed() {
    round_trip("swift-mt.xsd", "SWIFT", Format::Swift);
}
