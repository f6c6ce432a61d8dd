//! Deployed flows: built from a project, started, and redeployed when their files change (a
//! flow file or REST API document: that flow; an ESQL file under `esql/`: every flow).
//!
//! A changed flow file is loaded and built beside the running flow; only when that succeeds does
//! the new flow start (taking over its HTTP paths) and the old one stop, after finishing the
//! messages it has already accepted. A file with errors leaves the running flow as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use parking_lot::{Mutex, RwLock};
use sluice_flow::{Diagnostic, Flow, FlowDef, Registry, RunningFlow};
use sluice_node_api::Services;

use crate::ServerError;
use crate::project;

struct Deployed {
    flow: Arc<Flow>,
    /// None while an operator has it stopped.
    running: Option<RunningFlow>,
    /// Instances set through the admin API, kept across a stop and start until the file
    /// changes.
    instances: Option<usize>,
    stamp: Option<(SystemTime, u64)>,
    /// The subflow files it uses, as its definition names them.
    subflows: Vec<String>,
    /// What its nodes serve exclusively, with where ([`FlowDef::claim_places`]).
    claims: Vec<(String, String)>,
}

/// Whether a deployed flow's instances run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowState {
    Running,
    /// Stopped through the admin API; it stays so across file changes until started.
    Stopped,
}

impl FlowState {
    pub fn as_str(self) -> &'static str {
        match self {
            FlowState::Running => "running",
            FlowState::Stopped => "stopped",
        }
    }
}

/// The HTTP paths of stopped flows, each with its flow: the HTTP listener answers them with
/// 503 rather than 404, as the path is served, just not now. A path ending in `*` is a prefix.
pub type StoppedPaths = Arc<RwLock<Vec<(String, String)>>>;

/// The flow of `paths` that serves `path`, if any.
pub fn stopped_flow_serving(paths: &StoppedPaths, path: &str) -> Option<String> {
    paths
        .read()
        .iter()
        .find(|(p, _)| match p.strip_suffix('*') {
            Some(prefix) => path.starts_with(prefix),
            None => p == path,
        })
        .map(|(_, f)| f.clone())
}

/// The running flows of a server.
pub struct Deployment {
    dir: PathBuf,
    registry: Arc<Registry>,
    services: Arc<Services>,
    flows: Mutex<BTreeMap<PathBuf, Deployed>>,
    /// The ESQL files as the running flows were built from them.
    esql: Mutex<EsqlStamp>,
    /// The subflow files as the running flows were built from them.
    subflows: Mutex<EsqlStamp>,
    stopped_paths: StoppedPaths,
    /// Held by a deploy or rollback from start to end: one at a time, as they share the
    /// staging folders.
    pub(crate) deploying: Mutex<()>,
}

/// Each ESQL file of the project with its modification time and length.
type EsqlStamp = Vec<(PathBuf, Option<(SystemTime, u64)>)>;

fn esql_stamp(dir: &Path) -> EsqlStamp {
    let mut paths = Vec::new();
    sluice_esql::runtime::collect_esql(&dir.join("esql"), &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let s = stamp(&p);
            (p, s)
        })
        .collect()
}

fn subflow_stamp(dir: &Path) -> EsqlStamp {
    project::subflow_files(dir)
        .into_iter()
        .map(|p| {
            let s = stamp(&p);
            (p, s)
        })
        .collect()
}

/// The subflow files added, removed or changed between two stamps, as flow definitions name them.
fn changed_subflows(before: &EsqlStamp, now: &EsqlStamp) -> Vec<String> {
    let mut changed = Vec::new();
    for (p, s) in before.iter().chain(now) {
        let same = before.iter().any(|x| x.0 == *p && x.1 == *s)
            && now.iter().any(|x| x.0 == *p && x.1 == *s);
        let name = project::display_path(p);
        if !same && !changed.contains(&name) {
            changed.push(name);
        }
    }
    changed
}

/// Stop `old`, then carry its statistics over to `new`, which replaces it.
fn replace(old: Deployed, new: &Flow) {
    if let Some(r) = old.running {
        r.stop();
    }
    new.carry_statistics_from(&old.flow);
}

/// The HTTP paths a flow's claims name.
fn http_paths(claims: &[(String, String)]) -> impl Iterator<Item = &str> {
    claims
        .iter()
        .filter_map(|(c, _)| c.strip_prefix("HTTP path "))
}

