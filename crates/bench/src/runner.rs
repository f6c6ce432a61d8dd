//! Runs a suite: the floor first, then the Sluice server as a child process
//! and every case against it, then each peer the same way, with a progress bar; Ctrl-C stops with what
//! has been measured so far.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::affinity;
use crate::driver::{Driver, DriverConfig, Pacing, TransportFactory};
use crate::error::BenchError;
use crate::figures::{MeasuredServer, Sampler, Summary};
use crate::floor::FloorServer;
use crate::http::{HttpFactory, HttpOptions};
use crate::message::{Format, generate};
use crate::mqtt::MqttFactory;
use crate::procfs::{ProcFs, SystemClock};
use crate::report::{MachineInfo, ReportRow};
use crate::seeds;
use crate::server::{ServerConfig, ServerEndpoints, ServerProcess};
use crate::suite::{Case, Persistence, Suite, TransportSpec};
use crate::tcpip::TcpipFactory;

/// What the caller supplies for the parts of a run that belong to other
/// crates: setting a flow's instances, and transports other than HTTP.
pub trait ServerHooks {
    /// Makes the server run `instances` copies of the flow `case`
    /// measures; called only for cases whose test lists instances. The
    /// default has no way to do it and says so.
    fn set_instances(
        &self,
        server: &ServerEndpoints,
        case: &Case,
        instances: u32,
    ) -> Result<(), BenchError> {
        let _ = (server, case);
        Err(BenchError::Unsupported(format!(
            "setting {instances} flow instances needs a mechanism the caller did not supply"
        )))
    }

    /// A transport factory for `case`, or `None` to use the built-in one
    /// (HTTP). Queue-manager and in-process transports come from here.
    fn transport(
        &self,
        server: &ServerEndpoints,
        case: &Case,
    ) -> Result<Option<Box<dyn TransportFactory>>, BenchError> {
        let _ = (server, case);
        Ok(None)
    }
}

/// Hooks that add nothing: HTTP only, flows run as deployed.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl ServerHooks for NoHooks {}

/// How to run a suite.
#[derive(Debug, Clone)]
pub struct RunnerOptions {
    /// The `sluice` binary; required when a test needs the server.
    pub sluice_binary: Option<PathBuf>,
    /// The directory the suite's `project` is relative to.
    pub base_dir: PathBuf,
    /// Server data directory.
    pub data_dir: PathBuf,
    /// Overrides every test's measured interval.
    pub duration: Option<Duration>,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Install a Ctrl-C handler that stops the run with what was measured.
    pub handle_ctrl_c: bool,
    /// The /proc tree to read.
    pub proc: ProcFs,
    /// Further arguments for `sluice run` (by default `--bind 127.0.0.1`,
    /// so the server under test listens on loopback only).
    pub server_args: Vec<String>,
}

impl RunnerOptions {
    /// Options for running a suite with `sluice_binary`, data kept in `data_dir`.
    pub fn new(sluice_binary: Option<PathBuf>, data_dir: PathBuf) -> Self {
        RunnerOptions {
            sluice_binary,
            base_dir: PathBuf::from("."),
            data_dir,
            duration: None,
            progress: true,
            handle_ctrl_c: true,
            proc: ProcFs::system(),
            server_args: vec!["--bind".into(), "127.0.0.1".into()],
        }
    }
}

/// The rows measured, and whether the run was cut short.
#[derive(Debug, Clone)]
pub struct SuiteOutcome {
    /// One row per case, floor rows first.
    pub rows: Vec<ReportRow>,
    /// Ctrl-C stopped the run before the end.
    pub interrupted: bool,
    /// The machine measured on.
    pub machine: MachineInfo,
    /// The CPUs of the server and of the driver, when the suite placed them apart.
    pub placement: Option<(Vec<usize>, Vec<usize>)>,
}

