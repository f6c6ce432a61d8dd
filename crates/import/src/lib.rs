//! `sluice import`: an ACE/IIB workspace (or one application, library or unzipped BAR file) as
//! a Sluice project — message flows and subflows as flow files with BAR overrides applied,
//! ESQL beside them, schemas in `models/`, stylesheets in `xsl/`, WSDL files in `services/`,
//! policies as datasources, brokers and node settings, the queues, datasources and brokers
//! the flows name in sluice.yaml — with
//! `IMPORT-REPORT.md` listing everything
//! that did not map, where it is and why. Nothing is dropped silently: a node Sluice does not
//! have is written with the product's type name, which validation then names.

mod convert;
mod overrides;
mod policies;
mod report;
mod resources;
pub mod table;
mod xmi;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use convert::{Converted, Unmapped};
pub use overrides::Override;
pub use policies::{Outcome, Policy, outcome as policy_outcome, read as read_policies};
pub use report::{complete, migration_doc};

/// Why an import could not run.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file or folder could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A flow file is not well-formed XMI; the import goes on with the others.
    #[error("{path}:{line}: {message}")]
    Xmi {
        path: String,
        line: usize,
        message: String,
    },
    /// The output folder holds files and `--force` was not given.
    #[error("{0} is not empty (use --force to write into it)")]
    NotEmpty(String),
    /// The workspace holds no message flow.
    #[error("no .msgflow or .subflow file under {0}")]
    NothingToImport(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ImportError + '_ {
    move |source| ImportError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// One flow file as imported.
#[derive(Debug, Clone)]
pub struct FlowResult {
    /// The file in the workspace, relative to the workspace folder.
    pub source: String,
    /// The file written, relative to the project folder (`flows/Orders.yaml`); None when the
    /// source could not be read.
    pub written: Option<String>,
    pub subflow: bool,
    pub nodes: usize,
    pub nodes_mapped: usize,
    pub unmapped: Vec<Unmapped>,
    /// Why the file could not be read, when it could not.
    pub error: Option<String>,
}

impl FlowResult {
    pub fn complete(&self) -> bool {
        self.error.is_none() && self.unmapped.is_empty()
    }
}

/// What an import did.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub flows: Vec<FlowResult>,
    pub esql_files: usize,
    /// Files of kinds the import does not carry across yet (maps, Java …), by kind.
    pub not_imported: BTreeMap<String, Vec<String>>,
    /// Files copied into the project as they are (schemas, stylesheets, WSDL): the project
    /// folder they went to, and each file's place there.
    pub carried: BTreeMap<String, Vec<String>>,
    /// Each policy of the workspace and what it became.
    pub policies: Vec<(Policy, Outcome)>,
    /// Files that could not be read or placed (a broken policy file …), with why.
    pub unreadable: Vec<String>,
    pub queues: BTreeSet<String>,
    pub datasources: BTreeSet<String>,
    /// The brokers the MQTT and Kafka nodes name: entry name → its lines in sluice.yaml.
    pub brokers: BTreeMap<String, Vec<String>>,
    /// BAR override lines found, and those that could not be applied, with why.
    pub overrides: usize,
    /// Whether the project validated, once the flows with problems moved aside.
    pub validated: bool,
    pub unapplied_overrides: Vec<(overrides::Override, String)>,
}

/// A flow file of the workspace.
struct Source {
    /// Relative to the workspace folder, for messages.
    shown: String,
    /// Relative to its application or library (the folder with `.project`): how other flows
    /// refer to it (`com/example/Audit.subflow`).
    key: String,
    path: PathBuf,
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ImportError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        // The toolkit's workspace metadata and build output hold copies; `gen/` does not (a
        // REST API's main flow lives there).
        if p.is_dir() && !matches!(name, ".metadata" | "bin" | ".git") {
            walk(&p, out)?;
        } else if p.is_file() {
            out.push(p);
        }
    }
    Ok(())
}

