//! Subflows: loading `subflows/*.yaml`, expanding their uses inline (terminals, wiring order,
//! promoted properties, nesting), and the problems reported, each in the file at fault.

mod test_nodes;

use sluice_flow::{FlowDef, Subflows, load_flow, load_flow_with};
use sluice_node_api::PropValue;
use test_nodes::registry;

fn line(d: &sluice_flow::Diagnostic) -> String {
    format!(
        "{}:{}: {} | {}",
        d.file,
        d.line,
        d.message,
        d.hint.clone().unwrap_or_default()
    )
}

/// The subflow set of `files`, and its problems as `file:line: message | hint`.
fn subflows(files: &[(&str, &str)]) -> (Subflows, Vec<String>) {
    let (set, problems) = Subflows::load(files.iter().copied(), &registry());
    (set, problems.iter().map(line).collect())
}

/// Load a flow using `set`, or its problems.
fn flow(src: &str, set: &Subflows) -> Result<FlowDef, Vec<String>> {
    load_flow_with("flows/f.yaml", src, &registry(), set)
        .map_err(|ds| ds.iter().map(line).collect())
}

fn valid(src: &str, set: &Subflows) -> FlowDef {
    flow(src, set).unwrap_or_else(|p| panic!("{p:#?}"))
}

/// The flow as one line per node: `label (Type) terminal -> target, target`, a target being
/// `label` for its first input terminal and `label.terminal` otherwise.
fn render(def: &FlowDef) -> Vec<String> {
    def.nodes
        .iter()
        .map(|n| {
            let mut s = format!("{} ({})", n.label, n.spec.type_name);
            for (t, targets) in n.wires.iter().enumerate() {
                if targets.is_empty() {
                    continue;
                }
                let names: Vec<String> = targets
                    .iter()
                    .map(|&(to, input)| {
                        let target = &def.nodes[to];
                        match input {
                            0 => target.label.clone(),
                            i => {
                                format!("{}.{}", target.label, target.spec.inputs[i as usize].name)
                            }
                        }
                    })
                    .collect();
                s.push_str(&format!(" {} -> {}", n.outputs[t], names.join(", ")));
            }
            s
        })
        .collect()
}

fn value<'a>(def: &'a FlowDef, label: &str, property: &str) -> Option<&'a PropValue> {
    def.nodes
        .iter()
        .find(|n| n.label == label)
        .unwrap_or_else(|| panic!("no node `{label}`"))
        .config
        .value(property)
}

const TWO: &str = "subflow: two
nodes:
  a:   { type: Input, wires: { out: [x] } }
  b:   { type: Input, wires: { out: [y, ok] } }
  x:   { type: Step, wires: { out: [ok, w] } }
  y:   { type: Step, wires: { out: [bad] } }
  w:   { type: Step }
  ok:  { type: Output }
  bad: { type: Output }
";

#[test]
fn subflow_use_joins_wires_through_input_and_output_nodes_in_wiring_order() {
    let (set, problems) = subflows(&[("subflows/two.yaml", TWO)]);
    assert_eq!(problems, Vec::<String>::new());
    let def = valid(
        "nodes:
  src:   { type: Source, path: /x, wires: { out: [t.a, t.b, after] } }
  t:     { type: two, wires: { ok: [p, q], bad: [r] } }
  after: { type: Step }
  p:     { type: Step }
  q:     { type: Step }
  r:     { type: Step }
",
        &set,
    );
    assert_eq!(
        render(&def),
        [
            "src (Source) out -> t.x, t.y, p, q, after",
            "t.x (Step) out -> p, q, t.w",
            "t.y (Step) out -> r",
            "t.w (Step)",
            "after (Step)",
            "p (Step)",
            "q (Step)",
            "r (Step)",
        ]
    );
    assert_eq!(def.subflow_files, ["subflows/two.yaml"]);
    let sub = set.get("two").expect("loaded");
    assert_eq!(sub.inputs, ["a", "b"]);
    assert_eq!(sub.outputs, ["ok", "bad"]);
}