fn stamp(p: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(p).ok()?;
    Some((m.modified().ok()?, m.len()))
}

impl Deployment {
    pub fn new(dir: &Path, registry: Arc<Registry>, services: Arc<Services>) -> Deployment {
        Deployment {
            dir: dir.to_path_buf(),
            registry,
            services,
            flows: Mutex::new(BTreeMap::new()),
            esql: Mutex::new(esql_stamp(dir)),
            subflows: Mutex::new(subflow_stamp(dir)),
            stopped_paths: StoppedPaths::default(),
            deploying: Mutex::new(()),
        }
    }

    /// The project folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The registry flows are built with.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The server's data folder (None in a server without one, such as the in-process bench).
    pub fn data_dir(&self) -> Option<&Path> {
        self.services.data_dir.as_deref()
    }

    /// The HTTP paths of stopped flows, for the HTTP listener.
    pub fn stopped_paths(&self) -> StoppedPaths {
        Arc::clone(&self.stopped_paths)
    }

    /// Run `f` while no rescan looks at the project's files (a deploy swapping folders).
    pub fn exclusive<R>(&self, f: impl FnOnce() -> R) -> R {
        let _flows = self.flows.lock();
        f()
    }

    fn refresh_stopped_paths(&self, flows: &BTreeMap<PathBuf, Deployed>) {
        let paths = flows
            .values()
            .filter(|d| d.running.is_none())
            .flat_map(|d| http_paths(&d.claims).map(|p| (p.to_string(), d.flow.name.clone())))
            .collect();
        *self.stopped_paths.write() = paths;
    }

    fn build(&self, def: &FlowDef) -> Result<Arc<Flow>, Vec<Diagnostic>> {
        Flow::build(def, &self.dir, &self.services).map(Arc::new)
    }

