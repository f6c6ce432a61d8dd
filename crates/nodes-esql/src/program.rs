//! The compiled ESQL of a project, cached by project folder and recompiled when a file
//! changes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use sluice_db::Datasource;
use sluice_esql::runtime::{Module, ModuleKind, Program};
use sluice_node_api::{BuildContext, ConfigError};

type Sources = Vec<(String, String)>;
/// Compiled programs by `esql/` folder, with the sources they were compiled from.
type Cache = Mutex<HashMap<PathBuf, (Sources, Arc<Program>)>>;

fn cache() -> &'static Cache {
    static C: OnceLock<Cache> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The project's ESQL files (under `esql/`), whose change changes every flow that runs them.
pub fn esql_files(project_dir: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    sluice_esql::runtime::collect_esql(&project_dir.join("esql"), &mut paths);
    paths
}

/// The project's program, compiled at most once for the same sources.
pub fn program(project_dir: &Path) -> Result<Arc<Program>, ConfigError> {
    let dir = project_dir.join("esql");
    let paths = esql_files(project_dir);
    let mut sources = Vec::with_capacity(paths.len());
    for p in &paths {
        let bytes = std::fs::read(p).map_err(|e| {
            ConfigError::property("module", format!("cannot read {}: {e}", p.display()))
        })?;
        sources.push((
            p.display().to_string(),
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
    }
    let mut c = cache().lock().unwrap_or_else(|e| e.into_inner());
    if let Some((s, p)) = c.get(&dir)
        && *s == sources
    {
        return Ok(p.clone());
    }
    let program = Program::compile(&sources).map_err(|errors| {
        ConfigError::property(
            "module",
            format!(
                "the project's ESQL does not compile:\n{}",
                errors
                    .iter()
                    .map(|e| e.render())
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        )
        .with_hint("run `sluice esql check <project>/esql` to see every problem")
    })?;
    let program = Arc::new(program);
    c.insert(dir, (sources, program.clone()));
    Ok(program)
}

/// The module named by the node's `module` property, of the kind the node runs.
pub fn module(b: &BuildContext, name: &str, kind: ModuleKind) -> Result<Module, ConfigError> {
    let program = program(b.project_dir)?;
    let m = program.module(name).ok_or_else(|| {
        let known = program.module_names();
        ConfigError::property(
            "module",
            format!(
                "no ESQL module `{name}` in {}",
                b.project_dir.join("esql").display()
            ),
        )
        .with_hint(if known.is_empty() {
            "add a .esql file with CREATE COMPUTE MODULE … under esql/".to_string()
        } else {
            format!("modules found: {}", known.join(", "))
        })
    })?;
    if !m.has_main() {
        return Err(ConfigError::property(
            "module",
            format!("module `{name}` has no Main function"),
        )
        .with_hint("add CREATE FUNCTION Main() RETURNS BOOLEAN to the module"));
    }
    if m.kind() != kind {
        return Err(ConfigError::property(
            "module",
            format!(
                "module `{name}` is a {:?} module; this node needs a {kind:?} module",
                m.kind()
            ),
        ));
    }
    Ok(m)
}

/// A node's database: `datasource` is a name from sluice.yaml's `datasources`, or else a file
/// (relative to the project), shared with the other nodes that name it so that their work in
/// one invocation is one transaction, or `:memory:` (a database of the node's own).
pub fn database(
    b: &BuildContext,
    datasource: Option<&str>,
) -> Result<Option<Arc<Datasource>>, ConfigError> {
    let Some(ds) = datasource.filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let registry = sluice_db::Registry::global();
    let opened = match b.services.datasources.get(ds) {
        Some(sluice_node_api::DatasourceDef::Sqlite { path }) => {
            registry.open(&path.display().to_string(), b.project_dir)
        }
        Some(sluice_node_api::DatasourceDef::Postgres {
            conninfo,
            password_env,
        }) => {
            let password = match password_env {
                Some(var) => match std::env::var(var) {
                    Ok(p) => Some(p),
                    // `sluice validate` checks flows where the secrets are not.
                    Err(_) if b.services.runtime.is_none() => None,
                    Err(_) => {
                        return Err(ConfigError::property(
                            "datasource",
                            format!(
                                "datasource `{ds}` takes its password from environment variable \
                                 `{var}`, which is not set"
                            ),
                        ));
                    }
                },
                None => None,
            };
            registry.postgres(ds, conninfo, password.as_deref())
        }
        None => registry.open(ds, b.project_dir),
    };
    opened
        .map(Some)
        .map_err(|e| ConfigError::property("datasource", e.to_string()))
}
