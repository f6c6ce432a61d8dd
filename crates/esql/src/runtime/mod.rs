//! The ESQL compiler and runtime over the message tree.
//!
//! [`Program::compile`] turns every ESQL file of a project into an executable form once, at
//! deploy time: names resolved to variable slots and tree roots, routines resolved across
//! files (BROKER SCHEMA and PATH), field names interned as bytes, constants folded. A
//! [`Module`] (`CREATE COMPUTE|FILTER|DATABASE MODULE`) then runs its `Main` over a
//! message with [`Module::run`].

// `NodeError` is the node API's error type, returned by value across the whole workspace.

pub mod broker;
mod compile;
mod convert;
pub mod coverage;
mod dynamic;
mod exec;
mod fast;
mod field_types;
mod ir;
mod models;
mod mq_constants;
pub mod workspace;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sluice_db::Datasource;
use sluice_node_api::NodeError;
use sluice_tree::{Message, Tree};

pub use exec::Outcome;
pub use models::MessageModels;
pub use sluice_esql_scalar::Value as ScalarValue;

use crate::EsqlError;
pub use crate::syntax::ast::ModuleKind;

/// Every ESQL file of a project, compiled.
pub struct Program {
    compiled: compile::Compiled,
    shared: exec::SharedState,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("files", &self.compiled.files.len())
            .field("modules", &self.compiled.modules.len())
            .field("routines", &self.compiled.routines.len())
            .finish()
    }
}

impl Program {
    /// Parse, check and compile `(path, source)` pairs together; every problem is returned,
    /// each as an [`EsqlError::Compile`].
    pub fn compile(files: &[(String, String)]) -> Result<Program, Vec<EsqlError>> {
        let mut errors = Vec::new();
        let mut sources = Vec::new();
        let mut asts = Vec::new();
        for (path, src) in files {
            match crate::syntax::check_source(src) {
                Ok(ast) => {
                    sources.push(compile::SourceFile {
                        path: path.clone(),
                        src: src.clone(),
                    });
                    asts.push(ast);
                }
                Err(ds) => errors.extend(ds.into_iter().map(|d| EsqlError::Compile {
                    path: path.clone(),
                    diagnostic: d,
                })),
            }
        }
        let compiled_paths: Vec<String> = sources.iter().map(|s| s.path.clone()).collect();
        match compile::compile(sources, asts) {
            Ok(c) if errors.is_empty() => {
                let shared = exec::SharedState::new(c.atomic_blocks);
                Ok(Program {
                    compiled: c,
                    shared,
                })
            }
            Ok(_) => Err(errors),
            Err(ds) => {
                for (fi, d) in ds {
                    let path = compiled_paths.get(fi as usize).cloned().unwrap_or_default();
                    errors.push(EsqlError::Compile {
                        path,
                        diagnostic: d,
                    });
                }
                Err(errors)
            }
        }
    }

    /// Read and compile every `*.esql` file under `dir` (recursively, in name order).
    pub fn compile_dir(dir: &Path) -> Result<Program, Vec<EsqlError>> {
        let mut paths = Vec::new();
        collect_esql(dir, &mut paths);
        let files = read_all(&paths)?;
        Program::compile(&files)
    }

    /// The module `name`, written `Name` or `schema.Name`.
    pub fn module(self: &Arc<Self>, name: &str) -> Option<Module> {
        let (schema, simple) = match name.rsplit_once('.') {
            Some((s, n)) => (Some(s), n),
            None => (None, name),
        };
        let index = self
            .compiled
            .modules
            .iter()
            .position(|m| m.name == simple && schema.is_none_or(|s| s == m.schema))?;
        Some(Module {
            program: self.clone(),
            index,
            node: Arc::new(NodeState::default()),
        })
    }

    /// The names of every module, schema-qualified when they have a schema.
    pub fn module_names(&self) -> Vec<String> {
        self.compiled
            .modules
            .iter()
            .map(|m| {
                if m.schema.is_empty() {
                    m.name.clone()
                } else {
                    format!("{}.{}", m.schema, m.name)
                }
            })
            .collect()
    }
}

/// Every `*.esql` file under `dir`, in a stable order.
pub fn collect_esql(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_esql(&p, out);
        } else if p
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("esql"))
        {
            out.push(p);
        }
    }
}

fn read_all(paths: &[PathBuf]) -> Result<Vec<(String, String)>, Vec<EsqlError>> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        match std::fs::read(p) {
            Ok(b) => files.push((
                p.display().to_string(),
                String::from_utf8_lossy(&b).into_owned(),
            )),
            Err(source) => errors.push(EsqlError::Read {
                path: p.display().to_string(),
                source,
            }),
        }
    }
    if errors.is_empty() {
        Ok(files)
    } else {
        Err(errors)
    }
}

