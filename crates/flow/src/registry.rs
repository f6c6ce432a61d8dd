//! The node registry: every node type by name, and the docs generated from it.

use std::collections::BTreeMap;
use std::fmt::Write;

use sluice_node_api::NodeSpec;

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
            if !spec.inputs.is_empty() || !spec.outputs.is_empty() {
                let _ = writeln!(out, "| terminal | direction | meaning |\n|---|---|---|");
                for t in spec.inputs {
                    let _ = writeln!(out, "| `{}` | in | {} |", t.name, t.doc);
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
            if !spec.properties.is_empty() {
                let _ = writeln!(
                    out,
                    "| property | type | default | meaning |\n|---|---|---|---|"
                );
                for p in spec.properties {
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
                        p.doc
                    );
                }
                out.push('\n');
            }
        }
        out
    }
}