/// Runs `suite` and returns its rows.
pub fn run_suite(
    suite: &Suite,
    options: &RunnerOptions,
    hooks: &dyn ServerHooks,
) -> Result<SuiteOutcome, BenchError> {
    let cases = suite.cases(options.duration);
    let floor_cases = if suite.floor {
        floor_cases(&cases)
    } else {
        Vec::new()
    };
    let (local, remote): (Vec<Case>, Vec<Case>) = floor_cases
        .into_iter()
        .chain(cases)
        .partition(|c| !c.transport.needs_server());

    let abort = Arc::new(AtomicBool::new(false));
    if options.handle_ctrl_c {
        let flag = abort.clone();
        // The first Ctrl-C drops the run under way and reports the runs
        // finished; a second one ends the process at once. Installing fails only when a
        // handler exists already; then Ctrl-C keeps its usual meaning.
        let _ = ctrlc::set_handler(move || {
            if flag.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
            eprintln!("Stopping: reporting what has been measured (Ctrl-C again to quit now).");
        });
    }
    let total_runs: usize = local.iter().chain(&remote).map(|c| c.runs).sum();
    let progress = progress_bar(total_runs as u64, options.progress);
    let mut context = Context {
        options,
        abort,
        progress,
        messages: HashMap::new(),
        rows: Vec::new(),
    };

    if !local.is_empty() {
        let floor = FloorServer::start("127.0.0.1:0")?;
        let sampler = context.sampler(MeasuredServer::InProcess);
        for case in &local {
            if context.aborted() {
                break;
            }
            let factory = HttpFactory::new(&floor.url("/"), http_options(case))?;
            if let Err(error) = context.measure(case, &factory, &sampler) {
                context.skip(case, &error);
            }
        }
    }

    let (own, peered): (Vec<Case>, Vec<Case>) = remote.into_iter().partition(|c| c.peer.is_none());
    let placement = if own.is_empty() && peered.is_empty() {
        None
    } else {
        suite
            .server_cores
            .map(affinity::Placement::new)
            .transpose()?
    };
    let project = options.base_dir.join(&suite.project);
    if !own.is_empty() && !context.aborted() {
        let binary = options.sluice_binary.as_ref().ok_or_else(|| {
            BenchError::Unsupported(
                "the suite measures the server but no sluice binary was given".into(),
            )
        })?;
        let mut config = ServerConfig::new(binary, &project, &options.data_dir);
        config.extra_args = options.server_args.clone();
        let server = context.start(&config, placement.as_ref())?;
        context.serve(server, &own, hooks);
    }
    // Each peer after Sluice, alone on the same cores, so that nothing else answers the same
    // topics and each gets the machine Sluice had.
    for (name, spec) in &suite.peers {
        let cases: Vec<Case> = peered
            .iter()
            .filter(|c| c.peer.as_deref() == Some(name.as_str()))
            .cloned()
            .collect();
        if cases.is_empty() || context.aborted() {
            continue;
        }
        let data = options.data_dir.join(format!("peer-{name}"));
        let mut config = ServerConfig::peer(&spec.command, &project, &data);
        config.ready_timeout = spec.ready_timeout();
        config.says_ready = spec.says_ready;
        match context.start(&config, placement.as_ref()) {
            Ok(server) => context.serve(server, &cases, &NoHooks),
            Err(error) => {
                for case in &cases {
                    context.skip(case, &error);
                }
            }
        }
    }
    let mut placed = None;
    if let Some(p) = placement {
        affinity::pin_to(&p.all)?;
        placed = Some((p.server, p.driver));
    }

    context.progress.finish_and_clear();
    let interrupted = context.aborted();
    Ok(SuiteOutcome {
        rows: context.rows,
        interrupted,
        machine: MachineInfo::read(&options.proc),
        placement: placed,
    })
}

/// State carried through a suite run.
struct Context<'a> {
    options: &'a RunnerOptions,
    abort: Arc<AtomicBool>,
    progress: ProgressBar,
    messages: HashMap<(Format, usize), Arc<Vec<u8>>>,
    rows: Vec<ReportRow>,
}