/// Which trees a Compute node builds and propagates; the others pass through from its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputeMode {
    pub message: bool,
    pub local_environment: bool,
    pub exception: bool,
}

impl Default for ComputeMode {
    fn default() -> Self {
        ComputeMode {
            message: true,
            local_environment: false,
            exception: false,
        }
    }
}

impl ComputeMode {
    /// The product's compute mode names, snake_case: `message`, `local_environment`,
    /// `exception`, `message_local_environment`, `message_exception`,
    /// `local_environment_exception`, `all`.
    pub fn parse(s: &str) -> Option<ComputeMode> {
        let (message, local_environment, exception) = match s {
            "message" => (true, false, false),
            "local_environment" => (false, true, false),
            "exception" => (false, false, true),
            "message_local_environment" => (true, true, false),
            "message_exception" => (true, false, true),
            "local_environment_exception" => (false, true, true),
            "all" => (true, true, true),
            _ => return None,
        };
        Some(ComputeMode {
            message,
            local_environment,
            exception,
        })
    }
}

/// Where a PROPAGATE statement sends a message.
#[derive(Clone, Debug, PartialEq)]
pub enum PropagateTo {
    /// `TO TERMINAL 'out1'` (or no TO clause: `out`).
    Terminal(String),
    /// `TO TERMINAL 1`: the product numbers `out` 0, `out1` 1 … `out4` 4.
    TerminalIndex(i64),
    /// `TO LABEL 'name'`.
    Label(String),
}

/// What the node running a module offers it.
pub trait Host {
    /// Send `msg` on, with the invocation's Environment, and return when downstream is done.
    fn propagate(
        &mut self,
        to: PropagateTo,
        msg: &mut Message,
        environment: &mut Tree,
    ) -> Result<(), NodeError>;

    /// Called once per evaluation, before its first statement on `db`: join the database to
    /// the unit of work the host keeps ([`Datasource::begin`], and commit or roll back when
    /// that unit ends). The default joins nothing: each statement then commits on its own.
    fn join_database(&mut self, db: &Arc<Datasource>) -> Result<(), NodeError> {
        let _ = db;
        Ok(())
    }

    /// ESQL's COMMIT (`commit`) or ROLLBACK: end the transaction that [`Host::join_database`]
    /// began on `db`, so that the next statement begins another. The default has nothing to
    /// end: without a unit of work each statement committed as it ran.
    fn end_database_work(&mut self, db: &Arc<Datasource>, commit: bool) -> Result<(), NodeError> {
        let _ = (db, commit);
        Ok(())
    }

    /// The invocation's context tree (`Context`), when the flow captures one: the module
    /// reads it in place, and hands it back while downstream nodes add their sections.
    fn context(&mut self) -> Option<&mut Tree> {
        None
    }
}

/// A host for modules that never propagate (tests, Filter and Database modules).
pub struct NoPropagation;

impl Host for NoPropagation {
    fn propagate(
        &mut self,
        _: PropagateTo,
        _: &mut Message,
        _: &mut Tree,
    ) -> Result<(), NodeError> {
        Err(NodeError::recoverable(
            "PROPAGATE is not available in this node",
        ))
    }
}

/// Per-node settings of a module run.
#[derive(Clone, Default)]
pub struct RunOptions {
    pub mode: ComputeMode,
    /// Values of EXTERNAL variables (a node's `user_properties`), cast to the declared types.
    pub externals: Vec<(String, ScalarValue)>,
    /// The node's database (its `datasource`).
    pub database: Option<Arc<Datasource>>,
    /// What the node knows of its server, flow and itself, for the broker attributes.
    pub attributes: Arc<broker::BrokerAttributes>,
    /// What a database error or warning does.
    pub database_errors: DatabaseErrors,
    /// The models PARSE with DOMAIN 'DFDL' reads with (its SET and TYPE clauses).
    pub models: Arc<MessageModels>,
    /// The server's global cache, which the `CACHE_*` functions use; without one they fail.
    pub cache: Option<Arc<sluice_cache::GlobalCache>>,
}

/// The node properties "Throw exception on database error" and "Treat warnings as errors".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatabaseErrors {
    /// A database error throws an exception (true), or the statement ends with SQLCODE,
    /// SQLSTATE, SQLNATIVEERROR and SQLERRORTEXT set and the module goes on (false).
    pub throw: bool,
    /// A warning the database gives with a statement is an error (true), or only sets SQLSTATE
    /// and SQLERRORTEXT (false).
    pub warnings_as_errors: bool,
}

impl Default for DatabaseErrors {
    fn default() -> DatabaseErrors {
        DatabaseErrors {
            throw: true,
            warnings_as_errors: false,
        }
    }
}

