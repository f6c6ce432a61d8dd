//! Flows with file nodes run against a fresh data folder, for the file nodes' tests.

// Each test file uses the part it needs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sluice_flow::{Flow, Registry, load_flow};
use sluice_flow_testing::{Captured, Harness};
use sluice_node_api::Services;
use sluice_tree::{Message, Value};

/// A data folder under the temp folder, removed on drop.
pub struct DataDir(pub PathBuf);

impl DataDir {
    pub fn new(name: &str) -> DataDir {
        let d = std::env::temp_dir().join(format!("sluice-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("create the data folder");
        DataDir(d)
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    /// Write `rel` (its folder created), with a modification time `age_secs` in the past.
    pub fn write(&self, rel: &str, data: &[u8], age_secs: u64) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("a folder")).expect("create a folder");
        std::fs::write(&p, data).expect("write a file");
        let t = std::time::SystemTime::now() - Duration::from_secs(age_secs);
        let f = std::fs::File::options().write(true).open(&p).expect("open");
        f.set_modified(t).expect("set the modification time");
    }

    /// The names in folder `rel`, sorted.
    pub fn list(&self, rel: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path(rel))
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A flow built from `src` with the file nodes, core nodes and the harness's Capture.
pub struct Run {
    pub harness: Arc<Harness>,
    pub flow: Arc<Flow>,
}

pub fn build(src: &str, data: &Path) -> Run {
    build_in(src, data, Path::new("."))
}

/// [`build`] with the ESQL nodes, their modules in `project/esql`.
pub fn build_in(src: &str, data: &Path, project: &Path) -> Run {
    let mut registry = Registry::new();
    sluice_nodes_core::register(&mut |s| registry.register(s));
    sluice_nodes_file::register(&mut |s| registry.register(s));
    sluice_nodes_esql::register(&mut |s| registry.register(s));
    Harness::register(&mut registry);
    let services = Services {
        data_dir: Some(data.to_path_buf()),
        ..Services::none()
    };
    let def = load_flow("files.yaml", src, &registry).unwrap_or_else(|d| panic!("{}", d[0]));
    let harness = Harness::new();
    let flow = harness
        .build(&def, project, &services)
        .unwrap_or_else(|d| panic!("{}", d[0]));
    Run { harness, flow }
}

impl Run {
    /// Start the flow, wait until `done`, stop it, and return what was captured.
    pub fn until(&self, what: &str, done: impl FnMut() -> bool) -> Vec<Captured> {
        self.until_within(what, Duration::from_secs(30), done)
    }

    /// [`Run::until`], waiting at most `limit`.
    pub fn until_within(
        &self,
        what: &str,
        limit: Duration,
        mut done: impl FnMut() -> bool,
    ) -> Vec<Captured> {
        let running = self.flow.start();
        let deadline = Instant::now() + limit;
        while !done() {
            if Instant::now() > deadline {
                running.stop();
                panic!("timed out waiting for {what}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        running.stop();
        self.harness.take_captured()
    }
}

/// The value of `LocalEnvironment.File.<field>` as text (`NULL` for a null value).
pub fn le_file(msg: &Message, field: &str) -> String {
    le_at(msg, &["File", field])
}

/// The value at a LocalEnvironment path as text.
pub fn le_at(msg: &Message, path: &[&str]) -> String {
    let mut le = msg.local_environment.clone();
    let root = le.root();
    let Some(id) = le.path(root, path).expect("navigate") else {
        return "<absent>".into();
    };
    match le.value(id) {
        Value::Null => "NULL".into(),
        Value::Integer(i) => i.to_string(),
        Value::Character(t) => le.str(t).into_owned(),
        Value::GmtTimestamp(_) => "<timestamp>".into(),
        other => format!("{other:?}"),
    }
}

/// The body of a BLOB message as text.
pub fn body(msg: &Message) -> String {
    let mut m = msg.clone();
    let (b, _) = sluice_nodes_core::domains::serialize_body(&mut m).expect("serialise");
    String::from_utf8_lossy(&b).into_owned()
}

pub fn labels(c: &[Captured]) -> Vec<&str> {
    c.iter().map(|c| c.label.as_str()).collect()
}
