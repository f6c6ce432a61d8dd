//! The interpreter of compiled ESQL over the message trees of one node evaluation.

mod bitstream;
mod bitstream_options;
mod cache;
mod call;
mod db;
mod dynamic;
mod edit;
mod eval;
mod finalize;
mod nav;
mod propagate;
mod select;
mod stmt;
mod treeops;

use parking_lot::{Mutex, MutexGuard};
use sluice_esql_scalar::{self as scalar, Value};
use sluice_node_api::{Exception, ExceptionKind, NodeError};
use sluice_tree::{Message, NodeId, Tree, TreeError};

use super::compile::Compiled;
use super::ir::{Label, VarAddr, VarKind, trees};
use super::{ComputeMode, Host};

/// A variable's content.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Var {
    Scalar(Value),
    Ref {
        tree: u32,
        node: NodeId,
        moved: bool,
    },
    Row(u32),
}

/// A field: a tree of the execution and an element in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Loc {
    pub tree: u32,
    pub node: NodeId,
}

/// The result of evaluating an expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RtVal {
    S(Value),
    F(Loc),
    L(Vec<RtVal>),
}

/// A runtime error on its way to a handler or out of the node.
#[derive(Debug, Clone)]
pub(crate) struct RtError {
    pub exception: Box<Exception>,
    pub sqlstate: String,
    pub native: i64,
    /// The error came back from a node downstream of a PROPAGATE: it keeps its own place
    /// and has had its failure terminal considered already.
    pub passed_up: bool,
}

impl RtError {
    pub fn new(
        kind: ExceptionKind,
        number: u32,
        sqlstate: &str,
        text: impl Into<String>,
    ) -> RtError {
        RtError {
            exception: Box::new(Exception::new(kind, number, text)),
            sqlstate: sqlstate.to_string(),
            native: 0,
            passed_up: false,
        }
    }

    pub fn general(text: impl Into<String>) -> RtError {
        RtError::new(ExceptionKind::Recoverable, 2488, "S00000", text)
    }
}

impl From<scalar::ScalarError> for RtError {
    fn from(e: scalar::ScalarError) -> RtError {
        let state = format!("S{}", e.sqlstate());
        let kind = match e {
            scalar::ScalarError::CastFailure { .. }
            | scalar::ScalarError::UnsupportedCast { .. }
            | scalar::ScalarError::Codepage(
                sluice_codepage::CodepageError::Unmappable { .. }
                | sluice_codepage::CodepageError::Invalid { .. },
            ) => ExceptionKind::Conversion,
            _ => ExceptionKind::Recoverable,
        };
        RtError::new(kind, 2521, &state, e.to_string())
    }
}

impl From<TreeError> for RtError {
    fn from(e: TreeError) -> RtError {
        let ne = NodeError::from(e);
        RtError {
            exception: ne.exception,
            sqlstate: "S00000".into(),
            native: 0,
            passed_up: false,
        }
    }
}

pub(crate) type R<T> = Result<T, RtError>;

/// How control leaves a statement.
#[derive(Debug)]
pub(crate) enum Flow {
    Next,
    Leave(Label),
    Iterate(Label),
    Return(Option<RtVal>),
}

/// The SQLCODE family of the last database or handled error.
#[derive(Debug, Clone, Default)]
pub(crate) struct SqlStatus {
    pub code: i64,
    pub state: String,
    pub native: i64,
    pub text: String,
}

/// SHARED variables (kept across messages) and the mutexes of BEGIN ATOMIC blocks. A program
/// has one for its schema-level variables and atomic blocks; each deployed node one for its
/// module-level variables. Lock order: the program's `vars`, then the node's `vars`, then
/// `atomic[i]`.
pub(crate) struct SharedState {
    pub vars: Mutex<Option<Vec<Var>>>,
    pub shared_trees: Mutex<Vec<Tree>>,
    pub atomic: Vec<Mutex<()>>,
}

impl SharedState {
    pub fn new(atomic: usize) -> SharedState {
        SharedState {
            vars: Mutex::new(None),
            shared_trees: Mutex::new(Vec::new()),
            atomic: (0..atomic).map(|_| Mutex::new(())).collect(),
        }
    }
}

