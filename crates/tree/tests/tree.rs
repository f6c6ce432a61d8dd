//! The tree arena: building, navigation, change tracking, copying, and on-demand expansion.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use sluice_tree::{
    Expand, NodeId, Parser, Position, SourceSpan, Text, Tree, TreeError, Value, field_type,
};

fn s(t: &mut Tree, parent: NodeId, name: &'static str, v: &str) -> NodeId {
    let val = t.alloc_text(v.as_bytes());
    t.create_last_child(
        parent,
        field_type::NAME_VALUE,
        Text::from_static(name),
        Value::Character(val),
    )
    .unwrap()
}

fn names(t: &mut Tree, id: NodeId) -> Vec<String> {
    t.children(id)
        .unwrap()
        .into_iter()
        .map(|c| String::from_utf8_lossy(t.name_bytes(c)).into_owned())
        .collect()
}

#[test]
fn create_and_navigate_children_in_order() {
    let mut t = Tree::new("Root");
    let r = t.root();
    let a = s(&mut t, r, "a", "1");
    let c = s(&mut t, r, "c", "3");
    t.create_next_sibling(a, field_type::NAME, Text::from_static("b"), Value::Null)
        .unwrap();
    t.create_first_child(r, field_type::NAME, Text::from_static("first"), Value::Null)
        .unwrap();
    t.create_prev_sibling(c, field_type::NAME, Text::from_static("b2"), Value::Null)
        .unwrap();
    assert_eq!(names(&mut t, r), ["first", "a", "b", "b2", "c"]);
    assert_eq!(t.child_count(r).unwrap(), 5);
    assert_eq!(t.child_named(r, None, b"c", 0).unwrap(), Some(c));
    assert_eq!(t.parent(c), Some(r));
    assert_eq!(t.value_bytes(a), Some(&b"1"[..]));
}

#[test]
fn delete_reuses_slots_and_relinks_siblings() {
    let mut t = Tree::new("Root");
    let r = t.root();
    let a = s(&mut t, r, "a", "1");
    let b = s(&mut t, r, "b", "2");
    s(&mut t, b, "inner", "x");
    s(&mut t, r, "c", "3");
    let before = t.len();
    t.delete(b).unwrap();
    assert_eq!(names(&mut t, r), ["a", "c"]);
    assert!(t.is_deleted(b));
    s(&mut t, a, "new1", "y");
    s(&mut t, a, "new2", "z");
    assert_eq!(t.len(), before, "deleted slots are reused");
}

#[test]
fn detach_and_attach_move_a_subtree() {
    let mut t = Tree::new("Root");
    let r = t.root();
    let a = s(&mut t, r, "a", "1");
    let b = s(&mut t, r, "b", "2");
    t.detach(a).unwrap();
    t.attach(a, b, Position::LastChild).unwrap();
    assert_eq!(names(&mut t, r), ["b"]);
    assert_eq!(names(&mut t, b), ["a"]);
    assert_eq!(
        t.attach(b, a, Position::LastChild),
        Err(TreeError::Attached)
    );
    t.detach(b).unwrap();
    assert_eq!(t.attach(b, a, Position::LastChild), Err(TreeError::Cycle));
}

#[test]
fn copy_from_another_tree_keeps_values_and_is_independent() {
    let mut src = Tree::new("Root");
    let r = src.root();
    let a = s(&mut src, r, "a", "hello");
    s(&mut src, a, "b", "world");
    let mut dst = Tree::new("Root");
    let dr = dst.root();
    let copy = dst.copy_from(&src, a, dr, Position::LastChild).unwrap();
    src.set_str(a, "changed");
    assert_eq!(dst.value_bytes(copy), Some(&b"hello"[..]));
    let b = dst.first_child(copy).unwrap().unwrap();
    assert_eq!(dst.value_bytes(b), Some(&b"world"[..]));
}

#[test]
fn changes_mark_ancestors_dirty_but_not_siblings() {
    let mut t = Tree::new("Root");
    let r = t.root();
    let buf = t.add_buffer(Bytes::from_static(b"<a><b>1</b><c>2</c></a>"));
    let a = t.push_parsed(
        r,
        field_type::NAME,
        Text::EMPTY,
        Text::src(buf, 1, 1),
        Value::Null,
    );
    t.set_source(
        a,
        SourceSpan {
            buf,
            start: 0,
            end: 23,
        },
    );
    let b = t.push_parsed(
        a,
        field_type::NAME_VALUE,
        Text::EMPTY,
        Text::from_static("b"),
        Value::Null,
    );
    t.set_source(
        b,
        SourceSpan {
            buf,
            start: 3,
            end: 11,
        },
    );
    let c = t.push_parsed(
        a,
        field_type::NAME_VALUE,
        Text::EMPTY,
        Text::from_static("c"),
        Value::Null,
    );
    t.set_source(
        c,
        SourceSpan {
            buf,
            start: 11,
            end: 19,
        },
    );
    assert_eq!(t.original(a), Some(&b"<a><b>1</b><c>2</c></a>"[..]));
    t.set_str(b, "9");
    assert!(t.is_dirty(b) && t.is_dirty(a) && t.is_dirty(r));
    assert_eq!(t.original(a), None);
    assert_eq!(
        t.original(c),
        Some(&b"<c>2</c>"[..]),
        "an untouched sibling still copies its bytes"
    );
}

