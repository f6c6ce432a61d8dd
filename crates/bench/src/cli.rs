//! Command-line arguments (clap derive) and the `run_*` functions behind
//! `sluice bench`:
//!
//! * `sluice bench --suite FILE [--out DIR] [--duration SECONDS]`
//! * `sluice bench http --url URL --file MSG --requesters N --duration S`
//! * `sluice bench gen --size 20kB --format xml`
//!
//! Other transports add their own subcommand in the binary and reuse
//! [`MeasureArgs`] and [`run_measurement`] to print the same row.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::driver::{Driver, DriverConfig, Pacing, TransportFactory};
use crate::error::BenchError;
use crate::figures::{MeasuredServer, Sampler, Summary};
use crate::http::{HttpFactory, HttpOptions};
use crate::message::{Format, generate};
use crate::procfs::{ProcFs, SystemClock};
use crate::report::{ReportRow, markdown_report, markdown_table, write_report};
use crate::runner::{RunnerOptions, ServerHooks, SuiteOutcome, run_suite};
use crate::size::MessageSize;
use crate::suite::{Case, Persistence, Suite, TransportSpec};

/// `sluice bench`: a suite, or one of the subcommands.
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    /// A single measurement or message generation.
    #[command(subcommand)]
    pub command: Option<BenchCommand>,
    /// Suite options (when no subcommand is given).
    #[command(flatten)]
    pub suite: SuiteArgs,
}

/// The subcommands this crate provides.
#[derive(Debug, Clone, Subcommand)]
pub enum BenchCommand {
    /// Measure one HTTP endpoint and print one row.
    Http(HttpArgs),
    /// Write a SaleList test message to stdout.
    Gen(GenArgs),
    /// Measure request/reply through the queue manager's client protocol and print one row.
    Qm(QmArgs),
}

/// `bench qm`: requesters put to `--in` and each waits for its own reply on `--out` (matched by
/// CorrelId), as the seeds' PerfHarness requesters do.
#[derive(Debug, Clone, Args)]
pub struct QmArgs {
    /// The queue manager's client-protocol address: HOST:PORT, or the path of the server's
    /// local socket (DATA_DIR/qm.sock).
    #[arg(long, default_value = "127.0.0.1:7802")]
    pub server: String,
    /// The queue requests are put to.
    #[arg(long = "in")]
    pub input: String,
    /// The queue replies are taken from.
    #[arg(long = "out")]
    pub output: String,
    /// The message size (a generated message of --format).
    #[arg(long, default_value = "2kB")]
    pub size: String,
    /// Format of the generated message.
    #[arg(long, default_value = "xml")]
    pub format: String,
    /// Put persistent messages.
    #[arg(long)]
    pub persistent: bool,
    /// Take any reply from --out instead of waiting for the own one (matched by CorrelId).
    #[arg(long)]
    pub any_reply: bool,
    /// Load shape.
    #[command(flatten)]
    pub measure: MeasureArgs,
}

/// Runs a suite file.
#[derive(Debug, Clone, Args)]
pub struct SuiteArgs {
    /// The YAML suite to run.
    #[arg(long, value_name = "FILE")]
    pub suite: Option<PathBuf>,
    /// Where report.md, report.csv and charts are written.
    #[arg(long, value_name = "DIR", default_value = "bench-report")]
    pub out: PathBuf,
    /// Measured seconds per run, overriding the suite.
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// Do not draw a progress bar.
    #[arg(long)]
    pub no_progress: bool,
}

/// The load shape of a single measurement.
#[derive(Debug, Clone, Args)]
pub struct MeasureArgs {
    /// Requester threads, each with its own connection.
    #[arg(long, default_value_t = 4)]
    pub requesters: usize,
    /// Measured seconds per run.
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// Warm-up seconds before measuring.
    #[arg(long, default_value_t = 2.0)]
    pub warmup: f64,
    /// Runs; the median is printed.
    #[arg(long, default_value_t = 1)]
    pub runs: usize,
    /// Total messages per second (unrated when absent).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Process id of the server, to report its CPU per message and peak RSS.
    #[arg(long)]
    pub server_pid: Option<u32>,
}

impl MeasureArgs {
    /// The driver settings these arguments describe.
    pub fn driver_config(&self) -> Result<DriverConfig, BenchError> {
        let secs = |v: f64, name: &str| {
            Duration::try_from_secs_f64(v).map_err(|_| {
                BenchError::InvalidSetting(format!("--{name} must be a number of seconds"))
            })
        };
        let config = DriverConfig {
            requesters: self.requesters,
            warmup: secs(self.warmup, "warmup")?,
            measure: secs(self.duration, "duration")?,
            runs: self.runs,
            pacing: self.rate.map_or(Pacing::Unrated, Pacing::Rate),
            ..DriverConfig::default()
        };
        config.validate()?;
        Ok(config)
    }
}