#[test]
fn subflow_use_takes_a_bare_label_only_when_it_has_one_input() {
    let one = "nodes:\n  i: { type: Input, wires: { out: [s] } }\n  s: { type: Step }\n";
    let (set, problems) = subflows(&[("subflows/one.yaml", one), ("subflows/two.yaml", TWO)]);
    assert!(problems.is_empty(), "{problems:?}");
    let def = valid(
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [u] } }\n  u: { type: one }\n",
        &set,
    );
    assert_eq!(render(&def), ["src (Source) out -> u.s", "u.s (Step)"]);
    let p = flow(
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [t, t.c] } }\n  t: { type: two }\n",
        &set,
    )
    .err()
    .expect("invalid");
    assert_eq!(p.len(), 2, "{p:#?}");
    assert!(
        p[0].starts_with("flows/f.yaml:2: `t` (subflow two) has 2 input terminals")
            && p[0].contains("write `t.a` or `t.b`"),
        "{p:#?}"
    );
    assert!(
        p[1].starts_with("flows/f.yaml:2: subflow two has no input terminal `c`")
            && p[1].contains("did you mean `a`?"),
        "{p:#?}"
    );
}

#[test]
fn subflow_use_reports_unknown_output_terminal_with_suggestion() {
    let (set, _) = subflows(&[("subflows/two.yaml", TWO)]);
    let p = flow(
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [t.a] } }\n  t: { type: two, wires: { okk: [z] } }\n  z: { type: Step }\n",
        &set,
    )
    .err()
    .expect("invalid");
    assert_eq!(
        p,
        ["flows/f.yaml:3: subflow two has no output terminal `okk` | did you mean `ok`?"]
    );
}

#[test]
fn subflow_without_input_or_output_nodes_cannot_be_wired() {
    let bare = "nodes:\n  s: { type: Step }\n";
    let (set, problems) = subflows(&[("subflows/bare.yaml", bare)]);
    assert!(problems.is_empty(), "{problems:?}");
    let p = flow(
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [b] } }\n  b: { type: bare, wires: { out: [z] } }\n  z: { type: Step }\n",
        &set,
    )
    .err()
    .expect("invalid");
    assert!(
        p.iter().any(
            |x| x.starts_with("flows/f.yaml:2: `b` (subflow bare) has no input terminal")
                && x.contains("add an Input node")
        ),
        "{p:#?}"
    );
    assert!(
        p.iter().any(|x| x
            .starts_with("flows/f.yaml:3: subflow bare has no output terminal `out`")
            && x.contains("no Output nodes")),
        "{p:#?}"
    );
}

const REPLY: &str = "subflow: reply
description: Puts the reply, then again.
properties:
  queue: { doc: \"The queue replies go to.\", targets: [put.queue] }
  tries: { default: 2, targets: [put.retries, again.retries] }
nodes:
  in:    { type: Input, wires: { out: [put] } }
  put:   { type: Put, wires: { out: [again] } }
  again: { type: Put, queue: AGAIN }
";

#[test]
fn promoted_property_is_set_at_the_use_or_by_its_default() {
    let (set, problems) = subflows(&[("subflows/reply.yaml", REPLY)]);
    assert!(problems.is_empty(), "{problems:?}");
    let def = valid(
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [r, s] } }\n  r: { type: reply, queue: Q1 }\n  s: { type: reply, queue: Q2, tries: 5 }\n",
        &set,
    );
    let s = |v: &str| Some(PropValue::String(v.into()));
    assert_eq!(value(&def, "r.put", "queue").cloned(), s("Q1"));
    assert_eq!(
        value(&def, "r.put", "retries"),
        Some(&PropValue::Integer(2))
    );
    assert_eq!(
        value(&def, "r.again", "retries"),
        Some(&PropValue::Integer(2))
    );
    assert_eq!(value(&def, "r.again", "queue").cloned(), s("AGAIN"));
    assert_eq!(value(&def, "s.put", "queue").cloned(), s("Q2"));
    assert_eq!(
        value(&def, "s.again", "retries"),
        Some(&PropValue::Integer(5))
    );
    // A promoted value's place is the use that set it, for errors found when the node is built.
    let put = def.nodes.iter().find(|n| n.label == "s.put").expect("node");
    let at = put.place_of(Some("queue"));
    assert_eq!((at.src.file.as_str(), at.line), ("flows/f.yaml", 4));
    assert_eq!(put.place.src.file, "subflows/reply.yaml");
}

