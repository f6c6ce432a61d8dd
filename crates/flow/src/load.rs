//! Reading a flow file: YAML → a validated [`FlowDef`], every problem reported with its place.
//!
//! ```yaml
//! flow: order_intake
//! instances: 4
//! nodes:
//!   in:    { type: HTTPInput, path: /orders, wires: { out: [route], catch: [fail] } }
//!   route: { type: Route, rules: { big: '$Body/order/amount > 1000' }, wires: { big: [reply] } }
//!   reply: { type: HTTPReply }
//! ```
//! Wires live on the upstream node's output terminal, as `target` or `target.input_terminal`.

use sluice_node_api::{NodeConfig, NodeSpec, PropKind, PropSpec, PropValue};

use crate::diag::{Diagnostic, did_you_mean};
use crate::registry::Registry;
use crate::yaml::{self, Yaml, YamlKind};

/// A flow as its file describes it, validated.
#[derive(Clone)]
pub struct FlowDef {
    pub name: String,
    pub file: String,
    pub source: String,
    pub instances: usize,
    pub nodes: Vec<NodeDef>,
}

/// One node of a flow.
#[derive(Clone)]
pub struct NodeDef {
    pub label: String,
    pub spec: &'static NodeSpec,
    pub config: NodeConfig,
    /// Output terminal names: the declared ones, then named (dynamic) ones in wiring order.
    pub outputs: Vec<String>,
    /// Per output terminal: the wired (node index, input terminal index), in propagation order.
    pub wires: Vec<Vec<(usize, u16)>>,
    pub line: usize,
    pub col: usize,
    /// Where each property was written, for errors found when the node is built.
    pub places: Vec<(String, usize, usize)>,
}

impl NodeDef {
    /// The place of a property (or of the node when it was not written).
    pub fn place_of(&self, property: Option<&str>) -> (usize, usize) {
        property
            .and_then(|p| self.places.iter().find(|(n, _, _)| n == p))
            .map(|(_, l, c)| (*l, *c))
            .unwrap_or((self.line, self.col))
    }
}

const FLOW_KEYS: &[&str] = &["flow", "description", "instances", "nodes"];

struct Loader<'a> {
    file: &'a str,
    src: &'a str,
    problems: Vec<Diagnostic>,
}

impl Loader<'_> {
    fn err(&mut self, y: &Yaml, message: impl Into<String>) -> &mut Diagnostic {
        self.problems
            .push(Diagnostic::at(self.file, self.src, y.line, y.col, message));
        self.problems.last_mut().expect("just pushed")
    }
}

