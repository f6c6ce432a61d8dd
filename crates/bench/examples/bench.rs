//! The harness on its own, with the same arguments as `sluice bench`:
//!
//! ```text
//! cargo run --release -p sluice-bench --example bench -- gen --size 20kB --format json
//! cargo run --release -p sluice-bench --example bench -- http --url http://127.0.0.1:8080/echo --requesters 8 --duration 10
//! cargo run --release -p sluice-bench --example bench -- --suite floor.yaml --out report --sluice target/release/sluice
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use sluice_bench::cli::{BenchArgs, run_bench};
use sluice_bench::runner::NoHooks;

#[derive(Debug, Parser)]
#[command(name = "bench", about = "Measure flows the way the seed reports do")]
struct Cli {
    #[command(flatten)]
    bench: BenchArgs,
    /// The sluice binary that suites start.
    #[arg(long, global = true, default_value = "sluice")]
    sluice: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut stdout = std::io::stdout().lock();
    match run_bench(&cli.bench, &cli.sluice, &NoHooks, &mut stdout) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
