//! `sluice import`: import a workspace, validate what was written (moving flows with problems
//! aside), write the report and say what happened.

use std::path::Path;
use std::process::ExitCode;

use sluice_flow::diag::counted;

use crate::bundle;
/// `sluice import`: import, validate what was written, report.
pub fn run(from: &Path, out: &Path, force: bool) -> ExitCode {
    let registry = bundle::registry();
    let taken = |name: &str| registry.get(name).is_some() || name == "Input" || name == "Output";
    let summary = match sluice_import::import(from, out, force, &taken) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // What validation finds, by the project file it is in; flows with problems move aside.
    let validate = |dir: &Path| {
        // The validator's file names may be relative to the working directory or absolute:
        // compare them as absolute paths.
        let root = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        sluice_server::validate(dir, bundle::registry())
            .map(|_| ())
            .map_err(|ds| {
                ds.iter()
                    .map(|d| {
                        let file = Path::new(&d.file);
                        let abs = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
                        let key = abs
                            .strip_prefix(&root)
                            .or_else(|_| file.strip_prefix(dir))
                            .unwrap_or(file);
                        (key.to_string_lossy().into_owned(), d.to_string())
                    })
                    .collect()
            })
    };
    let mut summary = summary;
    let problems = match sluice_import::settle(out, &mut summary, &validate) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let report = match sluice_import::write_report(out, from, &summary, &problems) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    for f in &summary.flows {
        if !sluice_import::complete(&summary, f, &problems) {
            let what = f.error.clone().unwrap_or_else(|| {
                let mut parts = Vec::new();
                if !f.unmapped.is_empty() {
                    parts.push(counted(f.unmapped.len(), "unmapped part"));
                }
                if let Some(ps) = f.written.as_ref().and_then(|w| problems.get(w)) {
                    parts.push(counted(ps.len(), "validation problem"));
                }
                if let Some(w) = &f.written {
                    parts.push(format!("written to {w}"));
                }
                parts.join(", ")
            });
            println!("{}: {what}", f.source);
        }
    }
    let nodes: usize = summary.flows.iter().map(|f| f.nodes).sum();
    let mapped: usize = summary.flows.iter().map(|f| f.nodes_mapped).sum();
    let done = summary
        .flows
        .iter()
        .filter(|f| sluice_import::complete(&summary, f, &problems))
        .count();
    println!(
        "imported {} flows ({done} complete), {nodes} nodes ({mapped} mapped), report: {}",
        summary.flows.len(),
        report.display()
    );
    ExitCode::SUCCESS
}
