//! The `nodes:` of a flow or subflow file: each node's type, properties and wires, checked
//! against what its type declares, before subflow uses are expanded inline.
//!
//! A node's type is a registered node type, a subflow of the project, or (in a subflow file)
//! `Input` or `Output`, which mark the subflow's terminals.

use std::sync::Arc;

use sluice_node_api::{NodeConfig, NodeSpec, PropKind, PropSpec, PropValue};

use crate::diag::{Diagnostic, did_you_mean};
use crate::load::{Place, SourceText};
use crate::registry::Registry;
use crate::subflow::{Lookup, SubflowDef, Subflows};
use crate::yaml::{Yaml, YamlKind};

/// The type name of the nodes that mark a subflow's input terminals.
pub const INPUT: &str = "Input";
/// The type name of the nodes that mark a subflow's output terminals.
pub const OUTPUT: &str = "Output";

/// Problems found in one file, each at its place.
pub(crate) struct Loader {
    pub src: Arc<SourceText>,
    pub problems: Vec<Diagnostic>,
}

impl Loader {
    pub fn new(file: &str, src: &str) -> Loader {
        Loader {
            src: Arc::new(SourceText {
                file: file.to_string(),
                text: src.to_string(),
            }),
            problems: Vec::new(),
        }
    }

    pub fn err(&mut self, y: &Yaml, message: impl Into<String>) -> &mut Diagnostic {
        let d = self.place(y).diagnostic(message);
        self.problems.push(d);
        let last = self.problems.len() - 1;
        &mut self.problems[last]
    }

    pub fn place(&self, y: &Yaml) -> Place {
        Place {
            src: Arc::clone(&self.src),
            line: y.line,
            col: y.col,
        }
    }
}

/// What a `type:` may name in the file being loaded.
pub(crate) struct Types<'a> {
    pub registry: &'a Registry,
    pub subflows: &'a Subflows,
    /// Whether `Input` and `Output` nodes are allowed (in a subflow file).
    pub in_subflow: bool,
}

/// A node as its file wrote it.
pub(crate) struct Item {
    pub label: String,
    pub place: Place,
    pub kind: ItemKind,
    /// Input terminal names beyond the declared ones, for a node type with dynamic inputs, in
    /// wiring order.
    pub named_inputs: Vec<String>,
    /// Output terminal names: declared ones, then named (dynamic) ones in wiring order.
    pub outputs: Vec<String>,
    /// Per output terminal: the wired (item index, input terminal index), in wiring order.
    pub wires: Vec<Vec<(usize, u16)>>,
}

pub(crate) enum ItemKind {
    /// A node of a registered type.
    Node {
        spec: &'static NodeSpec,
        config: NodeConfig,
        places: Vec<(String, Place)>,
    },
    /// A use of a subflow, with the promoted properties it sets.
    Use {
        sub: Arc<SubflowDef>,
        values: NodeConfig,
        places: Vec<(String, Place)>,
    },
    /// A subflow's input terminal; messages leave it on `out`.
    Input,
    /// A subflow's output terminal; messages reach it on `in`.
    Output,
}

impl Item {
    pub fn type_name(&self) -> &str {
        match &self.kind {
            ItemKind::Node { spec, .. } => spec.type_name,
            ItemKind::Use { sub, .. } => &sub.name,
            ItemKind::Input => INPUT,
            ItemKind::Output => OUTPUT,
        }
    }
}

/// The nodes of one file, with wires between them by item index.
pub(crate) struct Body {
    pub items: Vec<Item>,
}

/// A property a node (or subflow use) accepts, whatever declared it.
struct PropInfo<'a> {
    name: &'a str,
    kind: PropKind,
    required: bool,
    doc: String,
}