/// One node evaluation.
pub(crate) struct Exec<'a> {
    pub prog: &'a Compiled,
    pub shared: &'a SharedState,
    pub node: &'a super::NodeState,
    /// The module whose Main runs (its module-level SHARED variables are the node's).
    pub module: usize,
    pub trees: Vec<Tree>,
    pub globals: Vec<Var>,
    /// The locked SHARED variables: `[0]` the program's, `[1]` the node's.
    pub shared_vars: [Option<MutexGuard<'a, Option<Vec<Var>>>>; 2],
    pub host: &'a mut dyn Host,
    pub mode: ComputeMode,
    pub file: u32,
    pub line: u32,
    pub sql: SqlStatus,
    pub caught: Vec<RtError>,
    pub now: Option<i64>,
    /// Trees below this index that flow logic may not change (the input message in Compute).
    pub readonly_input: bool,
    pub db: Option<&'a std::sync::Arc<super::Datasource>>,
    pub db_errors: super::DatabaseErrors,
    /// The host was asked to join `db` to its unit of work in this evaluation.
    pub db_joined: bool,
    pub db_row: Option<Loc>,
    pub externals: &'a [(String, Value)],
    pub attributes: &'a super::broker::BrokerAttributes,
    pub models: &'a super::MessageModels,
    /// The server's global cache, when the host has one.
    pub cache: Option<&'a sluice_cache::GlobalCache>,
    /// Where each shared scope's ROW trees sit among `trees`.
    pub shared_base: [Option<u32>; 2],
    /// How many routine calls are active.
    pub depth: u32,
    /// The address of a local of the evaluation's first frame, to measure stack use.
    pub stack_base: usize,
    /// Storage of returned routine frames, for the next calls: a call then allocates nothing.
    pub spare_frames: Vec<Vec<Var>>,
    /// Storage for the lists of fields that FOR, quantified predicates, CARDINALITY and EXISTS
    /// go through, likewise.
    pub spare_lists: Vec<Vec<Loc>>,
}

/// A routine call's local variables.
pub(crate) struct Frame {
    pub vars: Vec<Var>,
}

/// What a node evaluation produced.
#[derive(Debug)]
pub struct Outcome {
    /// Main's return value (`None` for UNKNOWN or no value).
    pub result: Option<bool>,
    /// The output message assembled per the compute mode (Compute modules only).
    pub output: Option<Message>,
}

fn fresh(name: &'static str) -> Tree {
    Tree::new(name)
}

/// The names of the trees every evaluation starts with, by index (see [`trees`]).
const FIXED_TREES: [&str; trees::FIRST_VAR as usize] = [
    "Root",
    "LocalEnvironment",
    "ExceptionList",
    "Root",
    "LocalEnvironment",
    "ExceptionList",
    "Environment",
    "Context",
];

thread_local! {
    /// The fixed trees of the last evaluation on this thread, handed to the next one: the input,
    /// Environment and Context slots only ever hold empty stand-ins while the real trees are
    /// swapped in, so an evaluation need not build eight trees and their list each time.
    static SPARE_TREES: std::cell::Cell<Vec<Tree>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The fixed trees for an evaluation: the thread's spare ones, or new ones when an evaluation
/// is already running on this thread (a PROPAGATE reaching another Compute node).
fn fixed_trees() -> Vec<Tree> {
    let spare = SPARE_TREES.with(std::cell::Cell::take);
    if spare.len() == FIXED_TREES.len() {
        return spare;
    }
    FIXED_TREES.iter().map(|n| fresh(n)).collect()
}

/// Keep an evaluation's fixed trees for the next one, each slot empty as a new tree is.
fn recycle_trees(mut t: Vec<Tree>) {
    if t.len() < FIXED_TREES.len() {
        return;
    }
    t.truncate(FIXED_TREES.len());
    for (slot, name) in t.iter_mut().zip(FIXED_TREES) {
        let root = NodeId(0);
        let empty = slot.len() == 1
            && slot.peek_first_child(root).is_none()
            && slot.value(root).is_null()
            && slot.name_bytes(root) == name.as_bytes();
        if !empty {
            *slot = fresh(name);
        }
    }
    SPARE_TREES.with(|s| s.set(t));
}

impl Drop for Exec<'_> {
    fn drop(&mut self) {
        recycle_trees(std::mem::take(&mut self.trees));
    }
}