impl Context<'_> {
    fn aborted(&self) -> bool {
        self.abort.load(Ordering::SeqCst)
    }

    fn sampler(&self, measured: MeasuredServer) -> Sampler {
        Sampler::new(
            self.options.proc.clone(),
            Arc::new(SystemClock::new()),
            measured,
            std::process::id(),
        )
    }

    fn message(&mut self, case: &Case) -> Result<Arc<Vec<u8>>, BenchError> {
        // A file of records is made by its transport, of records of the case's size.
        if let TransportSpec::File {
            records: Some(_), ..
        } = case.transport
        {
            return Ok(Arc::new(Vec::new()));
        }
        let key = (case.format, case.size.bytes());
        if let Some(m) = self.messages.get(&key) {
            return Ok(m.clone());
        }
        let m = Arc::new(generate(case.format, case.size.bytes(), 1)?);
        self.messages.insert(key, m.clone());
        Ok(m)
    }

    /// Starts a server (Sluice or a peer) on the placement's server cores.
    fn start(
        &self,
        config: &ServerConfig,
        placement: Option<&affinity::Placement>,
    ) -> Result<ServerProcess, BenchError> {
        if let Some(p) = placement {
            affinity::pin_to(&p.server)?;
        }
        let started = ServerProcess::start(config);
        if let Some(p) = placement {
            affinity::pin_to(&p.driver)?;
        }
        started
    }

    /// Measures `cases` against a started server, then stops it.
    fn serve(&mut self, mut server: ServerProcess, cases: &[Case], hooks: &dyn ServerHooks) {
        let sampler = self.sampler(MeasuredServer::External(server.pid()));
        for case in cases {
            if self.aborted() {
                break;
            }
            if let Some(status) = server.exited() {
                let reason = format!(
                    "the server exited ({status}); its last output:\n{}",
                    server.output_tail()
                );
                self.skip(case, &BenchError::Unsupported(reason));
                continue;
            }
            let endpoints = server.endpoints().clone();
            let prepared = match case.instances {
                Some(n) => hooks.set_instances(&endpoints, case, n),
                None => Ok(()),
            }
            .and_then(|()| factory_for(hooks, &endpoints, case));
            match prepared {
                // A case that cannot run (or a server that died) becomes a
                // row with the reason; the report is still written.
                Ok(factory) => {
                    if let Err(error) = self.measure(case, factory.as_ref(), &sampler) {
                        self.skip(case, &error);
                    }
                }
                Err(error) => self.skip(case, &error),
            }
        }
        server.stop();
    }

    /// Measures one case and adds its row.
    fn measure(
        &mut self,
        case: &Case,
        factory: &dyn TransportFactory,
        sampler: &Sampler,
    ) -> Result<(), BenchError> {
        let message = self.message(case)?;
        let config = DriverConfig {
            requesters: case.requesters,
            warmup: case.warmup,
            measure: case.measure,
            runs: case.runs,
            pacing: case.rate.map_or(Pacing::Unrated, Pacing::Rate),
            ..DriverConfig::default()
        };
        let sampler = match factory.measured_server() {
            Some(server) => sampler.with_server(server),
            None => sampler.clone(),
        };
        let driver = Driver::new(config, sampler)?.with_abort(self.abort.clone());
        self.progress.set_message(describe(case));
        let progress = &self.progress;
        let summary = driver.run(factory, &message, |_, run| {
            progress.inc(1);
            progress.println(format!(
                "{}: {:.1} msg/s, {} errors",
                describe(case),
                run.rate,
                run.errors
            ));
        })?;
        self.push(case, summary, None);
        Ok(())
    }

    /// Records a case that could not run.
    fn skip(&mut self, case: &Case, error: &BenchError) {
        self.progress.inc(case.runs as u64);
        self.push(case, Summary::new(Vec::new()), Some(error.to_string()));
    }

    fn push(&mut self, case: &Case, summary: Summary, note: Option<String>) {
        let seed = case.seed.as_ref().map(|s| {
            seeds::lookup(
                s,
                case.size.bytes(),
                case.persistence.is_persistent(),
                case.instances,
            )
        });
        let (seed, note) = match seed {
            Some(Ok(found)) => (found, note),
            Some(Err(e)) => (
                None,
                Some(note.map_or(e.to_string(), |n| format!("{n}; {e}"))),
            ),
            None => (None, note),
        };
        self.rows.push(ReportRow::new(case, summary, seed, note));
    }
}