/// Load every node under `nodes:`. `promoted` lists the `(label, property)` pairs a subflow
/// promotes: those may be left unset inside, since each use (or the promoted default) sets them.
pub(crate) fn load_body(
    l: &mut Loader,
    types: &Types,
    nodes_yaml: &Yaml,
    promoted: &[(String, String)],
) -> Body {
    let mut items: Vec<Item> = Vec::new();
    let YamlKind::Map(node_entries) = &nodes_yaml.kind else {
        l.err(nodes_yaml, "`nodes` must map node labels to node settings");
        return Body { items };
    };
    // First pass: types and properties; wires are resolved once every label is known.
    let mut wire_yaml: Vec<Option<&Yaml>> = Vec::new();
    // Nodes reported already: wires to them are not reported again.
    let mut failed: Vec<String> = Vec::new();
    for (k, v) in node_entries {
        let Some(label) = k.scalar_text() else {
            l.err(k, "a node label must be a plain name");
            continue;
        };
        if items.iter().any(|i| i.label == label) {
            l.err(k, format!("there is already a node labelled `{label}`"));
            continue;
        }
        if let Some(item) = load_item(l, types, &label, k, v, promoted) {
            // An Output node's `wires` was reported already.
            let wires = map_get(v, "wires").filter(|_| !matches!(item.kind, ItemKind::Output));
            wire_yaml.push(wires);
            items.push(item);
        } else {
            failed.push(label);
        }
    }
    for (i, w) in wire_yaml.iter().enumerate() {
        if let Some(w) = w {
            resolve_wires(l, &mut items, &failed, i, w);
        }
    }
    Body { items }
}

pub(crate) fn map_get<'y>(y: &'y Yaml, key: &str) -> Option<&'y Yaml> {
    match &y.kind {
        YamlKind::Map(m) => m
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v),
        _ => None,
    }
}

fn load_item(
    l: &mut Loader,
    types: &Types,
    label: &str,
    key: &Yaml,
    v: &Yaml,
    promoted: &[(String, String)],
) -> Option<Item> {
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
    let is_promoted = |p: &str| promoted.iter().any(|(n, q)| n == label && q == p);
    let place = l.place(key);
    let item = |kind, outputs: Vec<String>| Item {
        label: label.to_string(),
        place: place.clone(),
        wires: vec![Vec::new(); outputs.len()],
        named_inputs: Vec::new(),
        kind,
        outputs,
    };
    if type_name == INPUT || type_name == OUTPUT {
        if !types.in_subflow {
            l.err(
                type_y,
                format!("`{type_name}` nodes mark the terminals of a subflow"),
            )
            .hint = Some("they belong in subflow files (subflows/*.yaml)".into());
            return None;
        }
        for (pk, _) in entries {
            let pname = pk.scalar_text().unwrap_or_default();
            let allowed = pname == "type" || (pname == "wires" && type_name == INPUT);
            if !allowed {
                l.err(pk, format!("an {type_name} node has no `{pname}`"))
                    .hint = Some(if type_name == INPUT {
                    "an Input node takes only `wires`; its label names the terminal".into()
                } else {
                    "an Output node takes no settings: nodes are wired to it, and its label names the terminal".into()
                });
            }
        }
        return Some(if type_name == INPUT {
            item(ItemKind::Input, vec!["out".into()])
        } else {
            item(ItemKind::Output, Vec::new())
        });
    }
    if let Some(spec) = types.registry.get(type_name) {
        let specs = spec.properties();
        let infos: Vec<PropInfo> = specs
            .iter()
            .map(|p| PropInfo {
                name: p.name,
                kind: p.kind,
                required: p.required,
                doc: p.doc_text(),
            })
            .collect();
        let (mut config, places) =
            check_props(l, type_name, label, key, entries, &infos, &is_promoted);
        fill_defaults(l, key, &specs, &mut config);
        let outputs = spec.outputs.iter().map(|t| t.name.to_string()).collect();
        return Some(item(
            ItemKind::Node {
                spec,
                config,
                places,
            },
            outputs,
        ));
    }
    match types.subflows.lookup(type_name) {
        Some(Lookup::Ready(sub)) => {
            let infos: Vec<PropInfo> = sub
                .properties
                .iter()
                .map(|p| PropInfo {
                    name: &p.name,
                    kind: p.kind,
                    required: p.required,
                    doc: p.doc.clone(),
                })
                .collect();
            let (values, places) =
                check_props(l, type_name, label, key, entries, &infos, &is_promoted);
            let outputs = sub.outputs.clone();
            Some(item(
                ItemKind::Use {
                    sub: Arc::clone(sub),
                    values,
                    places,
                },
                outputs,
            ))
        }
        Some(Lookup::Broken { file }) => {
            l.err(type_y, format!("subflow `{type_name}` has errors"))
                .hint = Some(format!("see the problems reported in {file}"));
            None
        }
        None => {
            let mut names: Vec<&str> = types.registry.names().collect();
            names.extend(types.subflows.names());
            if types.in_subflow {
                names.extend([INPUT, OUTPUT]);
            }
            let hint = did_you_mean(type_name, names);
            l.err(type_y, format!("unknown node type `{type_name}`"))
                .hint = hint.or_else(|| {
                Some("see docs/nodes.md for the node types, subflows/ for the subflows".into())
            });
            None
        }
    }
}

