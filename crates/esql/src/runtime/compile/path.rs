//! Field references: correlation names, variables and steps.

use sluice_esql_scalar::Value;

use super::Cx;
use super::scope::Binding;
use crate::runtime::ir::{
    Ex, Head, IndexIr, NameMatch, NsMatch, Path, Step, TypeMatch, VarKind, trees,
};
use crate::runtime::{broker, field_types, mq_constants};
use crate::syntax::ast::{self, FieldRef, ModuleKind, NameSpec, NamespaceSpec, PathStep};

/// Options of ASBITSTREAM and PARSE, and other bare words the product defines as constants.
const WORD_CONSTANTS: &[(&str, i64)] = &[
    ("RootBitStream", 0),
    ("FolderBitStream", 1),
    ("EmbeddedBitStream", 2),
    ("ValidateNone", 0),
    ("ValidateContent", 0x10),
    ("ValidateContentAndValue", 0x20),
    ("ValidateException", 0),
    ("ValidateImmediate", 0),
    ("ValidateComplete", 0),
    ("ValidateDeferred", 0),
    ("ValidateFullFixUp", 0),
    ("ValidateNoFixUp", 0),
    ("ValidateLocalError", 0),
    ("ValidateExceptionList", 0),
    ("ParseComplete", 0x40),
    ("ParseImmediate", 0x80),
    ("ParseOnDemand", 0),
];

/// The broker attribute `name`: a constant when the whole process has one value for it.
pub(super) fn broker_attribute(name: &str) -> Option<Ex> {
    let spec = broker::lookup(name)?;
    Some(match spec.source {
        broker::Source::Constant(f) => Ex::Const(f()),
        broker::Source::Node(a) => Ex::Broker(a),
    })
}

