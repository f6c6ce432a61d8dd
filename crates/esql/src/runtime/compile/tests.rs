//! The compiler's output: slots, folded constants, direct built-ins, interned names.

use sluice_esql_scalar::Value;

use crate::runtime::fast::FastFn;
use crate::runtime::ir::{Ex, Head, NameMatch, NsMatch, SetTarget, Sk, St, VarAddr, trees};

fn compile(src: &str) -> super::Compiled {
    let ast = crate::syntax::parse(src).unwrap_or_else(|d| panic!("{d:?}"));
    let files = vec![super::SourceFile {
        path: "t.esql".into(),
        src: src.into(),
    }];
    super::compile(files, vec![ast]).unwrap_or_else(|d| panic!("{d:?}"))
}

fn main_body(c: &super::Compiled) -> &[St] {
    let main = c.modules[0].main.expect("Main");
    match &c.routines[main].body[0].kind {
        Sk::Begin { body, .. } => body,
        other => panic!("{other:?}"),
    }
}

fn module(body: &str) -> String {
    format!(
        "CREATE COMPUTE MODULE M\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n{body}\n  RETURN TRUE;\n END;\nEND MODULE;\n"
    )
}

#[test]
fn constants_fold_at_compile_time() {
    let c = compile(&module("  SET OutputRoot.A = 2 * 3 + LENGTH('abc');"));
    match &main_body(&c)[0].kind {
        Sk::Set { value, .. } => assert_eq!(value, &Ex::Const(Value::Integer(9))),
        other => panic!("{other:?}"),
    }
}

#[test]
fn mq_constants_are_known_by_name() {
    let c = compile(&module(
        "  SET OutputRoot.MQMD.Persistence = MQPER_PERSISTENT;\n  SET OutputRoot.MQMD.Format = MQFMT_STRING;\n  SET OutputRoot.MQMD.MsgType = MQMT_REPLY + 0;",
    ));
    let values: Vec<&Ex> = main_body(&c)
        .iter()
        .filter_map(|s| match &s.kind {
            Sk::Set { value, .. } => Some(value),
            _ => None,
        })
        .collect();
    assert_eq!(
        values,
        [
            &Ex::Const(Value::Integer(1)),
            &Ex::Const(Value::Character("MQSTR   ".into())),
            &Ex::Const(Value::Integer(2)),
        ]
    );
}

#[test]
fn variables_resolve_to_slots_and_scopes_reuse_them() {
    let c = compile(&module(
        "  DECLARE a INTEGER 1;\n  IF a = 1 THEN DECLARE b INTEGER 2; SET b = 3; END IF;\n  DECLARE c INTEGER 4;\n  SET c = a;",
    ));
    let body = main_body(&c);
    let slots: Vec<_> = body
        .iter()
        .filter_map(|s| match &s.kind {
            Sk::Declare { slots, .. } => Some(slots[0]),
            _ => None,
        })
        .collect();
    // `b` lived in the IF's scope; `c` takes its slot.
    assert_eq!(slots, [VarAddr::Local(0), VarAddr::Local(1)]);
    match &body[3].kind {
        Sk::Set {
            target: SetTarget::Var(VarAddr::Local(1), _),
            value: Ex::Var(VarAddr::Local(0)),
            ..
        } => {}
        other => panic!("{other:?}"),
    }
    let main = c.modules[0].main.expect("Main");
    assert_eq!(c.routines[main].frame_size, 2);
}

#[test]
fn field_names_are_interned_and_correlation_names_resolved() {
    let c = compile(&module(
        "  DECLARE p NAMESPACE 'urn:p';\n  SET OutputRoot.XMLNSC.p:Doc.*[<] = InputBody.Order;",
    ));
    match &main_body(&c)[1].kind {
        Sk::Set {
            target: SetTarget::Path(path),
            value: Ex::Path(src),
            ..
        } => {
            assert_eq!(path.head, Head::Root(trees::OUT_ROOT));
            assert_eq!(path.steps[1].ns, NsMatch::Lit(Box::from(&b"urn:p"[..])));
            assert_eq!(path.steps[1].name, NameMatch::Lit(Box::from(&b"Doc"[..])));
            assert_eq!(path.steps[2].name, NameMatch::Any);
            assert_eq!(src.head, Head::Body(trees::IN_ROOT));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn builtins_become_direct_calls() {
    let c = compile(&module("  DECLARE s CHARACTER;\n  SET s = TRIM(UPPER(s));"));
    match &main_body(&c)[1].kind {
        Sk::Set {
            value: Ex::Fast(FastFn::Trim(_), args),
            ..
        } => assert!(matches!(args[0], Ex::Fast(FastFn::Upper, _))),
        other => panic!("{other:?}"),
    }
}

#[test]
fn module_without_main_compiles_and_says_so() {
    let src = "CREATE COMPUTE MODULE M\n CREATE FUNCTION Other() RETURNS BOOLEAN BEGIN RETURN TRUE; END;\nEND MODULE;\n";
    let ast = crate::syntax::parse(src).unwrap_or_else(|d| panic!("{d:?}"));
    let files = vec![super::SourceFile {
        path: "t.esql".into(),
        src: src.into(),
    }];
    let c = super::compile(files, vec![ast]).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(c.modules[0].main, None);
}

#[test]
fn lower_case_main_is_main() {
    let src = "CREATE COMPUTE MODULE M
 CREATE FUNCTION main() RETURNS BOOLEAN BEGIN RETURN TRUE; END;
END MODULE;
";
    let ast = crate::syntax::parse(src).unwrap_or_else(|d| panic!("{d:?}"));
    let files = vec![super::SourceFile {
        path: "t.esql".into(),
        src: src.into(),
    }];
    let c = super::compile(files, vec![ast]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(c.modules[0].main.is_some());
}

#[test]
fn scalar_variable_cannot_start_a_path() {
    let src = module("  DECLARE x INTEGER;\n  SET OutputRoot.A = x.b;");
    let ast = crate::syntax::parse(&src).unwrap_or_else(|d| panic!("{d:?}"));
    let files = vec![super::SourceFile {
        path: "t.esql".into(),
        src: src.clone(),
    }];
    let errs = super::compile(files, vec![ast]).err().unwrap_or_default();
    assert!(
        errs.iter()
            .any(|(_, d)| d.message.contains("scalar variable")),
        "{errs:?}"
    );
}
