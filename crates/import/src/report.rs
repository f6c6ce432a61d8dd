//! The import report, and the generated part of docs/migration.md.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use crate::table::{Conv, NO_EFFECT, NODE_TYPES};
use crate::{Outcome, Summary};

fn share(part: usize, whole: usize) -> String {
    if whole == 0 {
        "–".into()
    } else {
        format!("{:.0} %", part as f64 * 100.0 / whole as f64)
    }
}

/// Whether the flow mapped completely and validates: the project validated once the flows
/// with problems moved aside, and none was in this flow's file.
pub fn complete(
    s: &Summary,
    f: &crate::FlowResult,
    problems: &BTreeMap<String, Vec<String>>,
) -> bool {
    s.validated
        && f.complete()
        && f.written
            .as_ref()
            .is_some_and(|w| !problems.contains_key(w) && !w.contains("-incomplete/"))
}

pub fn render(from: &Path, s: &Summary, problems: &BTreeMap<String, Vec<String>>) -> String {
    let mut out = String::new();
    let nodes: usize = s.flows.iter().map(|f| f.nodes).sum();
    let mapped: usize = s.flows.iter().map(|f| f.nodes_mapped).sum();
    let done = s.flows.iter().filter(|f| complete(s, f, problems)).count();
    let _ = writeln!(out, "# Import report\n");
    let _ = writeln!(
        out,
        "Imported from `{}` by `sluice import`.\n",
        from.display()
    );
    let _ = writeln!(
        out,
        "- Flow files: {} ({} complete, {}), of which {} subflow files",
        s.flows.len(),
        done,
        share(done, s.flows.len()),
        s.flows.iter().filter(|f| f.subflow).count()
    );
    let _ = writeln!(
        out,
        "- Nodes: {nodes} ({mapped} mapped with every property, {})",
        share(mapped, nodes)
    );
    let _ = writeln!(out, "- ESQL files: {}", s.esql_files);
    let _ = writeln!(
        out,
        "- BAR override lines applied: {} of {}",
        s.overrides.saturating_sub(s.unapplied_overrides.len()),
        s.overrides
    );
    let _ = writeln!(
        out,
        "- sluice.yaml: queues {}, datasources {}, brokers {}",
        s.queues.len(),
        s.datasources.len(),
        s.brokers.len()
    );
    let _ = writeln!(
        out,
        "- Files carried across: {}; policies: {}\n",
        s.carried.values().map(Vec::len).sum::<usize>(),
        s.policies.len()
    );
    out.push_str(
        "A flow is complete when every node and property mapped and `sluice validate` finds \
         nothing in its file: it is in `flows/` (or `subflows/`), and `sluice run` deploys it. \
         The others wait in `flows-incomplete/` (or `subflows-incomplete/`), each with what \
         did not map and what the validator said; move one back once it is fixed. A node \
         Sluice does not have is written with the product's type name without `ComIbm` \
         (`JavaCompute`), a subflow not in the workspace with its path, so that validation \
         names them.\n",
    );
    if !s.validated {
        out.push_str(
            "\n**The project does not validate** because of problems outside the flow files \
             (ESQL, sluice.yaml: see below), so no flow is marked complete until they are \
             fixed.\n",
        );
    }
    let _ = writeln!(out, "\n## Flows\n");
    for f in &s.flows {
        let state = if complete(s, f, problems) {
            "complete"
        } else {
            "needs attention"
        };
        let _ = writeln!(
            out,
            "### {} → {} ({state})\n",
            f.source,
            f.written.as_deref().unwrap_or("not written")
        );
        if let Some(e) = &f.error {
            let _ = writeln!(out, "Could not be read: {e}\n");
            continue;
        }
        let _ = writeln!(out, "{} of {} nodes mapped.\n", f.nodes_mapped, f.nodes);
        if !f.unmapped.is_empty() {
            out.push_str("| line | node | what | why |\n|---|---|---|---|\n");
            for u in &f.unmapped {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    u.line,
                    u.node.replace('|', "\\|"),
                    u.what.replace('|', "\\|"),
                    u.reason.replace('|', "\\|")
                );
            }
            out.push('\n');
        }
        if let Some(ps) = f.written.as_ref().and_then(|w| problems.get(w)) {
            out.push_str("`sluice validate` says:\n\n```text\n");
            for p in ps {
                out.push_str(p.trim_end());
                out.push('\n');
            }
            out.push_str("```\n\n");
        }
    }
    let others: Vec<_> = problems
        .iter()
        .filter(|(file, _)| !s.flows.iter().any(|f| f.written.as_ref() == Some(*file)))
        .collect();
    if !others.is_empty() {
        out.push_str("## Other problems `sluice validate` found\n\n```text\n");
        for (_, ps) in others {
            for p in ps {
                out.push_str(p.trim_end());
                out.push('\n');
            }
        }
        out.push_str("```\n\n");
    }
    if !s.unapplied_overrides.is_empty() {
        out.push_str("## BAR overrides not applied\n\n");
        for (o, reason) in &s.unapplied_overrides {
            let _ = writeln!(
                out,
                "- {}:{}: `{}#{}{}` = `{}`: {reason}",
                o.file,
                o.line,
                o.flow,
                o.node
                    .as_deref()
                    .map(|n| format!("{n}."))
                    .unwrap_or_default(),
                o.property,
                o.value
            );
        }
        out.push('\n');
    }
    if !s.policies.is_empty() {
        out.push_str("## Policies\n\n| policy | file:line | became |\n|---|---|---|\n");
        for (p, o) in &s.policies {
            let became = match o {
                Outcome::Datasource { name, .. } => {
                    format!("datasource `{name}` in sluice.yaml (password from the environment)")
                }
                Outcome::NodeValues => "the settings of the nodes that name it".into(),
                Outcome::EmbeddedQueueManager => "the embedded queue manager".into(),
                Outcome::Unmapped(why) => format!("**not mapped**: {why}"),
            };
            let _ = writeln!(
                out,
                "| `{{{}}}:{}` ({}) | {}:{} | {} |",
                p.project,
                p.name,
                p.kind,
                p.source,
                p.line,
                became.replace('|', "\\|")
            );
        }
        out.push('\n');
    }
    if !s.carried.is_empty() {
        out.push_str("## Files carried across\n\n");
        for (dir, files) in &s.carried {
            let _ = writeln!(out, "- `{dir}/`: {}", files.join(", "));
        }
        out.push('\n');
    }
    if !s.unreadable.is_empty() {
        out.push_str("## Files that could not be read, placed or resolved\n\n");
        for u in &s.unreadable {
            let _ = writeln!(out, "- {u}");
        }
        out.push('\n');
    }
    if !s.not_imported.is_empty() {
        out.push_str("## Files not carried across\n\n");
        out.push_str(
            "Maps, MRM message sets, monitoring profiles, Java and `.properties` files without \
             BAR override lines are not imported yet; bring across what the flows need by \
             hand.\n\n",
        );
        for (kind, files) in &s.not_imported {
            let _ = writeln!(out, "- `.{kind}`: {}", files.join(", "));
        }
    }
    out
}

