//! Subflow uses expanded inline, as the product does at deploy time: the flow that runs holds
//! every node of every subflow it uses (labelled `use.inner`, nested `outer.use.inner`), and the
//! wires through a subflow's Input and Output nodes are joined up.
//!
//! Expansion first lays every node out in one list, the Input and Output nodes of each use
//! included as pass-through nodes with one terminal each way: a wire to a use's input terminal
//! goes to its Input node, and the use's output terminal's wires leave from its Output node.
//! Then each wire to a pass-through node is replaced, in place, by that node's own wires, so
//! propagation order stays what the files wrote: depth-first, in wiring order, through the
//! subflow as through any node.

use std::sync::Arc;

use sluice_node_api::{NodeConfig, NodeSpec, PropValue};

use crate::body::{Body, ItemKind, Loader};
use crate::load::{NodeDef, Place};

struct Flat {
    label: String,
    place: Place,
    /// `None` for a subflow's Input and Output nodes, which only pass wires through.
    node: Option<FlatNode>,
    inputs: Vec<String>,
    outputs: Vec<String>,
    wires: Vec<Vec<(usize, u16)>>,
}

struct FlatNode {
    spec: &'static NodeSpec,
    config: NodeConfig,
    places: Vec<(String, Place)>,
}

/// Where wires to an item's input terminals and from its output terminals attach in the list.
struct Ends {
    inputs: Vec<(usize, u16)>,
    outputs: Vec<(usize, usize)>,
}

/// Per item of a body: the properties set on it from outside (promoted values).
type Overrides = Vec<Vec<(String, PropValue, Place)>>;

/// Expand every subflow use of `body` and check the result: labels unique, no loops. Problems go
/// to `l`; the nodes are returned whatever they are.
pub(crate) fn flatten(l: &mut Loader, body: &Body) -> Vec<NodeDef> {
    let mut flat = Vec::new();
    expand(body, "", &Vec::new(), &mut flat);
    let mut index = vec![usize::MAX; flat.len()];
    let mut n = 0;
    for (f, x) in flat.iter().enumerate() {
        if x.node.is_some() {
            index[f] = n;
            n += 1;
        }
    }
    let mut nodes = Vec::with_capacity(n);
    let mut looped = false;
    for x in &flat {
        let Some(node) = &x.node else { continue };
        let mut wires = Vec::with_capacity(x.wires.len());
        for targets in &x.wires {
            let mut acc = Vec::new();
            for &t in targets {
                let mut path = Vec::new();
                if let Err(cycle) = through(&flat, &index, t, &mut path, &mut acc)
                    && !looped
                {
                    looped = true;
                    let chain: Vec<&str> = cycle.iter().map(|&f| flat[f].label.as_str()).collect();
                    l.problems.push(
                        flat[cycle[0]]
                            .place
                            .diagnostic(format!(
                                "the wires form a loop through subflow terminals: {}",
                                chain.join(" -> ")
                            ))
                            .with_hint("propagation would never end; remove one of these wires"),
                    );
                }
            }
            wires.push(acc);
        }
        nodes.push(NodeDef {
            label: x.label.clone(),
            spec: node.spec,
            config: node.config.clone(),
            inputs: x.inputs.clone(),
            outputs: x.outputs.clone(),
            wires,
            place: x.place.clone(),
            places: node.places.clone(),
        });
    }
    check_labels(l, &nodes);
    check_cycles(l, &nodes);
    nodes
}

