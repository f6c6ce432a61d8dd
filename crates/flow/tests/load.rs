//! Flow files: what loads, and the problems reported (with their places) for what does not.

mod test_nodes;

use sluice_flow::load_flow;
use sluice_node_api::PropValue;
use test_nodes::registry;

fn problems(src: &str) -> Vec<String> {
    match load_flow("flows/t.yaml", src, &registry()) {
        Ok(_) => Vec::new(),
        Err(ds) => ds
            .iter()
            .map(|d| {
                format!(
                    "{}:{}: {} | {}",
                    d.line,
                    d.col,
                    d.message,
                    d.hint.clone().unwrap_or_default()
                )
            })
            .collect(),
    }
}

#[test]
fn load_flow_reads_the_transaction_setting_and_defaults_to_automatic() {
    let body = "nodes:\n  a: { type: Source, path: /x }\n";
    let def = load_flow("flows/t.yaml", body, &registry()).expect("valid");
    assert_eq!(def.transaction, sluice_node_api::Transaction::Automatic);
    let src = format!("transaction: coordinated\n{body}");
    let def = load_flow("flows/t.yaml", &src, &registry()).expect("valid");
    assert_eq!(def.transaction, sluice_node_api::Transaction::Coordinated);
    let p = problems(&format!("transaction: twophase\n{body}"));
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].starts_with("1:14: `transaction` must be"), "{p:?}");
}

#[test]
fn load_flow_resolves_wires_and_defaults_when_valid() {
    let src = "flow: f\ninstances: 2\nnodes:\n  a: { type: Source, path: /x, wires: { out: [b, c] } }\n  b: { type: Step, count: 5 }\n  c: { type: Step }\n";
    let def = load_flow("flows/t.yaml", src, &registry()).expect("valid");
    assert_eq!(def.name, "f");
    assert_eq!(def.instances, 2);
    assert_eq!(def.nodes[0].wires[0], vec![(1, 0), (2, 0)]);
    assert_eq!(
        def.nodes[1].config.value("count"),
        Some(&PropValue::Integer(5))
    );
    assert_eq!(
        def.nodes[2].config.value("count"),
        Some(&PropValue::Integer(3))
    );
    assert_eq!(
        def.nodes[2].config.value("mode"),
        Some(&PropValue::String("fast".into()))
    );
}

#[test]
fn load_flow_takes_dotted_labels_whole_or_before_an_input_terminal() {
    let src = "flow: f\nnodes:\n  a: { type: Source, path: /x, wires: { out: [MQINP.ORDERS, 'step.two.in'] } }\n  MQINP.ORDERS: { type: Step }\n  step.two: { type: Step }\n";
    let def = load_flow("flows/t.yaml", src, &registry()).expect("valid");
    assert_eq!(def.nodes[0].wires[0], vec![(1, 0), (2, 0)]);
    assert!(
        problems(&src.replace("'step.two.in'", "'step.two.nope'"))
            .iter()
            .any(|p| p.contains("nope"))
    );
}

#[test]
fn load_flow_reports_unknown_type_with_suggestion_and_place() {
    let p = problems("flow: f\nnodes:\n  a: { type: Sourse, path: /x }\n");
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].starts_with("3:"), "{p:?}");
    assert!(p[0].contains("unknown node type `Sourse`"), "{p:?}");
    assert!(p[0].contains("did you mean `Source`?"), "{p:?}");
}

#[test]
fn load_flow_reports_every_problem_not_just_the_first() {
    let src = "flow: f\nnodes:\n  a: { type: Source, wires: { out: [nowhere] } }\n  b: { type: Step, cuont: 1, mode: medium }\n";
    let p = problems(src);
    assert!(
        p.iter().any(|x| x.contains("needs property `path`")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|x| x.contains("no property `cuont`") && x.contains("did you mean `count`?")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|x| x.starts_with("4:") && x.contains("`medium` is not one of fast, slow")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|x| x.contains("wire to unknown node `nowhere`")),
        "{p:?}"
    );
}

#[test]
fn load_flow_rejects_unknown_terminal_and_wires_into_input_nodes() {
    let p = problems(
        "nodes:\n  a: { type: Source, path: /x, wires: { outt: [b], catch: [a] } }\n  b: { type: Step }\n",
    );
    assert!(
        p.iter()
            .any(|x| x.contains("no output terminal `outt`") && x.contains("did you mean `out`?")),
        "{p:?}"
    );
    assert!(
        p.iter().any(|x| x.contains("`a` is an input node")),
        "{p:?}"
    );
}

#[test]
fn load_flow_reports_loops_as_a_chain() {
    let p = problems(
        "nodes:\n  a: { type: Source, path: /x, wires: { out: [b] } }\n  b: { type: Step, wires: { out: [c] } }\n  c: { type: Step, wires: { out: [b] } }\n",
    );
    assert!(p.iter().any(|x| x.contains("loop: b -> c -> b")), "{p:?}");
}

#[test]
fn load_flow_accepts_named_terminals_on_dynamic_nodes() {
    let src = "nodes:\n  a: { type: Source, path: /x, wires: { out: [s] } }\n  s: { type: Switch, wires: { big: [b], small: [b] } }\n  b: { type: Step }\n";
    let def = load_flow("flows/t.yaml", src, &registry()).expect("valid");
    assert_eq!(
        def.nodes[1].outputs,
        vec!["big".to_string(), "small".to_string()]
    );
}

#[test]
fn load_flow_reports_yaml_syntax_errors_with_place() {
    let p = problems("nodes:\n  a: { type: Source\n  b: [\n");
    assert_eq!(p.len(), 1);
    assert!(p[0].contains("invalid YAML"), "{p:?}");
}

#[test]
fn load_flow_requires_an_input_node() {
    let p = problems("nodes:\n  b: { type: Step }\n");
    assert!(p.iter().any(|x| x.contains("no input node")), "{p:?}");
}

#[test]
fn diagnostic_renders_file_line_col_excerpt_and_caret() {
    let err = load_flow(
        "flows/t.yaml",
        "nodes:\n  a: { type: Sourse }\n",
        &registry(),
    )
    .err()
    .expect("invalid");
    let text = err[0].to_string();
    assert!(text.starts_with("flows/t.yaml:2:"), "{text}");
    assert!(text.contains("2 |   a: { type: Sourse }"), "{text}");
    assert!(text.contains('^'), "{text}");
}

#[test]
fn load_flow_numbers_named_input_terminals_after_the_declared_ones_when_wires_name_them() {
    let src = "flow: f\nnodes:\n  a: { type: Source, path: /x, wires: { out: [g.right, g.left, g.in, g.right] } }\n  g: { type: Gather }\n";
    let def = load_flow("flows/t.yaml", src, &registry()).expect("valid");
    assert_eq!(def.nodes[1].inputs, ["in", "right", "left"]);
    assert_eq!(def.nodes[0].wires[0], vec![(1, 1), (1, 2), (1, 0), (1, 1)]);
}

#[test]
fn load_flow_reports_a_wire_to_dynamic_inputs_when_it_names_no_terminal() {
    let src = "flow: f\nnodes:\n  a: { type: Source, path: /x, wires: { out: [g] } }\n  g: { type: Gather }\n";
    let p = problems(src);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].contains("must name one") && p[0].contains("g.NAME"),
        "{p:?}"
    );
}
