//! Running a node type's examples: each runnable example is built into a flow — the node under
//! test fed by an `Inject` node, every output terminal wired to a `Capture` — its message is
//! injected, and what left the node (terminal and serialised body, in order) or the exception it
//! raised is compared with what the example promises.
//!
//! Examples that only the node's transport can drive are not run, but their flow must still load,
//! so that the docs never show properties or terminals the node does not accept.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use sluice_node_api::{
    ExampleOutcome, Invocation, Message, NodeError, NodeExample, NodeSpec, PropKind, PropValue,
    Runs,
};
use sluice_tree::{Tree, TreeError, Value, field_type};

use crate::compliance::{ComplianceEnv, NODE, build_flow_in, target};
use sluice_flow::load_flow;
use sluice_flow::{Diagnostic, EnterError};

/// The text the `Capture` nodes behind `raising_downstream` terminals raise.
const RAISED: &str = "raised downstream of the example";
/// The Capture behind the Label node an example reaches.
const AT_LABEL: &str = "at_label";

/// Run or load every example of `spec`; the problems found, each naming the example.
pub fn check_examples(spec: &'static NodeSpec, env: &ComplianceEnv) -> Vec<String> {
    let mut problems = Vec::new();
    for ex in spec.examples {
        let mut problem = |what: String| problems.push(format!("example `{}`: {what}", ex.title));
        if ex.title.trim().is_empty() || ex.title.contains('\n') {
            problem("its title must be one non-empty line".into());
        }
        match check_example(spec, ex, env) {
            Ok(()) => {}
            Err(e) => problem(e),
        }
    }
    problems
}

fn check_example(
    spec: &'static NodeSpec,
    ex: &NodeExample,
    env: &ComplianceEnv,
) -> Result<(), String> {
    let src = example_source(spec, ex, env)?;
    if let Runs::No(reason) = ex.runs {
        if reason.trim().is_empty() {
            return Err("it is marked as not runnable without saying why".into());
        }
        return load_flow("example.yaml", &src, env.registry)
            .map(|_| ())
            .map_err(render);
    }
    let project = ProjectDir::for_example(ex, env.project_dir)?;
    let (harness, flow) =
        build_flow_in("example.yaml", &src, env, project.path()).map_err(render)?;
    let mut msg = input_message(ex, env)?;
    let outcome = if spec.inputs.is_empty() {
        // Nothing can be wired to it: enter it as a jump to a Label does.
        let mut inv = Invocation::new();
        match flow.enter(&mut inv, NODE, &mut msg) {
            Ok(()) => inv
                .unit_of_work
                .commit()
                .map_err(|e| NodeError::recoverable(e.to_string())),
            Err(EnterError::Raised(e)) => {
                inv.unit_of_work.rollback();
                Err(e)
            }
            Err(e) => {
                return Err(format!(
                    "it cannot run ({e}): mark it `Runs::No` and say what drives the node"
                ));
            }
        }
    } else {
        harness.inject(msg);
        harness.run(&flow);
        harness.take_outcomes().pop().unwrap_or(Ok(()))
    };
    let mut arrived = Vec::new();
    for mut c in harness.take_captured() {
        let place = match c.label.strip_prefix("to_") {
            Some(t) => format!("on `{t}`"),
            None => match ex.outcome {
                ExampleOutcome::ReachesLabel { label, .. } => format!("at Label `{label}`"),
                _ => format!("at `{}`", c.label),
            },
        };
        let body = (env.serialize_body)(&mut c.message)
            .map_err(|e| format!("the body {place} does not serialise: {e}"))?;
        arrived.push((place, body));
    }
    compare(ex, outcome, &arrived)
}

