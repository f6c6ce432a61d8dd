//! XMLNSC on arbitrary bytes, parsed on demand and completely, then serialised.
//!
//! Checks: no panic; a message that parses completely serialises unchanged to its own bytes.
//! The first input byte picks parser options so that every code path gets inputs.

use std::sync::Arc;

use bytes::Bytes;
use sluice_parsers::xmlnsc::{self, Limits, XmlnscOptions, XmlnscParser};
use sluice_tree::{Text, Tree};

/// Run one input.
pub fn run(data: &[u8]) {
    let (flags, body) = match data.split_first() {
        Some((f, rest)) => (*f, rest),
        None => (0, data),
    };
    let options = XmlnscOptions {
        opaque_elements: if flags & 1 != 0 {
            vec!["b".into(), "/a/c".into()]
        } else {
            vec![]
        },
        retain_mixed: flags & 2 != 0,
        retain_comments: flags & 4 != 0,
        retain_pis: flags & 8 != 0,
        limits: Limits {
            max_depth: 64,
            ..Limits::default()
        },
    };
    let parser = Arc::new(XmlnscParser::new(options));
    let body = Bytes::copy_from_slice(body);

    // Complete parse, unchanged serialisation, then a forced rewrite.
    let mut t = Tree::new("Root");
    let r = t.root();
    let id = xmlnsc::attach(&mut t, r, body.clone(), parser.clone());
    if t.expand_all(id).is_ok() {
        let mut out = Vec::new();
        let _ = xmlnsc::serialize_to(&mut t, id, &mut out);
        assert_eq!(
            out,
            &body[..],
            "unchanged message must serialise to its bytes"
        );
        if let Ok(Some(first)) = t.first_child(id) {
            t.set_name(first, Text::from_static("renamed"));
        }
        out.clear();
        let _ = xmlnsc::serialize_to(&mut t, id, &mut out);
    }

    // On-demand navigation: first child chain, then a change and a serialisation.
    let mut t = Tree::new("Root");
    let r = t.root();
    let id = xmlnsc::attach(&mut t, r, body, parser);
    let mut at = t.first_child(id).ok().flatten();
    let mut last = None;
    while let Some(n) = at {
        last = Some(n);
        at = t.first_child(n).ok().flatten();
    }
    if let Some(n) = last {
        t.set_str(n, "x");
        let _ = t.next_sibling(n);
    }
    let mut out = Vec::new();
    let _ = xmlnsc::serialize_to(&mut t, id, &mut out);
}
