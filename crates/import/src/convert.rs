//! One flow file of the product as a Sluice flow file, and what did not map.

use std::collections::HashMap;
use std::fmt::Write;

use crate::table::{self, NO_EFFECT, Value};
use crate::xmi::{NodeKind, XmiFlow, XmiNode};

/// Something of a flow that did not map, where it is and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmapped {
    pub line: usize,
    pub node: String,
    pub what: String,
    pub reason: String,
}

/// A flow file written for Sluice.
#[derive(Debug, Clone)]
pub struct Converted {
    pub yaml: String,
    pub nodes: usize,
    /// Nodes that mapped with every property.
    pub nodes_mapped: usize,
    pub unmapped: Vec<Unmapped>,
}

/// What a flow's conversion looks up in the rest of the workspace: subflows by their path,
/// message models by the message types they define.
pub trait Workspace {
    /// The Sluice subflow name of the file at `path` (`audit/Audit.subflow`), if there is one.
    fn subflow(&self, path: &str) -> Option<String>;

    /// How a value of the subflow's promoted property `prop` is carried across: as the first
    /// node property it targets is.
    fn promoted(&self, path: &str, prop: &str) -> Option<table::Conv>;

    /// The model file (`models/order.xsd`, relative to the project) whose global element
    /// `element` is, if one is.
    fn model(&self, element: &str) -> Option<String>;

    /// The EXTERNAL variables the ESQL module `module` (`SCHEMA.Module` or `Module`) declares,
    /// when the workspace holds it.
    fn externals(&self, module: &str) -> Option<Vec<String>>;
}

/// How a value of promoted property `p` is carried across: as the first node property it
/// targets is (a subflow node's own promoted property, when `names` knows it already).
pub fn promoted_conv(
    flow: &XmiFlow,
    p: &crate::xmi::XmiProperty,
    names: &dyn Workspace,
) -> Option<table::Conv> {
    let (node, attr) = p.targets.first()?;
    let n = flow.nodes.iter().find(|n| &n.id == node)?;
    match &n.kind {
        NodeKind::Builtin(product) => table::node_type(product)?
            .props
            .iter()
            .find(|q| q.product == attr)
            .map(|q| q.conv),
        NodeKind::Subflow(path) => names.promoted(path, attr),
        _ => None,
    }
}

/// `name` as a YAML scalar: single-quoted unless it is plainly safe; double-quoted with escapes
/// when it holds line breaks or other control characters.
pub fn scalar(s: &str) -> String {
    if s.chars().any(char::is_control) {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
                c => out.push(c),
            }
        }
        out.push('"');
        return out;
    }
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/' | '.'))
        && !s.starts_with(['-', '.', '/'])
        && s.parse::<f64>().is_err()
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "null" | "on" | "off" | "y" | "n" | "~"
        );
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Text(t) => scalar(t),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::List(items) => {
            let items: Vec<String> = items.iter().map(|i| scalar(i)).collect();
            format!("[{}]", items.join(", "))
        }
        Value::None => String::new(),
    }
}

/// The labels Sluice gives the nodes: the product's names, made unique; a subflow's input and
/// output nodes are named by the terminal their id gives (`InTerminal.Input1` → `Input1`),
/// which is how uses of the subflow wire to them.
fn labels(flow: &XmiFlow) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut taken: Vec<String> = Vec::new();
    for n in &flow.nodes {
        let base = match n.kind {
            NodeKind::Source | NodeKind::Sink => {
                n.id.rsplit_once('.')
                    .map_or(n.id.as_str(), |(_, t)| t)
                    .to_string()
            }
            _ if n.label.trim().is_empty() => n.id.clone(),
            _ => n.label.trim().to_string(),
        };
        let mut label = base.clone();
        let mut k = 2;
        while taken.contains(&label) {
            label = format!("{base}_{k}");
            k += 1;
        }
        taken.push(label.clone());
        out.insert(n.id.clone(), label);
    }
    out
}

fn strip_terminal(t: &str) -> &str {
    t.strip_prefix("OutTerminal.")
        .or_else(|| t.strip_prefix("InTerminal."))
        .unwrap_or(t)
}

