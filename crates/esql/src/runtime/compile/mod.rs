//! The compiler: every file of a project's ESQL to one [`Program`](super::Program).
//!
//! Pass one indexes routines (schema-level and module-level) so that calls resolve across
//! files and through PATH; pass two compiles declarations and bodies.

mod expr;
mod path;
mod scope;
mod stmt;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use sluice_esql_scalar::Value;

use super::ir::{Ex, RoutineIr, VarAddr, VarKind};
use crate::syntax::Diagnostic;
use crate::syntax::ast::{self, Item, ModuleKind};

pub(crate) use scope::{Cx, EvalSite};

/// A source file of the program.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: String,
    pub src: String,
}

/// A module-level or schema-level declaration, initialised for each message.
#[derive(Debug, Clone, PartialEq)]
pub struct GlobalInit {
    pub addr: VarAddr,
    pub kind: VarKind,
    pub init: Option<Ex>,
    pub file: u32,
    pub line: u32,
    /// The EXTERNAL variable's name: a node's user property overrides `init`.
    pub external: Option<String>,
}

/// A compiled module.
#[derive(Debug, Clone)]
pub struct ModuleIr {
    pub name: String,
    pub schema: String,
    pub kind: ModuleKind,
    pub file: u32,
    pub globals: Vec<GlobalInit>,
    pub global_count: u32,
    pub main: Option<usize>,
}

/// A SHARED variable's declaration, initialised once.
#[derive(Debug, Clone)]
pub struct SharedInit {
    pub kind: VarKind,
    pub init: Option<Ex>,
    /// Declared in this module: one value per deployed node. `None`: declared at schema
    /// level, one value for the whole program.
    pub module: Option<usize>,
}

impl SharedInit {
    /// Which of an evaluation's shared scopes holds it: 0 the program's, 1 the node's.
    pub fn scope(&self) -> usize {
        usize::from(self.module.is_some())
    }
}

/// Everything compiled.
#[derive(Debug, Default)]
pub struct Compiled {
    pub files: Vec<SourceFile>,
    pub routines: Vec<RoutineIr>,
    pub modules: Vec<ModuleIr>,
    pub shared: Vec<SharedInit>,
    pub atomic_blocks: usize,
    /// Name resolution, kept for EVAL text compiled at run time.
    pub index: Index,
    /// Every EVAL in the program, by the number its IR carries.
    pub eval_sites: Vec<EvalSite>,
    /// Whether any routine reads the context tree (`Context`, `CONTEXTREFERENCE`,
    /// `CONTEXTINVOCATIONNODE`): a flow captures that tree only for programs that do.
    pub reads_context: bool,
}

/// Where a routine was declared, for name resolution.
#[derive(Debug)]
pub(crate) struct RoutineKey {
    pub schema: String,
    /// The module index when declared inside a module.
    pub module: Option<usize>,
    pub name: String,
}

/// What name resolution needs about the whole program.
#[derive(Debug, Default)]
pub(crate) struct Index {
    pub routines: Vec<RoutineKey>,
    /// The PATH schemas of each file.
    pub paths: Vec<Vec<String>>,
    pub schemas: Vec<String>,
}

impl Index {
    /// Find a routine called `name` from `file` inside `module`.
    pub fn find(
        &self,
        file: u32,
        module: Option<usize>,
        name: &ast::QualifiedName,
    ) -> Option<usize> {
        let parts: Vec<&str> = name.parts.iter().map(|p| p.name.as_str()).collect();
        let (schema, simple) = match parts.split_last() {
            Some((last, rest)) if !rest.is_empty() => (Some(rest.join(".")), *last),
            Some((last, _)) => (None, *last),
            None => return None,
        };
        let hit = |s: &str, m: Option<usize>| {
            self.routines
                .iter()
                .position(|r| r.name == simple && r.schema == s && r.module == m)
        };
        if let Some(s) = schema {
            return hit(&s, None);
        }
        let own = &self.schemas[file as usize];
        if let Some(m) = module
            && let Some(i) = hit(own, Some(m))
        {
            return Some(i);
        }
        if let Some(i) = hit(own, None) {
            return Some(i);
        }
        for p in &self.paths[file as usize] {
            if let Some(i) = hit(p, None) {
                return Some(i);
            }
        }
        None
    }
}

