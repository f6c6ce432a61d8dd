//! The compiler's context: variables in scope, labels, and the diagnostics found so far.

use std::collections::HashMap;

use sluice_esql_scalar::Value;

use super::{GlobalInit, Index, SharedInit};
use crate::runtime::ir::{Label, VarAddr, VarKind};
use crate::syntax::Diagnostic;
use crate::syntax::ast::{self, DeclareModifier, ModuleKind};
use crate::syntax::span::Span;

/// What a name stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum Binding {
    Var(VarAddr, VarKind),
    Const(Value),
}

/// Module- and schema-level names.
#[derive(Debug, Clone, Default)]
pub struct Globals {
    pub map: HashMap<String, Binding>,
    pub count: u32,
}

/// The compiler's state while it compiles one routine or declaration.
pub(crate) struct Cx<'a> {
    pub index: &'a Index,
    pub src: &'a str,
    pub file: u32,
    pub module: Option<usize>,
    pub kind: Option<ModuleKind>,
    pub globals: Globals,
    locals: Vec<Vec<(String, Binding)>>,
    next_local: u32,
    pub max_local: u32,
    labels: Vec<(String, Label)>,
    next_label: Label,
    diags: Vec<Diagnostic>,
    pub atomic_base: usize,
    /// Column names of the database table being compiled (UPDATE/DELETE/SELECT FROM Database).
    pub db_alias: Vec<String>,
    /// The EVAL sites met so far; their numbers start at `eval_base`.
    pub eval_sites: Vec<EvalSite>,
    pub eval_base: usize,
    /// Text compiled by EVAL at run time: statements take the line of the EVAL that runs them,
    /// and EVAL may not nest.
    pub eval_line: Option<u32>,
    /// Whether anything compiled so far reads the context tree.
    pub reads_context: bool,
}

/// What the compiler knew where an EVAL stands, so that its text compiles at run time in the
/// scope of the calling routine.
#[derive(Debug, Clone)]
pub struct EvalSite {
    pub file: u32,
    pub module: Option<usize>,
    pub kind: Option<ModuleKind>,
    pub globals: Globals,
    /// The local names in force, outermost first.
    pub locals: Vec<(String, Binding)>,
    /// The first local slot the EVAL text may use for its own declarations.
    pub next_local: u32,
}

