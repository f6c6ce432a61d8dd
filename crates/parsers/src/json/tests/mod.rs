//! Tests of the JSON domain.

mod constructs;
mod errors;
mod laziness;
mod roundtrip;
mod strings;
mod writing;

use std::sync::Arc;

use bytes::Bytes;
use sluice_tree::{NodeId, Tree};

use crate::json::{JsonOptions, JsonParser, attach, to_bytes};

/// A Root tree with the message attached as its JSON body, not parsed yet.
pub(super) fn load(text: &[u8]) -> (Tree, NodeId, Arc<JsonParser>) {
    load_with(text, JsonOptions::default())
}

pub(super) fn load_with(text: &[u8], options: JsonOptions) -> (Tree, NodeId, Arc<JsonParser>) {
    let mut tree = Tree::new("Root");
    let parser = Arc::new(JsonParser::with_options(options));
    let root = tree.root();
    let json = attach(&mut tree, root, Bytes::copy_from_slice(text), &parser).expect("attach");
    (tree, json, parser)
}

/// Parse completely and return the tree.
pub(super) fn parsed(text: &str) -> (Tree, NodeId, Arc<JsonParser>) {
    let (mut tree, json, parser) = load(text.as_bytes());
    tree.expand_all(json).expect("parse");
    (tree, json, parser)
}

pub(super) fn write(tree: &mut Tree, json: NodeId, parser: &JsonParser) -> String {
    String::from_utf8(to_bytes(tree, json, parser).expect("serialise")).expect("utf-8")
}

/// Mark every element under `id` changed, so that the serialiser rebuilds all of it.
pub(super) fn touch_all(tree: &mut Tree, id: NodeId) {
    tree.expand_all(id).expect("parse");
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
