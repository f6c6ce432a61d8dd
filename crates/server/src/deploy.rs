//! Deployed flows: built from a project, started, and redeployed when their files change (a
//! flow file: that flow; an ESQL file under `esql/`: every flow).
//!
//! A changed flow file is loaded and built beside the running flow; only when that succeeds does
//! the new flow start (taking over its HTTP paths) and the old one stop, after finishing the
//! messages it has already accepted. A file with errors leaves the running flow as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use parking_lot::Mutex;
use sluice_flow::{Diagnostic, Flow, FlowDef, Registry, RunningFlow};
use sluice_node_api::Services;

use crate::ServerError;
use crate::project;

struct Deployed {
    running: RunningFlow,
    stamp: Option<(SystemTime, u64)>,
    /// The subflow files it uses, as its definition names them.
    subflows: Vec<String>,
    /// What its nodes serve exclusively, with where ([`FlowDef::claim_places`]).
    claims: Vec<(String, String)>,
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
    let stopped = Arc::clone(&old.running.flow);
    old.running.stop();
    new.carry_statistics_from(&stopped);
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
        }
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
            let path = self
                .dir
                .join("flows")
                .join(Path::new(&def.file).file_name().unwrap_or_default());
            let st = stamp(&path);
            flows.insert(
                path,
                Deployed {
                    running: f.start(),
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
            .map(|d| Arc::clone(&d.running.flow))
            .collect()
    }

    /// Look for changed, new and removed flow files once; redeploy what changed.
    pub fn rescan(&self) {
        let files = project::flow_files(&self.dir);
        let mut flows = self.flows.lock();
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
                        running,
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
                tracing::info!(flow = %d.running.flow.name, "Flow file removed; stopping the flow.");
                d.running.stop();
            }
        }
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

    /// Redeploy flow `name` with `instances` copies (the file is unchanged).
    pub fn set_instances(&self, name: &str, instances: usize) -> Result<(), ServerError> {
        let mut flows = self.flows.lock();
        let Some((path, stamp)) = flows
            .iter()
            .find(|(_, d)| d.running.flow.name == name)
            .map(|(p, d)| (p.clone(), d.stamp))
        else {
            return Err(ServerError::UnknownFlow(name.to_string()));
        };
        let (subflow_set, _) = project::load_subflows(&self.dir, &self.registry);
        let mut def = project::load_flow_file(&path, &self.registry, &subflow_set)
            .map_err(|diagnostics| ServerError::Flow { diagnostics })?;
        def.instances = instances;
        let flow = self
            .build(&def)
            .map_err(|diagnostics| ServerError::Flow { diagnostics })?;
        let running = flow.start();
        let deployed = Deployed {
            running,
            stamp,
            claims: def.claim_places(),
            subflows: def.subflow_files,
        };
        if let Some(old) = flows.insert(path, deployed) {
            replace(old, &flow);
        }
        Ok(())
    }

    /// Stop every flow, letting each finish the messages it accepted.
    pub fn stop_all(&self) {
        let flows = std::mem::take(&mut *self.flows.lock());
        // All at once: each flow's instances may take a moment to notice (an input's poll),
        // and one after the other those moments added up to seconds.
        for d in flows.values() {
            d.running.ask_to_stop();
        }
        for (_, d) in flows {
            d.running.stop();
        }
    }
}