fn conv_text(c: Conv) -> String {
    match c {
        Conv::Text => "as it is".into(),
        Conv::Int => "the number".into(),
        Conv::Bool => "true / false".into(),
        Conv::EsqlModule => "`esql://routine/SCHEMA#Module.Main` → `SCHEMA.Module`".into(),
        Conv::Domain => {
            "XMLNSC, JSON, BLOB, MIME as they are; XMLNS and XML → XMLNSC; others not yet".into()
        }
        Conv::Expect(v) => format!("`{v}` (what Sluice's node does); other values are reported"),
        Conv::Under(dir) => format!("the file, carried into `{dir}`"),
        Conv::MessageType => {
            "`{namespace}:name` → `name`; `message_model` is the schema that defines it".into()
        }
        Conv::List => "a one-item list".into(),
        Conv::Broker => {
            "with the other connection settings: `broker`, an entry of sluice.yaml".into()
        }
        Conv::Elsewhere(why) => format!("reported: {why}"),
        Conv::Flag(word) => format!("`true` → `{word}`"),
        Conv::SecondsAsMillis => "seconds → milliseconds".into(),
        Conv::Implied(why) => format!("nothing to set: {why}"),
        Conv::Words(w) => w
            .iter()
            .map(|(p, s)| format!("`{p}` → `{s}`"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The node-by-node tables of docs/migration.md.
pub fn migration_doc() -> String {
    let mut out = String::new();
    out.push_str("## Node types\n\n| product type | toolkit name | Sluice type |\n|---|---|---|\n");
    for t in NODE_TYPES {
        let _ = writeln!(out, "| `{}` | {} | `{}` |", t.product, t.title, t.sluice);
    }
    out.push_str(
        "\nAny other node type is written with its product name (without `ComIbm`) and \
         reported; validation then names it. A subflow node (`*.subflow` or a `.msgflow` used \
         as one) becomes a use of the imported subflow, its Input and Output nodes (`FCMSource`, \
         `FCMSink`) Sluice's `Input` and `Output`.\n",
    );
    out.push_str("\n## Properties\n\n");
    for t in NODE_TYPES {
        let _ = writeln!(out, "### {}\n", t.sluice);
        if t.props.is_empty() {
            out.push_str("No properties.\n\n");
        } else {
            out.push_str("| product property | Sluice property | value |\n|---|---|---|\n");
            for p in t.props {
                let sluice = if p.sluice.is_empty() {
                    "—".to_string()
                } else {
                    format!("`{}`", p.sluice)
                };
                let _ = writeln!(
                    out,
                    "| `{}` | {sluice} | {} |",
                    p.product,
                    conv_text(p.conv)
                );
            }
            out.push('\n');
        }
        if !t.terminals.is_empty() {
            let list: Vec<String> = t
                .terminals
                .iter()
                .map(|(p, s)| format!("`{p}` → `{s}`"))
                .collect();
            let _ = writeln!(out, "Terminals: {}.\n", list.join(", "));
        }
    }
    let _ = writeln!(
        out,
        "On every node, `additionalInstances` sets the flow's `instances` (the largest plus one), \
         and these change nothing in Sluice and are not reported: {}.",
        NO_EFFECT
            .iter()
            .map(|a| format!("`{a}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    out
}
