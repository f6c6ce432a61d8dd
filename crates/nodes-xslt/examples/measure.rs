//! The engine alone on one message: compile the stylesheet once, then parse the message,
//! transform and serialise it N times; prints the CPU microseconds per message this thread
//! spent (from /proc, so that a busy machine does not inflate it) and the elapsed time.
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
    let cpu = thread_cpu_secs()?;
    for _ in 0..n {
        compiled.transform(&input, &[])?;
    }
    let cpu = (thread_cpu_secs()? - cpu) * 1e6 / f64::from(n);
    let wall = t.elapsed().as_secs_f64() * 1e6 / f64::from(n);
    println!(
        "{} bytes in, {} bytes out: {cpu:.1} us CPU, {wall:.1} us elapsed per message (parse, transform, serialise; {n} runs)",
        input.len(),
        out.len()
    );
    Ok(())
}

/// This thread's user and system CPU time, from /proc (clock ticks of 1/100 s).
fn thread_cpu_secs() -> Result<f64, Box<dyn std::error::Error>> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat")?;
    // Fields after the command name (which may hold spaces) start at its closing parenthesis.
    let rest = stat.rsplit_once(')').ok_or("no command in /proc stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| -> Result<f64, Box<dyn std::error::Error>> {
        Ok(fields.get(i).ok_or("short /proc stat")?.parse::<f64>()?)
    };
    // utime and stime are fields 14 and 15 of stat(5); `rest` starts at field 3.
    Ok((ticks(11)? + ticks(12)?) / 100.0)
}
