//! BAR override files (`*.properties`): the values a deployment set instead of those the flow
//! files hold, applied before the flows convert, as a deployment of the BAR file would.
//!
//! A line `FLOW#NODE.property=value` sets a node's property, `FLOW#property=value` a flow's
//! user-defined or promoted property (`additionalInstances` too). FLOW is the flow's path in
//! its application with `.` for `/` and without the extension (`orders.Orders`), or just its
//! name.

use crate::xmi::XmiFlow;

/// One override line.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    pub flow: String,
    pub node: Option<String>,
    pub property: String,
    pub value: String,
    pub file: String,
    pub line: usize,
}

/// The override lines of a `.properties` file; empty when it holds none (not a BAR override
/// file).
pub fn parse(file: &str, text: &str) -> Vec<Override> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        let Some((key, value)) = line.split_once(['=', ':']) else {
            continue;
        };
        let Some((flow, rest)) = key.trim().split_once('#') else {
            continue;
        };
        let (node, property) = match rest.rsplit_once('.') {
            Some((n, p)) => (Some(n.to_string()), p.to_string()),
            None => (None, rest.to_string()),
        };
        out.push(Override {
            flow: flow.trim().to_string(),
            node,
            property,
            value: value.trim().to_string(),
            file: file.to_string(),
            line: i + 1,
        });
    }
    out
}

/// Whether `o` is for the flow file whose key (path in its application) is `key`.
pub fn is_for(o: &Override, key: &str) -> bool {
    let path = key.rsplit_once('.').map_or(key, |(p, _)| p);
    let dotted = path.replace('/', ".");
    let name = path.rsplit('/').next().unwrap_or(path);
    o.flow == dotted || o.flow == name
}

/// Apply `o` to `flow`; Err with the reason when nothing in the flow has that name.
pub fn apply(o: &Override, flow: &mut XmiFlow) -> Result<(), String> {
    match &o.node {
        Some(label) => {
            let n = flow
                .nodes
                .iter_mut()
                .find(|n| n.label == *label)
                .ok_or_else(|| format!("the flow has no node `{label}`"))?;
            match n.attrs.iter_mut().find(|(k, _)| *k == o.property) {
                Some((_, v)) => *v = o.value.clone(),
                None => n.attrs.push((o.property.clone(), o.value.clone())),
            }
        }
        None => {
            if let Some(p) = flow.properties.iter_mut().find(|p| p.name == o.property) {
                p.default = Some(o.value.clone());
            } else if o.property == "additionalInstances" {
                // The flow's own setting: every input node takes it.
                for n in &mut flow.nodes {
                    if matches!(&n.kind, crate::xmi::NodeKind::Builtin(t) if t.ends_with("Input")) {
                        n.attrs.retain(|(k, _)| k != "additionalInstances");
                        n.attrs.push((o.property.clone(), o.value.clone()));
                    }
                }
            } else {
                return Err(format!("the flow has no property `{}`", o.property));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reads_node_and_flow_overrides_and_skips_other_lines() {
        let text = "# BAR overrides\norders.Orders#HTTP Input.URLSpecifier = /v2/orders\norders.Orders#Region=APAC\nlog.level=INFO\n";
        let o = parse("bar.properties", text);
        assert_eq!(o.len(), 2);
        assert_eq!(o[0].node.as_deref(), Some("HTTP Input"));
        assert_eq!(o[0].property, "URLSpecifier");
        assert_eq!(o[0].value, "/v2/orders");
        assert_eq!(o[0].line, 2);
        assert_eq!(o[1].node, None);
        assert!(is_for(&o[1], "orders/Orders.msgflow"));
        assert!(!is_for(&o[1], "orders/Other.msgflow"));
    }
}
