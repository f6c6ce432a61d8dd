//! The node registry: every node type by name, and the docs generated from it.

use std::collections::BTreeMap;
use std::fmt::Write;

use sluice_node_api::{ExampleOutcome, NodeExample, NodeSpec, Runs};

/// Node types by their type name.
#[derive(Default)]
pub struct Registry {
    specs: BTreeMap<&'static str, &'static NodeSpec>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    pub fn register(&mut self, spec: &'static NodeSpec) {
        self.specs.insert(spec.type_name, spec);
    }

    pub fn get(&self, type_name: &str) -> Option<&'static NodeSpec> {
        self.specs.get(type_name).copied()
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.specs.keys().copied()
    }

    pub fn specs(&self) -> impl Iterator<Item = &'static NodeSpec> + '_ {
        self.specs.values().copied()
    }

    /// The node reference in Markdown: one section per node type.
    pub fn docs_markdown(&self) -> String {
        let mut out = String::new();
        for spec in self.specs.values() {
            let _ = writeln!(out, "## {}\n\n{}\n", spec.type_name, spec.summary);
            if !spec.inputs.is_empty() || spec.dynamic_inputs || !spec.outputs.is_empty() {
                let _ = writeln!(out, "| terminal | direction | meaning |\n|---|---|---|");
                for t in spec.inputs {
                    let _ = writeln!(out, "| `{}` | in | {} |", t.name, t.doc);
                }
                if spec.dynamic_inputs {
                    let _ = writeln!(
                        out,
                        "| *(named)* | in | further terminals named in wires (`node.NAME`) |"
                    );
                }
                for t in spec.outputs {
                    let _ = writeln!(out, "| `{}` | out | {} |", t.name, t.doc);
                }
                if spec.dynamic_outputs {
                    let _ = writeln!(
                        out,
                        "| *(named)* | out | further terminals named in the properties |"
                    );
                }
                out.push('\n');
            }
            let properties = spec.properties();
            if !properties.is_empty() {
                let _ = writeln!(
                    out,
                    "| property | type | default | meaning |\n|---|---|---|---|"
                );
                for p in &properties {
                    let default = match (p.default, p.required) {
                        (Some(d), _) => format!("`{d}`"),
                        (None, true) => "required".into(),
                        (None, false) => "—".into(),
                    };
                    let _ = writeln!(
                        out,
                        "| `{}` | {} | {} | {} |",
                        p.name,
                        p.kind.describe(),
                        default,
                        p.doc_text()
                    );
                }
                out.push('\n');
            }
            for ex in spec.examples {
                example_markdown(spec, ex, &mut out);
            }
        }
        out
    }
}

/// One example: the node as a flow file holds it, its input, and what comes out.
fn example_markdown(spec: &NodeSpec, ex: &NodeExample, out: &mut String) {
    let _ = writeln!(
        out,
        "### Example: {}
",
        ex.title
    );
    let label = node_label(spec.type_name);
    let props = ex.properties.trim();
    let props = if props.is_empty() {
        String::new()
    } else {
        format!(", {props}")
    };
    let _ = writeln!(
        out,
        "```yaml\nnodes:\n  {label}: {{ type: {}{props} }}",
        spec.type_name
    );
    if let ExampleOutcome::ReachesLabel { label, .. } = ex.outcome {
        let _ = writeln!(out, "  {label}: {{ type: Label, label_name: {label} }}");
    }
    out.push_str("```\n\n");
    if !ex.esql.trim().is_empty() {
        let _ = writeln!(
            out,
            "With `esql/example.esql` in the project:\n\n```sql\n{}\n```\n",
            ex.esql.trim()
        );
    }
    let _ = writeln!(out, "Input, in the {} domain:\n", ex.input.domain);
    fenced(ex.input.body, out);
    if !ex.input.local_environment.is_empty() {
        out.push_str("with these LocalEnvironment fields:\n\n```text\n");
        for (path, value) in ex.input.local_environment {
            let _ = writeln!(out, "{path} = '{value}'");
        }
        out.push_str("```\n\n");
    }
    for t in ex.raising_downstream {
        let _ = writeln!(out, "A node wired to `{t}` raises an exception.\n");
    }
    match ex.outcome {
        ExampleOutcome::Propagates(list) => {
            for (i, (terminal, body)) in list.iter().enumerate() {
                let then = if i == 0 { "Output" } else { "Then" };
                let _ = writeln!(out, "{then} on `{terminal}`:\n");
                fenced(body, out);
            }
            if list.is_empty() {
                out.push_str("Nothing is propagated.\n\n");
            }
        }
        ExampleOutcome::ReachesLabel { label, body } => {
            let _ = writeln!(out, "Output at the Label node `{label}`:\n");
            fenced(body, out);
        }
        ExampleOutcome::Raises(fragment) => {
            let _ = writeln!(
                out,
                "Raises an exception whose text contains `{fragment}`.\n"
            );
        }
    }
    if let Runs::No(reason) = ex.runs {
        let _ = writeln!(out, "*Not run by the compliance test: {reason}*\n");
    }
}

/// A message body in a code block, marked with its syntax.
fn fenced(body: &str, out: &mut String) {
    let body = body.trim();
    let syntax = match body.chars().next() {
        Some('<') => "xml",
        Some('{' | '[') => "json",
        _ => "text",
    };
    let _ = writeln!(out, "```{syntax}\n{body}\n```\n");
}

/// The label the docs give a node of this type: its name in snake case (`HTTPReply` →
/// `http_reply`).
fn node_label(type_name: &str) -> String {
    let chars: Vec<char> = type_name.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
        let prev_lower = i > 0 && chars[i - 1].is_lowercase();
        if c.is_uppercase() && i > 0 && (prev_lower || next_lower) {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::node_label;

    #[test]
    fn node_label_splits_words_when_the_type_name_has_acronyms() {
        assert_eq!(node_label("HTTPReply"), "http_reply");
        assert_eq!(node_label("MQOutput"), "mq_output");
        assert_eq!(node_label("RouteToLabel"), "route_to_label");
        assert_eq!(node_label("Filter"), "filter");
    }
}