/// Whether what happened is what the example promises; if not, both in words.
fn compare(
    ex: &NodeExample,
    outcome: Result<(), NodeError>,
    arrived: &[(String, String)],
) -> Result<(), String> {
    let got = match &outcome {
        Ok(()) => describe(arrived),
        Err(e) if arrived.is_empty() => format!("the exception `{}`", e.exception.describe()),
        Err(e) => format!(
            "{} and then the exception `{}`",
            describe(arrived),
            e.exception.describe()
        ),
    };
    let expected: Vec<(String, String)> = match ex.outcome {
        ExampleOutcome::Propagates(list) => list
            .iter()
            .map(|(t, b)| (format!("on `{t}`"), b.to_string()))
            .collect(),
        ExampleOutcome::ReachesLabel { label, body } => {
            vec![(format!("at Label `{label}`"), body.to_string())]
        }
        ExampleOutcome::Raises(fragment) => {
            return match &outcome {
                Err(e) if e.exception.describe().contains(fragment) => Ok(()),
                _ => Err(format!(
                    "expected an exception containing `{fragment}`; got {got}"
                )),
            };
        }
    };
    if outcome.is_ok() && expected == arrived {
        Ok(())
    } else {
        Err(format!("expected {}; got {got}", describe(&expected)))
    }
}

fn describe(arrived: &[(String, String)]) -> String {
    if arrived.is_empty() {
        return "nothing propagated".into();
    }
    let each: Vec<String> = arrived
        .iter()
        .map(|(place, body)| format!("{place}: {body}"))
        .collect();
    each.join(", then ")
}

/// The YAML of the example's flow: the node under test with the example's properties, fed by an
/// `Inject` node when it has an input terminal, every output terminal but `failure` wired to a
/// Capture named `to_<terminal>` (so that its own exceptions reach the caller), and the Label node
/// the example reaches, if any.
fn example_source(
    spec: &'static NodeSpec,
    ex: &NodeExample,
    env: &ComplianceEnv,
) -> Result<String, String> {
    let mut terminals: Vec<String> = spec
        .outputs
        .iter()
        .map(|t| t.name.to_string())
        .filter(|t| t != "failure")
        .collect();
    if spec.dynamic_outputs {
        for t in dynamic_terminals(spec, ex, env)? {
            if !terminals.contains(&t) {
                terminals.push(t);
            }
        }
    }
    for t in ex.raising_downstream {
        if !terminals.iter().any(|w| w == t) {
            return Err(format!(
                "`raising_downstream` names `{t}`, which is not one of its wired terminals ({})",
                terminals.join(", ")
            ));
        }
    }
    let mut src = flow_source(spec, ex, &terminals);
    for t in &terminals {
        let raise = if ex.raising_downstream.contains(&t.as_str()) {
            format!(", raise: {}", quote(RAISED))
        } else {
            String::new()
        };
        src.push_str(&format!(
            "  {}: {{ type: Capture{raise} }}\n",
            quote(&format!("to_{t}"))
        ));
    }
    if let ExampleOutcome::ReachesLabel { label, .. } = ex.outcome {
        src.push_str(&format!(
            "  jump: {{ type: Label, label_name: {}, wires: {{ out: [{AT_LABEL}] }} }}\n  {AT_LABEL}: {{ type: Capture }}\n",
            quote(label)
        ));
    }
    Ok(src)
}

/// The flow's input and the node under test, its `terminals` wired to their Captures.
fn flow_source(spec: &NodeSpec, ex: &NodeExample, terminals: &[String]) -> String {
    let wires: Vec<String> = terminals
        .iter()
        .map(|t| format!("{}: [{}]", quote(t), quote(&format!("to_{t}"))))
        .collect();
    let mut src = String::from("flow: example\nnodes:\n");
    if !spec.inputs.is_empty() {
        src.push_str(&format!(
            "  src: {{ type: Inject, wires: {{ out: [{}] }} }}\n",
            target(spec)
        ));
    }
    src.push_str(&format!(
        "  {NODE}: {{ type: {}, {}wires: {{ {} }} }}\n",
        spec.type_name,
        entries(ex.properties),
        wires.join(", ")
    ));
    src
}

