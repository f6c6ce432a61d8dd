//! Subflows: a project's `subflows/*.yaml`, each a flow of nodes used as one node elsewhere.
//!
//! ```yaml
//! subflow: reply_to_queue        # its name, the `type` its uses give (defaults to the file name)
//! description: Puts the reply on a queue and logs it.
//! properties:                    # promoted: each use sets them like any node property
//!   queue: { doc: "The queue replies go to.", default: REPLIES, targets: [put.queue] }
//! nodes:
//!   in:   { type: Input, wires: { out: [put] } }      # input terminal `in` of the subflow node
//!   put:  { type: MQOutput, wires: { out: [done], failure: [failed] } }
//!   done: { type: Output }                            # output terminal `done`
//!   failed: { type: Output }
//! ```
//!
//! [`Subflows::load`] reads every subflow of a project once; flows (and subflows) then use them
//! by name, and loading a flow expands each use inline (see [`crate::expand`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::sync::Arc;

use sluice_node_api::{PropKind, PropValue};

use crate::body::{Body, INPUT, ItemKind, Loader, OUTPUT, Types, convert_prop, load_body, map_get};
use crate::diag::{Diagnostic, did_you_mean};
use crate::expand::flatten;
use crate::load::Place;
use crate::registry::Registry;
use crate::yaml::{self, Yaml, YamlKind};

/// The subflows of a project, by name: those whose files have errors are kept as broken, so
/// that a use of one says so instead of calling the type unknown.
#[derive(Default)]
pub struct Subflows {
    entries: BTreeMap<String, Entry>,
}

enum Entry {
    Ready(Arc<SubflowDef>),
    Broken { file: String },
}