fn expand(body: &Body, prefix: &str, overrides: &Overrides, out: &mut Vec<Flat>) -> Vec<Ends> {
    let mut ends = Vec::with_capacity(body.items.len());
    for (i, item) in body.items.iter().enumerate() {
        let label = format!("{prefix}{}", item.label);
        let set = overrides.get(i).map(Vec::as_slice).unwrap_or(&[]);
        let f = out.len();
        match &item.kind {
            ItemKind::Node {
                spec,
                config,
                places,
            } => {
                let mut config = config.clone();
                let mut places = places.clone();
                for (name, v, place) in set {
                    config.insert(name, v.clone());
                    places.retain(|(n, _)| n != name);
                    places.push((name.clone(), place.clone()));
                }
                out.push(Flat {
                    label,
                    place: item.place.clone(),
                    node: Some(FlatNode {
                        spec,
                        config,
                        places,
                    }),
                    inputs: spec
                        .inputs
                        .iter()
                        .map(|t| t.name.to_string())
                        .chain(item.named_inputs.iter().cloned())
                        .collect(),
                    outputs: item.outputs.clone(),
                    wires: vec![Vec::new(); item.outputs.len()],
                });
                ends.push(Ends {
                    inputs: (0..spec.inputs.len() + item.named_inputs.len())
                        .map(|k| (f, k as u16))
                        .collect(),
                    outputs: (0..item.outputs.len()).map(|t| (f, t)).collect(),
                });
            }
            ItemKind::Input | ItemKind::Output => {
                out.push(Flat {
                    label,
                    place: item.place.clone(),
                    node: None,
                    inputs: Vec::new(),
                    outputs: Vec::new(),
                    wires: vec![Vec::new()],
                });
                ends.push(Ends {
                    inputs: vec![(f, 0)],
                    outputs: vec![(f, 0)],
                });
            }
            ItemKind::Use {
                sub,
                values,
                places,
            } => {
                // A value promoted to this use from outside wins over the one the use sets, which
                // wins over the subflow's default.
                let mut nested: Overrides = vec![Vec::new(); sub.body.items.len()];
                for p in &sub.properties {
                    let value = set
                        .iter()
                        .find(|(n, ..)| *n == p.name)
                        .map(|(_, v, place)| (v.clone(), place.clone()))
                        .or_else(|| {
                            values.value(&p.name).map(|v| {
                                let place = places
                                    .iter()
                                    .find(|(n, _)| *n == p.name)
                                    .map_or(&item.place, |(_, pl)| pl);
                                (v.clone(), place.clone())
                            })
                        })
                        .or_else(|| p.default.clone().map(|v| (v, p.place.clone())));
                    if let Some((v, place)) = value {
                        for (ti, tp) in &p.targets {
                            nested[*ti].push((tp.clone(), v.clone(), place.clone()));
                        }
                    }
                }
                let inner = expand(&sub.body, &format!("{label}."), &nested, out);
                ends.push(Ends {
                    inputs: sub
                        .input_items
                        .iter()
                        .map(|&k| inner[k].inputs[0])
                        .collect(),
                    outputs: sub
                        .output_items
                        .iter()
                        .map(|&k| inner[k].outputs[0])
                        .collect(),
                });
            }
        }
    }
    for (i, item) in body.items.iter().enumerate() {
        for (t, targets) in item.wires.iter().enumerate() {
            let (f, ft) = ends[i].outputs[t];
            for &(j, input) in targets {
                let dest = ends[j].inputs[input as usize];
                out[f].wires[ft].push(dest);
            }
        }
    }
    ends
}

/// The real nodes a wire to `t` reaches: `t` itself, or, for a pass-through node, what it is
/// wired to, in order. A loop of pass-through nodes is returned as the chain.
fn through(
    flat: &[Flat],
    index: &[usize],
    t: (usize, u16),
    path: &mut Vec<usize>,
    acc: &mut Vec<(usize, u16)>,
) -> Result<(), Vec<usize>> {
    let x = &flat[t.0];
    if x.node.is_some() {
        acc.push((index[t.0], t.1));
        return Ok(());
    }
    if let Some(start) = path.iter().position(|&p| p == t.0) {
        let mut cycle = path[start..].to_vec();
        cycle.push(t.0);
        return Err(cycle);
    }
    path.push(t.0);
    for &w in &x.wires[0] {
        through(flat, index, w, path, acc)?;
    }
    path.pop();
    Ok(())
}

/// Labels must stay unique once subflows are expanded (a flow's own `a.b` against node `b`
/// inside the use `a`).
fn check_labels(l: &mut Loader, nodes: &[NodeDef]) {
    let mut seen: std::collections::HashMap<&str, &NodeDef> = std::collections::HashMap::new();
    for n in nodes {
        if let Some(first) = seen.get(n.label.as_str()) {
            let other = &first.place;
            l.problems.push(
                n.place
                    .diagnostic(format!(
                        "two nodes are labelled `{}` once subflows are expanded",
                        n.label
                    ))
                    .with_hint(format!(
                        "the other is at {}:{}; rename one (a dot separates a subflow use's label from the labels inside)",
                        other.src.file, other.line
                    )),
            );
        } else {
            seen.insert(&n.label, n);
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
            // Point into the file being loaded when the loop passes through it: a loop through a
            // subflow use is the using file's wiring.
            let at = cycle
                .iter()
                .map(|&i| &nodes[i].place)
                .find(|p| Arc::ptr_eq(&p.src, &l.src))
                .unwrap_or(&nodes[cycle[0]].place);
            l.problems.push(
                at.diagnostic(format!("the wires form a loop: {}", chain.join(" -> ")))
                    .with_hint("propagation would never end; remove one of these wires"),
            );
            return;
        }
    }
}