/// What belongs to one deployed node rather than to the program: the EVAL texts it compiled
/// and the module's SHARED variables. The flow's instances share their node, so they share
/// this too; another node running the same module has its own.
pub(crate) struct NodeState {
    pub evals: dynamic::EvalCache,
    pub shared: exec::SharedState,
}

impl Default for NodeState {
    fn default() -> Self {
        NodeState {
            evals: dynamic::EvalCache::default(),
            shared: exec::SharedState::new(0),
        }
    }
}

/// A compiled module, ready to run. Each [`Program::module`] call makes a new node's module;
/// clones belong to the same node.
#[derive(Clone)]
pub struct Module {
    program: Arc<Program>,
    index: usize,
    node: Arc<NodeState>,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Module({})", self.name())
    }
}

impl Module {
    pub fn name(&self) -> &str {
        &self.program.compiled.modules[self.index].name
    }

    /// Whether the program reads the context tree, so that a flow running it must capture
    /// one (ACE 12: a flow captures its context tree only when something refers to it).
    pub fn reads_context(&self) -> bool {
        self.program.compiled.reads_context
    }

    /// Whether the module has the `Main` function a node runs.
    pub fn has_main(&self) -> bool {
        self.program.compiled.modules[self.index].main.is_some()
    }

    pub fn kind(&self) -> ModuleKind {
        self.program.compiled.modules[self.index].kind
    }

    /// The EXTERNAL variables the module declares.
    pub fn externals(&self) -> Vec<String> {
        self.program.compiled.modules[self.index]
            .globals
            .iter()
            .filter_map(|g| g.external.clone())
            .collect()
    }

    /// How many EVAL texts this node has compiled and keeps.
    pub fn cached_eval_texts(&self) -> usize {
        self.node.evals.len()
    }

    /// Run `Main` over `input` with the invocation's `environment`. A Compute module's
    /// output message (per the compute mode) comes back in [`Outcome::output`]; errors name
    /// the ESQL file and line.
    pub fn run(
        &self,
        input: &mut Message,
        environment: &mut Tree,
        host: &mut dyn Host,
        options: &RunOptions,
    ) -> Result<Outcome, NodeError> {
        let p = &*self.program;
        exec::Exec::run(
            &p.compiled,
            &p.shared,
            &self.node,
            self.index,
            input,
            environment,
            host,
            options.mode,
            options.database.as_ref(),
            options.database_errors,
            &options.externals,
            &options.attributes,
            &options.models,
            options.cache.as_deref(),
        )
    }
}

/// `sluice esql check`: compile the files (directories: every `*.esql` below) and print
/// `PATH: ok` or each problem as `PATH:LINE:COL: error: MESSAGE` plus excerpt. In a directory,
/// each ACE application or library (a folder with `.project` and `application.descriptor` or
/// `library.descriptor`) and each Sluice project (a folder with `sluice.yaml`) compiles on its
/// own, an application with the libraries its `.project` references; the other files compile
/// together.
pub fn check_paths(paths: &[PathBuf]) -> (String, bool) {
    let mut groups: Vec<Vec<PathBuf>> = Vec::new();
    let mut loose = Vec::new();
    let mut all = Vec::new();
    for p in paths {
        if p.is_dir() {
            let ws = workspace::discover(p);
            for ns in &ws.namespaces {
                all.extend(ns.files.iter().cloned());
                groups.push(ws.visible(ns));
            }
            all.extend(ws.loose.iter().cloned());
            loose.extend(ws.loose);
        } else {
            all.push(p.clone());
            loose.push(p.clone());
        }
    }
    if !loose.is_empty() {
        groups.push(loose);
    }
    let mut out = String::new();
    let sources = match read_all(&all) {
        Ok(s) => s,
        Err(errors) => {
            for e in errors {
                out.push_str(&e.render());
                out.push('\n');
            }
            return (out, false);
        }
    };
    let source_of = |p: &PathBuf| {
        let key = p.display().to_string();
        sources.iter().find(|(k, _)| *k == key).cloned()
    };
    // A library's problems show once, though every application that references it compiles it.
    let mut errors: Vec<(String, String)> = Vec::new();
    for g in &groups {
        let files: Vec<(String, String)> = g.iter().filter_map(source_of).collect();
        if let Err(es) = Program::compile(&files) {
            for e in es {
                let path = e.path().unwrap_or_default().to_string();
                let text = e.render();
                if !errors.iter().any(|(_, t)| *t == text) {
                    errors.push((path, text));
                }
            }
        }
    }
    for (path, _) in &sources {
        let mine: Vec<&str> = errors
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, t)| t.as_str())
            .collect();
        if mine.is_empty() {
            out.push_str(&format!("{path}: ok\n"));
        } else {
            for e in mine {
                out.push_str(e);
                out.push('\n');
            }
        }
    }
    (out, errors.is_empty())
}
