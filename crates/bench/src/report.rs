//! Report tables: Markdown and CSV with the seeds' columns (Msg Size,
//! Persistent, Message Rate, % CPU Busy, CPU ms/msg, Instances), our extra
//! figures, and beside each row the seeds' figure for the same test with the
//! ratio of ours to theirs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::BenchError;
use crate::figures::{RunFigures, Summary};
use crate::procfs::ProcFs;
use crate::runner::SuiteOutcome;
use crate::seeds::SeedFigure;
use crate::suite::Case;

/// The machine a report was measured on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MachineInfo {
    /// CPU model name.
    pub cpu_model: Option<String>,
    /// CPUs the kernel shows.
    pub cores: u32,
    /// Memory in kB.
    pub mem_total_kb: Option<u64>,
    /// Kernel release.
    pub kernel: Option<String>,
}

impl MachineInfo {
    /// Reads the machine's description from `proc`.
    pub fn read(proc: &ProcFs) -> MachineInfo {
        MachineInfo {
            cpu_model: proc.cpu_model(),
            cores: proc.machine_cpu().map(|m| m.cores).unwrap_or(0),
            mem_total_kb: proc.mem_total_kb(),
            kernel: proc.kernel_release(),
        }
    }

    /// One line: `2 × Intel Xeon …, 24.0 GiB RAM, Linux 6.8.0`.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} × {}",
            self.cores,
            self.cpu_model.as_deref().unwrap_or("unknown CPU")
        );
        if let Some(kb) = self.mem_total_kb {
            let _ = write!(s, ", {:.1} GiB RAM", kb as f64 / (1024.0 * 1024.0));
        }
        if let Some(k) = &self.kernel {
            let _ = write!(s, ", Linux {k}");
        }
        s
    }
}

/// One measured case, ready to print.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportRow {
    /// Test name (`floor` for the floor).
    pub test: String,
    /// Transport description.
    pub transport: String,
    /// Message format.
    pub format: String,
    /// Message size as written in the suite.
    pub msg_size: String,
    /// Message size in bytes.
    pub msg_bytes: usize,
    /// NONE or FULL.
    pub persistent: String,
    /// Flow instances set for the run (`None`: as deployed).
    pub instances: Option<u32>,
    /// Requester threads.
    pub requesters: usize,
    /// The runs and medians.
    pub summary: Summary,
    /// The seeds' figure for the same test.
    pub seed: Option<SeedFigure>,
    /// Why a row has no figures, or a lookup problem.
    pub note: Option<String>,
    /// Part of a scaling run (instances varied).
    pub scaling: bool,
}

impl ReportRow {
    /// A row for `case`.
    pub fn new(
        case: &Case,
        summary: Summary,
        seed: Option<SeedFigure>,
        note: Option<String>,
    ) -> Self {
        ReportRow {
            test: case.name.clone(),
            transport: case.transport.to_string(),
            format: case.format.to_string(),
            msg_size: case.size.label().to_string(),
            msg_bytes: case.size.bytes(),
            persistent: case.persistence.label().to_string(),
            instances: case.instances,
            requesters: case.requesters,
            summary,
            seed,
            note,
            scaling: case.scaling,
        }
    }

    /// The median figures, when any run succeeded.
    pub fn median(&self) -> Option<&RunFigures> {
        self.summary.median.as_ref()
    }

    /// Ours ÷ seeds' message rate.
    pub fn rate_ratio(&self) -> Option<f64> {
        ratio(
            self.median().map(|m| m.rate),
            self.seed.as_ref().and_then(|s| s.rate),
        )
    }

    /// The seeds' CPU figure and ours ÷ theirs: CPU ms/msg where the seed
    /// uses the formula, server CPU µs/msg where it measured it directly.
    pub fn cpu_comparison(&self) -> Option<(String, Option<f64>)> {
        let seed = self.seed.as_ref()?;
        let m = self.median();
        if let Some(ms) = seed.cpu_ms_per_msg {
            return Some((
                format!("{ms} ms"),
                ratio(m.and_then(|m| m.cpu_ms_per_msg), Some(ms)),
            ));
        }
        seed.cpu_us_per_msg.map(|us| {
            (
                format!("{us} µs"),
                ratio(m.and_then(|m| m.server_cpu_us_per_msg), Some(us)),
            )
        })
    }
}