/// The folder of the application or library `file` belongs to: the nearest one above it
/// holding a `.project`, else the workspace folder.
fn project_of(file: &Path, workspace: &Path) -> PathBuf {
    let mut at = file.parent();
    while let Some(d) = at {
        if d.join(".project").is_file() {
            return d.to_path_buf();
        }
        if d == workspace {
            break;
        }
        at = d.parent();
    }
    workspace.to_path_buf()
}

fn rel(p: &Path, base: &Path) -> String {
    p.strip_prefix(base)
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

fn stem(key: &str) -> String {
    let file = key.rsplit('/').next().unwrap_or(key);
    file.rsplit_once('.').map_or(file, |(s, _)| s).to_string()
}

/// The Sluice names of the workspace's flow files: the file name, or, where two files share
/// one, the path with `_` for `/`.
struct Names {
    by_key: BTreeMap<String, String>,
    subflows: BTreeSet<String>,
    /// Each subflow's promoted properties and how their values are carried across.
    promoted: BTreeMap<(String, String), table::Conv>,
    /// Global elements of the schemas carried into `models/`: name → the file.
    models: BTreeMap<String, String>,
    /// The EXTERNAL variables of each ESQL module of the workspace, by `SCHEMA.Module`.
    externals: BTreeMap<String, Vec<String>>,
}

impl convert::Workspace for Names {
    fn model(&self, element: &str) -> Option<String> {
        self.models.get(element).cloned()
    }

    fn externals(&self, module: &str) -> Option<Vec<String>> {
        self.externals.get(module).cloned()
    }

    fn subflow(&self, path: &str) -> Option<String> {
        self.subflows
            .contains(path)
            .then(|| self.by_key.get(path).cloned())
            .flatten()
    }

    fn promoted(&self, path: &str, prop: &str) -> Option<table::Conv> {
        self.promoted
            .get(&(path.to_string(), prop.to_string()))
            .copied()
    }
}

/// A workspace of one file: no subflows, no models.
pub(crate) struct Alone;

impl convert::Workspace for Alone {
    fn subflow(&self, _: &str) -> Option<String> {
        None
    }

    fn promoted(&self, _: &str, _: &str) -> Option<table::Conv> {
        None
    }

    fn model(&self, _: &str) -> Option<String> {
        None
    }

    fn externals(&self, _: &str) -> Option<Vec<String>> {
        None
    }
}

/// One flow file's text (`shown` names it in errors) converted on its own, as `import` converts
/// each file but without the rest of its workspace: subflows and message models it names are
/// reported as missing.
pub fn convert_flow(
    name: &str,
    shown: &str,
    text: &str,
    subflow: bool,
) -> Result<Converted, ImportError> {
    let flow = xmi::read(shown, text)?;
    Ok(convert::convert(name, &flow, subflow, &Alone))
}

/// Import the workspace at `from` into a new project folder `to`. `taken` says whether a name
/// is a node type's (or the subflow terminals' `Input`/`Output`), which a subflow may not have.
pub fn import(
    from: &Path,
    to: &Path,
    force: bool,
    taken: &dyn Fn(&str) -> bool,
) -> Result<Summary, ImportError> {
    let mut files = Vec::new();
    walk(from, &mut files)?;
    if to.is_dir() && !force && std::fs::read_dir(to).map_err(io(to))?.next().is_some() {
        return Err(ImportError::NotEmpty(to.display().to_string()));
    }
    let mut summary = Summary::default();
    let mut sources = Vec::new();
    let mut esql = Vec::new();
    let mut bar = Vec::new();
    let mut copies = Vec::new();
    let mut policies = Vec::new();
    for f in &files {
        let ext = f.extension().and_then(|e| e.to_str()).unwrap_or_default();
        let shown = rel(f, from);
        match ext {
            "msgflow" | "subflow" => sources.push(Source {
                key: rel(f, &project_of(f, from)),
                shown,
                path: f.clone(),
            }),
            "esql" => esql.push((f.clone(), shown)),
            "properties" => {
                let text = std::fs::read_to_string(f).map_err(io(f))?;
                let found = overrides::parse(&shown, &text);
                if found.is_empty() {
                    summary
                        .not_imported
                        .entry(ext.to_string())
                        .or_default()
                        .push(shown);
                } else {
                    bar.extend(found);
                }
            }
            "xsd" | "xsl" | "xslt" | "wsdl" => {
                let dir = match ext {
                    "xsd" => "models",
                    "wsdl" => "services",
                    _ => "xsl",
                };
                // A file already kept in a folder of that name stays there, not below it.
                let place = rel(f, &project_of(f, from));
                let place = match place.strip_prefix(dir).and_then(|p| p.strip_prefix('/')) {
                    Some(p) => p.to_string(),
                    None => place,
                };
                copies.push((f.clone(), dir, place));
            }
            "policyxml" => {
                let text = std::fs::read_to_string(f).map_err(io(f))?;
                // A policy project is one flat folder, named as the project.
                let project = f
                    .parent()
                    .and_then(|p| p.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                match policies::read(&project, &shown, &text) {
                    Ok(ps) => policies.extend(ps),
                    Err(e) => summary.unreadable.push(e.to_string()),
                }
            }
            "mxsd" | "dfdl" | "map" | "msgmap" | "monprofile" | "java" | "jar" => summary
                .not_imported
                .entry(ext.to_string())
                .or_default()
                .push(shown),
            _ => {}
        }
    }
    if sources.is_empty() {
        return Err(ImportError::NothingToImport(from.display().to_string()));
    }
    // Read every flow first: which files are subflows shows in the flows that use them.
    let mut read = Vec::new();
    for s in &sources {
        let parsed = std::fs::read_to_string(&s.path)
            .map_err(io(&s.path))
            .and_then(|text| xmi::read(&s.shown, &text));
        read.push(parsed);
    }
    // BAR overrides change the flows before anything converts; one that names nothing is
    // reported.
    summary.overrides = bar.len();
    for o in &bar {
        let mut used = false;
        for (s, parsed) in sources.iter().zip(read.iter_mut()) {
            let Ok(flow) = parsed else { continue };
            if !overrides::is_for(o, &s.key) {
                continue;
            }
            used = true;
            if let Err(reason) = overrides::apply(o, flow) {
                summary.unapplied_overrides.push((o.clone(), reason));
            }
        }
        if !used {
            let reason = "no flow of the workspace has that name".to_string();
            summary.unapplied_overrides.push((o.clone(), reason));
        }
    }
    for f in read.iter_mut().flatten() {
        resources::apply_policies(f, &policies);
    }
    summary.policies = policies
        .into_iter()
        .map(|p| {
            let o = policies::outcome(&p);
            (p, o)
        })
        .collect();
    let mut used = BTreeSet::new();
    for f in read.iter().flatten() {
        for n in &f.nodes {
            if let xmi::NodeKind::Subflow(path) = &n.kind {
                used.insert(path.clone());
            }
        }
    }
    let mut names = Names {
        by_key: BTreeMap::new(),
        subflows: BTreeSet::new(),
        promoted: BTreeMap::new(),
        models: BTreeMap::new(),
        externals: resources::esql_externals(&esql),
    };
    for (f, dir, place) in &copies {
        let written = format!("{dir}/{place}");
        let dest = to.join(&written);
        if dest.exists() {
            summary.unreadable.push(format!(
                "{}: not copied: another file of the workspace is already {written}",
                rel(f, from)
            ));
            continue;
        }
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::copy(f, &dest).map_err(io(f))?;
        if *dir == "models" {
            let text = std::fs::read_to_string(f).map_err(io(f))?;
            for loc in resources::schema_locations(&text) {
                let near = f.parent().map(|p| p.join(&loc));
                if !loc.contains("://") && !near.is_some_and(|p| p.is_file()) {
                    summary.unreadable.push(format!(
                        "{}: includes or imports `{loc}`, which the workspace does not hold",
                        rel(f, from)
                    ));
                }
            }
            for element in resources::global_elements(&text) {
                names
                    .models
                    .entry(element)
                    .or_insert_with(|| written.clone());
            }
        }
        summary
            .carried
            .entry(dir.to_string())
            .or_default()
            .push(written);
    }

    // A subflow's promoted property may target another subflow's: resolve them inside out,
    // as far as the nesting goes.
    loop {
        let mut found = Vec::new();
        for (s, f) in sources.iter().zip(&read) {
            let Ok(f) = f else { continue };
            for p in &f.properties {
                let key = (s.key.clone(), p.name.clone());
                if !names.promoted.contains_key(&key)
                    && let Some(conv) = convert::promoted_conv(f, p, &names)
                {
                    found.push((key, conv));
                }
            }
        }
        if found.is_empty() {
            break;
        }
        names.promoted.extend(found);
    }
    for s in &sources {
        let clash = sources
            .iter()
            .filter(|o| stem(&o.key) == stem(&s.key))
            .count()
            > 1;
        let name = if clash {
            s.key
                .rsplit_once('.')
                .map_or(s.key.as_str(), |(k, _)| k)
                .replace(['/', '.'], "_")
        } else {
            stem(&s.key)
        };
        // A flow named like a node type (`Route.subflow`) is named for what it is.
        let name = if taken(&name) {
            let kind = if s.key.ends_with(".subflow") {
                "subflow"
            } else {
                "flow"
            };
            format!("{name}_{kind}")
        } else {
            name
        };
        names.by_key.insert(s.key.clone(), name);
        if s.key.ends_with(".subflow") || used.contains(&s.key) {
            names.subflows.insert(s.key.clone());
        }
    }
    for dir in ["flows", "subflows", "esql"] {
        let d = to.join(dir);
        std::fs::create_dir_all(&d).map_err(io(&d))?;
    }
    for (s, parsed) in sources.iter().zip(read) {
        let subflow = names.subflows.contains(&s.key);
        let flow = match parsed {
            Ok(f) => f,
            Err(e) => {
                summary.flows.push(FlowResult {
                    source: s.shown.clone(),
                    written: None,
                    subflow,
                    nodes: 0,
                    nodes_mapped: 0,
                    unmapped: Vec::new(),
                    error: Some(e.to_string()),
                });
                continue;
            }
        };
        resources::collect_resources(&flow, &mut summary);
        let name = &names.by_key[&s.key];
        let c = convert::convert(name, &flow, subflow, &names);
        let written = format!("{}/{name}.yaml", if subflow { "subflows" } else { "flows" });
        let path = to.join(&written);
        let header = format!("# Imported from {} by `sluice import`.\n", s.shown);
        std::fs::write(&path, header + &c.yaml).map_err(io(&path))?;
        summary.flows.push(FlowResult {
            source: s.shown.clone(),
            written: Some(written),
            subflow,
            nodes: c.nodes,
            nodes_mapped: c.nodes_mapped,
            unmapped: c.unmapped,
            error: None,
        });
    }
    for (f, shown) in &esql {
        let dest = to.join("esql").join(shown);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::copy(f, &dest).map_err(io(f))?;
        summary.esql_files += 1;
    }
    resources::write_settings(to, &summary)?;
    Ok(summary)
}

/// Validates a project folder: each problem's file (relative to the folder) and text.
pub type Validate = dyn Fn(&Path) -> Result<(), Vec<(String, String)>>;

/// Move a written flow file to `flows-incomplete/` (or `subflows-incomplete/`); returns where
/// it went.
fn move_aside(to: &Path, f: &mut FlowResult) -> Result<Option<String>, ImportError> {
    let Some(file) = f.written.clone() else {
        return Ok(None);
    };
    let Some((dir, name)) = file.split_once('/') else {
        return Ok(None);
    };
    if dir.ends_with("-incomplete") {
        return Ok(None);
    }
    let aside = format!("{dir}-incomplete/{name}");
    let target = to.join(&aside);
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    std::fs::rename(to.join(&file), &target).map_err(io(&target))?;
    f.written = Some(aside.clone());
    Ok(Some(aside))
}

/// Validate the project with `validate` (which gives each problem's file, relative to the
/// project, and text) and move every flow or subflow file that did not map completely, or
/// that has a problem, to `flows-incomplete/` or `subflows-incomplete/`, again until what
/// stays validates: so the project runs the flows that imported completely, and the others
/// wait beside them with what did not map and the validator's words in the report. Returns
/// the problems by the file's place (after any move).
pub fn settle(
    to: &Path,
    summary: &mut Summary,
    validate: &Validate,
) -> Result<BTreeMap<String, Vec<String>>, ImportError> {
    let mut problems: BTreeMap<String, Vec<String>> = BTreeMap::new();
    loop {
        validate_and_move(to, summary, validate, &mut problems)?;
        // A flow with a part that did not map would not do what it did in the product: it
        // waits too, once the validator has said what it finds in it. Moving a subflow may
        // break the flows that use it, so validate again.
        let mut moved = false;
        for f in summary.flows.iter_mut().filter(|f| !f.unmapped.is_empty()) {
            moved |= move_aside(to, f)?.is_some();
        }
        if !moved {
            return Ok(problems);
        }
    }
}

/// Validate, and move the flow files with problems aside until what stays validates (or a
/// problem outside the flow files remains).
fn validate_and_move(
    to: &Path,
    summary: &mut Summary,
    validate: &Validate,
    problems: &mut BTreeMap<String, Vec<String>>,
) -> Result<(), ImportError> {
    summary.validated = false;
    loop {
        // With every flow aside there is nothing left to run, and nothing left that fails.
        let left = summary.flows.iter().any(|f| {
            f.written
                .as_deref()
                .is_some_and(|w| w.starts_with("flows/"))
        });
        if !left {
            summary.validated = true;
            break;
        }
        let Err(found) = validate(to) else {
            summary.validated = true;
            break;
        };
        let mut by_file: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (file, text) in found {
            by_file.entry(file).or_default().push(text);
        }
        let mut moved = false;
        for (file, texts) in by_file {
            let flow = summary
                .flows
                .iter_mut()
                .find(|f| f.written.as_deref() == Some(file.as_str()));
            let (place, texts) = match flow {
                Some(f) => match move_aside(to, f)? {
                    Some(aside) => {
                        moved = true;
                        let texts = texts.iter().map(|t| t.replace(&file, &aside)).collect();
                        (aside, texts)
                    }
                    None => (file, texts),
                },
                None => (file, texts),
            };
            let list = problems.entry(place).or_default();
            for t in texts {
                if !list.contains(&t) {
                    list.push(t);
                }
            }
        }
        // A problem outside the flow files (ESQL, sluice.yaml) stops here: moving flows
        // aside would not help, and the report shows it.
        if !moved {
            break;
        }
    }
    Ok(())
}

/// Write `IMPORT-REPORT.md` into the project; `problems` are what validating the project
/// found, by file (relative to the project), in the validator's words.
pub fn write_report(
    to: &Path,
    from: &Path,
    summary: &Summary,
    problems: &BTreeMap<String, Vec<String>>,
) -> Result<PathBuf, ImportError> {
    let path = to.join("IMPORT-REPORT.md");
    let text = report::render(from, summary, problems);
    std::fs::write(&path, text).map_err(io(&path))?;
    Ok(path)
}