/// Convert one flow. `subflow` is true for a subflow file (`subflow:` instead of `flow:`).
pub fn convert(name: &str, flow: &XmiFlow, subflow: bool, names: &dyn Workspace) -> Converted {
    let labels = labels(flow);
    let mut unmapped = Vec::new();
    let mut yaml = String::new();
    let _ = writeln!(
        yaml,
        "{}: {}",
        if subflow { "subflow" } else { "flow" },
        scalar(name)
    );
    let mut instances = 1;
    let udps: Vec<(String, String)> = flow
        .properties
        .iter()
        .filter(|p| p.user_defined || p.targets.is_empty())
        .map(|p| (p.name.clone(), p.default.clone().unwrap_or_default()))
        .collect();
    // Promoted properties of a subflow, with their Sluice targets.
    let promoted: Vec<_> = flow
        .properties
        .iter()
        .filter(|p| !p.targets.is_empty())
        .collect();
    let mut body = String::new();
    let mut mapped = 0;
    for n in &flow.nodes {
        let label = &labels[&n.id];
        let mut lines = Vec::new();
        let before = unmapped.len();
        let ty = node_lines(
            n,
            label,
            &udps,
            names,
            &mut lines,
            &mut unmapped,
            &mut instances,
        );
        if unmapped.len() == before {
            mapped += 1;
        }
        let _ = writeln!(body, "  {}:", scalar(label));
        let _ = writeln!(body, "    type: {}", scalar(&ty));
        for l in lines {
            let _ = writeln!(body, "    {l}");
        }
        let wires = wires_of(flow, n, &labels);
        if !wires.is_empty() {
            let _ = writeln!(body, "    wires:");
            for (t, targets) in wires {
                let list: Vec<String> = targets.iter().map(|t| scalar(t)).collect();
                let _ = writeln!(body, "      {}: [{}]", scalar(&t), list.join(", "));
            }
        }
    }
    for c in &flow.connections {
        let known = |id: &str| flow.nodes.iter().any(|n| n.id == id);
        if !known(&c.source) || !known(&c.target) {
            unmapped.push(Unmapped {
                line: c.line,
                node: String::new(),
                what: format!("connection {} → {}", c.source, c.target),
                reason: "it names a node that is not in the flow".into(),
            });
        }
    }
    if instances > 1 && !subflow {
        let _ = writeln!(yaml, "instances: {instances}");
    }
    if subflow && !promoted.is_empty() {
        let mut props = String::new();
        for p in &promoted {
            let mut targets = Vec::new();
            for (node, attr) in &p.targets {
                let Some(n) = flow.nodes.iter().find(|n| &n.id == node) else {
                    continue;
                };
                match sluice_property(n, attr, names) {
                    Some(prop) => targets.push(format!("{}.{prop}", labels[&n.id])),
                    None => unmapped.push(Unmapped {
                        line: p.line,
                        node: labels[&n.id].clone(),
                        what: format!("promoted property `{}` → `{attr}`", p.name),
                        reason: "the node's property has no counterpart".into(),
                    }),
                }
            }
            // A property nothing of which maps (reported above) is left out.
            if targets.is_empty() {
                continue;
            }
            let _ = writeln!(props, "  {}:", scalar(&p.name));
            if let Some(d) = &p.default {
                let value = match promoted_conv(flow, p, names).map(|c| table::convert(c, d)) {
                    Some(Ok(v)) => value_text(&v),
                    Some(Err(reason)) => {
                        unmapped.push(Unmapped {
                            line: p.line,
                            node: String::new(),
                            what: format!("default of promoted property `{}` = `{d}`", p.name),
                            reason,
                        });
                        scalar(d)
                    }
                    None => scalar(d),
                };
                let _ = writeln!(props, "    default: {value}");
            }
            let list: Vec<String> = targets.iter().map(|t| scalar(t)).collect();
            let _ = writeln!(props, "    targets: [{}]", list.join(", "));
        }
        if !props.is_empty() {
            let _ = writeln!(yaml, "properties:");
            yaml.push_str(&props);
        }
    } else if !promoted.is_empty() {
        // In a flow, a promoted property only gathers nodes' settings in one place: each
        // node keeps the value (set on the node by the conversion already).
        for p in &promoted {
            for (node, attr) in &p.targets {
                if let (Some(d), Some(n)) = (&p.default, flow.nodes.iter().find(|n| &n.id == node))
                    && n.attrs.iter().all(|(k, _)| k != attr)
                    && sluice_property(n, attr, names).is_none()
                {
                    unmapped.push(Unmapped {
                        line: p.line,
                        node: labels[&n.id].clone(),
                        what: format!("promoted property `{}` = `{d}`", p.name),
                        reason: "the node's property has no counterpart".into(),
                    });
                }
            }
        }
    }
    let _ = writeln!(yaml, "nodes:");
    yaml.push_str(&body);
    Converted {
        yaml,
        nodes: flow.nodes.len(),
        nodes_mapped: mapped,
        unmapped,
    }
}

