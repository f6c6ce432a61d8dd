//! Time parse, and parse plus write, of a message with a model, in process:
//! `cargo run --release -p sluice-dfdl --example dfdl_timing -- MODEL.xsd ROOT DATA [ITERATIONS]`.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use sluice_dfdl::{DfdlParser, Schema, parse_to_tree};
use sluice_tree::Parser;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, model, root, data, rest @ ..] = args.as_slice() else {
        return Err("usage: dfdl_timing MODEL.xsd ROOT DATA [ITERATIONS]".into());
    };
    let n: u32 = rest
        .first()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(20_000);
    let schema = Arc::new(Schema::load(std::path::Path::new(model))?);
    let parser = Arc::new(DfdlParser::new(schema, root)?);
    let bytes = Bytes::from(std::fs::read(data)?);
    let start = Instant::now();
    for _ in 0..n {
        let (tree, _) = parse_to_tree(&parser, bytes.clone())?;
        std::hint::black_box(tree);
    }
    let parse = start.elapsed() / n;
    let start = Instant::now();
    for _ in 0..n {
        let (mut tree, id) = parse_to_tree(&parser, bytes.clone())?;
        let r = tree.first_child(id)?.ok_or("no root")?;
        tree.touch(r);
        let mut out = Vec::with_capacity(bytes.len());
        parser.serialize(&mut tree, id, &mut out)?;
        std::hint::black_box(out);
    }
    let both = start.elapsed() / n;
    println!(
        "{} bytes: parse {:.1} µs, parse+write {:.1} µs",
        bytes.len(),
        parse.as_secs_f64() * 1e6,
        both.as_secs_f64() * 1e6
    );
    Ok(())
}