/// Parse and validate one flow file.
pub fn load_flow(file: &str, src: &str, registry: &Registry) -> Result<FlowDef, Vec<Diagnostic>> {
    let doc = yaml::parse(file, src).map_err(|d| vec![d])?;
    let mut l = Loader {
        file,
        src,
        problems: Vec::new(),
    };
    let YamlKind::Map(top) = &doc.kind else {
        l.err(
            &doc,
            format!("a flow file must be a mapping, found {}", doc.describe()),
        )
        .hint = Some("start with `flow: NAME` and `nodes:`".into());
        return Err(l.problems);
    };
    let stem = std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut name = stem;
    let mut instances = 1usize;
    let mut nodes_yaml = None;
    for (k, v) in top {
        match k.as_str() {
            Some("flow") => match v.as_str() {
                Some(s) if !s.is_empty() => name = s.to_string(),
                _ => {
                    l.err(v, "`flow` must be the flow's name");
                }
            },
            Some("description") => {}
            Some("instances") => match v.kind {
                YamlKind::Int(n) if (1..=1024).contains(&n) => instances = n as usize,
                _ => {
                    l.err(v, "`instances` must be a whole number from 1 to 1024");
                }
            },
            Some("nodes") => nodes_yaml = Some(v),
            _ => {
                let key = k.scalar_text().unwrap_or_default();
                let hint = did_you_mean(&key, FLOW_KEYS.iter().copied());
                l.err(k, format!("unknown flow setting `{key}`")).hint =
                    hint.or_else(|| Some(format!("a flow file has {}", FLOW_KEYS.join(", "))));
            }
        }
    }
    let Some(nodes_yaml) = nodes_yaml else {
        l.err(&doc, "the flow has no `nodes`").hint =
            Some("add `nodes:` with at least an input node".into());
        return Err(l.problems);
    };
    let YamlKind::Map(node_entries) = &nodes_yaml.kind else {
        l.err(nodes_yaml, "`nodes` must map node labels to node settings");
        return Err(l.problems);
    };

    // First pass: types and properties; wires are resolved once every label is known.
    let mut nodes: Vec<NodeDef> = Vec::new();
    let mut wire_yaml: Vec<Option<&Yaml>> = Vec::new();
    for (k, v) in node_entries {
        let Some(label) = k.scalar_text() else {
            l.err(k, "a node label must be a plain name");
            continue;
        };
        if let Some(def) = load_node(&mut l, registry, &label, k, v) {
            wire_yaml.push(map_get(v, "wires"));
            nodes.push(def);
        }
    }
    let labels: Vec<String> = nodes.iter().map(|n| n.label.clone()).collect();
    for (i, w) in wire_yaml.iter().enumerate() {
        if let Some(w) = w {
            resolve_wires(&mut l, &mut nodes, &labels, i, w);
        }
    }
    if l.problems.is_empty() {
        if !nodes.iter().any(|n| n.spec.inputs.is_empty()) {
            l.err(nodes_yaml, "the flow has no input node").hint =
                Some("add a node such as HTTPInput or MQInput".into());
        }
        check_cycles(&mut l, &nodes);
    }
    if !l.problems.is_empty() {
        return Err(l.problems);
    }
    Ok(FlowDef {
        name,
        file: file.to_string(),
        source: src.to_string(),
        instances,
        nodes,
    })
}

fn map_get<'y>(y: &'y Yaml, key: &str) -> Option<&'y Yaml> {
    match &y.kind {
        YamlKind::Map(m) => m
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v),
        _ => None,
    }
}

fn load_node(
    l: &mut Loader,
    registry: &Registry,
    label: &str,
    key: &Yaml,
    v: &Yaml,
) -> Option<NodeDef> {
    let YamlKind::Map(entries) = &v.kind else {
        l.err(v, format!("node `{label}` must be a mapping with a `type`"));
        return None;
    };
    let Some(type_y) = map_get(v, "type") else {
        l.err(key, format!("node `{label}` has no `type`")).hint =
            Some("add `type: HTTPInput` (or another node type)".into());
        return None;
    };
    let type_name = type_y.as_str().unwrap_or_default();
    let Some(spec) = registry.get(type_name) else {
        let hint = did_you_mean(type_name, registry.names());
        l.err(type_y, format!("unknown node type `{type_name}`"))
            .hint = hint.or_else(|| Some("see docs/nodes.md for the node types".into()));
        return None;
    };
    let properties = spec.properties();
    let mut config = NodeConfig::default();
    let mut places = Vec::new();
    for (pk, pv) in entries {
        let pname = pk.scalar_text().unwrap_or_default();
        if pname == "type" || pname == "wires" {
            continue;
        }
        let Some(ps) = properties.iter().find(|p| p.name == pname) else {
            let hint = did_you_mean(&pname, properties.iter().map(|p| p.name));
            let known: Vec<&str> = properties.iter().map(|p| p.name).collect();
            l.err(pk, format!("{type_name} has no property `{pname}`"))
                .hint = hint.or_else(|| {
                Some(if known.is_empty() {
                    format!("{type_name} takes no properties")
                } else {
                    format!("its properties are {}", known.join(", "))
                })
            });
            continue;
        };
        places.push((pname.clone(), pv.line, pv.col));
        match convert_prop(ps, pv) {
            Ok(val) => config.insert(&pname, val),
            Err(msg) => {
                l.err(pv, format!("property `{pname}` of {type_name}: {msg}"));
            }
        }
    }
    for ps in &properties {
        if config.value(ps.name).is_some() {
            continue;
        }
        if let Some(d) = ps.default {
            let dy = Yaml {
                line: 0,
                col: 0,
                kind: default_kind(ps, d),
            };
            match convert_prop(ps, &dy) {
                Ok(val) => config.insert(ps.name, val),
                Err(msg) => {
                    l.err(
                        key,
                        format!(
                            "default of `{}` is invalid: {msg} (this is a bug, please report it)",
                            ps.name
                        ),
                    );
                }
            }
        } else if ps.required {
            l.err(
                key,
                format!("node `{label}` ({type_name}) needs property `{}`", ps.name),
            )
            .hint = Some(ps.doc_text());
        }
    }
    let outputs = spec
        .outputs
        .iter()
        .map(|t| t.name.to_string())
        .collect::<Vec<_>>();
    let wires = vec![Vec::new(); outputs.len()];
    Some(NodeDef {
        label: label.to_string(),
        spec,
        config,
        outputs,
        wires,
        line: key.line,
        col: key.col,
        places,
    })
}

