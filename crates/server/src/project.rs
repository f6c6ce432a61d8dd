//! A project folder: `sluice.yaml`, `flows/*.yaml`, `subflows/*.yaml` and the REST APIs'
//! `apis/*.yaml` (or `.json`), loaded and validated as a whole.

use std::path::{Path, PathBuf};

use sluice_flow::{Diagnostic, FlowDef, Registry, Subflows, load_flow_with};

use crate::settings::{self, Settings};

/// A project read from disk, every file valid.
pub struct Project {
    pub dir: PathBuf,
    pub settings: Settings,
    pub flows: Vec<FlowDef>,
}

impl Project {
    /// The named datasources of sluice.yaml, SQLite files resolved against the project folder.
    pub fn datasources(
        &self,
    ) -> std::collections::BTreeMap<String, sluice_node_api::DatasourceDef> {
        use sluice_node_api::DatasourceDef;
        self.settings
            .datasources
            .iter()
            .map(|(name, def)| {
                let def = match def {
                    // Absolute, because the nodes that open it resolve it against the project
                    // folder again: a relative project folder (`sluice run samples`) would
                    // otherwise count twice.
                    DatasourceDef::Sqlite { path } => {
                        let joined = self.dir.join(path);
                        DatasourceDef::Sqlite {
                            path: std::path::absolute(&joined).unwrap_or(joined),
                        }
                    }
                    other @ DatasourceDef::Postgres { .. } => other.clone(),
                };
                (name.clone(), def)
            })
            .collect()
    }

    /// The brokers of sluice.yaml, their TLS files resolved against the project folder.
    pub fn brokers(&self) -> std::collections::BTreeMap<String, sluice_node_api::BrokerDef> {
        use sluice_node_api::BrokerDef;
        let at = |p: &Option<PathBuf>| p.as_ref().map(|p| self.dir.join(p));
        let resolve = |tls: &mut Option<sluice_node_api::BrokerTls>| {
            if let Some(t) = tls {
                t.ca_file = at(&t.ca_file);
                t.cert_file = at(&t.cert_file);
                t.key_file = at(&t.key_file);
            }
        };
        self.settings
            .brokers
            .iter()
            .map(|(name, def)| {
                let def = match def {
                    BrokerDef::Mqtt(b) => {
                        let mut b = b.clone();
                        resolve(&mut b.tls);
                        BrokerDef::Mqtt(b)
                    }
                    BrokerDef::Kafka(b) => {
                        let mut b = b.clone();
                        resolve(&mut b.tls);
                        BrokerDef::Kafka(b)
                    }
                };
                (name.clone(), def)
            })
            .collect()
    }
}

/// The flow files of a project, sorted by name.
pub fn flow_files(dir: &Path) -> Vec<PathBuf> {
    yaml_files(&dir.join("flows"))
}

/// The subflow files of a project, sorted by name.
pub fn subflow_files(dir: &Path) -> Vec<PathBuf> {
    yaml_files(&dir.join("subflows"))
}

/// The project's subflows, with the problems of their files.
pub fn load_subflows(dir: &Path, registry: &Registry) -> (Subflows, Vec<Diagnostic>) {
    let mut texts = Vec::new();
    let mut problems = Vec::new();
    for path in subflow_files(dir) {
        let name = display_path(&path);
        match std::fs::read_to_string(&path) {
            Ok(src) => texts.push((name, src)),
            Err(e) => problems.push(Diagnostic::whole(
                &name,
                format!("cannot read the subflow file: {e}"),
            )),
        }
    }
    let (set, mut more) = Subflows::load(
        texts.iter().map(|(n, s)| (n.as_str(), s.as_str())),
        registry,
    );
    problems.append(&mut more);
    (set, problems)
}

/// The REST API documents of a project (`apis/*.yaml`, `*.yml`, `*.json`), sorted by name.
pub fn api_files(dir: &Path) -> Vec<PathBuf> {
    files_with(&dir.join("apis"), &["yaml", "yml", "json"])
}

/// The files a project deploys as flows: its flow files, then its REST API documents.
pub fn deployable_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = flow_files(dir);
    files.append(&mut api_files(dir));
    files
}

/// Whether `path` is a REST API document (in the project's `apis/` folder) rather than a flow.
pub fn is_api_file(path: &Path) -> bool {
    path.parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "apis")
}

fn yaml_files(folder: &Path) -> Vec<PathBuf> {
    files_with(folder, &["yaml", "yml"])
}

fn files_with(folder: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension()
                        .is_some_and(|x| extensions.iter().any(|e| x == *e))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// A path as it appears in messages: relative to the current directory when it can be.
pub fn display_path(p: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| p.strip_prefix(cwd).ok().map(|r| r.display().to_string()))
        .unwrap_or_else(|| p.display().to_string())
}

/// Load one flow file, with the project's subflows; a REST API document loads as the flow that
/// serves it ([`crate::rest_api`]).
pub fn load_flow_file(
    path: &Path,
    registry: &Registry,
    subflows: &Subflows,
) -> Result<FlowDef, Vec<Diagnostic>> {
    if is_api_file(path) {
        return crate::rest_api::load(path, registry, subflows);
    }
    let name = display_path(path);
    let src = std::fs::read_to_string(path).map_err(|e| {
        vec![Diagnostic::whole(
            &name,
            format!("cannot read the flow file: {e}"),
        )]
    })?;
    load_flow_with(&name, &src, registry, subflows)
}

/// Load and validate the whole project, reporting every problem of every file.
pub fn load(dir: &Path, registry: &Registry) -> Result<Project, Vec<Diagnostic>> {
    let mut problems = Vec::new();
    if !dir.is_dir() {
        let name = display_path(dir);
        return Err(vec![Diagnostic::whole(
            &name,
            "the project folder does not exist",
        )]);
    }
    let settings_path = dir.join("sluice.yaml");
    let settings = match std::fs::read_to_string(&settings_path) {
        Ok(src) => settings::parse(&display_path(&settings_path), &src).unwrap_or_else(|mut p| {
            problems.append(&mut p);
            Settings::default()
        }),
        Err(_) => Settings::default(),
    };
    let files = deployable_files(dir);
    if files.is_empty() {
        let name = display_path(&dir.join("flows"));
        problems.push(
            Diagnostic::whole(&name, "the project has no flows").with_hint(
                "put flow files (*.yaml) in the flows/ folder, or REST API documents in apis/",
            ),
        );
    }
    let (subflows, mut subflow_problems) = load_subflows(dir, registry);
    problems.append(&mut subflow_problems);
    let mut flows: Vec<FlowDef> = Vec::new();
    for f in files {
        match load_flow_file(&f, registry, &subflows) {
            Ok(def) => {
                if let Some(other) = flows.iter().find(|o| o.name == def.name) {
                    problems.push(Diagnostic::at(
                        &def.file,
                        &def.source,
                        1,
                        1,
                        format!("flow name `{}` is also used by {}", def.name, other.file),
                    ));
                } else {
                    flows.push(def);
                }
            }
            Err(mut p) => problems.append(&mut p),
        }
    }
    problems.append(&mut sluice_flow::conflicting_claims(
        &flows.iter().collect::<Vec<_>>(),
        &[],
    ));
    if problems.is_empty() {
        Ok(Project {
            dir: dir.to_path_buf(),
            settings,
            flows,
        })
    } else {
        Err(problems)
    }
}