/// A parser over `a,b,c`: each expand materialises one more name, counting the calls.
struct Commas {
    expands: AtomicUsize,
}

impl Parser for Commas {
    fn domain(&self) -> &'static str {
        "TEST"
    }
    fn expand(&self, tree: &mut Tree, id: NodeId, how: Expand) -> Result<(), TreeError> {
        loop {
            self.expands.fetch_add(1, Ordering::Relaxed);
            let span = tree.source(id).unwrap();
            let bytes = tree.buffer(span.buf).clone();
            let at = tree.resume(id) as usize;
            if at >= span.end as usize {
                tree.finish_pending(id);
                return Ok(());
            }
            if bytes[at] == b'!' {
                return Err(TreeError::Parse {
                    domain: "TEST",
                    offset: at as u64,
                    message: "bad byte".into(),
                });
            }
            let end = bytes[at..span.end as usize]
                .iter()
                .position(|&c| c == b',')
                .map_or(span.end as usize, |p| at + p);
            let name = Text::src(span.buf, at as u32, (end - at) as u32);
            tree.push_parsed(id, field_type::NAME, Text::EMPTY, name, Value::Null);
            tree.set_resume(id, (end + 1) as u32);
            if how == Expand::OneMore {
                return Ok(());
            }
        }
    }
    fn serialize(&self, _: &mut Tree, _: NodeId, _: &mut Vec<u8>) -> Result<(), TreeError> {
        Ok(())
    }
}

fn lazy_tree(text: &'static [u8]) -> (Tree, NodeId, Arc<Commas>) {
    let mut t = Tree::new("Root");
    let r = t.root();
    let p = Arc::new(Commas {
        expands: AtomicUsize::new(0),
    });
    let pi = t.add_parser(p.clone());
    let buf = t.add_buffer(Bytes::from_static(text));
    let d = t.push_parsed(
        r,
        field_type::NAME,
        Text::EMPTY,
        Text::from_static("TEST"),
        Value::Null,
    );
    t.set_source(
        d,
        SourceSpan {
            buf,
            start: 0,
            end: text.len() as u32,
        },
    );
    t.set_pending(d, pi, 0);
    (t, d, p)
}

#[test]
fn navigation_parses_only_up_to_the_field_referenced() {
    let (mut t, d, p) = lazy_tree(b"a,b,!broken");
    let a = t.first_child(d).unwrap().unwrap();
    assert_eq!(t.name_bytes(a), b"a");
    assert_eq!(p.expands.load(Ordering::Relaxed), 1);
    let b = t.child_named(d, None, b"b", 0).unwrap().unwrap();
    assert_eq!(t.name_bytes(b), b"b");
    let err = t.next_sibling(b).unwrap_err();
    assert!(matches!(err, TreeError::Parse { offset: 4, .. }), "{err:?}");
}

#[test]
fn copying_an_unparsed_subtree_keeps_it_unparsed() {
    let (t, d, p) = lazy_tree(b"x,y,z");
    let mut dst = Tree::new("Root");
    let dr = dst.root();
    let c = dst.copy_from(&t, d, dr, Position::LastChild).unwrap();
    assert_eq!(p.expands.load(Ordering::Relaxed), 0);
    assert!(dst.is_pending(c));
    assert_eq!(dst.child_count(c).unwrap(), 3);
}

#[test]
fn creating_under_a_pending_element_parses_it_first() {
    let (mut t, d, _) = lazy_tree(b"x,y");
    t.create_last_child(d, field_type::NAME, Text::from_static("z"), Value::Null)
        .unwrap();
    assert_eq!(names(&mut t, d), ["x", "y", "z"]);
}

/// Everything public about an element, for comparing two ways of building it.
fn element_facts(t: &Tree, id: NodeId) -> String {
    format!(
        "{:?} {:?} {:?} {:x} {:?} {:x} {:?} {:?} {:?} {:?} {}",
        t.name_bytes(id),
        t.namespace_bytes(id),
        t.value(id),
        t.field_type(id),
        t.source(id),
        t.parser_flags(id),
        t.parent(id),
        t.prev_sibling(id),
        t.peek_next_sibling(id),
        t.parser_index(id),
        t.is_dirty(id),
    )
}

