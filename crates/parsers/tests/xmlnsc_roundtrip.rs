//! Property tests: random well-formed documents parse, write back byte for byte when
//! unchanged, and mean the same after a change forces them to be written from the tree.

mod common;

use common::*;
use proptest::prelude::*;
use sluice_tree::{NodeId, Tree};

const NAMES: &[&str] = &["a", "b", "Item", "x-y", "n.1", "é", "_u"];
const PREFIXES: &[&str] = &["p", "q", "ns0"];

#[derive(Clone, Debug)]
enum Node {
    Element(Element),
    Text(Vec<Piece>),
}

#[derive(Clone, Debug)]
enum Piece {
    Chars(String),
    CharRef(char),
    CData(String),
    Comment(String),
}

#[derive(Clone, Debug)]
struct Element {
    prefix: Option<usize>,
    name: usize,
    /// Namespace declarations on this element: (prefix index or None for default, uri index).
    decls: Vec<(Option<usize>, usize)>,
    attrs: Vec<(Option<usize>, usize, String, bool)>,
    /// Either text pieces (a simple element) or child elements.
    content: Vec<Node>,
    space: bool,
}

fn text_strategy() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 &<>\"'é€\t\n\r]{0,12}"
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        4 => text_strategy().prop_map(Piece::Chars),
        1 => prop::sample::select(vec!['A', '&', '<', 'é', '\u{1F600}', '\r']).prop_map(Piece::CharRef),
        1 => "[a-z<>& ]{0,8}".prop_map(Piece::CData),
        1 => "[a-z ]{0,6}".prop_map(Piece::Comment),
    ]
}

fn element_strategy() -> impl Strategy<Value = Element> {
    let leaf = (
        proptest::option::of(0..PREFIXES.len()),
        0..NAMES.len(),
        prop::collection::vec((proptest::option::of(0..PREFIXES.len()), 0..3usize), 0..2),
        prop::collection::vec(
            (
                proptest::option::of(0..PREFIXES.len()),
                0..NAMES.len(),
                text_strategy(),
                any::<bool>(),
            ),
            0..3,
        ),
        prop::collection::vec(piece(), 0..3),
        any::<bool>(),
    )
        .prop_map(|(prefix, name, decls, attrs, pieces, space)| Element {
            prefix,
            name,
            decls,
            attrs,
            content: if pieces.is_empty() {
                vec![]
            } else {
                vec![Node::Text(pieces)]
            },
            space,
        });
    leaf.prop_recursive(4, 40, 5, |inner| {
        (
            proptest::option::of(0..PREFIXES.len()),
            0..NAMES.len(),
            prop::collection::vec((proptest::option::of(0..PREFIXES.len()), 0..3usize), 0..2),
            prop::collection::vec(
                (
                    proptest::option::of(0..PREFIXES.len()),
                    0..NAMES.len(),
                    text_strategy(),
                    any::<bool>(),
                ),
                0..3,
            ),
            prop::collection::vec(inner, 1..5),
            any::<bool>(),
        )
            .prop_map(|(prefix, name, decls, attrs, kids, space)| Element {
                prefix,
                name,
                decls,
                attrs,
                content: kids.into_iter().map(Node::Element).collect(),
                space,
            })
    })
}

fn esc(s: &str, out: &mut String, attr: bool) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attr => out.push_str("&quot;"),
            '\'' if attr => out.push_str("&apos;"),
            '\r' => out.push_str("&#13;"),
            '\t' | '\n' if attr => out.push_str(&format!("&#{};", c as u32)),
            c => out.push(c),
        }
    }
}