#[test]
fn promoted_property_problems_are_reported_at_the_use() {
    let (set, _) = subflows(&[("subflows/reply.yaml", REPLY)]);
    let p = flow(
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [r, s, t] } }\n  r: { type: reply }\n  s: { type: reply, queue: Q, triez: 1 }\n  t: { type: reply, queue: Q, tries: many }\n",
        &set,
    )
    .err()
    .expect("invalid");
    assert_eq!(
        p,
        [
            "flows/f.yaml:3: node `r` (reply) needs property `queue` | The queue replies go to.",
            "flows/f.yaml:4: reply has no property `triez` | did you mean `tries`?",
            "flows/f.yaml:5: property `tries` of reply: expected integer, found a string | ",
        ]
    );
}

#[test]
fn promoted_property_declaration_problems_are_reported_in_the_subflow_file() {
    let bad = "properties:
  queue: { targets: [putt.queue] }
  count: { targets: [put.cuont] }
  mixed: { targets: [put.retries, put.queue] }
  none:  { default: 1 }
  late:  { default: x, targets: [other.retries] }
  again: { targets: [other.retries] }
nodes:
  in:    { type: Input, wires: { out: [put] } }
  put:   { type: Put }
  other: { type: Put }
";
    let (set, p) = subflows(&[("subflows/bad.yaml", bad)]);
    let expect = [
        "subflows/bad.yaml:5: property `none` has no `targets`",
        "subflows/bad.yaml:11: node `other` (Put) needs property `queue`",
        "subflows/bad.yaml:2: promoted property `queue` targets unknown node `putt` | did you mean `put`?",
        "subflows/bad.yaml:3: Put has no property `cuont` | its properties are queue, retries",
        "subflows/bad.yaml:4: `put.queue` is string, but `mixed` is integer (from `put.retries`)",
        "subflows/bad.yaml:6: default of property `late`: expected integer, found a string",
        "subflows/bad.yaml:7: `other.retries` is already promoted as `late`",
    ];
    assert_eq!(p.len(), expect.len(), "{p:#?}");
    for (got, want) in p.iter().zip(expect) {
        assert!(got.starts_with(want), "{got}\n  wanted {want}");
    }
    assert!(set.get("bad").is_none());
    let used = flow(
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [b] } }\n  b: { type: bad }\n",
        &set,
    )
    .err()
    .expect("invalid");
    assert_eq!(
        used,
        [
            "flows/f.yaml:3: subflow `bad` has errors | see the problems reported in subflows/bad.yaml"
        ]
    );
}

const INNER: &str = "properties:
  q: { targets: [c.queue] }
nodes:
  i: { type: Input, wires: { out: [c] } }
  c: { type: Put, wires: { out: [o] } }
  o: { type: Output }
";

const OUTER: &str = "properties:
  queue: { default: DEF, targets: [b.q] }
nodes:
  i: { type: Input, wires: { out: [b] } }
  b: { type: inner, wires: { o: [o] } }
  o: { type: Output }
";