impl<'a> Exec<'a> {
    /// Run `Main` of module `module` over `input`.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        prog: &'a Compiled,
        shared: &'a SharedState,
        node: &'a super::NodeState,
        module: usize,
        input: &mut Message,
        env: &mut Tree,
        host: &'a mut dyn Host,
        mode: ComputeMode,
        db: Option<&'a std::sync::Arc<super::Datasource>>,
        db_errors: super::DatabaseErrors,
        externals: &'a [(String, Value)],
        attributes: &'a super::broker::BrokerAttributes,
        models: &'a super::MessageModels,
        cache: Option<&'a sluice_cache::GlobalCache>,
    ) -> Result<Outcome, NodeError> {
        let m = &prog.modules[module];
        let compute = m.kind == crate::syntax::ast::ModuleKind::Compute;
        let mut ex = Exec {
            prog,
            shared,
            node,
            module,
            trees: fixed_trees(),
            globals: Vec::new(),
            shared_vars: [None, None],
            host,
            mode,
            file: m.file,
            line: 0,
            sql: SqlStatus::default(),
            caught: Vec::new(),
            now: None,
            readonly_input: compute,
            db,
            db_errors,
            db_joined: false,
            db_row: None,
            externals,
            attributes,
            models,
            cache,
            shared_base: [None, None],
            depth: 0,
            stack_base: 0,
            spare_frames: Vec::new(),
            spare_lists: Vec::new(),
        };
        let probe = 0u8;
        ex.stack_base = std::ptr::addr_of!(probe) as usize;
        if compute {
            // A Compute node mostly builds an output about the size of its input: growing the
            // output arena to that size a step at a time would copy it over and over.
            let body = input.root.peek_last_child(NodeId(0));
            let size = body
                .and_then(|b| input.root.source(b))
                .map_or(0, |s| s.end - s.start);
            // JSON makes an element of about every 10 bytes (short names, no end tags); XML one
            // of about every 24.
            let per_element = match body.map(|b| input.root.name_bytes(b)) {
                Some(b"JSON") => 10,
                _ => 24,
            };
            ex.trees[trees::OUT_ROOT as usize]
                .reserve((size as usize / per_element).min(MAX_RESERVE));
        }
        std::mem::swap(&mut ex.trees[trees::IN_ROOT as usize], &mut input.root);
        std::mem::swap(
            &mut ex.trees[trees::IN_LOCAL_ENV as usize],
            &mut input.local_environment,
        );
        std::mem::swap(
            &mut ex.trees[trees::IN_EXCEPTION as usize],
            &mut input.exception_list,
        );
        std::mem::swap(&mut ex.trees[trees::ENVIRONMENT as usize], env);
        ex.swap_context();
        let result = ex.run_main(module);
        ex.swap_context();
        std::mem::swap(&mut ex.trees[trees::IN_ROOT as usize], &mut input.root);
        std::mem::swap(
            &mut ex.trees[trees::IN_LOCAL_ENV as usize],
            &mut input.local_environment,
        );
        std::mem::swap(
            &mut ex.trees[trees::IN_EXCEPTION as usize],
            &mut input.exception_list,
        );
        std::mem::swap(&mut ex.trees[trees::ENVIRONMENT as usize], env);
        let (file, line) = (ex.file, ex.line);
        let output = if compute && result.is_ok() {
            let mut out = ex.take_output(input);
            // The node's own propagation to `out` finalises, as PROPAGATE does by default.
            match finalize::finalize(&mut out.root) {
                Ok(()) => Some(out),
                Err(e) => {
                    ex.release_shared();
                    return Err(ex_to_node_error(prog, RtError::from(e), file, line));
                }
            }
        } else {
            None
        };
        ex.release_shared();
        match result {
            Ok(r) => Ok(Outcome { result: r, output }),
            Err(e) => Err(ex_to_node_error(prog, e, file, line)),
        }
    }

    fn run_main(&mut self, module: usize) -> R<Option<bool>> {
        let m = &self.prog.modules[module];
        self.acquire_shared()?;
        let mut g = vec![Var::Scalar(Value::Null); m.global_count as usize];
        for init in &m.globals {
            self.file = init.file;
            self.line = init.line;
            let mut frame = Frame { vars: Vec::new() };
            let external = init.external.as_ref().and_then(|n| {
                self.externals
                    .iter()
                    .find(|(k, _)| k == n)
                    .map(|(_, v)| v.clone())
            });
            let v = match (&init.kind, external) {
                (VarKind::Scalar(t), Some(v)) => Var::Scalar(cast_to(v, *t)?),
                (kind, None) => {
                    // Globals see each other in declaration order.
                    std::mem::swap(&mut self.globals, &mut g);
                    let r = self.init_var(&mut frame, kind, init.init.as_ref(), None);
                    std::mem::swap(&mut self.globals, &mut g);
                    r?
                }
                (_, Some(_)) => {
                    return Err(RtError::general(
                        "an EXTERNAL variable must be of a scalar type",
                    ));
                }
            };
            if let VarAddr::Global(i) = init.addr
                && let Some(slot) = g.get_mut(i as usize)
            {
                *slot = v;
            }
        }
        self.globals = g;
        let Some(main) = m.main else {
            return Err(RtError::general(format!(
                "module {} has no Main function",
                m.name
            )));
        };
        let mut caller = Frame { vars: Vec::new() };
        let r = self.call_with(&mut caller, main, &[])?;
        Ok(match r {
            Some(RtVal::S(Value::Boolean(b))) => Some(b),
            _ => None,
        })
    }

    /// The state of shared scope `k` (0: the program's, 1: the node's).
    fn shared_scope(&self, k: usize) -> &'a SharedState {
        if k == 0 {
            self.shared
        } else {
            &self.node.shared
        }
    }

    /// Whether SHARED variable `s` lives in scope `k` of this evaluation: the program's
    /// schema-level ones in 0, the running module's own in 1 (other modules' belong to
    /// other nodes).
    fn in_scope(&self, s: &super::compile::SharedInit, k: usize) -> bool {
        match k {
            0 => s.module.is_none(),
            _ => s.module == Some(self.module),
        }
    }

    /// Whether this evaluation holds any SHARED variable lock.
    pub fn holds_shared(&self) -> bool {
        self.shared_vars.iter().any(Option::is_some)
    }

    /// Lock the SHARED variables (initialising them on first use) for this evaluation: the
    /// program's schema-level ones, then the node's module-level ones.
    pub fn acquire_shared(&mut self) -> R<()> {
        for k in 0..2 {
            if self.prog.shared.iter().any(|s| self.in_scope(s, k)) {
                self.acquire_scope(k)?;
            }
        }
        Ok(())
    }

    fn acquire_scope(&mut self, k: usize) -> R<()> {
        if self.shared_vars[k].is_some() {
            return Ok(());
        }
        let state = self.shared_scope(k);
        let mut guard = state.vars.lock();
        if guard.is_none() {
            let mut vars = Vec::new();
            let mut frame = Frame { vars: Vec::new() };
            for s in &self.prog.shared {
                let v = match &s.kind {
                    // The other scope's variables live in its own state.
                    _ if !self.in_scope(s, k) => Var::Scalar(Value::Null),
                    VarKind::Row => {
                        let mut t = state.shared_trees.lock();
                        t.push(Tree::new("Row"));
                        Var::Row((t.len() - 1) as u32 | SHARED_TREE)
                    }
                    kind => self.init_var(&mut frame, kind, s.init.as_ref(), None)?,
                };
                vars.push(v);
            }
            *guard = Some(vars);
        }
        // Shared ROW trees join the execution's trees while the lock is held.
        // They keep the same slots for the whole evaluation (re-locking after a PROPAGATE puts
        // them back where references expect them).
        {
            let mut st = state.shared_trees.lock();
            let base = match self.shared_base[k] {
                Some(b) => b,
                None => {
                    let b = self.trees.len() as u32;
                    for _ in 0..st.len() {
                        self.trees.push(Tree::new("Row"));
                    }
                    b
                }
            };
            for (i, t) in st.iter_mut().enumerate() {
                if let Some(slot) = self.trees.get_mut(base as usize + i) {
                    std::mem::swap(slot, t);
                }
            }
            if let Some(vars) = guard.as_mut() {
                for v in vars.iter_mut() {
                    if let Var::Row(i) = v
                        && *i & SHARED_TREE != 0
                    {
                        *v = Var::Row(base + (*i & !SHARED_TREE));
                    }
                }
            }
            self.shared_base[k] = Some(base);
        }
        self.shared_vars[k] = Some(guard);
        Ok(())
    }

    /// Give the shared ROW trees back and unlock (the node's scope first).
    pub fn release_shared(&mut self) {
        for k in (0..2).rev() {
            self.release_scope(k);
        }
    }

    fn release_scope(&mut self, k: usize) {
        let Some(mut guard) = self.shared_vars[k].take() else {
            return;
        };
        if let Some(base) = self.shared_base[k] {
            let mut st = self.shared_scope(k).shared_trees.lock();
            let end = base + st.len() as u32;
            for (i, t) in st.iter_mut().enumerate() {
                if let Some(mine) = self.trees.get_mut(base as usize + i) {
                    std::mem::swap(t, mine);
                }
            }
            if let Some(vars) = guard.as_mut() {
                for v in vars.iter_mut() {
                    if let Var::Row(i) = v
                        && *i >= base
                        && *i < end
                    {
                        *v = Var::Row((*i - base) | SHARED_TREE);
                    }
                }
            }
        }
    }

    /// Build the message the compute mode sends from the output trees (leaving fresh ones).
    pub fn take_output(&mut self, input: &Message) -> Message {
        let take = |ex: &mut Exec, i: u32, name: &'static str| {
            std::mem::replace(&mut ex.trees[i as usize], fresh(name))
        };
        let root = if self.mode.message {
            take(self, trees::OUT_ROOT, "Root")
        } else {
            input.root.clone()
        };
        let local_environment = if self.mode.local_environment {
            take(self, trees::OUT_LOCAL_ENV, "LocalEnvironment")
        } else {
            input.local_environment.clone()
        };
        let exception_list = if self.mode.exception {
            take(self, trees::OUT_EXCEPTION, "ExceptionList")
        } else {
            input.exception_list.clone()
        };
        Message {
            root,
            local_environment,
            exception_list,
        }
    }

    /// The tree with index `i`.
    pub fn tree(&mut self, i: u32) -> R<&mut Tree> {
        self.trees
            .get_mut(i as usize)
            .ok_or_else(|| RtError::general("a reference points into a tree that no longer exists"))
    }

    /// The field a reference variable points at, if that field still exists.
    pub fn live(&mut self, tree: u32, node: NodeId) -> R<Loc> {
        if self.tree(tree)?.is_deleted(node) {
            return Err(RtError::general(
                "the reference points at a field that was deleted or no longer exists",
            ));
        }
        Ok(Loc { tree, node })
    }

    /// A new temporary tree for ROW values and SELECT results.
    pub fn new_tree(&mut self, name: &'static str) -> u32 {
        self.trees.push(Tree::new(name));
        (self.trees.len() - 1) as u32
    }

    pub fn var(&self, frame: &Frame, a: VarAddr) -> R<Var> {
        self.var_ref(frame, a).cloned()
    }

    /// [`Exec::var`] without the copy (a scalar's character data is reference-counted).
    pub fn var_ref<'f>(&'f self, frame: &'f Frame, a: VarAddr) -> R<&'f Var> {
        let v = match a {
            VarAddr::Local(i) => frame.vars.get(i as usize),
            VarAddr::Global(i) => self.globals.get(i as usize),
            VarAddr::Shared(i) => self
                .prog
                .shared
                .get(i as usize)
                .and_then(|s| self.shared_vars[s.scope()].as_ref())
                .and_then(|g| g.as_ref())
                .and_then(|v| v.get(i as usize)),
        };
        v.ok_or_else(|| {
            RtError::general(
                "a variable was used before its declaration (this is a bug, please report it)",
            )
        })
    }

    pub fn var_mut<'f>(&'f mut self, frame: &'f mut Frame, a: VarAddr) -> R<&'f mut Var> {
        let v = match a {
            VarAddr::Local(i) => {
                let i = i as usize;
                if frame.vars.len() <= i {
                    frame.vars.resize(i + 1, Var::Scalar(Value::Null));
                }
                frame.vars.get_mut(i)
            }
            VarAddr::Global(i) => self.globals.get_mut(i as usize),
            VarAddr::Shared(i) => {
                let k = self.prog.shared.get(i as usize).map_or(0, |s| s.scope());
                self.shared_vars[k]
                    .as_mut()
                    .and_then(|g| g.as_mut())
                    .and_then(|v| v.get_mut(i as usize))
            }
        };
        v.ok_or_else(|| {
            RtError::general(
                "a variable was used before its declaration (this is a bug, please report it)",
            )
        })
    }

    /// A new variable's initial content.
    pub fn init_var(
        &mut self,
        frame: &mut Frame,
        kind: &VarKind,
        init: Option<&super::ir::Ex>,
        reuse: Option<&Var>,
    ) -> R<Var> {
        Ok(match kind {
            VarKind::Scalar(t) => {
                let v = match init {
                    Some(e) => self.scalar(frame, e)?,
                    None => Value::Null,
                };
                Var::Scalar(cast_to(v, *t)?)
            }
            VarKind::Reference => {
                let Some(e) = init else {
                    return Err(RtError::general("a REFERENCE variable needs a target"));
                };
                if let super::ir::Ex::Path(p) = e
                    && !p
                        .steps
                        .last()
                        .is_some_and(|s| matches!(s.index, super::ir::IndexIr::All))
                {
                    return match self.nav_deepest(frame, p)? {
                        Some((l, found)) => Ok(Var::Ref {
                            tree: l.tree,
                            node: l.node,
                            moved: found,
                        }),
                        None => Err(RtError::general("REFERENCE TO needs a field that exists")),
                    };
                }
                match self.eval(frame, e)? {
                    RtVal::F(l) => Var::Ref {
                        tree: l.tree,
                        node: l.node,
                        moved: true,
                    },
                    RtVal::L(items) => match items.into_iter().next() {
                        Some(RtVal::F(l)) => Var::Ref {
                            tree: l.tree,
                            node: l.node,
                            moved: true,
                        },
                        _ => {
                            return Err(RtError::general("REFERENCE TO needs a field that exists"));
                        }
                    },
                    RtVal::S(_) => {
                        return Err(RtError::general(
                            "REFERENCE TO needs a field that exists; the reference points at nothing",
                        ));
                    }
                }
            }
            VarKind::Row => {
                let idx = match reuse {
                    Some(Var::Row(i))
                        if (*i as usize) < self.trees.len() && *i >= trees::FIRST_VAR =>
                    {
                        self.trees[*i as usize] = Tree::new("Row");
                        *i
                    }
                    _ => self.new_tree("Row"),
                };
                if let Some(e) = init {
                    let v = self.eval(frame, e)?;
                    let root = NodeId(0);
                    self.assign(
                        Loc {
                            tree: idx,
                            node: root,
                        },
                        v,
                    )?;
                }
                Var::Row(idx)
            }
        })
    }

    /// Exchange the context tree between the host's invocation and this execution: in before
    /// the module runs, out while downstream nodes run (they add to it) and when it ends.
    pub fn swap_context(&mut self) {
        if let Some(c) = self.host.context() {
            std::mem::swap(&mut self.trees[trees::CONTEXT as usize], c);
        }
    }

    /// Whether flow logic may change tree `t`.
    pub fn check_writable(&self, t: u32) -> R<()> {
        if t == trees::CONTEXT {
            return Err(RtError::general("the Context tree is read-only"));
        }
        if self.readonly_input && t < trees::OUT_ROOT {
            return Err(RtError::general(
                "the input message (InputRoot, InputLocalEnvironment, InputExceptionList) is read-only; change OutputRoot instead",
            ));
        }
        if !self.readonly_input && (t == trees::IN_ROOT || t == trees::IN_EXCEPTION) {
            return Err(RtError::general(
                "Root and ExceptionList are read-only in this module",
            ));
        }
        Ok(())
    }

    /// The current clock reading; every reference in one evaluation sees the same instant.
    pub fn now(&mut self) -> i64 {
        *self.now.get_or_insert_with(scalar::clock::now_utc_micros)
    }
}