fn ratio(ours: Option<f64>, theirs: Option<f64>) -> Option<f64> {
    match (ours, theirs) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

const COLUMNS: [&str; 21] = [
    "Test",
    "Transport",
    "Format",
    "Msg Size",
    "Persistent",
    "Instances",
    "Requesters",
    "Message Rate",
    "% CPU Busy",
    "CPU ms/msg",
    "Server CPU µs/msg",
    "Driver CPU µs/msg",
    "p50 µs",
    "p99 µs",
    "p99.9 µs",
    "Peak RSS MB",
    "Runs ok/failed",
    "Seed Rate",
    "Rate ratio",
    "Seed CPU",
    "CPU ratio",
];

/// The table's cells for one row, formatted for people.
fn cells(row: &ReportRow) -> Vec<String> {
    let m = row.median();
    let opt =
        |v: Option<f64>, digits: usize| v.map_or("–".to_string(), |v| format!("{v:.digits$}"));
    let cpu = row.cpu_comparison();
    vec![
        row.test.clone(),
        row.transport.clone(),
        row.format.clone(),
        row.msg_size.clone(),
        row.persistent.clone(),
        match (row.instances, row.transport == "floor") {
            (Some(n), _) => n.to_string(),
            (None, true) => "–".into(),
            (None, false) => "as deployed".into(),
        },
        row.requesters.to_string(),
        m.map_or("failed".into(), |m| format!("{:.1}", m.rate)),
        opt(m.map(|m| m.cpu_busy_pct), 1),
        opt(m.and_then(|m| m.cpu_ms_per_msg), 3),
        opt(m.and_then(|m| m.server_cpu_us_per_msg), 1),
        opt(m.and_then(|m| m.driver_cpu_us_per_msg), 1),
        opt(m.and_then(|m| m.p50_us), 0),
        opt(m.and_then(|m| m.p99_us), 0),
        opt(m.and_then(|m| m.p999_us), 0),
        opt(
            m.and_then(|m| m.peak_rss_kb).map(|kb| kb as f64 / 1024.0),
            1,
        ),
        format!("{}/{}", row.summary.ok_runs(), row.summary.failed_runs()),
        opt(row.seed.as_ref().and_then(|s| s.rate), 1),
        opt(row.rate_ratio(), 2),
        cpu.as_ref().map_or("–".into(), |(s, _)| s.clone()),
        opt(cpu.and_then(|(_, r)| r), 2),
    ]
}

/// The rows as a Markdown table.
pub fn markdown_table(rows: &[ReportRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "| {} |", COLUMNS.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(COLUMNS.len()));
    for row in rows {
        let cells: Vec<String> = cells(row)
            .into_iter()
            .map(|c| c.replace('|', "\\|"))
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

/// A whole Markdown report: machine, caveat, floor and tables, notes.
pub fn markdown_report(outcome: &SuiteOutcome, title: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {title}\n");
    let _ = writeln!(out, "Measured on: {}.\n", outcome.machine.describe());
    if let Some((server, driver)) = &outcome.placement {
        let _ = writeln!(
            out,
            "The server ran on CPU {} and the load driver on CPU {}.\n",
            cpu_list(server),
            cpu_list(driver)
        );
    }
    let _ = writeln!(
        out,
        "The seeds' figures come from different hardware (an 8-core POWER7 for WMB V8, a 4-processor \
         z13 LPAR for IIB V10, 12-core Xeon X5660 hosts with 1–4 vCPU containers for ACE V11) and were \
         measured with the client on a separate machine. Figures from different hardware are \
         indicative, not equal: the ratios show the order of magnitude, not a verdict.\n"
    );
    let _ = writeln!(
        out,
        "Message Rate is round trips per second (median of the runs); % CPU Busy is the whole \
         machine's, from /proc/stat, and includes the load driver on this machine; CPU ms/msg is \
         ((cores × 1000) × (%CPU / 100)) / rate as the seeds compute it; Server CPU µs/msg is the \
         server process's own CPU time per message (the ACE container report's figure); Driver CPU \
         µs/msg is the requester threads' CPU. A run with any error is discarded (Runs ok/failed).\n"
    );
    if outcome.interrupted {
        let _ = writeln!(
            out,
            "**Interrupted**: these are the cases measured before Ctrl-C.\n"
        );
    }
    let (floor, server): (Vec<ReportRow>, Vec<ReportRow>) = outcome
        .rows
        .iter()
        .cloned()
        .partition(|r| r.transport == "floor");
    if !floor.is_empty() {
        let _ = writeln!(
            out,
            "## Floor\n\nThe same driver against a minimal echo server inside the harness: the \
             most this machine can do with these messages and requesters.\n"
        );
        out.push_str(&markdown_table(&floor));
        out.push('\n');
    }
    if !server.is_empty() {
        let _ = writeln!(out, "## Results\n");
        out.push_str(&markdown_table(&server));
        out.push('\n');
    }
    let notes: Vec<String> = outcome
        .rows
        .iter()
        .filter_map(|r| {
            let seed = r.seed.as_ref().map(|s| format!("seed {}", s.source));
            let parts: Vec<String> = r.note.iter().cloned().chain(seed).collect();
            (!parts.is_empty()).then(|| {
                let instances = r.instances.map_or(String::new(), |n| format!(" ×{n}"));
                format!(
                    "- {} {} {}{instances}: {}",
                    r.test,
                    r.msg_size,
                    r.persistent,
                    parts.join("; ")
                )
            })
        })
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(out, "## Notes\n\n{}\n", notes.join("\n"));
    }
    out
}

/// The rows as CSV, numbers unformatted.
pub fn csv_report(rows: &[ReportRow]) -> String {
    let header = [
        "test",
        "transport",
        "format",
        "msg_size",
        "msg_bytes",
        "persistent",
        "instances",
        "requesters",
        "msg_rate",
        "cpu_busy_pct",
        "cpu_ms_per_msg",
        "server_cpu_us_per_msg",
        "driver_cpu_us_per_msg",
        "p50_us",
        "p99_us",
        "p999_us",
        "peak_rss_kb",
        "runs_ok",
        "runs_failed",
        "errors",
        "seed_source",
        "seed_msg_rate",
        "seed_cpu_ms_per_msg",
        "seed_cpu_us_per_msg",
        "rate_ratio",
        "cpu_ratio",
        "note",
    ];
    let mut out = header.join(",");
    out.push('\n');
    let num = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.6}"));
    for row in rows {
        let m = row.median();
        let seed = row.seed.as_ref();
        let fields = [
            row.test.clone(),
            row.transport.clone(),
            row.format.clone(),
            row.msg_size.clone(),
            row.msg_bytes.to_string(),
            row.persistent.clone(),
            row.instances.map_or(String::new(), |n| n.to_string()),
            row.requesters.to_string(),
            num(m.map(|m| m.rate)),
            num(m.map(|m| m.cpu_busy_pct)),
            num(m.and_then(|m| m.cpu_ms_per_msg)),
            num(m.and_then(|m| m.server_cpu_us_per_msg)),
            num(m.and_then(|m| m.driver_cpu_us_per_msg)),
            num(m.and_then(|m| m.p50_us)),
            num(m.and_then(|m| m.p99_us)),
            num(m.and_then(|m| m.p999_us)),
            m.and_then(|m| m.peak_rss_kb)
                .map_or(String::new(), |v| v.to_string()),
            row.summary.ok_runs().to_string(),
            row.summary.failed_runs().to_string(),
            row.summary.total_errors().to_string(),
            seed.map_or(String::new(), |s| s.source.clone()),
            num(seed.and_then(|s| s.rate)),
            num(seed.and_then(|s| s.cpu_ms_per_msg)),
            num(seed.and_then(|s| s.cpu_us_per_msg)),
            num(row.rate_ratio()),
            num(row.cpu_comparison().and_then(|(_, r)| r)),
            row.note.clone().unwrap_or_default(),
        ];
        let quoted: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&quoted.join(","));
        out.push('\n');
    }
    out
}

fn csv_field(value: &str) -> String {
    if value.contains([',', '"', '\n']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_string()
    }
}

/// Writes `report.md`, `report.csv` and one SVG chart per scaling test into
/// `dir`; returns the files written.
pub fn write_report(
    dir: &Path,
    outcome: &SuiteOutcome,
    title: &str,
) -> Result<Vec<PathBuf>, BenchError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| BenchError::io(format!("creating {}", dir.display()), e))?;
    let mut written = Vec::new();
    let mut write = |name: &str, text: &str| -> Result<(), BenchError> {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .map_err(|e| BenchError::io(format!("writing {}", path.display()), e))?;
        written.push(path);
        Ok(())
    };
    let mut markdown = markdown_report(outcome, title);
    let charts = crate::chart::scaling_charts(&outcome.rows);
    if !charts.is_empty() {
        markdown.push_str("## Scaling\n\n");
    }
    for chart in &charts {
        let _ = writeln!(markdown, "![{}]({})\n", chart.title, chart.file_name);
    }
    write("report.md", &markdown)?;
    write("report.csv", &csv_report(&outcome.rows))?;
    for chart in &charts {
        write(&chart.file_name, &chart.svg)?;
    }
    Ok(written)
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;

fn cpu_list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
