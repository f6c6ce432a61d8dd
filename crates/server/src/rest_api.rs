//! REST API projects: each OpenAPI document in the project's `apis/` folder deploys as a flow of
//! its own, named after the file, in which a RESTInput node serves the document's operations and
//! each operation is the subflow named after its operationId, whose Output nodes lead to an
//! HTTPReply. An operation without an operationId, or without its subflow, fails deployment
//! with the operation's `file:line`.

use std::fmt::Write;
use std::path::Path;

use sluice_flow::{Diagnostic, FlowDef, Registry, Subflows, load_flow_with};

use crate::project::display_path;

/// A YAML double-quoted scalar.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// The REST API document at `path` as the flow that serves it.
pub fn load(
    path: &Path,
    registry: &Registry,
    subflows: &Subflows,
) -> Result<FlowDef, Vec<Diagnostic>> {
    let file = display_path(path);
    let src = std::fs::read_to_string(path).map_err(|e| {
        vec![Diagnostic::whole(
            &file,
            format!("cannot read the REST API document: {e}"),
        )]
    })?;
    let (api, mut problems) = sluice_openapi::load_partly(&file, &src);
    let Some(api) = api else {
        return Err(problems);
    };
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut text = String::new();
    let _ = writeln!(text, "flow: {}", quoted(&name));
    let _ = writeln!(
        text,
        "description: {}",
        quoted(&format!("The REST API of {file}."))
    );
    let _ = writeln!(text, "instances: {}", api.options.instances);
    let _ = writeln!(text, "nodes:");
    let mut wires = Vec::new();
    let mut uses = String::new();
    for op in &api.operations {
        let Some(sub) = subflows.get(&op.id) else {
            problems.push(
                Diagnostic::at(
                    &file,
                    &src,
                    op.line,
                    op.col,
                    format!(
                        "operation `{}` ({} {}) has no subflow `{}` to implement it",
                        op.id, op.method, op.template.text, op.id
                    ),
                )
                .with_hint(format!(
                    "add subflows/{}.yaml: an Input node, the operation's nodes, and an Output node whose message is the reply",
                    op.id
                )),
            );
            continue;
        };
        let label = format!("op_{}", op.id);
        let target = match sub.inputs.first() {
            Some(i) => format!("{label}.{i}"),
            None => {
                problems.push(Diagnostic::at(
                    &file,
                    &src,
                    op.line,
                    op.col,
                    format!(
                        "subflow `{}` ({}) has no Input node, so operation `{}` cannot reach it",
                        sub.name, sub.file, op.id
                    ),
                ));
                continue;
            }
        };
        wires.push(format!("{}: [{}]", quoted(&op.id), quoted(&target)));
        let outs: Vec<String> = sub
            .outputs
            .iter()
            .map(|o| format!("{}: [reply]", quoted(o)))
            .collect();
        let _ = writeln!(
            uses,
            "  {}: {{ type: {}, wires: {{ {} }} }}",
            quoted(&label),
            quoted(&op.id),
            outs.join(", ")
        );
    }
    if !problems.is_empty() {
        problems.sort_by_key(|d| (d.line, d.col));
        return Err(problems);
    }
    let api_prop = format!(
        "apis/{}",
        path.file_name()
            .map(|f| f.to_string_lossy())
            .unwrap_or_default()
    );
    let _ = writeln!(
        text,
        "  api: {{ type: RESTInput, api: {}, base_path: {}, domain: JSON, wires: {{ {} }} }}",
        quoted(&api_prop),
        quoted(&api.base_path),
        wires.join(", ")
    );
    text.push_str(&uses);
    text.push_str("  reply: { type: HTTPReply }\n");
    load_flow_with(&file, &text, registry, subflows)
}
