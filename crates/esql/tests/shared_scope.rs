//! SHARED variables: module-level ones belong to a deployed node (shared by its instances),
//! schema-level ones to the whole program.

use std::sync::Arc;

use sluice_esql::runtime::{Module, NoPropagation, Program, RunOptions};
use sluice_tree::{Message, Tree};

const SRC: &str = "DECLARE Total SHARED INTEGER 0;\n\
CREATE COMPUTE MODULE M\n\
 DECLARE Counter SHARED INTEGER 0;\n\
 DECLARE Seen SHARED ROW;\n\
 CREATE FUNCTION Main() RETURNS BOOLEAN\n\
 BEGIN\n\
  SET Counter = Counter + 1;\n\
  SET Total = Total + 1;\n\
  CREATE LASTCHILD OF Seen NAME 'S' VALUE Counter;\n\
  SET OutputRoot.XMLNSC.R.Counter = Counter;\n\
  SET OutputRoot.XMLNSC.R.Total = Total;\n\
  SET OutputRoot.XMLNSC.R.Seen = CARDINALITY(Seen.S[]);\n\
  RETURN TRUE;\n\
 END;\n\
END MODULE;\n\
CREATE COMPUTE MODULE N\n\
 DECLARE Broken SHARED INTEGER CAST('not a number' AS INTEGER);\n\
 CREATE FUNCTION Main() RETURNS BOOLEAN\n\
 BEGIN\n\
  RETURN Broken > 0;\n\
 END;\n\
END MODULE;\n";

/// Run the module once; return (Counter, Total, Seen) as it saw them.
fn run(module: &Module) -> (String, String, String) {
    let mut msg = Message::new();
    let mut env = Tree::new("Environment");
    let outcome = module
        .run(
            &mut msg,
            &mut env,
            &mut NoPropagation,
            &RunOptions::default(),
        )
        .expect("module runs");
    let mut out = outcome.output.expect("compute output");
    let root = out.root.root();
    out.root.expand_all(root).expect("expand");
    let text = format!("{:?}", out.root);
    let field = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(name))
            .and_then(|l| l.split(" = ").nth(1))
            .unwrap_or_default()
            .to_string()
    };
    (field("Counter"), field("Total"), field("Seen"))
}

#[test]
fn module_shared_is_per_node_and_schema_shared_is_per_program() {
    let program =
        Arc::new(Program::compile(&[("m.esql".into(), SRC.into())]).expect("program compiles"));
    let node_a = program.module("M").expect("module");
    let node_b = program.module("M").expect("module");
    let i = |n: i64| format!("Integer({n})");
    assert_eq!(run(&node_a), (i(1), i(1), i(1)));
    // A second instance of node A is a clone of its module: it sees node A's values.
    let instance_2 = node_a.clone();
    assert_eq!(run(&instance_2), (i(2), i(2), i(2)));
    // Node B runs the same module but has its own module-level SHARED variables; the
    // schema-level one is the program's.
    assert_eq!(run(&node_b), (i(1), i(3), i(1)));
    assert_eq!(run(&node_a), (i(3), i(4), i(3)));
    // Another module's SHARED variables are its nodes' business: M never initialises them.
    let n = program.module("N").expect("module");
    let mut msg = Message::new();
    let mut env = Tree::new("Environment");
    let err = n
        .run(
            &mut msg,
            &mut env,
            &mut NoPropagation,
            &RunOptions::default(),
        )
        .expect_err("N's initial value does not cast");
    assert!(err.to_string().contains("not a number"), "{err}");
}

#[test]
fn module_shared_is_consistent_across_instance_threads() {
    let program =
        Arc::new(Program::compile(&[("m.esql".into(), SRC.into())]).expect("program compiles"));
    let node = program.module("M").expect("module");
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let instance = node.clone();
            std::thread::spawn(move || {
                for _ in 0..25 {
                    run(&instance);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("instance thread");
    }
    assert_eq!(
        run(&node),
        (
            "Integer(101)".to_string(),
            "Integer(101)".to_string(),
            "Integer(101)".to_string()
        )
    );
}