/// The most output elements reserved ahead from the input's size (4 MiB of arena).
const MAX_RESERVE: usize = 1 << 16;

/// Marks a shared tree index while the trees are outside an execution.
const SHARED_TREE: u32 = 1 << 31;

/// A value cast to a variable's declared type (NULL stays NULL).
pub(crate) fn cast_to(v: Value, t: Option<scalar::DataType>) -> R<Value> {
    let Some(t) = t else { return Ok(v) };
    if v.is_null() || same_type(&v, t) {
        return Ok(v);
    }
    Ok(scalar::cast(&v, t)?)
}

fn same_type(v: &Value, t: scalar::DataType) -> bool {
    use scalar::DataType as D;
    // A DECIMAL's precision and an INTERVAL's qualifier may still need the cast.
    v.scalar_type() == t.scalar_type() && !matches!(t, D::Decimal(Some(_)) | D::Interval(Some(_)))
}

/// The node error for a runtime error, naming the ESQL file and line.
pub(crate) fn ex_to_node_error(prog: &Compiled, e: RtError, file: u32, line: u32) -> NodeError {
    let mut exc = e.exception;
    if e.passed_up {
        return NodeError {
            exception: exc,
            passed_up: true,
        };
    }
    if exc.file.is_empty() {
        exc.file = prog
            .files
            .get(file as usize)
            .map(|f| f.path.clone())
            .unwrap_or_default();
        exc.line = line;
    }
    NodeError {
        exception: exc,
        passed_up: false,
    }
}
