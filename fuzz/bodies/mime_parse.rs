//! The MIME domain parser and serialiser on arbitrary bytes.
//!
//! The first byte chooses how the body arrives: with a Content-Type from the transport (as HTTP
//! gives it, taken from the next line of the input) or with its own header block (as MQ carries
//! MIME). Checks: no panic on any input, whether parsed lazily (navigation) or completely; a
//! message that parses serialises unchanged to the same bytes; the text rebuilt element by
//! element parses again and rebuilds to the same text.

use std::sync::Arc;

use bytes::Bytes;
use sluice_parsers::mime::{MimeParser, PartDomains, attach, serialize_content, serialize_entity};
use sluice_tree::field_type::{NAME, NAME_VALUE};
use sluice_tree::{NodeId, Text, Tree, Value};

fn load(ct: Option<&[u8]>, body: &[u8], parser: &Arc<MimeParser>) -> (Tree, NodeId) {
    let mut tree = Tree::new("Root");
    let root = tree.root();
    if let Some(ct) = ct {
        let p = tree
            .create_last_child(root, NAME, Text::from_static("Properties"), Value::Null)
            .expect("a new tree takes a child");
        let v = tree.alloc_text(ct);
        tree.create_last_child(
            p,
            NAME_VALUE,
            Text::from_static("ContentType"),
            Value::Character(v),
        )
        .expect("a new folder takes a child");
    }
    let id = attach(&mut tree, root, Bytes::copy_from_slice(body), parser);
    (tree, id)
}

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

fn walk_lazily(tree: &mut Tree, id: NodeId) {
    let mut stack = vec![id];
    let mut steps = 0;
    while let Some(n) = stack.pop() {
        steps += 1;
        if steps > 100_000 {
            return;
        }
        match tree.children(n) {
            Ok(c) => stack.extend(c),
            Err(_) => return,
        }
    }
}

fn write(tree: &mut Tree, id: NodeId, transport: bool) -> Result<(String, Vec<u8>), String> {
    let mut out = Vec::new();
    let ct = if transport {
        serialize_content(tree, id, &mut out)
    } else {
        serialize_entity(tree, id, &mut out)
    }
    .map_err(|e| e.to_string())?;
    Ok((ct, out))
}

/// Run one input.
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let transport = mode & 1 == 1;
    // A transport's Content-Type is text; one that is blank leaves the body to say its own.
    let (ct, body) = if transport {
        let (line, body) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (
                String::from_utf8_lossy(&rest[..i]).into_owned(),
                &rest[i + 1..],
            ),
            None => (String::new(), rest),
        };
        let line = if line.trim().is_empty() {
            "multipart/mixed; boundary=b".to_string()
        } else {
            line
        };
        (Some(line), body)
    } else {
        (None, rest)
    };
    let ct = ct.as_ref().map(|c| c.as_bytes());
    let parts = if mode & 2 == 2 {
        PartDomains::ByContentType
    } else {
        PartDomains::Blob
    };
    let parser = Arc::new(MimeParser::new(parts));

    let (mut tree, id) = load(ct, body, &parser);
    walk_lazily(&mut tree, id);
    let _ = write(&mut tree, id, transport);

    let (mut tree, id) = load(ct, body, &parser);
    if tree.expand_all(id).is_err() {
        return;
    }
    let (_, same) = write(&mut tree, id, transport).expect("unchanged message serialises");
    assert_eq!(same, body, "unchanged message must serialise to its bytes");

    touch_all(&mut tree, id);
    // Part bodies in XMLNSC or JSON may fail to rebuild where they are malformed: those domains
    // parse on demand and their own fuzz targets cover them.
    let Ok((ct1, rebuilt)) = write(&mut tree, id, transport) else {
        assert!(
            parts == PartDomains::ByContentType,
            "a parsed BLOB-part message rebuilds"
        );
        return;
    };
    let (mut again, id2) = load(transport.then_some(ct1.as_bytes()), &rebuilt, &parser);
    again.expand_all(id2).expect("rebuilt message parses");
    touch_all(&mut again, id2);
    let (ct2, twice) = write(&mut again, id2, transport).expect("reparsed message rebuilds");
    assert_eq!(rebuilt, twice, "rebuilding is stable");
    assert_eq!(ct1, ct2, "the Content-Type is stable");
}
