//! The JSON domain parser and serialiser on arbitrary bytes.
//!
//! Checks: no panic on any input, whether parsed lazily (navigation) or completely; a message
//! that parses completely serialises unchanged to the same bytes; the text rebuilt element by
//! element parses again and rebuilds to the same text.

use std::sync::Arc;

use bytes::Bytes;
use sluice_parsers::json::{JsonParser, attach, to_bytes};
use sluice_tree::{NodeId, Tree};

fn load(data: &[u8], parser: &Arc<JsonParser>) -> Option<(Tree, NodeId)> {
    let mut tree = Tree::new("Root");
    let root = tree.root();
    let json = attach(&mut tree, root, Bytes::copy_from_slice(data), parser).ok()?;
    Some((tree, json))
}

/// Mark every parsed element changed so that the serialiser writes all of them from the tree.
fn touch_all(tree: &mut Tree, id: NodeId) {
    let mut stack = vec![id];
    while let Some(n) = stack.pop() {
        tree.touch(n);
        let mut c = tree.peek_first_child(n);
        while let Some(k) = c {
            stack.push(k);
            c = tree.peek_next_sibling(k);
        }
    }
}

/// Walk depth first by navigation (parsing on demand) until the end or the first error.
fn walk_lazily(tree: &mut Tree, json: NodeId) {
    let mut at = Some(json);
    let mut steps = 0;
    while let Some(n) = at {
        steps += 1;
        if steps > 100_000 {
            return;
        }
        at = match tree.first_child(n) {
            Err(_) => return,
            Ok(Some(c)) => Some(c),
            Ok(None) => {
                // Climb until a next sibling exists.
                let mut up = Some(n);
                let mut next = None;
                while let Some(u) = up {
                    if u == json {
                        break;
                    }
                    match tree.next_sibling(u) {
                        Err(_) => return,
                        Ok(Some(s)) => {
                            next = Some(s);
                            break;
                        }
                        Ok(None) => up = tree.parent(u),
                    }
                }
                next
            }
        };
    }
}

/// Run one input.
pub fn run(data: &[u8]) {
    let parser = Arc::new(JsonParser::new());

    if let Some((mut tree, json)) = load(data, &parser) {
        walk_lazily(&mut tree, json);
        // Serialising a partly parsed tree may fail only where the bytes are malformed.
        let _ = to_bytes(&mut tree, json, &parser);
    }

    let Some((mut tree, json)) = load(data, &parser) else {
        return;
    };
    if tree.expand_all(json).is_err() {
        return;
    }
    let same = to_bytes(&mut tree, json, &parser).expect("unchanged message serialises");
    assert_eq!(same, data, "unchanged message must serialise to its bytes");

    touch_all(&mut tree, json);
    let rebuilt = to_bytes(&mut tree, json, &parser).expect("parsed message rebuilds");
    let (mut again, json2) = load(&rebuilt, &parser).expect("rebuilt text within limits");
    again.expand_all(json2).expect("rebuilt text parses");
    touch_all(&mut again, json2);
    let twice = to_bytes(&mut again, json2, &parser).expect("reparsed message rebuilds");
    assert_eq!(rebuilt, twice, "rebuilding is stable");
}
