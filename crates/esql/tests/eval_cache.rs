//! EVAL texts are compiled once per node and text, and each node has its own cache.

use std::sync::Arc;

use sluice_esql::runtime::{NoPropagation, Program, RunOptions};
use sluice_tree::{Message, Tree};

const SRC: &str = "CREATE COMPUTE MODULE M\n CREATE FUNCTION Main() RETURNS BOOLEAN\n BEGIN\n  DECLARE i INTEGER 0;\n  DECLARE x INTEGER 0;\n  WHILE i < 5 DO\n   EVAL('SET x = x + 1;');\n   SET i = i + 1;\n  END WHILE;\n  SET OutputRoot.XMLNSC.R.X = EVAL('x * ' || CAST(Environment.F AS CHARACTER));\n  RETURN TRUE;\n END;\nEND MODULE;\n";

fn run(module: &sluice_esql::runtime::Module, factor: i64) -> String {
    let mut msg = Message::new();
    let mut env = Tree::new("Environment");
    let r = env.root();
    env.create_last_child(
        r,
        sluice_tree::field_type::NAME_VALUE,
        sluice_tree::Text::from_static("F"),
        sluice_tree::Value::Integer(factor),
    )
    .expect("environment field");
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
    format!("{:?}", out.root)
}

#[test]
fn eval_compiles_each_text_once_per_node() {
    let program =
        Arc::new(Program::compile(&[("m.esql".into(), SRC.into())]).expect("program compiles"));
    let node_a = program.module("M").expect("module");
    let node_b = program.module("M").expect("module");
    assert_eq!(node_a.cached_eval_texts(), 0);
    assert!(run(&node_a, 2).contains("Integer(10)"));
    // One statement text (run five times) and one expression text.
    assert_eq!(node_a.cached_eval_texts(), 2);
    assert!(run(&node_a, 2).contains("Integer(10)"));
    assert_eq!(node_a.cached_eval_texts(), 2);
    // A new expression text is a new entry.
    assert!(run(&node_a, 3).contains("Integer(15)"));
    assert_eq!(node_a.cached_eval_texts(), 3);
    // Another node compiles for itself; a clone of a node's module shares its cache.
    assert_eq!(node_b.cached_eval_texts(), 0);
    let clone = node_a.clone();
    assert_eq!(clone.cached_eval_texts(), 3);
}