/// The terminals a node type with dynamic outputs may name: the keys of its map properties (Route's
/// rule names), read from the example's properties as the loader parses them.
fn dynamic_terminals(
    spec: &'static NodeSpec,
    ex: &NodeExample,
    env: &ComplianceEnv,
) -> Result<Vec<String>, String> {
    let src = flow_source(spec, ex, &[]);
    let def = load_flow("example.yaml", &src, env.registry).map_err(render)?;
    let node = def
        .nodes
        .iter()
        .find(|n| n.label == NODE)
        .ok_or("the node under test is missing from its flow")?;
    Ok(spec
        .properties()
        .iter()
        .filter(|p| p.kind == PropKind::StringMap)
        .filter_map(|p| match node.config.value(p.name) {
            Some(PropValue::Map(m)) => Some(m.iter().map(|(k, _)| k.clone())),
            _ => None,
        })
        .flatten()
        .collect())
}

fn render(d: Vec<Diagnostic>) -> String {
    let text: Vec<String> = d.iter().map(|d| d.to_string()).collect();
    format!("its flow does not build:\n{}", text.join("\n"))
}

/// Properties as the leading entries of a flow mapping.
fn entries(properties: &str) -> String {
    if properties.trim().is_empty() {
        String::new()
    } else {
        format!("{}, ", properties.trim())
    }
}

/// A YAML single-quoted scalar.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The example's message: its body in its domain, and its LocalEnvironment fields.
fn input_message(ex: &NodeExample, env: &ComplianceEnv) -> Result<Message, String> {
    let input = &ex.input;
    let mut msg = (env.make_message)(input.domain, input.body.as_bytes())
        .map_err(|e| format!("its input message does not build: {e}"))?;
    for (path, value) in input.local_environment {
        set_field(&mut msg.local_environment, path, value)
            .map_err(|e| format!("cannot set LocalEnvironment.{path}: {e}"))?;
    }
    Ok(msg)
}

/// Set the character field at a dotted path, reusing the folders on it that exist.
fn set_field(tree: &mut Tree, path: &str, value: &str) -> Result<(), TreeError> {
    let names: Vec<&str> = path.split('.').collect();
    let Some((field, folders)) = names.split_last() else {
        return Ok(());
    };
    let mut at = tree.root();
    for name in folders {
        at = match tree.child_named(at, None, name.as_bytes(), 0)? {
            Some(c) => c,
            None => {
                let n = tree.alloc_text(name.as_bytes());
                tree.create_last_child(at, field_type::NAME, n, Value::Null)?
            }
        };
    }
    let n = tree.alloc_text(field.as_bytes());
    let v = tree.alloc_text(value.as_bytes());
    tree.create_last_child(at, field_type::NAME_VALUE, n, Value::Character(v))?;
    Ok(())
}

/// The project folder an example runs in: a fresh one holding the example's ESQL, removed
/// afterwards, or the environment's when the example has none.
enum ProjectDir<'a> {
    Shared(&'a Path),
    Own(PathBuf),
}

impl<'a> ProjectDir<'a> {
    fn for_example(ex: &NodeExample, shared: &'a Path) -> Result<ProjectDir<'a>, String> {
        if ex.esql.trim().is_empty() {
            return Ok(ProjectDir::Shared(shared));
        }
        // Fresh per example, so that module names of different examples never clash.
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "sluice-example-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let esql = dir.join("esql");
        std::fs::create_dir_all(&esql)
            .and_then(|()| std::fs::write(esql.join("example.esql"), ex.esql))
            .map_err(|e| format!("cannot write its ESQL to {}: {e}", esql.display()))?;
        Ok(ProjectDir::Own(dir))
    }

    fn path(&self) -> &Path {
        match self {
            ProjectDir::Shared(p) => p,
            ProjectDir::Own(p) => p,
        }
    }
}

impl Drop for ProjectDir<'_> {
    fn drop(&mut self) {
        if let ProjectDir::Own(p) = self {
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

#[cfg(test)]
mod tests;
