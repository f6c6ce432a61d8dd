//! `sluice`: run a project, validate it, and the tools around it.

mod admin_cli;
mod bench;
mod bundle;
mod import_cli;
mod qm_cli;
mod xsd_cli;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use sluice_flow::diag::counted;

#[derive(Parser)]
#[command(name = "sluice", version, about = "An open integration broker")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a project: deploy its flows and serve until SIGTERM.
    Run {
        /// The project folder (sluice.yaml, flows/).
        dir: PathBuf,
        /// Port of the HTTP listener shared by HTTPInput nodes.
        #[arg(long, default_value_t = 7800)]
        http_port: u16,
        /// Port of the admin API and /metrics.
        #[arg(long, default_value_t = 7801)]
        admin_port: u16,
        /// Port of the queue manager's client protocol.
        #[arg(long, default_value_t = 7802)]
        qm_port: u16,
        /// Port of TCP/IP server nodes that name no port of their own.
        #[arg(long, default_value_t = 7803)]
        tcpip_port: u16,
        /// Where the server keeps its data (queue manager files).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// The address of the flows' listeners (HTTP, TCP/IP).
        #[arg(long, default_value = "0.0.0.0")]
        bind: std::net::IpAddr,
        /// The address of the admin API and the queue manager's port; beyond loopback they need
        /// credentials (queue_manager.allow_anonymous: false in sluice.yaml).
        #[arg(long, default_value = "127.0.0.1")]
        admin_bind: std::net::IpAddr,
    },
    /// Check a project's files without running it; prints every problem.
    Validate { dir: PathBuf },
    /// Print the node reference (docs/nodes.md is generated from it).
    Nodes,
    /// Queues and messages of a running server's queue manager.
    Qm(qm_cli::QmArgs),
    /// Deploy and control a running server through its admin API.
    Admin(admin_cli::AdminArgs),
    /// ESQL tools.
    Esql {
        #[command(subcommand)]
        command: EsqlCommand,
    },
    /// XML Schema tools.
    Xsd {
        #[command(subcommand)]
        command: XsdCommand,
    },
    /// Measure flows the way the reference reports do (a suite, or one measurement).
    Bench(sluice_bench::cli::BenchArgs),
    /// Bring an ACE/IIB workspace (or one application, library or unzipped BAR file) across
    /// as a Sluice project, with IMPORT-REPORT.md saying what did not map.
    Import {
        /// The workspace folder.
        from: PathBuf,
        /// The project folder to write.
        #[arg(long)]
        out: PathBuf,
        /// Write into a folder that is not empty.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Subcommand)]
enum EsqlCommand {
    /// Compile ESQL files (or every .esql file under folders) without running them; one line per
    /// file, `PATH: ok` or `PATH:LINE:COL: error: MESSAGE` with an excerpt.
    Check {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

#[derive(Subcommand)]
enum XsdCommand {
    /// Validate XML documents against an XML Schema as flows do: `DOC: valid`, or one line per
    /// violation, `DOC:LINE:COL: ELEMENT: MESSAGE`; exit 1 when a document is invalid, 2 when
    /// the schema does not load.
    Validate {
        /// The XML Schema; what it includes and imports must be inside the current folder
        /// (or, for a schema outside it, the schema's folder).
        #[arg(long)]
        schema: PathBuf,
        #[arg(required = true)]
        docs: Vec<PathBuf>,
    },
}

/// Keep large message buffers in the heap instead of mapping and unmapping them per message.
/// glibc's defaults hand a freed multi-megabyte buffer back to the kernel as soon as the free
/// space at the top of a heap passes twice its size, and with several such messages in flight
/// every message faulted its pages in again: the 2 MB BLOB echo spent about 40 % more CPU.
/// 32 MiB (glibc's own ceiling for the adaptive threshold) for both leaves the largest
/// messages mapped, and keeps the memory high-water mark of repeated 20 MB messages where it
/// was (docs/performance.md).
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const LARGE: libc::c_int = 32 << 20;
        // SAFETY: mallopt only sets allocator parameters; called before any thread starts.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE);
            libc::mallopt(libc::M_TRIM_THRESHOLD, LARGE);
        }
    }
}

fn main() -> ExitCode {
    tune_allocator();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SLUICE_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        // Colour only for a person at a terminal: a log file or a pipe gets plain text.
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            dir,
            http_port,
            admin_port,
            qm_port,
            tcpip_port,
            data_dir,
            bind,
            admin_bind,
        } => {
            let opts = sluice_server::RunOptions {
                dir,
                http_port,
                admin_port,
                qm_port,
                tcpip_port,
                data_dir,
                bind,
                admin_bind,
                watch_every: Duration::from_secs(1),
            };
            ExitCode::from(sluice_server::run(opts, bundle::registry()) as u8)
        }
        Command::Validate { dir } => match sluice_server::validate(&dir, bundle::registry()) {
            Ok(n) => {
                println!("{}: ok ({})", dir.display(), counted(n, "flow"));
                ExitCode::SUCCESS
            }
            Err(problems) => {
                for p in &problems {
                    eprint!("{p}");
                }
                eprintln!("error: {}", counted(problems.len(), "problem"));
                ExitCode::from(2)
            }
        },
        Command::Qm(args) => qm_cli::run(args),
        Command::Admin(args) => admin_cli::run(args),
        Command::Esql {
            command: EsqlCommand::Check { paths },
        } => {
            let (report, ok) = sluice_esql::runtime::check_paths(&paths);
            print!("{report}");
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Command::Xsd {
            command: XsdCommand::Validate { schema, docs },
        } => xsd_cli::validate(&schema, &docs),
        Command::Bench(args) => {
            let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("sluice"));
            let mut out = std::io::stdout().lock();
            match sluice_bench::cli::run_bench(&args, &exe, &bench::Hooks, &mut out) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Nodes => {
            print!("{}", bundle::registry().docs_markdown());
            ExitCode::SUCCESS
        }
        Command::Import { from, out, force } => import_cli::run(&from, &out, force),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn configuration_md_names_every_command_and_every_option_of_run() {
        let doc = include_str!("../../../docs/configuration.md");
        let cli = super::Cli::command();
        for sub in cli.get_subcommands() {
            let name = sub.get_name();
            assert!(
                doc.contains(&format!("sluice {name} ")),
                "docs/configuration.md does not show `sluice {name}`"
            );
            if name == "run" {
                for arg in sub.get_arguments() {
                    if let Some(long) = arg.get_long() {
                        assert!(
                            doc.contains(&format!("--{long}")),
                            "docs/configuration.md does not show `sluice run --{long}`"
                        );
                    }
                }
            }
        }
    }
}