/// Render, declaring every prefix on the root so that all uses are in scope.
fn render(e: &Element, root: bool, out: &mut String) {
    let qn = |p: Option<usize>, n: usize| match p {
        Some(p) => format!("{}:{}", PREFIXES[p], NAMES[n]),
        None => NAMES[n].to_string(),
    };
    out.push('<');
    out.push_str(&qn(e.prefix, e.name));
    if root {
        for (i, p) in PREFIXES.iter().enumerate() {
            out.push_str(&format!(" xmlns:{p}=\"urn:root:{i}\""));
        }
    }
    let mut seen = Vec::new();
    for (p, u) in &e.decls {
        if seen.contains(p) || (root && p.is_some()) {
            continue;
        }
        seen.push(*p);
        match p {
            Some(p) => out.push_str(&format!(" xmlns:{}='urn:{u}'", PREFIXES[*p])),
            None if *u == 0 => out.push_str(" xmlns=\"\""),
            None => out.push_str(&format!(" xmlns=\"urn:d{u}\"")),
        }
    }
    let mut names = Vec::new();
    for (p, n, v, single) in &e.attrs {
        // Attribute names must be unique by namespace and local name.
        let key = (p.map(|_| 0), *n, p.is_some());
        if names
            .iter()
            .any(|k: &(Option<usize>, usize, bool)| k.1 == key.1)
        {
            continue;
        }
        names.push(key);
        let q = if *single { '\'' } else { '"' };
        out.push(' ');
        out.push_str(&qn(*p, *n));
        out.push('=');
        out.push(q);
        esc(v, out, true);
        out.push(q);
    }
    if e.content.is_empty() {
        out.push_str(if e.space { " />" } else { "/>" });
        return;
    }
    out.push('>');
    for n in &e.content {
        match n {
            Node::Element(c) => {
                if e.space {
                    out.push_str("\n  ");
                }
                render(c, false, out);
            }
            Node::Text(pieces) => {
                for p in pieces {
                    match p {
                        Piece::Chars(s) => esc(s, out, false),
                        Piece::CharRef(c) => out.push_str(&format!("&#x{:X};", *c as u32)),
                        Piece::CData(s) => out.push_str(&format!("<![CDATA[{s}]]>")),
                        Piece::Comment(s) => out.push_str(&format!("<!--{s}-->")),
                    }
                }
            }
        }
    }
    if e.space && matches!(e.content.first(), Some(Node::Element(_))) {
        out.push('\n');
    }
    out.push_str("</");
    out.push_str(&qn(e.prefix, e.name));
    out.push('>');
}

/// Mark every element changed so the writer cannot copy anything.
fn touch_all(t: &mut Tree, id: NodeId) {
    for k in t.children(id).unwrap_or_default() {
        let v = t.value(k);
        t.set_value(k, v);
        touch_all(t, k);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn unchanged_documents_round_trip_byte_for_byte(e in element_strategy(), decl in any::<bool>()) {
        let mut xml = String::new();
        if decl {
            xml.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        }
        render(&e, true, &mut xml);
        let (mut t, id) = parse(&xml);
        prop_assert_eq!(ser(&mut t, id), xml);
    }

    #[test]
    fn rewritten_documents_mean_the_same(e in element_strategy()) {
        let mut xml = String::new();
        render(&e, true, &mut xml);
        let (mut t, id) = parse(&xml);
        let before = dump(&mut t, id);
        touch_all(&mut t, id);
        let out = ser(&mut t, id);
        let (mut t2, id2) = parse(&out);
        prop_assert_eq!(dump(&mut t2, id2), before, "rewritten as {}", out);
    }

    #[test]
    fn partly_changed_documents_mean_the_same(e in element_strategy(), pick in 0usize..50) {
        let mut xml = String::new();
        render(&e, true, &mut xml);
        let (mut t, id) = parse(&xml);
        // Change one element deep in the tree; its siblings are copied or rewritten as needed.
        let mut at_ = t.first_child(id).ok().flatten();
        let mut steps = pick;
        while let Some(n) = at_ {
            if steps == 0 { break; }
            steps -= 1;
            at_ = match t.first_child(n).ok().flatten() {
                Some(c) if steps.is_multiple_of(2) => Some(c),
                _ => t.next_sibling(n).ok().flatten().or(Some(n)),
            };
            if at_ == Some(n) { break; }
        }
        if let Some(n) = at_ {
            let v = t.value(n);
            t.set_value(n, v);
        }
        let before = dump(&mut t, id);
        let out = ser(&mut t, id);
        let (mut t2, id2) = parse(&out);
        prop_assert_eq!(dump(&mut t2, id2), before, "rewritten as {}", out);
    }

    #[test]
    fn lazy_navigation_then_rewrite_means_the_same(e in element_strategy()) {
        let mut xml = String::new();
        render(&e, true, &mut xml);
        let (mut full, fid) = parse(&xml);
        let before = dump(&mut full, fid);
        let (mut t, id) = attach(&xml, Default::default());
        // Touch only the first leaf reached by first-child steps, leaving the rest unparsed.
        let mut n = t.first_child(id).ok().flatten();
        while let Some(x) = n {
            match t.first_child(x).ok().flatten() {
                Some(c) => n = Some(c),
                None => { let v = t.value(x); t.set_value(x, v); break; }
            }
        }
        let out = ser(&mut t, id);
        let (mut t2, id2) = parse(&out);
        prop_assert_eq!(dump(&mut t2, id2), before, "rewritten as {}", out);
    }
}