/// What a subflow name resolves to while loading.
pub(crate) enum Lookup<'a> {
    Ready(&'a Arc<SubflowDef>),
    Broken { file: &'a str },
}

/// One subflow, validated.
pub struct SubflowDef {
    pub name: String,
    pub file: String,
    pub description: String,
    /// Input terminals of the subflow node: the labels of its Input nodes, in file order.
    pub inputs: Vec<String>,
    /// Output terminals of the subflow node: the labels of its Output nodes, in file order.
    pub outputs: Vec<String>,
    pub properties: Vec<PromotedProperty>,
    /// This subflow's file and those of the subflows it uses, directly or not.
    pub files: BTreeSet<String>,
    pub(crate) body: Body,
    /// The item index of each Input node (in the order of `inputs`) and Output node.
    pub(crate) input_items: Vec<usize>,
    pub(crate) output_items: Vec<usize>,
}

/// A property of nodes inside a subflow that each use of the subflow sets.
pub struct PromotedProperty {
    pub name: String,
    /// The kind of the first target's property.
    pub kind: PropKind,
    pub default: Option<PropValue>,
    /// Whether a use must set it: it has no default and a target needs a value.
    pub required: bool,
    pub doc: String,
    /// The `node.property` targets as the file names them.
    pub target_names: Vec<String>,
    /// The (item index, property) pairs it sets.
    pub(crate) targets: Vec<(usize, String)>,
    /// Where it is declared (and its default written).
    pub(crate) place: Place,
}

const SUBFLOW_KEYS: &[&str] = &["subflow", "description", "properties", "nodes"];
const PROPERTY_KEYS: &[&str] = &["doc", "default", "targets"];

/// A subflow file read, before its nodes are resolved.
struct Raw {
    name: String,
    l: Loader,
    description: String,
    nodes: Option<Yaml>,
    properties: Option<Yaml>,
    /// Subflows its nodes use: (index in the raw list, the `type` value).
    uses: Vec<(usize, Yaml)>,
    /// Where `subflow:` gives the name, when it does.
    name_at: Option<(usize, usize)>,
    /// Left out: its name clashes with a node type or an earlier subflow.
    skip: bool,
}

impl Subflows {
    /// Read every subflow of a project from its files' names and texts. Returns the set, in which
    /// a subflow with errors is kept as broken, and the problems of every file.
    pub fn load<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
        registry: &Registry,
    ) -> (Subflows, Vec<Diagnostic>) {
        let mut set = Subflows::default();
        let mut problems = Vec::new();
        let mut raws: Vec<Raw> = Vec::new();
        for (file, src) in files {
            match read_raw(file, src) {
                Ok(raw) => raws.push(raw),
                Err(d) => {
                    // Named by its file: uses then learn it has errors.
                    problems.push(d);
                    set.entries.entry(file_stem(file)).or_insert(Entry::Broken {
                        file: file.to_string(),
                    });
                }
            }
        }
        check_names(&mut raws, &set, registry);
        find_uses(&mut raws, registry);
        let order = check_cycles(&mut raws);
        for i in order {
            let raw = &mut raws[i];
            if raw.skip {
                continue;
            }
            let built = if raw.l.problems.is_empty() {
                build(raw, registry, &set)
            } else {
                None
            };
            let entry = match built {
                Some(def) => Entry::Ready(Arc::new(def)),
                None => Entry::Broken {
                    file: raw.l.src.file.clone(),
                },
            };
            set.entries.insert(raw.name.clone(), entry);
        }
        for raw in raws {
            problems.extend(raw.l.problems);
        }
        (set, problems)
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<Lookup<'_>> {
        self.entries.get(name).map(|e| match e {
            Entry::Ready(def) => Lookup::Ready(def),
            Entry::Broken { file } => Lookup::Broken { file },
        })
    }

    /// A subflow without errors, by name.
    pub fn get(&self, name: &str) -> Option<&SubflowDef> {
        match self.entries.get(name) {
            Some(Entry::Ready(def)) => Some(def),
            _ => None,
        }
    }

    /// The names of every subflow, those with errors included.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// The subflows without errors, by name.
    pub fn iter(&self) -> impl Iterator<Item = &SubflowDef> {
        self.entries.values().filter_map(|e| match e {
            Entry::Ready(def) => Some(&**def),
            Entry::Broken { .. } => None,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The project's subflow types in Markdown, as the node reference describes node types.
    pub fn docs_markdown(&self) -> String {
        let mut out = String::new();
        for def in self.iter() {
            let _ = writeln!(out, "## {}\n", def.name);
            if !def.description.is_empty() {
                let _ = writeln!(out, "{}\n", def.description);
            }
            let _ = writeln!(out, "Subflow, from `{}`.\n", def.file);
            if !def.inputs.is_empty() || !def.outputs.is_empty() {
                let _ = writeln!(out, "| terminal | direction |\n|---|---|");
                for t in &def.inputs {
                    let _ = writeln!(out, "| `{t}` | in |");
                }
                for t in &def.outputs {
                    let _ = writeln!(out, "| `{t}` | out |");
                }
                out.push('\n');
            }
            if !def.properties.is_empty() {
                let _ = writeln!(
                    out,
                    "| property | type | default | meaning |\n|---|---|---|---|"
                );
                for p in &def.properties {
                    let default = match (&p.default, p.required) {
                        (Some(d), _) => format!("`{}`", value_text(d)),
                        (None, true) => "required".into(),
                        (None, false) => "—".into(),
                    };
                    let _ = writeln!(
                        out,
                        "| `{}` | {} | {} | {} (sets {}) |",
                        p.name,
                        p.kind.describe(),
                        default,
                        p.doc,
                        p.target_names.join(", ")
                    );
                }
                out.push('\n');
            }
        }
        out
    }
}

fn value_text(v: &PropValue) -> String {
    match v {
        PropValue::String(s) => s.clone(),
        PropValue::Integer(i) => i.to_string(),
        PropValue::Boolean(b) => b.to_string(),
        PropValue::Float(f) => f.to_string(),
        PropValue::List(l) => format!("[{}]", l.join(", ")),
        PropValue::Map(m) => {
            let pairs: Vec<String> = m.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            format!("{{{}}}", pairs.join(", "))
        }
    }
}

fn file_stem(file: &str) -> String {
    std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The top level of a subflow file.
fn read_raw(file: &str, src: &str) -> Result<Raw, Diagnostic> {
    let doc = yaml::parse(file, src)?;
    let mut raw = Raw {
        name: file_stem(file),
        l: Loader::new(file, src),
        description: String::new(),
        nodes: None,
        properties: None,
        uses: Vec::new(),
        name_at: None,
        skip: false,
    };
    let YamlKind::Map(top) = &doc.kind else {
        raw.l
            .err(
                &doc,
                format!("a subflow file must be a mapping, found {}", doc.describe()),
            )
            .hint = Some("start with `subflow: NAME` and `nodes:`".into());
        return Ok(raw);
    };
    for (k, v) in top {
        match k.as_str() {
            Some("subflow") => match v.as_str() {
                Some(s) if !s.is_empty() => {
                    raw.name = s.to_string();
                    raw.name_at = Some((v.line, v.col));
                }
                _ => {
                    raw.l.err(v, "`subflow` must be the subflow's name");
                }
            },
            Some("description") => raw.description = v.scalar_text().unwrap_or_default(),
            Some("nodes") => raw.nodes = Some(v.clone()),
            Some("properties") => raw.properties = Some(v.clone()),
            _ => {
                let key = k.scalar_text().unwrap_or_default();
                let hint = did_you_mean(&key, SUBFLOW_KEYS.iter().copied());
                raw.l
                    .err(k, format!("unknown subflow setting `{key}`"))
                    .hint = hint
                    .or_else(|| Some(format!("a subflow file has {}", SUBFLOW_KEYS.join(", "))));
            }
        }
    }
    if raw.nodes.is_none() {
        raw.l.err(&doc, "the subflow has no `nodes`").hint =
            Some("add `nodes:` with Input and Output nodes for its terminals".into());
    }
    Ok(raw)
}

/// A subflow's name must not be a node type's, nor another subflow's.
fn check_names(raws: &mut [Raw], set: &Subflows, registry: &Registry) {
    for i in 0..raws.len() {
        let name = raws[i].name.clone();
        let clash = if registry.get(&name).is_some() || name == INPUT || name == OUTPUT {
            Some(format!("subflow `{name}` has the name of a node type"))
        } else if let Some(first) = raws[..i].iter().find(|r| r.name == name && !r.skip) {
            Some(format!(
                "subflow name `{name}` is also used by {}",
                first.l.src.file
            ))
        } else if let Some(Lookup::Broken { file }) = set.lookup(&name) {
            Some(format!("subflow name `{name}` is also used by {file}"))
        } else {
            None
        };
        if let Some(message) = clash {
            let raw = &mut raws[i];
            let place = name_place(raw);
            raw.l.problems.push(
                place
                    .diagnostic(message)
                    .with_hint("rename the subflow (its `subflow:` or its file)"),
            );
            raw.skip = true;
        }
    }
}

/// Where a subflow's name is written: its `subflow:` value, else the top of the file.
fn name_place(raw: &Raw) -> Place {
    let (line, col) = raw.name_at.unwrap_or((1, 1));
    Place {
        src: Arc::clone(&raw.l.src),
        line,
        col,
    }
}

/// Which subflows each subflow's nodes use.
fn find_uses(raws: &mut [Raw], registry: &Registry) {
    let names: Vec<Option<String>> = raws
        .iter()
        .map(|r| (!r.skip).then(|| r.name.clone()))
        .collect();
    for raw in raws.iter_mut() {
        let Some(YamlKind::Map(entries)) = raw.nodes.as_ref().map(|n| &n.kind) else {
            continue;
        };
        for (_, v) in entries {
            let Some(type_y) = map_get(v, "type") else {
                continue;
            };
            let Some(t) = type_y.as_str() else { continue };
            if registry.get(t).is_some() || t == INPUT || t == OUTPUT {
                continue;
            }
            if let Some(j) = names.iter().position(|n| n.as_deref() == Some(t)) {
                raw.uses.push((j, type_y.clone()));
            }
        }
    }
}

/// Report subflows that use each other in a loop, at every use on the loop; returns the order
/// to build them in (every subflow after those it uses).
fn check_cycles(raws: &mut [Raw]) -> Vec<usize> {
    // 0 = unvisited, 1 = on the current path, 2 = done.
    let mut state = vec![0u8; raws.len()];
    let mut path = Vec::new();
    let mut order = Vec::new();
    let mut cycles: Vec<Vec<usize>> = Vec::new();
    fn visit(
        n: usize,
        raws: &[Raw],
        state: &mut [u8],
        path: &mut Vec<usize>,
        order: &mut Vec<usize>,
        cycles: &mut Vec<Vec<usize>>,
    ) {
        state[n] = 1;
        path.push(n);
        for (t, _) in &raws[n].uses {
            match state[*t] {
                0 => visit(*t, raws, state, path, order, cycles),
                1 => {
                    let start = path.iter().position(|p| p == t).unwrap_or(0);
                    cycles.push(path[start..].to_vec());
                }
                _ => {}
            }
        }
        path.pop();
        state[n] = 2;
        order.push(n);
    }
    for n in 0..raws.len() {
        if state[n] == 0 {
            visit(n, raws, &mut state, &mut path, &mut order, &mut cycles);
        }
    }
    let mut reported: BTreeSet<(usize, usize)> = BTreeSet::new();
    for cycle in cycles {
        for k in 0..cycle.len() {
            let from = cycle[k];
            let to = cycle[(k + 1) % cycle.len()];
            if !reported.insert((from, to)) {
                continue;
            }
            let chain: Vec<&str> = (0..=cycle.len())
                .map(|d| raws[cycle[(k + d) % cycle.len()]].name.as_str())
                .collect();
            let message = format!(
                "subflow `{}` uses itself: {}",
                raws[from].name,
                chain.join(" -> ")
            );
            let Some((_, at)) = raws[from].uses.iter().find(|(t, _)| *t == to) else {
                continue;
            };
            let at = at.clone();
            raws[from].l.err(&at, message).hint = Some(
                "a use is expanded inline, so subflows cannot use each other in a loop".into(),
            );
        }
    }
    order
}

/// A promoted property as its file declares it.
struct RawProperty {
    name: String,
    key: Yaml,
    doc: Option<String>,
    default: Option<Yaml>,
    /// (label, property, the target as written).
    targets: Vec<(String, String, Yaml)>,
}

fn build(raw: &mut Raw, registry: &Registry, set: &Subflows) -> Option<SubflowDef> {
    let l = &mut raw.l;
    let nodes = raw.nodes.as_ref()?;
    let declared = match &raw.properties {
        Some(p) => read_properties(l, p),
        None => Vec::new(),
    };
    let promoted: Vec<(String, String)> = declared
        .iter()
        .flat_map(|p| p.targets.iter().map(|(n, q, _)| (n.clone(), q.clone())))
        .collect();
    let types = Types {
        registry,
        subflows: set,
        in_subflow: true,
    };
    let body = load_body(l, &types, nodes, &promoted);
    let properties = resolve_properties(l, &body, declared);
    if l.problems.is_empty() {
        // Loops inside the subflow, reported once here rather than in every flow using it.
        flatten(l, &body);
    }
    if !l.problems.is_empty() {
        return None;
    }
    let pick = |want: fn(&ItemKind) -> bool| -> (Vec<String>, Vec<usize>) {
        body.items
            .iter()
            .enumerate()
            .filter(|(_, i)| want(&i.kind))
            .map(|(k, i)| (i.label.clone(), k))
            .unzip()
    };
    let (inputs, input_items) = pick(|k| matches!(k, ItemKind::Input));
    let (outputs, output_items) = pick(|k| matches!(k, ItemKind::Output));
    let mut files = BTreeSet::from([l.src.file.clone()]);
    for item in &body.items {
        if let ItemKind::Use { sub, .. } = &item.kind {
            files.extend(sub.files.iter().cloned());
        }
    }
    Some(SubflowDef {
        name: raw.name.clone(),
        file: l.src.file.clone(),
        description: raw.description.clone(),
        inputs,
        outputs,
        properties,
        files,
        body,
        input_items,
        output_items,
    })
}

fn read_properties(l: &mut Loader, y: &Yaml) -> Vec<RawProperty> {
    let mut out = Vec::new();
    let YamlKind::Map(entries) = &y.kind else {
        l.err(y, "`properties` must map property names to their settings")
            .hint = Some("for example `queue: { default: REPLIES, targets: [put.queue] }`".into());
        return out;
    };
    for (k, v) in entries {
        let name = k.scalar_text().unwrap_or_default();
        if name.is_empty() || name == "type" || name == "wires" {
            l.err(k, format!("`{name}` cannot be a property name"));
            continue;
        }
        let YamlKind::Map(settings) = &v.kind else {
            l.err(
                v,
                format!("property `{name}` must be a mapping with `targets`"),
            )
            .hint = Some("for example `{ default: REPLIES, targets: [put.queue] }`".into());
            continue;
        };
        let mut p = RawProperty {
            name: name.clone(),
            key: k.clone(),
            doc: None,
            default: None,
            targets: Vec::new(),
        };
        let mut has_targets = false;
        let mut bad_target = false;
        for (sk, sv) in settings {
            match sk.as_str() {
                Some("doc") => p.doc = sv.scalar_text(),
                Some("default") => p.default = Some(sv.clone()),
                Some("targets") => {
                    has_targets = true;
                    let items: Vec<&Yaml> = match &sv.kind {
                        YamlKind::Seq(items) => items.iter().collect(),
                        _ => vec![sv],
                    };
                    for t in items {
                        let text = t.as_str().unwrap_or_default();
                        // A label may hold dots (the product allows them); a property may not.
                        match text.rsplit_once('.') {
                            Some((node, prop)) if !node.is_empty() && !prop.is_empty() => p
                                .targets
                                .push((node.to_string(), prop.to_string(), t.clone())),
                            _ => {
                                bad_target = true;
                                l.err(t, "a target must be `node.property`").hint = Some(
                                    "the label of a node inside and one of its properties".into(),
                                );
                            }
                        }
                    }
                }
                _ => {
                    let key = sk.scalar_text().unwrap_or_default();
                    let hint = did_you_mean(&key, PROPERTY_KEYS.iter().copied());
                    l.err(sk, format!("unknown setting `{key}` of property `{name}`"))
                        .hint = hint
                        .or_else(|| Some(format!("a property has {}", PROPERTY_KEYS.join(", "))));
                }
            }
        }
        if !has_targets || (p.targets.is_empty() && !bad_target) {
            l.err(k, format!("property `{name}` has no `targets`")).hint =
                Some("name the node properties it sets, as `targets: [node.property]`".into());
        }
        out.push(p);
    }
    out
}

/// Check each promoted property's targets against the nodes inside, and work out its kind,
/// default and whether uses must set it.
fn resolve_properties(
    l: &mut Loader,
    body: &Body,
    declared: Vec<RawProperty>,
) -> Vec<PromotedProperty> {
    let mut out: Vec<PromotedProperty> = Vec::new();
    // Every target accepted so far, with the property promoting it: one target, one property.
    let mut claimed: Vec<(usize, String, String)> = Vec::new();
    let labels = || body.items.iter().map(|i| i.label.as_str());
    for rp in declared {
        // (kind, required, doc) of the first target, then whether any target needs a value.
        let mut first: Option<(PropKind, String, String)> = None;
        let mut required = false;
        let mut targets = Vec::new();
        let mut ok = true;
        for (label, prop, ty) in &rp.targets {
            let Some(ti) = body.items.iter().position(|i| i.label == *label) else {
                let hint = did_you_mean(label, labels());
                l.err(
                    ty,
                    format!(
                        "promoted property `{}` targets unknown node `{label}`",
                        rp.name
                    ),
                )
                .hint = hint;
                ok = false;
                continue;
            };
            let item = &body.items[ti];
            // (name, kind, required, doc) of every property the target accepts.
            let accepted: Vec<(String, PropKind, bool, String)> = match &item.kind {
                ItemKind::Node { spec, config, .. } => spec
                    .properties()
                    .iter()
                    .map(|p| {
                        let unset = config.value(p.name).is_none();
                        (
                            p.name.to_string(),
                            p.kind,
                            p.required && unset,
                            p.doc_text(),
                        )
                    })
                    .collect(),
                ItemKind::Use { sub, values, .. } => sub
                    .properties
                    .iter()
                    .map(|p| {
                        let unset = values.value(&p.name).is_none();
                        (p.name.clone(), p.kind, p.required && unset, p.doc.clone())
                    })
                    .collect(),
                ItemKind::Input | ItemKind::Output => Vec::new(),
            };
            let Some((_, kind, needs, doc)) = accepted.iter().find(|a| a.0 == *prop) else {
                let hint = did_you_mean(prop, accepted.iter().map(|a| a.0.as_str()));
                l.err(ty, format!("{} has no property `{prop}`", item.type_name()))
                    .hint = hint.or_else(|| {
                    Some(if accepted.is_empty() {
                        format!("{} takes no properties", item.type_name())
                    } else {
                        let names: Vec<&str> = accepted.iter().map(|a| a.0.as_str()).collect();
                        format!("its properties are {}", names.join(", "))
                    })
                });
                ok = false;
                continue;
            };
            if let Some((.., other)) = claimed.iter().find(|(i, q, _)| *i == ti && q == prop) {
                l.err(
                    ty,
                    format!("`{label}.{prop}` is already promoted as `{other}`"),
                );
                ok = false;
                continue;
            }
            claimed.push((ti, prop.clone(), rp.name.clone()));
            match &first {
                None => first = Some((*kind, doc.clone(), format!("{label}.{prop}"))),
                Some((k, _, from)) if k != kind => {
                    l.err(
                        ty,
                        format!(
                            "`{label}.{prop}` is {}, but `{}` is {} (from `{from}`)",
                            kind.describe(),
                            rp.name,
                            k.describe()
                        ),
                    )
                    .hint = Some("the targets of one property must be of one kind".into());
                    ok = false;
                    continue;
                }
                Some(_) => {}
            }
            required |= *needs;
            targets.push((ti, prop.clone()));
        }
        let Some((kind, target_doc, _)) = first else {
            continue;
        };
        let default = match &rp.default {
            Some(dy) => match convert_prop(kind, dy) {
                Ok(v) => Some(v),
                Err(msg) => {
                    l.err(dy, format!("default of property `{}`: {msg}", rp.name));
                    ok = false;
                    None
                }
            },
            None => None,
        };
        if !ok {
            continue;
        }
        out.push(PromotedProperty {
            required: required && default.is_none(),
            default,
            kind,
            doc: rp.doc.clone().unwrap_or(target_doc),
            target_names: rp
                .targets
                .iter()
                .map(|(n, q, _)| format!("{n}.{q}"))
                .collect(),
            targets,
            place: l.place(rp.default.as_ref().unwrap_or(&rp.key)),
            name: rp.name,
        });
    }
    out
}