fn default_kind(ps: &PropSpec, d: &str) -> YamlKind {
    match ps.kind {
        PropKind::Integer => d
            .parse()
            .map(YamlKind::Int)
            .unwrap_or(YamlKind::Str(d.into())),
        PropKind::Float => d
            .parse()
            .map(YamlKind::Float)
            .unwrap_or(YamlKind::Str(d.into())),
        PropKind::Boolean => d
            .parse()
            .map(YamlKind::Bool)
            .unwrap_or(YamlKind::Str(d.into())),
        PropKind::StringList | PropKind::StringMap if d == "[]" || d == "{}" => {
            if ps.kind == PropKind::StringList {
                YamlKind::Seq(Vec::new())
            } else {
                YamlKind::Map(Vec::new())
            }
        }
        _ => YamlKind::Str(d.into()),
    }
}

fn convert_prop(ps: &PropSpec, v: &Yaml) -> Result<PropValue, String> {
    let want = ps.kind.describe();
    match (ps.kind, &v.kind) {
        (PropKind::String, _) => v
            .scalar_text()
            .map(PropValue::String)
            .ok_or_else(|| format!("expected {want}, found {}", v.describe())),
        (PropKind::Integer, YamlKind::Int(i)) => Ok(PropValue::Integer(*i)),
        (PropKind::Float, YamlKind::Int(i)) => Ok(PropValue::Float(*i as f64)),
        (PropKind::Float, YamlKind::Float(f)) => Ok(PropValue::Float(*f)),
        (PropKind::Boolean, YamlKind::Bool(b)) => Ok(PropValue::Boolean(*b)),
        (PropKind::Enum(words), _) => {
            let s = v.scalar_text().unwrap_or_default();
            match words.iter().find(|w| w.eq_ignore_ascii_case(&s)) {
                Some(w) => Ok(PropValue::String(w.to_string())),
                None => Err(format!("`{s}` is not {want}")),
            }
        }
        (PropKind::StringList, YamlKind::Seq(items)) => items
            .iter()
            .map(|i| {
                i.scalar_text()
                    .ok_or_else(|| format!("list items must be strings, found {}", i.describe()))
            })
            .collect::<Result<_, _>>()
            .map(PropValue::List),
        (PropKind::StringList, YamlKind::Str(s)) => Ok(PropValue::List(vec![s.clone()])),
        (PropKind::StringMap, YamlKind::Map(m)) => m
            .iter()
            .map(|(k, v)| match (k.scalar_text(), v.scalar_text()) {
                (Some(k), Some(v)) => Ok((k, v)),
                _ => Err("map keys and values must be strings".to_string()),
            })
            .collect::<Result<_, _>>()
            .map(PropValue::Map),
        _ => Err(format!("expected {want}, found {}", v.describe())),
    }
}