impl<'a> Cx<'a> {
    pub fn new(
        index: &'a Index,
        src: &'a str,
        file: u32,
        module: Option<usize>,
        kind: Option<ModuleKind>,
        globals: Globals,
    ) -> Cx<'a> {
        Cx {
            index,
            src,
            file,
            module,
            kind,
            globals,
            locals: vec![Vec::new()],
            next_local: 0,
            max_local: 0,
            labels: Vec::new(),
            next_label: 0,
            diags: Vec::new(),
            atomic_base: 0,
            db_alias: Vec::new(),
            eval_sites: Vec::new(),
            eval_base: 0,
            eval_line: None,
            reads_context: false,
        }
    }

    /// A context for EVAL text: the site's names in scope, new locals after the site's.
    pub fn for_eval(index: &'a Index, src: &'a str, site: &EvalSite, line: u32) -> Cx<'a> {
        let mut cx = Cx::new(
            index,
            src,
            site.file,
            site.module,
            site.kind,
            site.globals.clone(),
        );
        cx.locals = vec![site.locals.clone(), Vec::new()];
        cx.next_local = site.next_local;
        cx.max_local = site.next_local;
        cx.eval_line = Some(line);
        cx
    }

    /// Record an EVAL site here and return its number.
    pub fn eval_site(&mut self, span: Span) -> u32 {
        if self.eval_line.is_some() {
            self.err(span, "EVAL text cannot itself use EVAL");
        }
        let locals = self.locals.iter().flatten().cloned().collect();
        self.eval_sites.push(EvalSite {
            file: self.file,
            module: self.module,
            kind: self.kind,
            globals: self.globals.clone(),
            locals,
            next_local: self.next_local,
        });
        (self.eval_base + self.eval_sites.len() - 1) as u32
    }

    pub fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::new(self.src, span, msg));
    }

    pub fn take_diags(&mut self) -> Vec<Diagnostic> {
        std::mem::take(&mut self.diags)
    }

    pub fn push_scope(&mut self) {
        self.locals.push(Vec::new());
    }

    /// Leave a scope; its slots are reused by later scopes.
    pub fn pop_scope(&mut self) {
        if let Some(s) = self.locals.pop() {
            let n = s
                .iter()
                .filter(|(_, b)| matches!(b, Binding::Var(VarAddr::Local(_), _)))
                .count() as u32;
            self.next_local -= n;
        }
    }

    /// Declare a local variable in the innermost scope.
    pub fn declare_local(&mut self, name: &str, kind: VarKind) -> VarAddr {
        let slot = self.next_local;
        self.next_local += 1;
        self.max_local = self.max_local.max(self.next_local);
        let addr = VarAddr::Local(slot);
        if let Some(s) = self.locals.last_mut() {
            s.push((name.to_string(), Binding::Var(addr, kind)));
        }
        addr
    }

    pub fn declare_const(&mut self, name: &str, v: Value) {
        if let Some(s) = self.locals.last_mut() {
            s.push((name.to_string(), Binding::Const(v)));
        }
    }

    /// What `name` stands for, innermost scope first.
    pub fn lookup(&self, name: &str) -> Option<Binding> {
        for s in self.locals.iter().rev() {
            if let Some((_, b)) = s.iter().rev().find(|(n, _)| n == name) {
                return Some(b.clone());
            }
        }
        self.globals.map.get(name).cloned()
    }

    pub fn push_label(&mut self, name: &str) -> Label {
        let l = self.next_label;
        self.next_label += 1;
        self.labels.push((name.to_string(), l));
        l
    }

    pub fn pop_label(&mut self) {
        self.labels.pop();
    }

    pub fn find_label(&self, name: &str) -> Option<Label> {
        self.labels
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, l)| *l)
    }

    /// A module- or schema-level DECLARE.
    pub fn global_declare(
        &mut self,
        d: &ast::Declare,
        inits: &mut Vec<GlobalInit>,
        shared: &mut Vec<SharedInit>,
    ) {
        let kind = self.var_kind(&d.ty);
        let is_const = matches!(d.modifier, Some(DeclareModifier::Constant))
            || matches!(d.ty.ty, ast::DataType::Namespace | ast::DataType::Name);
        if is_const {
            let v = self.const_init(d);
            for n in &d.names {
                self.globals
                    .map
                    .insert(n.name.clone(), Binding::Const(v.clone()));
            }
            return;
        }
        let init = d.init.as_ref().map(|e| self.expr(e));
        for n in &d.names {
            let (addr, external) = match d.modifier {
                Some(DeclareModifier::Shared) => {
                    shared.push(SharedInit {
                        kind: kind.clone(),
                        init: init.clone(),
                        module: self.module,
                    });
                    (VarAddr::Shared((shared.len() - 1) as u32), None)
                }
                Some(DeclareModifier::External) => {
                    let slot = self.globals.count;
                    self.globals.count += 1;
                    (VarAddr::Global(slot), Some(n.name.clone()))
                }
                _ => {
                    let slot = self.globals.count;
                    self.globals.count += 1;
                    (VarAddr::Global(slot), None)
                }
            };
            self.globals
                .map
                .insert(n.name.clone(), Binding::Var(addr, kind.clone()));
            if let VarAddr::Global(_) = addr {
                inits.push(GlobalInit {
                    addr,
                    kind: kind.clone(),
                    init: init.clone(),
                    file: self.file,
                    line: d.span.line,
                    external,
                });
            }
        }
    }

    /// The value of a CONSTANT, NAMESPACE or NAME declaration (which must be constant).
    pub fn const_init(&mut self, d: &ast::Declare) -> Value {
        match &d.init {
            Some(e) => match self.expr(e) {
                crate::runtime::ir::Ex::Const(v) => v,
                _ => {
                    self.err(
                        e.span,
                        "a CONSTANT, NAMESPACE or NAME declaration needs a constant value",
                    );
                    Value::Null
                }
            },
            None => {
                self.err(
                    d.span,
                    "a CONSTANT, NAMESPACE or NAME declaration needs a value",
                );
                Value::Null
            }
        }
    }

    pub fn var_kind(&mut self, t: &ast::TypeSpec) -> VarKind {
        match t.ty {
            ast::DataType::Reference => VarKind::Reference,
            ast::DataType::Row => VarKind::Row,
            _ => VarKind::Scalar(super::data_type(&t.ty)),
        }
    }
}
