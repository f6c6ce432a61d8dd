//! docs/esql-coverage.md is generated from the compiler's tables; this fails when it drifts,
//! and when an item's example does not compile (or, for an item that fails at run time, does
//! not fail with its reason). Run with `BLESS=1` to rewrite the generated part.

use std::path::Path;
use std::sync::Arc;

use sluice_esql::runtime::coverage::{self, FUNCTIONS, Item, REGISTERS, STATEMENTS, Status};
use sluice_esql::runtime::{NoPropagation, Program, RunOptions};
use sluice_tree::{Message, Tree};

const START: &str = "<!-- generated -->";
const END: &str = "<!-- end generated -->";

#[test]
fn coverage_doc_matches_the_compiler_tables() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/esql-coverage.md");
    let doc = std::fs::read_to_string(&path).expect("docs/esql-coverage.md exists");
    let (head, rest) = doc.split_once(START).expect("generated start marker");
    let (current, tail) = rest.split_once(END).expect("generated end marker");
    let generated = coverage::markdown();
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, format!("{head}{START}\n{generated}{END}{tail}")).expect("write");
        return;
    }
    assert_eq!(
        current.trim(),
        generated.trim(),
        "docs/esql-coverage.md is stale: run `BLESS=1 cargo test -p sluice-esql --test coverage`"
    );
}

/// A Compute module whose Main runs `body`, with the routines the examples call.
fn module(body: &str) -> String {
    format!(
        "CREATE COMPUTE MODULE Coverage\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  {body}\n  RETURN TRUE;\n END;\n CREATE PROCEDURE Helper() BEGIN END;\n CREATE PROCEDURE JavaHelper() LANGUAGE JAVA EXTERNAL NAME \"com.example.Helper.run\";\nEND MODULE;\n"
    )
}

fn check(item: &Item, body: String) {
    let program = Program::compile(&[("coverage.esql".to_string(), module(&body))])
        .map_err(|es| es.iter().map(|e| e.render()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_else(|e| panic!("`{}` does not compile: {e}", item.name));
    if let Status::RuntimeError(reason) = item.status {
        let program = Arc::new(program);
        let m = program.module("Coverage").expect("module");
        let e = m
            .run(
                &mut Message::new(),
                &mut Tree::new("Environment"),
                &mut NoPropagation,
                &RunOptions::default(),
            )
            .expect_err(item.name);
        assert!(
            e.to_string().contains(reason),
            "`{}` failed otherwise: {e}",
            item.name
        );
    }
}

#[test]
fn every_listed_item_compiles_and_fails_only_as_listed() {
    for s in STATEMENTS {
        check(s, s.example.to_string());
    }
    for f in FUNCTIONS.iter().chain(REGISTERS) {
        check(f, format!("SET OutputRoot.XMLNSC.R = {};", f.example));
    }
}

#[test]
fn an_unknown_function_is_not_covered() {
    let item = &FUNCTIONS[0];
    let r = Program::compile(&[(
        "x.esql".to_string(),
        module("SET OutputRoot.XMLNSC.R = NOSUCHFUNCTION(1);"),
    )]);
    assert!(r.is_err(), "{}", item.name);
}