fn resolve_wires(l: &mut Loader, nodes: &mut [NodeDef], labels: &[String], i: usize, w: &Yaml) {
    let YamlKind::Map(terms) = &w.kind else {
        l.err(
            w,
            "`wires` must map output terminals to lists of target nodes",
        )
        .hint = Some("for example `wires: { out: [next] }`".into());
        return;
    };
    for (tk, tv) in terms {
        let tname = tk.scalar_text().unwrap_or_default();
        let spec = nodes[i].spec;
        let t = match nodes[i].outputs.iter().position(|o| *o == tname) {
            Some(t) => t,
            None if spec.dynamic_outputs => {
                nodes[i].outputs.push(tname.clone());
                nodes[i].wires.push(Vec::new());
                nodes[i].outputs.len() - 1
            }
            None => {
                let hint = did_you_mean(&tname, spec.outputs.iter().map(|t| t.name));
                let known: Vec<&str> = spec.outputs.iter().map(|t| t.name).collect();
                l.err(
                    tk,
                    format!("{} has no output terminal `{tname}`", spec.type_name),
                )
                .hint = hint.or_else(|| {
                    Some(if known.is_empty() {
                        format!("{} has no output terminals", spec.type_name)
                    } else {
                        format!("its output terminals are {}", known.join(", "))
                    })
                });
                continue;
            }
        };
        let targets: Vec<&Yaml> = match &tv.kind {
            YamlKind::Seq(items) => items.iter().collect(),
            YamlKind::Str(_) => vec![tv],
            _ => {
                l.err(tv, "a wire must be a list of target nodes");
                continue;
            }
        };
        for target in targets {
            let text = target.scalar_text().unwrap_or_default();
            let (tlabel, tin) = match text.split_once('.') {
                Some((a, b)) => (a, Some(b)),
                None => (text.as_str(), None),
            };
            let Some(ti) = labels.iter().position(|x| x == tlabel) else {
                let hint = did_you_mean(tlabel, labels.iter().map(|s| s.as_str()));
                l.err(target, format!("wire to unknown node `{tlabel}`"))
                    .hint = hint;
                continue;
            };
            let tspec = nodes[ti].spec;
            let input = match tin {
                None if !tspec.inputs.is_empty() => 0,
                None => {
                    l.err(
                        target,
                        format!(
                            "`{tlabel}` is an input node ({}): nothing can be wired to it",
                            tspec.type_name
                        ),
                    );
                    continue;
                }
                Some(name) => match tspec.inputs.iter().position(|t| t.name == name) {
                    Some(p) => p,
                    None => {
                        let known: Vec<&str> = tspec.inputs.iter().map(|t| t.name).collect();
                        l.err(
                            target,
                            format!("{} has no input terminal `{name}`", tspec.type_name),
                        )
                        .hint = Some(format!("its input terminals are {}", known.join(", ")));
                        continue;
                    }
                },
            };
            nodes[i].wires[t].push((ti, input as u16));
        }
    }
}

fn check_cycles(l: &mut Loader, nodes: &[NodeDef]) {
    // 0 = unvisited, 1 = on the current path, 2 = done.
    let mut state = vec![0u8; nodes.len()];
    let mut path: Vec<usize> = Vec::new();
    fn visit(
        n: usize,
        nodes: &[NodeDef],
        state: &mut [u8],
        path: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        state[n] = 1;
        path.push(n);
        for targets in &nodes[n].wires {
            for &(t, _) in targets {
                if state[t] == 1 {
                    let start = path.iter().position(|&p| p == t).unwrap_or(0);
                    let mut cycle = path[start..].to_vec();
                    cycle.push(t);
                    return Some(cycle);
                }
                if state[t] == 0
                    && let Some(c) = visit(t, nodes, state, path)
                {
                    return Some(c);
                }
            }
        }
        path.pop();
        state[n] = 2;
        None
    }
    for n in 0..nodes.len() {
        if state[n] == 0
            && let Some(cycle) = visit(n, nodes, &mut state, &mut path)
        {
            let chain: Vec<&str> = cycle.iter().map(|&i| nodes[i].label.as_str()).collect();
            let first = &nodes[cycle[0]];
            let y = Yaml {
                line: first.line,
                col: first.col,
                kind: YamlKind::Null,
            };
            l.err(&y, format!("the wires form a loop: {}", chain.join(" -> ")))
                .hint = Some("propagation would never end; remove one of these wires".into());
            return;
        }
    }
}
