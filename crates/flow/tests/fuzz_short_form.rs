//! Short form of the flow-loader fuzz target (`fuzz/fuzz_targets/flow_load.rs`): the same
//! body over the seed corpus in `fuzz/corpus/flow_load/`, over mutants of the seeds and over
//! generated text, on stable and without libFuzzer.
//!
//! The fuzz target registers every node type of the product; this crate cannot see them, so
//! here the loader resolves test node types with the same property kinds and terminal shapes
//! (the product's type names then exercise the unknown-type path).

#[path = "../../../fuzz/bodies/flow_load.rs"]
mod flow_load;
#[allow(dead_code)]
#[path = "../../../fuzz/bodies/short_form.rs"]
mod short_form;

mod test_nodes;

use test_nodes::registry;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/flow_load");

#[test]
fn flow_load_never_panics_on_seeds_and_mutants() {
    let registry = registry();
    let body = |data: &[u8]| flow_load::run(data, &registry);
    let seeds = short_form::run_seeds(CORPUS, body);
    short_form::run_mutants(&seeds, 3000, body);
}

#[test]
fn flow_load_never_panics_on_generated_text() {
    // Random sequences of YAML's structural pieces reach deeper than random bytes.
    const PIECES: &[&str] = &[
        "flow: f\n",
        "nodes:\n",
        "  a: ",
        "  b: ",
        "{ type: Step",
        "{ type: Source, path: /x",
        ", wires: { out: [b] } }",
        ", count: 1",
        ", mode: slow",
        " }",
        "\n",
        "- ",
        "[",
        "]",
        "{",
        "}",
        ": ",
        ", ",
        "&x ",
        "*x",
        "'q'",
        "\"d\\u0041\"",
        "|\n  text\n",
        "#c\n",
        "\t",
        "~",
        "instances: 2\n",
        "Switch",
        "\r\n",
        "---\n",
        "? k\n",
        "!!str ",
    ];
    let registry = registry();
    for i in 0..3000u64 {
        let mut rng = short_form::Rng::new(i);
        let mut text = String::new();
        for _ in 0..rng.below(40) {
            text.push_str(PIECES[rng.below(PIECES.len())]);
        }
        short_form::run_named(&format!("text {i}"), text.as_bytes(), &|d: &[u8]| {
            flow_load::run(d, &registry)
        });
    }
}