/// The Sluice property a node's product property `attr` becomes: a built-in node's by the
/// table, a subflow node's promoted property by its own name.
fn sluice_property(n: &XmiNode, attr: &str, names: &dyn Workspace) -> Option<String> {
    match &n.kind {
        NodeKind::Builtin(product) => table::node_type(product)?
            .props
            .iter()
            .find(|p| p.product == attr)
            .map(|p| p.sluice.to_string()),
        NodeKind::Subflow(path) => names.promoted(path, attr).map(|_| attr.to_string()),
        _ => None,
    }
}

/// The node's type and property lines; records what did not map.
fn node_lines(
    n: &XmiNode,
    label: &str,
    udps: &[(String, String)],
    names: &dyn Workspace,
    lines: &mut Vec<String>,
    unmapped: &mut Vec<Unmapped>,
    instances: &mut usize,
) -> String {
    let mut miss = |what: String, reason: String| {
        unmapped.push(Unmapped {
            line: n.line,
            node: label.to_string(),
            what,
            reason,
        })
    };
    let product = match &n.kind {
        NodeKind::Source => return "Input".into(),
        NodeKind::Sink => return "Output".into(),
        NodeKind::Subflow(path) => {
            let Some(name) = names.subflow(path) else {
                miss(
                    format!("subflow `{path}`"),
                    "the subflow's file is not in the workspace".into(),
                );
                return path.clone();
            };
            // A use sets the subflow's promoted properties by their names.
            for (k, v) in &n.attrs {
                if NO_EFFECT.contains(&k.as_str()) {
                    continue;
                }
                let value = match names.promoted(path, k) {
                    Some(conv) => match table::convert(conv, v) {
                        Ok(value) => value_text(&value),
                        Err(reason) => {
                            miss(format!("property `{k}` = `{v}`"), reason);
                            continue;
                        }
                    },
                    None => {
                        miss(
                            format!("property `{k}` = `{v}`"),
                            "the subflow has no promoted property of that name that maps".into(),
                        );
                        continue;
                    }
                };
                lines.push(format!("{}: {value}", scalar(k)));
            }
            return name;
        }
        NodeKind::Other(ty) => {
            miss(
                format!("node type `{ty}`"),
                "not a node type the importer knows".into(),
            );
            return ty.clone();
        }
        NodeKind::Builtin(product) => product,
    };
    for (what, why) in &n.problems {
        miss(what.clone(), why.clone());
    }
    let Some(t) = table::node_type(product) else {
        miss(format!("node type `{product}`"), "not in Sluice yet".into());
        // `ComIbmJavaCompute` → `JavaCompute`; `com_ibm_connector_kafka_ComIbmOutput` →
        // `kafka_Output`.
        return product
            .strip_prefix("com_ibm_connector_")
            .unwrap_or(product)
            .replace("ComIbm", "");
    };
    for (k, v) in &n.attrs {
        // An empty value is a setting left blank: the node's default.
        if NO_EFFECT.contains(&k.as_str()) || v.is_empty() {
            continue;
        }
        if k == "additionalInstances" {
            if let Ok(extra) = v.parse::<usize>() {
                *instances = (*instances).max(extra + 1);
            }
            continue;
        }
        let Some(prop) = t.props.iter().find(|p| p.product == k) else {
            miss(
                format!("property `{k}` = `{v}`"),
                "no counterpart in Sluice's node".into(),
            );
            continue;
        };
        match table::convert(prop.conv, v) {
            Ok(Value::None) => {}
            Ok(value) => lines.push(format!("{}: {}", prop.sluice, value_text(&value))),
            Err(reason) => miss(format!("property `{k}` = `{v}`"), reason),
        }
    }
    if t.props.iter().any(|p| p.conv == table::Conv::Broker) {
        lines.push(format!(
            "broker: {}",
            scalar(&table::broker(product, &n.attrs).0)
        ));
        let security = n
            .attrs
            .iter()
            .find(|(k, _)| k == "securityProtocol")
            .map_or("", |(_, v)| v.as_str());
        if security.starts_with("SASL") {
            miss(
                format!("property `securityProtocol` = `{security}`"),
                "credentials belong to the broker: set `username` and `password_env` on its \
                 entry in sluice.yaml"
                    .into(),
            );
        }
    }
    if let Some(ty) = lines.iter().find_map(|l| l.strip_prefix("message_type: ")) {
        let ty = ty.trim_matches('\'');
        match names.model(ty) {
            Some(model) => lines.push(format!("message_model: {}", scalar(&model))),
            None => miss(
                format!("message type `{ty}`"),
                "no schema of the workspace defines that element".into(),
            ),
        }
    }
    if t.sluice == "HTTPHeader" {
        // `nameValue4ReplyHeader name=… value=…` rows: the headers each folder sets.
        let mut folders: Vec<(String, Vec<String>)> = Vec::new();
        for (el, attrs) in &n.children {
            let folder = el
                .strip_prefix("nameValue4")
                .and_then(|f| f.strip_suffix("Header"))
                .filter(|f| matches!(*f, "Input" | "Reply" | "Request" | "Response"));
            let get = |k: &str| attrs.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str());
            match (folder, get("name")) {
                (Some(f), Some(name)) => {
                    let pair = format!("{}: {}", scalar(name), scalar(get("value").unwrap_or("")));
                    let key = format!("{}_headers", f.to_ascii_lowercase());
                    match folders.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, list)) => list.push(pair),
                        None => folders.push((key, vec![pair])),
                    }
                }
                _ => miss(
                    format!("header entry `{el}`"),
                    "not a header row Sluice reads".into(),
                ),
            }
        }
        for (key, pairs) in folders {
            lines.push(format!("{key}: {{ {} }}", pairs.join(", ")));
        }
    }
    if t.sluice == "Route" {
        let mut rules = Vec::new();
        for (el, attrs) in &n.children {
            if el != "filterTable" {
                continue;
            }
            let get = |key: &str| {
                attrs
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            rules.push(format!(
                "{}: {}",
                scalar(&get("routingOutputTerminal")),
                scalar(&get("filterPattern"))
            ));
        }
        if !rules.is_empty() {
            lines.push(format!("rules: {{ {} }}", rules.join(", ")));
        }
    }
    if matches!(t.sluice, "Compute" | "Filter" | "Database") && !udps.is_empty() {
        // The flow's user-defined properties go to each module that declares them EXTERNAL
        // (to every one when the module's ESQL is not in the workspace).
        let declared = lines
            .iter()
            .find_map(|l| l.strip_prefix("module: "))
            .and_then(|m| names.externals(m.trim_matches('\'')));
        let pairs: Vec<String> = udps
            .iter()
            .filter(|(k, _)| declared.as_ref().is_none_or(|d| d.contains(k)))
            .map(|(k, v)| format!("{}: {}", scalar(k), scalar(v)))
            .collect();
        if !pairs.is_empty() {
            lines.push(format!("user_properties: {{ {} }}", pairs.join(", ")));
        }
    }
    t.sluice.to_string()
}