#[test]
fn push_parsed_spanned_builds_what_push_parsed_and_the_setters_build() {
    let mut one = Tree::new("Root");
    let mut two = Tree::new("Root");
    for t in [&mut one, &mut two] {
        let r = t.root();
        assert_eq!(t.add_buffer(Bytes::from_static(b"<a>text</a>")), 0);
        let p = t.push_parsed(
            r,
            field_type::NAME,
            Text::EMPTY,
            Text::from_static("p"),
            Value::Null,
        );
        t.set_parser(p, 3);
        // A freed slot is reused by the next element.
        let gone = t
            .create_last_child(p, 1, Text::from_static("gone"), Value::Null)
            .unwrap();
        t.delete(gone).unwrap();
        assert_eq!(t.len(), 3);
    }
    let span = SourceSpan {
        buf: 0,
        start: 0,
        end: 11,
    };
    let cases: [(Text, Value, Option<SourceSpan>, u8); 6] = [
        (
            Text::EMPTY,
            Value::Character(Text::src(0, 3, 4)),
            Some(span),
            0x21,
        ),
        (
            Text::from_static("urn:x"),
            Value::Character(Text::EMPTY),
            Some(span),
            0,
        ),
        (Text::from_static("urn:x"), Value::Null, None, 0x40),
        (Text::EMPTY, Value::Integer(-7), Some(span), 1),
        (Text::EMPTY, Value::Float(0.5), None, 0),
        (
            Text::from_static("urn:y"),
            Value::Interval {
                months: 1,
                micros: 2,
                qualifier: sluice_tree::IntervalQualifier::Day,
            },
            None,
            0,
        ),
    ];
    let p = NodeId(1);
    let mut ids = Vec::new();
    for (ns, v, sp, f) in cases {
        let a = one.push_parsed_spanned(p, 7, ns, Text::from_static("n"), v, sp, f);
        let b = two.push_parsed(p, 7, ns, Text::from_static("n"), v);
        if let Some(s) = sp {
            two.set_source(b, s);
        }
        two.set_parser_flags(b, f);
        assert_eq!(a, b);
        ids.push(a);
    }
    // An open span (end not known yet) is no span.
    let open = SourceSpan {
        buf: 0,
        start: 2,
        end: u32::MAX,
    };
    let a = one.push_parsed_spanned(p, 7, Text::EMPTY, Text::EMPTY, Value::Null, Some(open), 0);
    let b = two.push_parsed(p, 7, Text::EMPTY, Text::EMPTY, Value::Null);
    ids.push(a);
    assert_eq!(a, b);
    for id in ids.into_iter().chain([p]) {
        assert_eq!(element_facts(&one, id), element_facts(&two, id));
    }
}

#[test]
fn src_or_empty_is_src_or_the_empty_handle() {
    assert_eq!(Text::src_or_empty(5, 9, 0), Text::EMPTY);
    assert_eq!(Text::src_or_empty(5, 9, 3), Text::src(5, 9, 3));
    assert_eq!(Text::src_or_empty(0, 0, 1), Text::src(0, 0, 1));
    assert_eq!(
        Text::src_or_empty(u32::MAX, u32::MAX, u32::MAX),
        Text::src(u32::MAX, u32::MAX, u32::MAX)
    );
}

#[test]
fn move_parsed_and_drop_parsed_rearrange_without_marking_changes() {
    let mut t = Tree::new("Root");
    let r = t.root();
    let buf = t.add_buffer(Bytes::from_static(b"<a><b/></a>"));
    let a = t.push_parsed(
        r,
        field_type::NAME,
        Text::EMPTY,
        Text::from_static("a"),
        Value::Null,
    );
    t.set_source(
        a,
        SourceSpan {
            buf,
            start: 0,
            end: 11,
        },
    );
    let scratch = t.push_parsed(
        a,
        field_type::NAME,
        Text::EMPTY,
        Text::from_static("scratch"),
        Value::Null,
    );
    let b = t.push_parsed(
        scratch,
        field_type::NAME,
        Text::EMPTY,
        Text::from_static("b"),
        Value::Null,
    );
    let kept = t.push_parsed(
        a,
        field_type::NAME,
        Text::EMPTY,
        Text::from_static("kept"),
        Value::Null,
    );
    t.move_parsed(b, kept);
    t.drop_parsed(scratch);
    assert_eq!(names(&mut t, a), ["kept"]);
    assert_eq!(names(&mut t, kept), ["b"]);
    assert_eq!(t.original(a), Some(&b"<a><b/></a>"[..]));
}
