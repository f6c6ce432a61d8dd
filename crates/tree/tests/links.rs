//! Sibling links against a model: any sequence of creates, moves and deletes leaves every
//! level's first, last, next and previous links agreeing with a plain list of children.

use proptest::prelude::*;
use sluice_tree::{NodeId, Position, Text, Tree, Value, field_type};

#[derive(Clone, Debug)]
enum Op {
    CreateFirst(usize),
    CreateLast(usize),
    CreateAfter(usize),
    CreateBefore(usize),
    Delete(usize),
    Move(usize, usize, u8),
    SetValue(usize, i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<usize>().prop_map(Op::CreateFirst),
        any::<usize>().prop_map(Op::CreateLast),
        any::<usize>().prop_map(Op::CreateAfter),
        any::<usize>().prop_map(Op::CreateBefore),
        any::<usize>().prop_map(Op::Delete),
        (any::<usize>(), any::<usize>(), 0u8..4).prop_map(|(a, b, p)| Op::Move(a, b, p)),
        (any::<usize>(), any::<i64>()).prop_map(|(a, v)| Op::SetValue(a, v)),
    ]
}

/// The model: each element's ordered children and its value.
struct Model {
    kids: std::collections::HashMap<NodeId, Vec<NodeId>>,
    parent: std::collections::HashMap<NodeId, NodeId>,
    values: std::collections::HashMap<NodeId, i64>,
}

impl Model {
    fn live(&self, root: NodeId) -> Vec<NodeId> {
        let mut out = vec![root];
        let mut i = 0;
        while i < out.len() {
            out.extend(self.kids.get(&out[i]).into_iter().flatten().copied());
            i += 1;
        }
        out
    }
    fn remove(&mut self, id: NodeId) {
        if let Some(p) = self.parent.remove(&id) {
            self.kids.entry(p).or_default().retain(|&k| k != id);
        }
    }
    fn insert(&mut self, id: NodeId, parent: NodeId, at: usize) {
        self.kids.entry(parent).or_default().insert(at, id);
        self.parent.insert(id, parent);
    }
    fn index(&self, id: NodeId) -> (NodeId, usize) {
        let p = self.parent[&id];
        (p, self.kids[&p].iter().position(|&k| k == id).unwrap_or(0))
    }
}

fn check(t: &mut Tree, m: &Model) {
    for id in m.live(t.root()) {
        let kids = m.kids.get(&id).cloned().unwrap_or_default();
        assert_eq!(t.peek_first_child(id), kids.first().copied());
        assert_eq!(t.peek_last_child(id), kids.last().copied());
        for (i, &k) in kids.iter().enumerate() {
            assert_eq!(t.parent(k), Some(id));
            assert_eq!(t.peek_next_sibling(k), kids.get(i + 1).copied());
            assert_eq!(t.prev_sibling(k), i.checked_sub(1).map(|j| kids[j]));
            assert_eq!(t.value(k), Value::Integer(m.values[&k]));
        }
    }
}

proptest! {
    #[test]
    fn links_follow_the_model(ops in prop::collection::vec(op(), 1..120)) {
        let mut t = Tree::new("Root");
        let root = t.root();
        let mut m = Model { kids: Default::default(), parent: Default::default(), values: Default::default() };
        let name = Text::from_static("e");
        for (n, o) in ops.into_iter().enumerate() {
            let live = m.live(root);
            let pick = |i: usize| live[i % live.len()];
            let non_root = |i: usize| {
                let v: Vec<NodeId> = live.iter().copied().filter(|&x| x != root).collect();
                (!v.is_empty()).then(|| v[i % v.len()])
            };
            let v = n as i64;
            match o {
                Op::CreateFirst(i) => {
                    let p = pick(i);
                    let c = t.create_first_child(p, field_type::NAME_VALUE, name, Value::Integer(v)).unwrap();
                    m.insert(c, p, 0);
                    m.values.insert(c, v);
                }
                Op::CreateLast(i) => {
                    let p = pick(i);
                    let c = t.create_last_child(p, field_type::NAME_VALUE, name, Value::Integer(v)).unwrap();
                    let at = m.kids.get(&p).map_or(0, Vec::len);
                    m.insert(c, p, at);
                    m.values.insert(c, v);
                }
                Op::CreateAfter(i) | Op::CreateBefore(i) => {
                    let Some(s) = non_root(i) else { continue };
                    let after = matches!(o, Op::CreateAfter(_));
                    let c = if after {
                        t.create_next_sibling(s, field_type::NAME_VALUE, name, Value::Integer(v)).unwrap()
                    } else {
                        t.create_prev_sibling(s, field_type::NAME_VALUE, name, Value::Integer(v)).unwrap()
                    };
                    let (p, at) = m.index(s);
                    m.insert(c, p, if after { at + 1 } else { at });
                    m.values.insert(c, v);
                }
                Op::Delete(i) => {
                    let Some(d) = non_root(i) else { continue };
                    t.delete(d).unwrap();
                    m.remove(d);
                    // Deleted slots are reused: forget the whole subtree.
                    let mut gone = vec![d];
                    while let Some(g) = gone.pop() {
                        gone.extend(m.kids.remove(&g).unwrap_or_default());
                        m.parent.remove(&g);
                        m.values.remove(&g);
                    }
                }
                Op::Move(a, b, pos) => {
                    let Some(x) = non_root(a) else { continue };
                    let target = pick(b);
                    // Not into its own subtree.
                    let mut at = Some(target);
                    let mut inside = false;
                    while let Some(y) = at {
                        inside |= y == x;
                        at = m.parent.get(&y).copied();
                    }
                    let pos = [Position::FirstChild, Position::LastChild, Position::NextSibling, Position::PrevSibling][pos as usize];
                    if inside || (target == root && matches!(pos, Position::NextSibling | Position::PrevSibling)) {
                        continue;
                    }
                    t.detach(x).unwrap();
                    m.remove(x);
                    t.attach(x, target, pos).unwrap();
                    match pos {
                        Position::FirstChild => m.insert(x, target, 0),
                        Position::LastChild => {
                            let at = m.kids.get(&target).map_or(0, Vec::len);
                            m.insert(x, target, at)
                        }
                        Position::NextSibling => { let (p, at) = m.index(target); m.insert(x, p, at + 1) }
                        Position::PrevSibling => { let (p, at) = m.index(target); m.insert(x, p, at) }
                    }
                }
                Op::SetValue(i, val) => {
                    let Some(x) = non_root(i) else { continue };
                    t.set_value(x, Value::Integer(val));
                    m.values.insert(x, val);
                }
            }
            check(&mut t, &m);
        }
    }
}