fn factory_for(
    hooks: &dyn ServerHooks,
    endpoints: &ServerEndpoints,
    case: &Case,
) -> Result<Box<dyn TransportFactory>, BenchError> {
    if let Some(factory) = hooks.transport(endpoints, case)? {
        return Ok(factory);
    }
    match &case.transport {
        TransportSpec::Http { path } => {
            let url = format!("http://{}:{}{}", endpoints.host, endpoints.http_port, path);
            let mut options = http_options(case);
            options.content_type = case.format.content_type().to_string();
            Ok(Box::new(HttpFactory::new(&url, options)?))
        }
        TransportSpec::Tcpip {
            record_bytes,
            records,
            port,
        } => Ok(Box::new(TcpipFactory::new(
            &endpoints.host,
            // A peer answers on its one port whatever port the flow has.
            port.filter(|_| case.peer.is_none())
                .unwrap_or(endpoints.tcpip_port),
            *records,
            *record_bytes,
        )?)),
        TransportSpec::Mqtt {
            host,
            port,
            input,
            output,
        } => Ok(Box::new(MqttFactory::new(host, *port, input, output)?)),
        TransportSpec::File {
            input,
            output,
            records,
        } => {
            let (input, output) = (
                endpoints.data_dir.join(input),
                endpoints.data_dir.join(output),
            );
            Ok(Box::new(match records {
                None => crate::files::FileFactory::new(&input, &output)?,
                Some(n) => {
                    crate::files::FileFactory::records(&input, &output, *n, case.size.bytes())?
                }
            }))
        }
        #[cfg(feature = "kafka")]
        TransportSpec::Kafka {
            bootstrap,
            input,
            output,
        } => Ok(Box::new(crate::kafka::KafkaFactory::new(
            bootstrap, input, output,
        )?)),
        #[cfg(not(feature = "kafka"))]
        TransportSpec::Kafka { .. } => Err(BenchError::Unsupported(
            "the kafka transport needs the harness built with the `kafka` feature".into(),
        )),
        TransportSpec::Qm { .. } => Err(BenchError::Unsupported(
            "the queue-manager transport was not supplied by the caller".into(),
        )),
        TransportSpec::InProcess { .. } => Err(BenchError::Unsupported(
            "the in-process transport was not supplied by the caller".into(),
        )),
        TransportSpec::Floor => Err(BenchError::Internal("floor case sent to the server".into())),
    }
}

fn http_options(case: &Case) -> HttpOptions {
    HttpOptions {
        reconnect_after: case.reconnect_after,
        content_type: case.format.content_type().to_string(),
        ..HttpOptions::default()
    }
}

/// One floor case per distinct message and load shape among the server's
/// cases, so each server row has a floor row to compare with.
fn floor_cases(cases: &[Case]) -> Vec<Case> {
    let mut seen = Vec::new();
    let mut floors = Vec::new();
    for case in cases.iter().filter(|c| c.transport.needs_server()) {
        let key = (
            case.format,
            case.size.bytes(),
            case.requesters,
            case.rate.map(f64::to_bits),
        );
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        floors.push(Case {
            name: "floor".into(),
            transport: TransportSpec::Floor,
            persistence: Persistence::None,
            instances: None,
            seed: None,
            scaling: false,
            peer: None,
            ..case.clone()
        });
    }
    floors
}

fn describe(case: &Case) -> String {
    format!(
        "{} {} {} {} x{} r{}",
        case.name,
        case.format,
        case.size,
        case.persistence.label(),
        case.instances.map_or("-".to_string(), |n| n.to_string()),
        case.requesters
    )
}

fn progress_bar(total: u64, visible: bool) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some(total),
        if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} runs  {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