/// Check the properties written on a node against those its type accepts; report unknown names,
/// values of the wrong kind and required properties left out.
fn check_props(
    l: &mut Loader,
    type_name: &str,
    label: &str,
    key: &Yaml,
    entries: &[(Yaml, Yaml)],
    infos: &[PropInfo],
    is_promoted: &dyn Fn(&str) -> bool,
) -> (NodeConfig, Vec<(String, Place)>) {
    let mut config = NodeConfig::default();
    let mut places = Vec::new();
    for (pk, pv) in entries {
        let pname = pk.scalar_text().unwrap_or_default();
        if pname == "type" || pname == "wires" {
            continue;
        }
        let Some(info) = infos.iter().find(|p| p.name == pname) else {
            let hint = did_you_mean(&pname, infos.iter().map(|p| p.name));
            let known: Vec<&str> = infos.iter().map(|p| p.name).collect();
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
        places.push((pname.clone(), l.place(pv)));
        match convert_prop(info.kind, pv) {
            Ok(val) => config.insert(&pname, val),
            Err(msg) => {
                l.err(pv, format!("property `{pname}` of {type_name}: {msg}"));
            }
        }
    }
    for info in infos {
        if info.required && config.value(info.name).is_none() && !is_promoted(info.name) {
            l.err(
                key,
                format!(
                    "node `{label}` ({type_name}) needs property `{}`",
                    info.name
                ),
            )
            .hint = Some(info.doc.clone());
        }
    }
    (config, places)
}

/// Fill in the declared default of every property the node does not set.
fn fill_defaults(l: &mut Loader, key: &Yaml, specs: &[PropSpec], config: &mut NodeConfig) {
    for ps in specs {
        if config.value(ps.name).is_some() {
            continue;
        }
        let Some(d) = ps.default else { continue };
        let dy = Yaml {
            line: 0,
            col: 0,
            kind: default_kind(ps, d),
        };
        match convert_prop(ps.kind, &dy) {
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
    }
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

/// A property's value from YAML, checked against its kind.
pub(crate) fn convert_prop(kind: PropKind, v: &Yaml) -> Result<PropValue, String> {
    let want = kind.describe();
    match (kind, &v.kind) {
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

/// The output terminal `tname` of item `i`, adding it when the node's type names terminals in
/// wires; `None` (reported) when it has no such terminal.
fn output_terminal(l: &mut Loader, items: &mut [Item], i: usize, tk: &Yaml) -> Option<usize> {
    let tname = tk.scalar_text().unwrap_or_default();
    if let Some(t) = items[i].outputs.iter().position(|o| *o == tname) {
        return Some(t);
    }
    let known = items[i].outputs.clone();
    let (what, none) = match &items[i].kind {
        ItemKind::Node { spec, .. } if spec.dynamic_outputs => {
            items[i].outputs.push(tname);
            items[i].wires.push(Vec::new());
            return Some(items[i].outputs.len() - 1);
        }
        ItemKind::Node { spec, .. } => (
            spec.type_name.to_string(),
            format!("{} has no output terminals", spec.type_name),
        ),
        ItemKind::Use { sub, .. } => (
            format!("subflow {}", sub.name),
            format!(
                "subflow {} has no Output nodes, so no output terminals",
                sub.name
            ),
        ),
        ItemKind::Input => (INPUT.to_string(), String::new()),
        ItemKind::Output => (
            OUTPUT.to_string(),
            "an Output node passes messages out of the subflow: it has no output terminals"
                .to_string(),
        ),
    };
    let hint = did_you_mean(&tname, known.iter().map(String::as_str));
    l.err(tk, format!("{what} has no output terminal `{tname}`"))
        .hint = hint.or_else(|| {
        Some(if known.is_empty() {
            none
        } else {
            format!("its output terminals are {}", known.join(", "))
        })
    });
    None
}

/// The input terminal a wire `target` (`label` or `label.terminal`) reaches on item `ti`.
fn input_terminal(
    l: &mut Loader,
    item: &mut Item,
    target: &Yaml,
    tin: Option<&str>,
) -> Option<u16> {
    if let ItemKind::Node { spec, .. } = &item.kind
        && spec.dynamic_inputs
    {
        let Some(name) = tin else {
            l.err(
                target,
                format!(
                    "`{}` ({}) has input terminals named in wires: the wire must name one",
                    item.label, spec.type_name
                ),
            )
            .hint = Some(format!("write `{}.NAME`", item.label));
            return None;
        };
        let declared = spec.inputs.iter().map(|t| t.name);
        let at = match declared
            .chain(item.named_inputs.iter().map(String::as_str))
            .position(|t| t == name)
        {
            Some(p) => p,
            None => {
                item.named_inputs.push(name.to_string());
                spec.inputs.len() + item.named_inputs.len() - 1
            }
        };
        return Some(at as u16);
    }
    let item = &*item;
    let tlabel = &item.label;
    let inputs: Vec<&str> = match &item.kind {
        ItemKind::Node { spec, .. } => spec.inputs.iter().map(|t| t.name).collect(),
        ItemKind::Use { sub, .. } => sub.inputs.iter().map(String::as_str).collect(),
        ItemKind::Input => {
            l.err(
                target,
                format!("`{tlabel}` is an Input node: messages enter the subflow there, nothing inside can be wired to it"),
            );
            return None;
        }
        ItemKind::Output => vec!["in"],
    };
    let type_name = match &item.kind {
        ItemKind::Use { sub, .. } => format!("subflow {}", sub.name),
        _ => item.type_name().to_string(),
    };
    let Some(name) = tin else {
        let is_use = matches!(item.kind, ItemKind::Use { .. });
        match inputs.len() {
            0 if is_use => {
                l.err(
                    target,
                    format!(
                        "`{tlabel}` ({type_name}) has no input terminal: nothing can be wired to it"
                    ),
                )
                .hint = Some("add an Input node to the subflow".into());
            }
            0 => {
                l.err(
                    target,
                    format!(
                        "`{tlabel}` is an input node ({type_name}): nothing can be wired to it"
                    ),
                );
            }
            // A subflow's input terminals are its Input nodes, none of which comes first.
            n if n > 1 && is_use => {
                let each: Vec<String> = inputs.iter().map(|i| format!("`{tlabel}.{i}`")).collect();
                l.err(
                    target,
                    format!(
                        "`{tlabel}` ({type_name}) has {n} input terminals: the wire must name one"
                    ),
                )
                .hint = Some(format!("write {}", each.join(" or ")));
            }
            _ => return Some(0),
        }
        return None;
    };
    if let Some(p) = inputs.iter().position(|t| *t == name) {
        return Some(p as u16);
    }
    let hint = did_you_mean(name, inputs.iter().copied());
    l.err(
        target,
        format!("{type_name} has no input terminal `{name}`"),
    )
    .hint = hint.or_else(|| {
        Some(if inputs.is_empty() {
            format!("{type_name} has no input terminals")
        } else {
            format!("its input terminals are {}", inputs.join(", "))
        })
    });
    None
}

fn resolve_wires(l: &mut Loader, items: &mut [Item], failed: &[String], i: usize, w: &Yaml) {
    let YamlKind::Map(terms) = &w.kind else {
        l.err(
            w,
            "`wires` must map output terminals to lists of target nodes",
        )
        .hint = Some("for example `wires: { out: [next] }`".into());
        return;
    };
    for (tk, tv) in terms {
        let Some(t) = output_terminal(l, items, i, tk) else {
            continue;
        };
        let targets: Vec<&Yaml> = match &tv.kind {
            YamlKind::Seq(targets) => targets.iter().collect(),
            YamlKind::Str(_) => vec![tv],
            _ => {
                l.err(tv, "a wire must be a list of target nodes");
                continue;
            }
        };
        for target in targets {
            let text = target.scalar_text().unwrap_or_default();
            // A label may hold dots (the product allows them): the whole text is a label when
            // one has that name, else the part after the last dot names an input terminal.
            let whole = items.iter().any(|x| x.label == text) || failed.contains(&text);
            let (tlabel, tin) = match text.rsplit_once('.') {
                Some((a, b)) if !whole => (a, Some(b)),
                _ => (text.as_str(), None),
            };
            let Some(ti) = items.iter().position(|x| x.label == tlabel) else {
                if failed.iter().any(|f| f == tlabel) {
                    continue;
                }
                let hint = did_you_mean(tlabel, items.iter().map(|s| s.label.as_str()));
                l.err(target, format!("wire to unknown node `{tlabel}`"))
                    .hint = hint;
                continue;
            };
            if let Some(input) = input_terminal(l, &mut items[ti], target, tin) {
                items[i].wires[t].push((ti, input));
            }
        }
    }
}
