//! Hostile input never panics: arbitrary bytes and mutated documents, parsed completely and
//! on demand, then serialised.

mod common;

use common::*;
use proptest::prelude::*;
use sluice_parsers::xmlnsc::XmlnscOptions;
use sluice_tree::Text;

const SEED: &str = r#"<?xml version="1.0"?><!DOCTYPE r><s:r xmlns:s="urn:s" xmlns="urn:d" a='1'><s:b x="&amp;">t&#65;<![CDATA[c]]><!--k--></s:b><c><?p d?><d/>m</c><e xml:lang="en">v</e></s:r>"#;

fn exercise(body: Vec<u8>, flags: u8) {
    let options = XmlnscOptions {
        opaque_elements: if flags & 1 != 0 {
            vec!["c".into(), "/r/b".into()]
        } else {
            vec![]
        },
        retain_mixed: flags & 2 != 0,
        retain_comments: flags & 4 != 0,
        retain_pis: flags & 8 != 0,
        ..Default::default()
    };
    let (mut t, id) = attach_bytes(body.clone(), options.clone());
    if t.expand_all(id).is_ok() {
        let mut out = Vec::new();
        let _ = sluice_parsers::xmlnsc::serialize_to(&mut t, id, &mut out);
        assert_eq!(out, body);
        if let Ok(Some(f)) = t.first_child(id) {
            t.set_name(f, Text::from_static("z"));
        }
        out.clear();
        let _ = sluice_parsers::xmlnsc::serialize_to(&mut t, id, &mut out);
    }
    let (mut t, id) = attach_bytes(body, options);
    let mut at_ = t.first_child(id).ok().flatten();
    let mut last = None;
    while let Some(n) = at_ {
        last = Some(n);
        at_ = t.first_child(n).ok().flatten();
    }
    if let Some(n) = last {
        t.set_str(n, "x");
        let _ = t.next_sibling(n);
    }
    let mut out = Vec::new();
    let _ = sluice_parsers::xmlnsc::serialize_to(&mut t, id, &mut out);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(body in prop::collection::vec(any::<u8>(), 0..200), flags in any::<u8>()) {
        exercise(body, flags);
    }

    #[test]
    fn mutated_documents_never_panic(
        edits in prop::collection::vec((0usize..SEED.len(), prop::sample::select(b"<>/&;:='\"!?[]- xa\xff".to_vec()), 0u8..3), 1..6),
        flags in any::<u8>(),
    ) {
        let body = mutate(SEED, edits);
        exercise(body, flags);
    }
}
