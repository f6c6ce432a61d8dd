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
//! A node whose type is a subflow (see [`crate::subflow`]) is expanded inline: the flow that
//! runs holds the subflow's nodes, labelled `use.inner`, and no trace of the subflow node.

use std::sync::Arc;

use sluice_node_api::{NodeConfig, NodeSpec};

use crate::body::{ItemKind, Loader, Types, load_body};
use crate::diag::{Diagnostic, did_you_mean};
use crate::expand::flatten;
use crate::registry::Registry;
use crate::subflow::Subflows;
use crate::yaml::{self, YamlKind};

/// A flow as its file describes it, validated, with its subflows expanded.
#[derive(Clone)]
pub struct FlowDef {
    pub name: String,
    pub file: String,
    pub source: String,
    pub instances: usize,
    /// How its units of work commit (`transaction: automatic | coordinated`).
    pub transaction: sluice_node_api::Transaction,
    pub nodes: Vec<NodeDef>,
    /// The subflow files the flow uses, directly or through other subflows, sorted: when one
    /// changes, the flow must be loaded again.
    pub subflow_files: Vec<String>,
}

/// A file's name and text, shared by every node loaded from it, so that a problem found when a
/// node is built is reported in the file that wrote it (a subflow's, for a node inside one).
#[derive(Debug)]
pub struct SourceText {
    pub file: String,
    pub text: String,
}

/// A place in a flow or subflow file.
#[derive(Clone, Debug)]
pub struct Place {
    pub src: Arc<SourceText>,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub col: usize,
}

impl Place {
    /// A problem at this place.
    pub fn diagnostic(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic::at(&self.src.file, &self.src.text, self.line, self.col, message)
    }
}

/// One node of a flow.
#[derive(Clone)]
pub struct NodeDef {
    /// Its label; a node inside a subflow has the labels of the subflow uses around it in front,
    /// dot-separated (`use.inner`, `outer.use.inner`).
    pub label: String,
    pub spec: &'static NodeSpec,
    pub config: NodeConfig,
    /// Input terminal names: the declared ones, then named (dynamic) ones in wiring order.
    pub inputs: Vec<String>,
    /// Output terminal names: the declared ones, then named (dynamic) ones in wiring order.
    pub outputs: Vec<String>,
    /// Per output terminal: the wired (node index, input terminal index), in propagation order.
    pub wires: Vec<Vec<(usize, u16)>>,
    /// Where the node was written.
    pub place: Place,
    /// Where each property was written, for errors found when the node is built: a promoted
    /// property's value is where the subflow's use set it (or where its default is).
    pub places: Vec<(String, Place)>,
}

impl FlowDef {
    /// What its nodes serve exclusively ([`sluice_node_api::BuildNode::claims`]), each with the
    /// node that claims it.
    pub fn claims(&self) -> Vec<(String, &NodeDef)> {
        self.nodes
            .iter()
            .flat_map(|n| n.spec.claims(&n.config).into_iter().map(move |c| (c, n)))
            .collect()
    }

    /// Its claims, each with where its node is written: what [`conflicting_claims`] takes as
    /// claims already made.
    pub fn claim_places(&self) -> Vec<(String, String)> {
        self.claims()
            .into_iter()
            .map(|(c, n)| (c, n.whereabouts()))
            .collect()
    }
}

/// Two nodes that claim the same thing ([`FlowDef::claims`]): one problem per claim taken
/// twice, at the later node, naming the earlier one. `taken` holds claims already made
/// elsewhere (by flows deployed before), with where they were made.
pub fn conflicting_claims(
    defs: &[&FlowDef],
    taken: &[(String, String)],
) -> Vec<crate::diag::Diagnostic> {
    let mut seen: std::collections::HashMap<String, String> = taken.iter().cloned().collect();
    let mut problems = Vec::new();
    for def in defs {
        for (claim, node) in def.claims() {
            match seen.get(&claim) {
                Some(there) => problems.push(
                    node.place_of(None)
                        .diagnostic(format!("{claim} is already served by {there}")),
                ),
                None => {
                    seen.insert(claim, node.whereabouts());
                }
            }
        }
    }
    problems
}

impl NodeDef {
    /// `FILE:LINE (node `LABEL`)`, for messages that point at another node.
    pub fn whereabouts(&self) -> String {
        let place = &self.place;
        format!("{}:{} (node `{}`)", place.src.file, place.line, self.label)
    }

    /// The place of a property (or of the node when it was not written).
    pub fn place_of(&self, property: Option<&str>) -> &Place {
        property
            .and_then(|p| self.places.iter().find(|(n, _)| n == p))
            .map(|(_, place)| place)
            .unwrap_or(&self.place)
    }
}

const FLOW_KEYS: &[&str] = &["flow", "description", "instances", "transaction", "nodes"];

/// Parse and validate one flow file that uses no subflows (a node type that is not registered is
/// an error).
pub fn load_flow(file: &str, src: &str, registry: &Registry) -> Result<FlowDef, Vec<Diagnostic>> {
    load_flow_with(file, src, registry, &Subflows::default())
}

/// Parse and validate one flow file whose nodes may be uses of the project's `subflows`
/// (loaded once with [`Subflows::load`]), and expand those uses inline.
pub fn load_flow_with(
    file: &str,
    src: &str,
    registry: &Registry,
    subflows: &Subflows,
) -> Result<FlowDef, Vec<Diagnostic>> {
    let doc = yaml::parse(file, src).map_err(|d| vec![d])?;
    let mut l = Loader::new(file, src);
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
    let mut transaction = sluice_node_api::Transaction::Automatic;
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
            Some("transaction") => match v.as_str() {
                Some("automatic") => transaction = sluice_node_api::Transaction::Automatic,
                Some("coordinated") => transaction = sluice_node_api::Transaction::Coordinated,
                _ => {
                    l.err(v, "`transaction` must be `automatic` or `coordinated`")
                        .hint = Some(
                        "`coordinated` commits the queue manager's and the databases' work in two phases"
                            .into(),
                    );
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
    let types = Types {
        registry,
        subflows,
        in_subflow: false,
    };
    let body = load_body(&mut l, &types, nodes_yaml, &[]);
    let mut nodes = Vec::new();
    if l.problems.is_empty() {
        nodes = flatten(&mut l, &body);
        if !nodes.iter().any(|n| n.spec.inputs.is_empty()) {
            l.err(nodes_yaml, "the flow has no input node").hint =
                Some("add a node such as HTTPInput or MQInput".into());
        }
    }
    if !l.problems.is_empty() {
        return Err(l.problems);
    }
    let mut subflow_files: Vec<String> = body
        .items
        .iter()
        .filter_map(|i| match &i.kind {
            ItemKind::Use { sub, .. } => Some(sub.files.iter().cloned()),
            _ => None,
        })
        .flatten()
        .collect();
    subflow_files.sort();
    subflow_files.dedup();
    Ok(FlowDef {
        name,
        file: file.to_string(),
        source: src.to_string(),
        instances,
        transaction,
        nodes,
        subflow_files,
    })
}
