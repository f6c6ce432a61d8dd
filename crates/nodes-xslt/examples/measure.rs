//! The engine alone on one message: compile the stylesheet once, then parse the message,
//! transform and serialise it N times; prints microseconds per message.
//!
//! cargo run --release -p sluice-nodes-xslt --example measure -- STYLESHEET MESSAGE [N]

use std::path::Path;
use std::time::Instant;

use sluice_nodes_xslt::Stylesheet;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, sheet, message, rest @ ..] = args.as_slice() else {
        return Err("usage: measure STYLESHEET MESSAGE [N]".into());
    };
    let n: u32 = rest
        .first()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(20_000);
    let source = std::fs::read(sheet)?;
    let input = std::fs::read(message)?;
    let t = Instant::now();
    let compiled = Stylesheet::compile(&source, Path::new(sheet))?;
    println!("compile: {} us", t.elapsed().as_micros());
    let out = compiled.transform(&input, &[])?;
    for _ in 0..n / 10 {
        compiled.transform(&input, &[])?;
    }
    let t = Instant::now();
    for _ in 0..n {
        compiled.transform(&input, &[])?;
    }
    let per = t.elapsed().as_secs_f64() * 1e6 / f64::from(n);
    println!(
        "{} bytes in, {} bytes out: {per:.1} us per message (parse, transform, serialise; {n} runs)",
        input.len(),
        out.len()
    );
    Ok(())
}