/// Compile parsed files. `files` and `asts` are parallel.
pub(crate) fn compile(
    files: Vec<SourceFile>,
    asts: Vec<ast::File>,
) -> Result<Compiled, Vec<(u32, Diagnostic)>> {
    let mut index = Index {
        routines: Vec::new(),
        paths: Vec::new(),
        schemas: Vec::new(),
    };
    let mut module_names = Vec::new();
    let mut routine_asts: Vec<(u32, Option<usize>, &ast::Routine)> = Vec::new();
    for (fi, f) in asts.iter().enumerate() {
        let schema = f.schema.as_ref().map(|s| s.dotted()).unwrap_or_default();
        index
            .paths
            .push(f.path.iter().map(|p| p.dotted()).collect());
        index.schemas.push(schema.clone());
        for item in &f.items {
            match item {
                Item::Routine(r) => {
                    index.routines.push(RoutineKey {
                        schema: schema.clone(),
                        module: None,
                        name: r.name.name.clone(),
                    });
                    routine_asts.push((fi as u32, None, r));
                }
                Item::Module(m) => {
                    let mi = module_names.len();
                    module_names.push((fi as u32, m));
                    for it in &m.items {
                        if let Item::Routine(r) = it {
                            index.routines.push(RoutineKey {
                                schema: schema.clone(),
                                module: Some(mi),
                                name: r.name.name.clone(),
                            });
                            routine_asts.push((fi as u32, Some(mi), r));
                        }
                    }
                }
                Item::Declare(_) => {}
            }
        }
    }

    let mut out = Compiled {
        files,
        ..Compiled::default()
    };
    let mut diags: Vec<(u32, Diagnostic)> = Vec::new();

    // A module name is one module in its schema: a second one would silently take its place.
    for (i, (fi, m)) in module_names.iter().enumerate() {
        let schema = &index.schemas[*fi as usize];
        if let Some((first_fi, first)) = module_names[..i]
            .iter()
            .find(|(f, o)| &index.schemas[*f as usize] == schema && o.name.name == m.name.name)
        {
            let first_at = Diagnostic::new(&out.files[*first_fi as usize].src, first.name.span, "");
            let msg = format!(
                "module `{}` is defined twice (first in {} line {})",
                m.name.name, out.files[*first_fi as usize].path, first_at.line
            );
            diags.push((
                *fi,
                Diagnostic::new(&out.files[*fi as usize].src, m.name.span, msg),
            ));
        }
    }

    // Schema-level variables: one layout per schema, shared by its modules and routines.
    let mut schema_scopes: HashMap<String, scope::Globals> = HashMap::new();
    let mut schema_inits: HashMap<String, Vec<super::compile::GlobalInit>> = HashMap::new();
    for (fi, f) in asts.iter().enumerate() {
        let schema = index.schemas[fi].clone();
        let mut globals = schema_scopes.remove(&schema).unwrap_or_default();
        let mut inits = schema_inits.remove(&schema).unwrap_or_default();
        for item in &f.items {
            if let Item::Declare(d) = item {
                let mut cx = Cx::new(&index, &out.files[fi].src, fi as u32, None, None, globals);
                cx.eval_base = out.eval_sites.len();
                cx.global_declare(d, &mut inits, &mut out.shared);
                out.eval_sites.append(&mut cx.eval_sites);
                out.reads_context |= cx.reads_context;
                diags.extend(cx.take_diags().into_iter().map(|d| (fi as u32, d)));
                globals = cx.globals;
            }
        }
        schema_scopes.insert(schema.clone(), globals);
        schema_inits.insert(schema, inits);
    }

    // Module-level variables.
    let mut module_globals: Vec<scope::Globals> = Vec::new();
    for (mi, (fi, m)) in module_names.iter().enumerate() {
        let schema = &index.schemas[*fi as usize];
        let mut globals = schema_scopes.get(schema).cloned().unwrap_or_default();
        let mut inits = schema_inits.get(schema).cloned().unwrap_or_default();
        for item in &m.items {
            if let Item::Declare(d) = item {
                let mut cx = Cx::new(
                    &index,
                    &out.files[*fi as usize].src,
                    *fi,
                    Some(mi),
                    Some(m.kind),
                    globals,
                );
                cx.eval_base = out.eval_sites.len();
                cx.global_declare(d, &mut inits, &mut out.shared);
                out.eval_sites.append(&mut cx.eval_sites);
                out.reads_context |= cx.reads_context;
                diags.extend(cx.take_diags().into_iter().map(|d| (*fi, d)));
                globals = cx.globals;
            }
        }
        // The product finds `main()` as well as `Main()`: IBM's own pattern code writes it so.
        let in_module = |exact: bool| {
            index.routines.iter().position(|r| {
                r.module == Some(mi)
                    && if exact {
                        r.name == "Main"
                    } else {
                        r.name.eq_ignore_ascii_case("Main")
                    }
            })
        };
        let main = in_module(true).or_else(|| in_module(false));
        out.modules.push(ModuleIr {
            name: m.name.name.clone(),
            schema: schema.clone(),
            kind: m.kind,
            file: *fi,
            global_count: globals.count,
            globals: inits,
            main,
        });
        module_globals.push(globals);
    }

    // Routine bodies.
    for (fi, module, r) in routine_asts {
        let empty = scope::Globals::default();
        let globals = match module {
            Some(mi) => &module_globals[mi],
            None => schema_scopes
                .get(&index.schemas[fi as usize])
                .unwrap_or(&empty),
        };
        let kind = module.map(|mi| module_names[mi].1.kind);
        let mut cx = Cx::new(
            &index,
            &out.files[fi as usize].src,
            fi,
            module,
            kind,
            globals.clone(),
        );
        cx.atomic_base = out.atomic_blocks;
        cx.eval_base = out.eval_sites.len();
        let routine = cx.routine(r);
        out.atomic_blocks = cx.atomic_base;
        out.eval_sites.append(&mut cx.eval_sites);
        out.reads_context |= cx.reads_context;
        diags.extend(cx.take_diags().into_iter().map(|d| (fi, d)));
        out.routines.push(routine);
    }

    for (mi, m) in out.modules.iter().enumerate() {
        let (fi, am) = module_names[mi];
        // A module without Main is an error only for a node that runs it (Module::has_main):
        // workspaces keep such modules as libraries of helpers.
        let problem = match m.main {
            None => None,
            Some(i) if !out.routines[i].params.is_empty() => {
                Some("Main must take no parameters".to_string())
            }
            Some(_) => None,
        };
        if let Some(msg) = problem {
            diags.push((
                fi,
                Diagnostic::new(&out.files[fi as usize].src, am.name.span, msg),
            ));
        }
    }
    out.index = index;
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

/// A literal as a scalar value, or why it is not one.
pub(crate) fn literal(l: &ast::Literal) -> Result<Value, String> {
    use sluice_esql_scalar as s;
    Ok(match l {
        ast::Literal::Null | ast::Literal::Unknown => Value::Null,
        ast::Literal::Boolean(b) => Value::Boolean(*b),
        ast::Literal::Integer(d) => {
            let t = d.replace('_', "");
            let parsed = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                // Sixteen digits are the 64 bits of the INTEGER, sign bit included.
                u64::from_str_radix(h, 16).ok().map(|u| u as i64)
            } else {
                t.parse::<i64>().ok()
            };
            match parsed {
                Some(i) => Value::Integer(i),
                None => Value::Decimal(s::Decimal::parse(&t).map_err(|e| e.to_string())?),
            }
        }
        ast::Literal::Decimal(d) => {
            Value::Decimal(s::Decimal::parse(d).map_err(|e| e.to_string())?)
        }
        ast::Literal::Float(f) => Value::Float(
            f.parse::<f64>()
                .map_err(|e| format!("bad FLOAT literal {f}: {e}"))?,
        ),
        ast::Literal::Character(c) => Value::from_text(c),
        ast::Literal::Blob(h) => {
            let mut bytes = Vec::with_capacity(h.len() / 2);
            let b = h.as_bytes();
            for pair in b.chunks(2) {
                let txt = std::str::from_utf8(pair).map_err(|_| "bad hex literal".to_string())?;
                bytes.push(
                    u8::from_str_radix(txt, 16).map_err(|_| format!("bad hex literal X'{h}'"))?,
                );
            }
            Value::Blob(bytes.into())
        }
        ast::Literal::Bit(b) => {
            Value::Bit(s::BitString::parse(b).ok_or_else(|| format!("bad bit literal B'{b}'"))?)
        }
        ast::Literal::Date(d) => Value::Date(s::Date::parse(d).map_err(|e| e.to_string())?),
        ast::Literal::Time(t) => Value::Time(s::Time::parse(t).map_err(|e| e.to_string())?),
        ast::Literal::GmtTime(t) => Value::GmtTime(s::Time::parse(t).map_err(|e| e.to_string())?),
        ast::Literal::Timestamp(t) => {
            Value::Timestamp(s::Timestamp::parse(t).map_err(|e| e.to_string())?)
        }
        ast::Literal::GmtTimestamp(t) => {
            Value::GmtTimestamp(s::Timestamp::parse(t).map_err(|e| e.to_string())?)
        }
        ast::Literal::Interval { text, qualifier } => {
            Value::Interval(s::Interval::parse(text, *qualifier).map_err(|e| e.to_string())?)
        }
    })
}

/// The scalar type of a declared or CAST type; `None` for REFERENCE, ROW, NAMESPACE, NAME.
pub(crate) fn data_type(t: &ast::DataType) -> Option<sluice_esql_scalar::DataType> {
    match t {
        ast::DataType::Scalar(t) => Some(*t),
        ast::DataType::Reference
        | ast::DataType::Row
        | ast::DataType::Namespace
        | ast::DataType::Name => None,
    }
}