/// `bench http`.
#[derive(Debug, Clone, Args)]
pub struct HttpArgs {
    /// The URL to POST to (`http://host:port/path`).
    #[arg(long)]
    pub url: String,
    /// The message to send; generated from --size and --format when absent.
    #[arg(long, value_name = "MSG")]
    pub file: Option<PathBuf>,
    /// Size of a generated message.
    #[arg(long, default_value = "2kB")]
    pub size: String,
    /// Format of a generated message.
    #[arg(long, default_value = "xml")]
    pub format: String,
    /// Open a new connection after this many requests (0: never).
    #[arg(long, default_value_t = 5_000)]
    pub reconnect_after: u64,
    /// Content-Type header (defaults to the format's).
    #[arg(long)]
    pub content_type: Option<String>,
    /// Load shape.
    #[command(flatten)]
    pub measure: MeasureArgs,
}

/// `bench gen`.
#[derive(Debug, Clone, Args)]
pub struct GenArgs {
    /// Target size: 2kB, 20kB, 200kB, 2MB, 20MB or bytes.
    #[arg(long)]
    pub size: String,
    /// xml, json, soap, fixed, delimited, hl7 or swift.
    #[arg(long, default_value = "xml")]
    pub format: String,
    /// Seed of the variation (the same seed gives the same message).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Runs `sluice bench` as parsed; `sluice_binary` is the server to start
/// for suites (the running binary's own path).
pub fn run_bench(
    args: &BenchArgs,
    sluice_binary: &Path,
    hooks: &dyn ServerHooks,
    out: &mut dyn Write,
) -> Result<(), BenchError> {
    match &args.command {
        Some(BenchCommand::Http(http)) => run_http(http, out).map(|_| ()),
        Some(BenchCommand::Gen(gen_args)) => run_gen(gen_args, out),
        Some(BenchCommand::Qm(qm)) => run_qm(qm, hooks, out).map(|_| ()),
        None => run_suite_command(&args.suite, sluice_binary, hooks, out).map(|_| ()),
    }
}

/// `bench qm`: the transport comes from `hooks` (the queue-manager client lives elsewhere).
pub fn run_qm(
    args: &QmArgs,
    hooks: &dyn ServerHooks,
    out: &mut dyn Write,
) -> Result<Summary, BenchError> {
    let format: Format = args.format.parse()?;
    let size = MessageSize::parse(&args.size)?;
    let message = generate(format, size.bytes(), 1)?;
    // A path (an address with a `/` in it) is the server's local socket.
    let local = args.server.contains('/');
    let (host, port) = if local {
        (String::new(), 0)
    } else {
        args.server
            .rsplit_once(':')
            .and_then(|(h, p)| p.parse::<u16>().ok().map(|p| (h.to_string(), p)))
            .ok_or_else(|| {
                BenchError::InvalidSetting(format!(
                    "--server {} is neither HOST:PORT nor a socket path",
                    args.server
                ))
            })?
    };
    let endpoints = crate::server::ServerEndpoints {
        host,
        http_port: 0,
        admin_port: 0,
        qm_port: port,
        tcpip_port: 0,
        qm_socket: local.then(|| PathBuf::from(&args.server)),
        data_dir: PathBuf::new(),
        project: PathBuf::new(),
        pid: args.measure.server_pid.unwrap_or(0),
    };
    let persistence = if args.persistent {
        Persistence::Full
    } else {
        Persistence::None
    };
    let transport = TransportSpec::Qm {
        input: args.input.clone(),
        output: args.output.clone(),
        any_reply: args.any_reply,
    };
    let mut case = Case::one_off(
        "qm",
        transport,
        format,
        size,
        persistence,
        args.measure.requesters,
    );
    case.rate = args.measure.rate;
    let factory = hooks.transport(&endpoints, &case)?.ok_or_else(|| {
        BenchError::Unsupported("this build has no queue-manager transport".into())
    })?;
    run_measurement(factory.as_ref(), &message, &args.measure, &case, out)
}

/// `bench gen`: writes the message to `out`.
pub fn run_gen(args: &GenArgs, out: &mut dyn Write) -> Result<(), BenchError> {
    let size = MessageSize::parse(&args.size)?;
    let format: Format = args.format.parse()?;
    let message = generate(format, size.bytes(), args.seed)?;
    out.write_all(&message)
        .and_then(|()| out.flush())
        .map_err(|e| BenchError::io("writing the message", e))
}

/// `bench http`: one measurement, printed as one table row.
pub fn run_http(args: &HttpArgs, out: &mut dyn Write) -> Result<Summary, BenchError> {
    let format: Format = args.format.parse()?;
    let (message, size) = match &args.file {
        Some(path) => {
            let bytes = std::fs::read(path)
                .map_err(|e| BenchError::io(format!("reading {}", path.display()), e))?;
            let size = MessageSize::from_bytes(bytes.len());
            (bytes, size)
        }
        None => {
            let size = MessageSize::parse(&args.size)?;
            (generate(format, size.bytes(), 1)?, size)
        }
    };
    let options = HttpOptions {
        reconnect_after: (args.reconnect_after > 0).then_some(args.reconnect_after),
        content_type: args
            .content_type
            .clone()
            .unwrap_or_else(|| format.content_type().to_string()),
        ..HttpOptions::default()
    };
    let reconnect_after = options.reconnect_after;
    let factory = HttpFactory::new(&args.url, options)?;
    let mut case = Case::one_off(
        "http",
        TransportSpec::Http {
            path: factory.target().path.clone(),
        },
        format,
        size,
        Persistence::None,
        args.measure.requesters,
    );
    case.rate = args.measure.rate;
    case.reconnect_after = reconnect_after;
    run_measurement(&factory, &message, &args.measure, &case, out)
}

/// Measures `factory` with `message` as `measure` says and prints the
/// header and one row describing `case` to `out`.
pub fn run_measurement(
    factory: &dyn TransportFactory,
    message: &[u8],
    measure: &MeasureArgs,
    case: &Case,
    out: &mut dyn Write,
) -> Result<Summary, BenchError> {
    let server = match (factory.measured_server(), measure.server_pid) {
        (Some(server), _) => server,
        (None, Some(pid)) => MeasuredServer::External(pid),
        (None, None) => MeasuredServer::Unmeasured,
    };
    let sampler = Sampler::new(
        ProcFs::system(),
        Arc::new(SystemClock::new()),
        server,
        std::process::id(),
    );
    let driver = Driver::new(measure.driver_config()?, sampler)?;
    let summary = driver.run(factory, message, |_, _| {})?;
    let row = ReportRow::new(case, summary.clone(), None, None);
    out.write_all(markdown_table(std::slice::from_ref(&row)).as_bytes())
        .map_err(|e| BenchError::io("writing the result", e))?;
    Ok(summary)
}

/// `bench --suite`: runs the suite, writes the report into `--out`, and
/// prints it (also after Ctrl-C, with what was measured).
pub fn run_suite_command(
    args: &SuiteArgs,
    sluice_binary: &Path,
    hooks: &dyn ServerHooks,
    out: &mut dyn Write,
) -> Result<SuiteOutcome, BenchError> {
    let path = args.suite.as_ref().ok_or_else(|| {
        BenchError::InvalidSetting("give --suite FILE or a subcommand (http, gen)".into())
    })?;
    let suite = Suite::load(path)?;
    let duration = match args.duration {
        Some(d) if d > 0.0 && Duration::try_from_secs_f64(d).is_ok() => {
            Some(Duration::from_secs_f64(d))
        }
        Some(d) => {
            return Err(BenchError::InvalidSetting(format!(
                "--duration {d} must be above zero"
            )));
        }
        None => None,
    };
    let data_dir = std::env::temp_dir().join(format!("sluice-bench-data-{}", std::process::id()));
    let mut options = RunnerOptions::new(Some(sluice_binary.to_path_buf()), data_dir.clone());
    options.duration = duration;
    options.progress = !args.no_progress;
    let outcome = run_suite(&suite, &options, hooks);
    let _ = std::fs::remove_dir_all(&data_dir);
    let outcome = outcome?;
    let title = format!(
        "Sluice performance: {}",
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned()
        )
    );
    write_report(&args.out, &outcome, &title)?;
    out.write_all(markdown_report(&outcome, &title).as_bytes())
        .map_err(|e| BenchError::io("writing the report", e))?;
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        bench: BenchArgs,
    }

    #[test]
    fn args_parse_the_three_forms() {
        let suite = Cli::try_parse_from([
            "bench",
            "--suite",
            "s.yaml",
            "--out",
            "o",
            "--duration",
            "5",
        ])
        .expect("suite form");
        assert_eq!(suite.bench.suite.suite, Some(PathBuf::from("s.yaml")));
        assert_eq!(suite.bench.suite.duration, Some(5.0));
        let http = Cli::try_parse_from([
            "bench",
            "http",
            "--url",
            "http://127.0.0.1:1/x",
            "--file",
            "m.xml",
            "--requesters",
            "8",
            "--duration",
            "3",
        ])
        .expect("http form");
        assert!(
            matches!(http.bench.command, Some(BenchCommand::Http(ref h)) if h.measure.requesters == 8)
        );
        let gen_form = Cli::try_parse_from(["bench", "gen", "--size", "20kB", "--format", "json"])
            .expect("gen form");
        assert!(
            matches!(gen_form.bench.command, Some(BenchCommand::Gen(ref g)) if g.format == "json")
        );
    }

    #[test]
    fn run_gen_writes_exact_size() {
        let mut out = Vec::new();
        let args = GenArgs {
            size: "20kB".into(),
            format: "soap".into(),
            seed: 1,
        };
        assert!(run_gen(&args, &mut out).is_ok());
        assert_eq!(out.len(), 20_000);
        let bad = GenArgs {
            size: "20 furlongs".into(),
            ..args
        };
        assert!(run_gen(&bad, &mut Vec::new()).is_err());
    }

    #[test]
    fn run_bench_without_suite_or_subcommand_is_an_error() {
        let cli = Cli::try_parse_from(["bench"]).expect("parses");
        let err = run_bench(
            &cli.bench,
            Path::new("sluice"),
            &crate::runner::NoHooks,
            &mut Vec::new(),
        );
        assert!(matches!(err, Err(BenchError::InvalidSetting(_))));
    }
}