#[test]
fn nested_subflows_expand_with_hierarchical_labels_and_promote_through() {
    let (set, problems) = subflows(&[
        ("subflows/outer.yaml", OUTER),
        ("subflows/inner.yaml", INNER),
    ]);
    assert!(problems.is_empty(), "{problems:?}");
    let def = valid(
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [a, x] } }\n  a: { type: outer, wires: { o: [z] } }\n  x: { type: outer, queue: XQ }\n  z: { type: Step }\n",
        &set,
    );
    assert_eq!(
        render(&def),
        [
            "src (Source) out -> a.b.c, x.b.c",
            "a.b.c (Put) out -> z",
            "x.b.c (Put)",
            "z (Step)",
        ]
    );
    assert_eq!(
        value(&def, "a.b.c", "queue"),
        Some(&PropValue::String("DEF".into()))
    );
    assert_eq!(
        value(&def, "x.b.c", "queue"),
        Some(&PropValue::String("XQ".into()))
    );
    assert_eq!(
        def.subflow_files,
        ["subflows/inner.yaml", "subflows/outer.yaml"]
    );
}

#[test]
fn nested_use_must_set_or_promote_a_required_property() {
    let outer = "nodes:\n  i: { type: Input, wires: { out: [b] } }\n  b: { type: inner }\n";
    let (set, p) = subflows(&[
        ("subflows/outer.yaml", outer),
        ("subflows/inner.yaml", INNER),
    ]);
    assert_eq!(
        p,
        ["subflows/outer.yaml:3: node `b` (inner) needs property `q` | The queue to put to."]
    );
    assert!(set.get("inner").is_some() && set.get("outer").is_none());
}

#[test]
fn subflows_using_each_other_are_reported_at_each_use_with_the_chain() {
    let a = "nodes:\n  i: { type: Input, wires: { out: [x] } }\n  x: { type: b }\n";
    let b = "subflow: b\nnodes:\n  y: { type: a }\n";
    let c = "nodes:\n  me: { type: c }\n";
    let (set, p) = subflows(&[
        ("subflows/a.yaml", a),
        ("subflows/b.yaml", b),
        ("subflows/c.yaml", c),
    ]);
    assert_eq!(p.len(), 3, "{p:#?}");
    assert!(p.contains(&"subflows/a.yaml:3: subflow `a` uses itself: a -> b -> a | a use is expanded inline, so subflows cannot use each other in a loop".to_string()), "{p:#?}");
    assert!(
        p.iter()
            .any(|x| x.starts_with("subflows/b.yaml:3: subflow `b` uses itself: b -> a -> b")),
        "{p:#?}"
    );
    assert!(
        p.iter()
            .any(|x| x.starts_with("subflows/c.yaml:2: subflow `c` uses itself: c -> c")),
        "{p:#?}"
    );
    let used = flow(
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [u] } }\n  u: { type: a }\n",
        &set,
    )
    .err()
    .expect("invalid");
    assert!(
        used[0].starts_with("flows/f.yaml:3: subflow `a` has errors"),
        "{used:?}"
    );
}

#[test]
fn problem_inside_a_subflow_is_reported_once_in_its_file() {
    let sub = "nodes:\n  i: { type: Input, wires: { out: [s] } }\n  s: { type: Stpe, count: 2 }\n";
    let (set, p) = subflows(&[("subflows/s.yaml", sub)]);
    assert_eq!(
        p,
        ["subflows/s.yaml:3: unknown node type `Stpe` | did you mean `Step`?"]
    );
    assert!(set.get("s").is_none());
}

#[test]
fn subflow_names_clash_with_node_types_and_unknown_types_suggest_subflows() {
    let sub = "subflow: Step\nnodes:\n  i: { type: Input }\n";
    let ok = "nodes:\n  i: { type: Input, wires: { out: [s] } }\n  s: { type: Step }\n";
    let (set, p) = subflows(&[("subflows/x.yaml", sub), ("subflows/audit.yaml", ok)]);
    assert_eq!(
        p,
        [
            "subflows/x.yaml:1: subflow `Step` has the name of a node type | rename the subflow (its `subflow:` or its file)"
        ]
    );
    let used = flow(
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [u] } }\n  u: { type: audti }\n",
        &set,
    )
    .err()
    .expect("invalid");
    assert_eq!(
        used,
        ["flows/f.yaml:3: unknown node type `audti` | did you mean `audit`?"]
    );
}