    /// Build every flow, then start them all; nothing starts if anything fails.
    pub fn deploy_all(&self, defs: &[FlowDef]) -> Result<(), Vec<Diagnostic>> {
        let mut built: Vec<(&FlowDef, Arc<Flow>)> = Vec::new();
        let mut problems = Vec::new();
        for d in defs {
            match self.build(d) {
                Ok(f) => built.push((d, f)),
                Err(mut p) => problems.append(&mut p),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let mut flows = self.flows.lock();
        for (def, f) in built {
            let file = Path::new(&def.file);
            let folder = if project::is_api_file(file) {
                "apis"
            } else {
                "flows"
            };
            let path = self
                .dir
                .join(folder)
                .join(file.file_name().unwrap_or_default());
            let st = stamp(&path);
            flows.insert(
                path,
                Deployed {
                    running: Some(f.start()),
                    flow: f,
                    instances: None,
                    stamp: st,
                    subflows: def.subflow_files.clone(),
                    claims: def.claim_places(),
                },
            );
        }
        Ok(())
    }

    /// The deployed flows, for statistics.
    pub fn flows(&self) -> Vec<Arc<Flow>> {
        self.flows
            .lock()
            .values()
            .map(|d| Arc::clone(&d.flow))
            .collect()
    }

    /// The deployed flows with whether they run.
    pub fn flow_states(&self) -> Vec<(Arc<Flow>, FlowState)> {
        self.flows
            .lock()
            .values()
            .map(|d| {
                let state = if d.running.is_some() {
                    FlowState::Running
                } else {
                    FlowState::Stopped
                };
                (Arc::clone(&d.flow), state)
            })
            .collect()
    }

    /// Look for changed, new and removed flow files once; redeploy what changed.
    pub fn rescan(&self) {
        let mut flows = self.flows.lock();
        // Listed under the lock: a deploy swaps the folders while holding it.
        let files = project::deployable_files(&self.dir);
        // A changed ESQL file rebuilds every flow (any of them may run it); one that does not
        // compile leaves them all running as they were.
        let esql_now = esql_stamp(&self.dir);
        let esql_changed = {
            let mut e = self.esql.lock();
            let changed = *e != esql_now;
            *e = esql_now;
            changed
        };
        if esql_changed {
            tracing::info!("ESQL files changed; redeploying the flows.");
        }
        // A changed subflow redeploys the flows that use it.
        let subflows_now = subflow_stamp(&self.dir);
        let changed_subflows = {
            let mut s = self.subflows.lock();
            let changed = changed_subflows(&s, &subflows_now);
            *s = subflows_now;
            changed
        };
        let (subflow_set, subflow_problems) = project::load_subflows(&self.dir, &self.registry);
        if !changed_subflows.is_empty() {
            for p in &subflow_problems {
                eprint!("{p}");
            }
        }
        for f in &files {
            let st = stamp(f);
            let unchanged = flows.get(f).is_some_and(|d| {
                d.stamp == st && !d.subflows.iter().any(|s| changed_subflows.contains(s))
            });
            if !esql_changed && unchanged {
                continue;
            }
            if let Some(d) = flows.get_mut(f)
                && d.running.is_none()
            {
                // Built from the files as they are then, when an operator starts it.
                tracing::info!(flow = %d.flow.name, "The flow's files changed while it is stopped; the change takes effect when it is started.");
                d.stamp = st;
                d.instances = None;
                continue;
            }
            let taken: Vec<(String, String)> = flows
                .iter()
                .filter(|(p, _)| *p != f)
                .flat_map(|(_, d)| d.claims.iter().cloned())
                .collect();
            let loaded = project::load_flow_file(f, &self.registry, &subflow_set).and_then(|def| {
                let clashes = sluice_flow::conflicting_claims(&[&def], &taken);
                if !clashes.is_empty() {
                    return Err(clashes);
                }
                self.build(&def).map(|flow| (def, flow))
            });
            match loaded {
                Ok((def, flow)) => {
                    if flows.contains_key(f) {
                        tracing::info!(flow = %flow.name, file = %f.display(), "Redeploying flow.");
                    } else {
                        tracing::info!(flow = %flow.name, file = %f.display(), "Deploying a new flow.");
                    }
                    let running = flow.start();
                    let deployed = Deployed {
                        running: Some(running),
                        flow: Arc::clone(&flow),
                        instances: None,
                        stamp: st,
                        claims: def.claim_places(),
                        subflows: def.subflow_files,
                    };
                    if let Some(old) = flows.insert(f.clone(), deployed) {
                        replace(old, &flow);
                    }
                }
                Err(problems) => {
                    for p in problems {
                        eprint!("{p}");
                    }
                    tracing::error!(file = %f.display(), "The flow file has errors; the running flow is unchanged.");
                    if let Some(d) = flows.get_mut(f) {
                        d.stamp = st;
                    }
                }
            }
        }
        let gone: Vec<PathBuf> = flows
            .keys()
            .filter(|k| !files.contains(k))
            .cloned()
            .collect();
        for g in gone {
            if let Some(d) = flows.remove(&g) {
                tracing::info!(flow = %d.flow.name, "Flow file removed; stopping the flow.");
                if let Some(r) = d.running {
                    r.stop();
                }
            }
        }
        self.refresh_stopped_paths(&flows);
    }

    /// Poll the flow files every `every` until `stop` is set.
    pub fn watch(
        self: &Arc<Self>,
        every: Duration,
        stop: Arc<std::sync::atomic::AtomicBool>,
    ) -> std::thread::JoinHandle<()> {
        let me = Arc::clone(self);
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Acquire) {
                // Unparked when the server stops (or spuriously: a rescan too many is harmless).
                std::thread::park_timeout(every);
                if stop.load(std::sync::atomic::Ordering::Acquire) {
                    break;
                }
                me.rescan();
            }
        })
    }

    /// Redeploy flow `name` with `instances` copies (the file is unchanged); a stopped flow
    /// starts.
    pub fn set_instances(&self, name: &str, instances: usize) -> Result<(), ServerError> {
        let mut flows = self.flows.lock();
        let r = self.redeploy(&mut flows, name, Some(instances));
        self.refresh_stopped_paths(&flows);
        r
    }

    /// Build flow `name` again from its files and start it in place of the deployed one
    /// (running or stopped). A file that no longer loads leaves the flow as it was.
    fn redeploy(
        &self,
        flows: &mut BTreeMap<PathBuf, Deployed>,
        name: &str,
        instances: Option<usize>,
    ) -> Result<(), ServerError> {
        let Some((path, stamp, kept)) = flows
            .iter()
            .find(|(_, d)| d.flow.name == name)
            .map(|(p, d)| (p.clone(), d.stamp, d.instances))
        else {
            return Err(ServerError::UnknownFlow(name.to_string()));
        };
        let instances = instances.or(kept);
        let (subflow_set, _) = project::load_subflows(&self.dir, &self.registry);
        let mut def = project::load_flow_file(&path, &self.registry, &subflow_set)
            .map_err(|diagnostics| ServerError::Flow { diagnostics })?;
        if let Some(n) = instances {
            def.instances = n;
        }
        let flow = self
            .build(&def)
            .map_err(|diagnostics| ServerError::Flow { diagnostics })?;
        let running = flow.start();
        let deployed = Deployed {
            running: Some(running),
            flow: Arc::clone(&flow),
            instances,
            stamp,
            claims: def.claim_places(),
            subflows: def.subflow_files,
        };
        if let Some(old) = flows.insert(path, deployed) {
            replace(old, &flow);
        }
        Ok(())
    }

    /// Stop flow `name` after the messages it has accepted; it stays deployed, and stopped,
    /// until [`Deployment::start`]. Returns false when it was already stopped.
    pub fn stop(&self, name: &str) -> Result<bool, ServerError> {
        let mut flows = self.flows.lock();
        let d = flows
            .values_mut()
            .find(|d| d.flow.name == name)
            .ok_or_else(|| ServerError::UnknownFlow(name.to_string()))?;
        let Some(running) = d.running.take() else {
            return Ok(false);
        };
        // Paths answer 503 from the moment the flow lets go of them.
        self.refresh_stopped_paths(&flows);
        tracing::info!(flow = %name, "Stopping the flow.");
        running.stop();
        Ok(true)
    }

    /// Start a stopped flow, built from its files as they are now. Returns false when it was
    /// already running.
    pub fn start(&self, name: &str) -> Result<bool, ServerError> {
        let mut flows = self.flows.lock();
        match flows.values().find(|d| d.flow.name == name) {
            None => return Err(ServerError::UnknownFlow(name.to_string())),
            Some(d) if d.running.is_some() => return Ok(false),
            Some(_) => {}
        }
        tracing::info!(flow = %name, "Starting the flow.");
        let r = self.redeploy(&mut flows, name, None);
        self.refresh_stopped_paths(&flows);
        r.map(|()| true)
    }

    /// Build the flow again from its files and replace the deployed one, running or stopped,
    /// without dropping messages (a redeploy).
    pub fn restart(&self, name: &str) -> Result<(), ServerError> {
        let mut flows = self.flows.lock();
        tracing::info!(flow = %name, "Restarting the flow.");
        let r = self.redeploy(&mut flows, name, None);
        self.refresh_stopped_paths(&flows);
        r
    }

    /// Set flow `name`'s statistics, and its nodes', back to zero.
    pub fn reset_statistics(&self, name: &str) -> Result<(), ServerError> {
        let flows = self.flows.lock();
        let d = flows
            .values()
            .find(|d| d.flow.name == name)
            .ok_or_else(|| ServerError::UnknownFlow(name.to_string()))?;
        d.flow.stats.reset();
        Ok(())
    }

    /// Stop every flow, letting each finish the messages it accepted.
    pub fn stop_all(&self) {
        let flows = std::mem::take(&mut *self.flows.lock());
        // All at once: each flow's instances may take a moment to notice (an input's poll),
        // and one after the other those moments added up to seconds.
        for r in flows.values().filter_map(|d| d.running.as_ref()) {
            r.ask_to_stop();
        }
        for r in flows.into_values().filter_map(|d| d.running) {
            r.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopped_flow_serving_matches_exact_paths_and_prefixes_when_listed() {
        let paths = StoppedPaths::default();
        paths.write().extend([
            ("/orders".to_string(), "orders".to_string()),
            ("/files/*".to_string(), "files".to_string()),
        ]);
        assert_eq!(
            stopped_flow_serving(&paths, "/orders").as_deref(),
            Some("orders")
        );
        assert_eq!(stopped_flow_serving(&paths, "/orders/1"), None);
        assert_eq!(
            stopped_flow_serving(&paths, "/files/a/b").as_deref(),
            Some("files")
        );
        assert_eq!(stopped_flow_serving(&paths, "/other"), None);
    }
}