impl Cx<'_> {
    /// The tree root a correlation name stands for in this kind of module.
    pub fn correlation(&self, name: &str) -> Option<Head> {
        use trees::*;
        let compute = matches!(self.kind, None | Some(ModuleKind::Compute));
        let other = !matches!(self.kind, Some(ModuleKind::Compute));
        Some(match name {
            "Environment" => Head::Root(ENVIRONMENT),
            "Context" => Head::Root(CONTEXT),
            "InputRoot" if compute => Head::Root(IN_ROOT),
            "InputBody" if compute => Head::Body(IN_ROOT),
            "InputProperties" if compute => Head::Child(IN_ROOT, b"Properties"),
            "InputLocalEnvironment" if compute => Head::Root(IN_LOCAL_ENV),
            "InputDestinationList" if compute => Head::Child(IN_LOCAL_ENV, b"Destination"),
            "InputExceptionList" if compute => Head::Root(IN_EXCEPTION),
            "OutputRoot" if compute => Head::Root(OUT_ROOT),
            "OutputLocalEnvironment" if compute => Head::Root(OUT_LOCAL_ENV),
            "OutputDestinationList" if compute => Head::Child(OUT_LOCAL_ENV, b"Destination"),
            "OutputExceptionList" if compute => Head::Root(OUT_EXCEPTION),
            "Root" if other => Head::Root(IN_ROOT),
            "Body" if other => Head::Body(IN_ROOT),
            "Properties" if other => Head::Child(IN_ROOT, b"Properties"),
            "LocalEnvironment" if other => Head::Root(IN_LOCAL_ENV),
            "DestinationList" if other => Head::Child(IN_LOCAL_ENV, b"Destination"),
            "ExceptionList" if other => Head::Root(IN_EXCEPTION),
            _ => return None,
        })
    }

    fn is_plain(step: &PathStep) -> Option<&ast::Ident> {
        match (
            &step.name,
            &step.type_qualifier,
            &step.namespace,
            &step.index,
        ) {
            (NameSpec::Ident(id), None, None, None) => Some(id),
            _ => None,
        }
    }

    /// A field reference used as a value: a variable, a constant or a path.
    pub fn field_expr(&mut self, r: &FieldRef) -> Ex {
        if let Some(first) = r.steps.first()
            && let Some(id) = Self::is_plain(first)
        {
            let name = id.name.as_str();
            if r.steps.len() == 2
                && !self.db_alias.is_empty()
                && self.db_alias.iter().any(|a| a.eq_ignore_ascii_case(name))
                && let Some(col) = Self::is_plain(&r.steps[1])
            {
                return Ex::Column(col.name.clone());
            }
            if r.steps.len() == 1 {
                match self.lookup(name) {
                    Some(Binding::Const(v)) => return Ex::Const(v),
                    Some(Binding::Var(addr, VarKind::Scalar(_))) => return Ex::Var(addr),
                    Some(Binding::Var(..)) => {}
                    None => {
                        if self.correlation(name).is_none() {
                            if let Some(t) = field_types::generic(name) {
                                return Ex::Const(Value::Integer(t as i64));
                            }
                            if let Some((_, v)) = WORD_CONSTANTS.iter().find(|(n, _)| *n == name) {
                                return Ex::Const(Value::Integer(*v));
                            }
                            if let Some(v) = mq_constants::value(name) {
                                return Ex::Const(v);
                            }
                            if let Some(e) = broker_attribute(name) {
                                return e;
                            }
                            if !self.db_alias.is_empty() {
                                return Ex::Column(name.to_string());
                            }
                        }
                    }
                }
            }
            if r.steps.len() == 2
                && self.lookup(name).is_none()
                && self.correlation(name).is_none()
                && let Some(t) = Self::is_plain(&r.steps[1])
            {
                if let Some(v) = field_types::qualified(name, &t.name) {
                    return Ex::Const(Value::Integer(v as i64));
                }
                // `SQL.BrokerName` reaches the attribute that a variable of its name hides.
                if name == "SQL"
                    && let Some(e) = broker_attribute(&t.name)
                {
                    return e;
                }
            }
        }
        match self.path(r) {
            Some(p) => Ex::Path(Box::new(p)),
            None => Ex::Const(Value::Null),
        }
    }

    /// A field reference as a path; reports and returns `None` when it names nothing.
    pub fn path(&mut self, r: &FieldRef) -> Option<Path> {
        let first = r.steps.first()?;
        let NameSpec::Ident(id) = &first.name else {
            self.err(
                first.span,
                "a field reference must start with a correlation name or a variable",
            );
            return None;
        };
        let head = match self.lookup(&id.name) {
            Some(Binding::Var(addr, VarKind::Reference | VarKind::Row)) => Head::Var(addr),
            Some(Binding::Var(_, VarKind::Scalar(_))) => {
                self.err(
                    id.span,
                    format!(
                        "`{}` is a scalar variable; it cannot start a field reference",
                        id.name
                    ),
                );
                return None;
            }
            Some(Binding::Const(_)) => {
                self.err(
                    id.span,
                    format!(
                        "`{}` is a constant; it cannot start a field reference",
                        id.name
                    ),
                );
                return None;
            }
            None => match self.correlation(&id.name) {
                Some(h) => {
                    self.reads_context |= h == Head::Root(trees::CONTEXT);
                    h
                }
                None => {
                    self.err(
                        id.span,
                        format!(
                            "`{}` is not a correlation name or a declared variable",
                            id.name
                        ),
                    );
                    return None;
                }
            },
        };
        let mut steps = Vec::with_capacity(r.steps.len());
        if let Some(ix) = &first.index {
            // `ref[2]` or `InputRoot[1]`: the index applies to the head among its siblings;
            // rarely written, treated as the head itself.
            let _ = ix;
        }
        for s in &r.steps[1..] {
            steps.push(self.step(s)?);
        }
        Some(Path { head, steps })
    }

    /// One path step.
    pub fn step(&mut self, s: &PathStep) -> Option<Step> {
        let ty = match &s.type_qualifier {
            None => None,
            Some(ast::TypeQualifier::Named(parts)) => {
                let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
                let v = match names.as_slice() {
                    [d, t] => field_types::qualified(d, t),
                    [t] => match self.lookup(t) {
                        Some(Binding::Const(Value::Integer(i))) => Some(i as u32),
                        Some(Binding::Var(addr, _)) => {
                            return Some(Step {
                                ty: Some(TypeMatch::Dyn(Ex::Var(addr))),
                                ..self.step_rest(s)?
                            });
                        }
                        _ => field_types::generic(t),
                    },
                    _ => None,
                };
                match v {
                    Some(v) => Some(TypeMatch::Const(v)),
                    None => {
                        self.err(s.span, format!("unknown field type `{}`", names.join(".")));
                        return None;
                    }
                }
            }
            Some(ast::TypeQualifier::Expr(e)) => match self.expr(e) {
                Ex::Const(Value::Integer(i)) => Some(TypeMatch::Const(i as u32)),
                other => Some(TypeMatch::Dyn(other)),
            },
        };
        Some(Step {
            ty,
            ..self.step_rest(s)?
        })
    }

    fn step_rest(&mut self, s: &PathStep) -> Option<Step> {
        let ns = match &s.namespace {
            None => NsMatch::Unspecified,
            Some(NamespaceSpec::Any) => NsMatch::Any,
            Some(NamespaceSpec::Empty) => NsMatch::Lit(Box::from(&b""[..])),
            Some(NamespaceSpec::Dynamic(e)) => match self.expr(e) {
                Ex::Const(Value::Character(c)) => NsMatch::Lit(Box::from(c.as_bytes())),
                other => NsMatch::Dyn(other),
            },
            Some(NamespaceSpec::Ident(id)) => match self.lookup(&id.name) {
                Some(Binding::Const(Value::Character(c))) => NsMatch::Lit(Box::from(c.as_bytes())),
                Some(Binding::Var(addr, VarKind::Scalar(_))) => NsMatch::Dyn(Ex::Var(addr)),
                // `(XMLNSC.NamespaceDecl)xmlns:p` and `xml:lang` need no declaration.
                None if id.name == "xmlns" => {
                    NsMatch::Lit(Box::from(sluice_parsers::xmlnsc::XMLNS_NS.as_bytes()))
                }
                None if id.name == "xml" => {
                    NsMatch::Lit(Box::from(sluice_parsers::xmlnsc::XML_NS.as_bytes()))
                }
                _ => {
                    self.err(
                        id.span,
                        format!(
                            "namespace prefix `{}` is not declared (DECLARE {} NAMESPACE 'uri')",
                            id.name, id.name
                        ),
                    );
                    return None;
                }
            },
        };
        let name = match &s.name {
            NameSpec::Ident(id) => NameMatch::Lit(Box::from(id.name.as_bytes())),
            NameSpec::Any => NameMatch::Any,
            NameSpec::Dynamic(e) => match self.expr(e) {
                Ex::Const(Value::Character(c)) => NameMatch::Lit(Box::from(c.as_bytes())),
                other => NameMatch::Dyn(other),
            },
        };
        let index = match &s.index {
            None | Some(ast::Index::FromFirst(None)) => IndexIr::First,
            Some(ast::Index::Nth(e)) | Some(ast::Index::FromFirst(Some(e))) => match self.expr(e) {
                Ex::Const(Value::Integer(1)) => IndexIr::First,
                other => IndexIr::Nth(other),
            },
            Some(ast::Index::FromLast(None)) => IndexIr::Last,
            Some(ast::Index::FromLast(Some(e))) => IndexIr::FromLast(self.expr(e)),
            Some(ast::Index::All) => IndexIr::All,
        };
        Some(Step {
            ty: None,
            ns,
            name,
            index,
        })
    }
}