#[test]
fn input_and_output_nodes_belong_in_subflows_and_take_no_properties() {
    let p = load_flow(
        "flows/f.yaml",
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [o] } }\n  o: { type: Output }\n",
        &registry(),
    )
    .err()
    .expect("invalid");
    assert!(
        p[0].message
            .contains("`Output` nodes mark the terminals of a subflow"),
        "{p:?}"
    );
    let sub = "nodes:\n  i: { type: Input, count: 1, wires: { out: [o], failure: [o] } }\n  o: { type: Output, wires: { out: [i] } }\n";
    let (_, p) = subflows(&[("subflows/s.yaml", sub)]);
    assert_eq!(p.len(), 3, "{p:#?}");
    assert!(
        p[0].starts_with("subflows/s.yaml:2: an Input node has no `count`"),
        "{p:#?}"
    );
    assert!(
        p[1].starts_with("subflows/s.yaml:3: an Output node has no `wires`"),
        "{p:#?}"
    );
    assert!(
        p[2].starts_with("subflows/s.yaml:2: Input has no output terminal `failure`"),
        "{p:#?}"
    );
}

#[test]
fn loop_through_a_subflow_is_reported_in_the_using_file() {
    let one = "nodes:\n  i: { type: Input, wires: { out: [s] } }\n  s: { type: Step, wires: { out: [o] } }\n  o: { type: Output }\n";
    let (set, _) = subflows(&[("subflows/one.yaml", one)]);
    let p = flow(
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [a] } }\n  a: { type: Step, wires: { out: [u] } }\n  u: { type: one, wires: { o: [a] } }\n",
        &set,
    )
    .err()
    .expect("invalid");
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].starts_with("flows/f.yaml:3: the wires form a loop: a -> u.s -> a"),
        "{p:#?}"
    );
    let pass = "nodes:\n  i: { type: Input, wires: { out: [o] } }\n  o: { type: Output }\n";
    let (set, _) = subflows(&[("subflows/pass.yaml", pass)]);
    let p = flow(
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [u] } }\n  u: { type: pass, wires: { o: [u] } }\n",
        &set,
    )
    .err()
    .expect("invalid");
    assert!(
        p[0].contains("loop through subflow terminals: u.i -> u.o -> u.i"),
        "{p:#?}"
    );
}

#[test]
fn flattened_labels_must_stay_unique() {
    let one = "nodes:\n  i: { type: Input, wires: { out: [s] } }\n  s: { type: Step }\n";
    let (set, _) = subflows(&[("subflows/one.yaml", one)]);
    let p = flow(
        "nodes:\n  src: { type: Source, path: /x, wires: { out: [u] } }\n  u: { type: one }\n  u.s: { type: Step }\n",
        &set,
    )
    .err()
    .expect("invalid");
    assert!(
        p[0].starts_with("flows/f.yaml:4: two nodes are labelled `u.s` once subflows are expanded"),
        "{p:#?}"
    );
}

#[test]
fn subflows_docs_list_terminals_and_promoted_properties() {
    let (set, _) = subflows(&[("subflows/reply.yaml", REPLY), ("subflows/two.yaml", TWO)]);
    let md = set.docs_markdown();
    assert!(
        md.contains("## reply\n\nPuts the reply, then again."),
        "{md}"
    );
    assert!(md.contains("| `in` | in |"), "{md}");
    assert!(
        md.contains("| `queue` | string | required | The queue replies go to. (sets put.queue) |"),
        "{md}"
    );
    assert!(md.contains("| `tries` | integer | `2` |"), "{md}");
    assert!(
        md.contains("## two") && md.contains("| `bad` | out |"),
        "{md}"
    );
}

#[test]
fn subflow_set_can_be_shared_between_threads() {
    // The server loads the set once and loads flows with it from its watcher thread.
    fn shared<T: Send + Sync>(_: &T) {}
    let (set, _) = subflows(&[("subflows/two.yaml", TWO)]);
    shared(&set);
}