/// The node's wires: each output terminal with its targets, in connection order.
fn wires_of(
    flow: &XmiFlow,
    n: &XmiNode,
    labels: &HashMap<String, String>,
) -> Vec<(String, Vec<String>)> {
    let node_type = match &n.kind {
        NodeKind::Builtin(p) => table::node_type(p),
        _ => None,
    };
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for c in flow.connections.iter().filter(|c| c.source == n.id) {
        let Some(target) = flow.nodes.iter().find(|t| t.id == c.target) else {
            continue;
        };
        let product_terminal = strip_terminal(&c.source_terminal);
        let terminal = match (node_type, &n.kind) {
            (Some(t), _) => t.terminal(product_terminal),
            // A subflow's input node has one output terminal.
            (None, NodeKind::Source) => "out".to_string(),
            _ => product_terminal.to_string(),
        };
        let input = strip_terminal(&c.target_terminal);
        let label = &labels[&target.id];
        let target_text = match &target.kind {
            NodeKind::Subflow(_) => format!("{label}.{input}"),
            NodeKind::Builtin(p) => match table::node_type(p) {
                Some(t) if input != "in" => format!("{label}.{}", t.terminal(input)),
                _ => label.clone(),
            },
            _ => label.clone(),
        };
        match out.iter_mut().find(|(t, _)| *t == terminal) {
            Some((_, list)) => list.push(target_text),
            None => out.push((terminal, vec![target_text])),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_quotes_what_yaml_would_read_otherwise() {
        assert_eq!(scalar("IN.Q"), "IN.Q");
        assert_eq!(scalar("MQ Input"), "'MQ Input'");
        assert_eq!(scalar("yes"), "'yes'");
        assert_eq!(scalar("12"), "'12'");
        assert_eq!(scalar("it's"), "'it''s'");
        assert_eq!(scalar(""), "''");
        assert_eq!(scalar("a\r\nb \"c\"\\"), r#""a\r\nb \"c\"\\""#);
    }
}
