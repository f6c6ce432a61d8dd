use super::*;
use crate::blob;
use sluice_tree::field_type::{NAME, NAME_VALUE};

const SWA: &[u8] = b"MIME-Version: 1.0\r\n\
Content-Type: Multipart/Related; boundary=MIME_boundary; type=text/xml; start=\"<root@x>\"\r\n\
\r\n\
Optional preamble\r\n\
--MIME_boundary\r\n\
Content-Type: text/xml; charset=UTF-8\r\n\
Content-ID: <root@x>\r\n\
\r\n\
<a>1</a>\r\n\
--MIME_boundary\r\n\
Content-Type: image/png\r\n\
Content-Transfer-Encoding: base64\r\n\
Content-ID: <img@x>\r\n\
\r\n\
AAECAwT/\r\n\
--MIME_boundary--\r\n\
epilogue";

fn parser(parts: PartDomains) -> Arc<MimeParser> {
    Arc::new(MimeParser::new(parts))
}

fn load(body: &[u8], parts: PartDomains) -> (Tree, NodeId) {
    let mut t = Tree::new("Root");
    let r = t.root();
    let id = attach(&mut t, r, Bytes::copy_from_slice(body), &parser(parts));
    (t, id)
}

fn text(t: &mut Tree, at: NodeId, path: &[&str]) -> Option<String> {
    let id = t.path(at, path).ok()??;
    t.value_bytes(id)
        .map(|b| String::from_utf8_lossy(b).into_owned())
}

fn set_text(t: &mut Tree, id: NodeId, s: &[u8]) {
    let v = t.alloc_text(s);
    t.set_value(id, Value::Blob(v));
}

#[test]
fn mime_parses_related_message_into_product_layout() {
    let (mut t, m) = load(SWA, PartDomains::Blob);
    assert_eq!(text(&mut t, m, &["MIME-Version"]).as_deref(), Some("1.0"));
    let ct = text(&mut t, m, &["Content-Type"]).unwrap_or_default();
    assert!(ct.starts_with("Multipart/Related"));
    let parts = t.path(m, &["Parts"]).ok().flatten();
    let Some(parts) = parts else {
        panic!("no Parts")
    };
    let kids = t.children(parts).unwrap_or_default();
    assert_eq!(kids.len(), 4, "preamble, two parts, epilogue");
    assert_eq!(t.value_bytes(kids[0]), Some(&b"Optional preamble"[..]));
    assert_eq!(t.value_bytes(kids[3]), Some(&b"epilogue"[..]));
    assert_eq!(
        text(&mut t, kids[1], &["Content-ID"]).as_deref(),
        Some("<root@x>")
    );
    assert_eq!(
        text(&mut t, kids[1], &["Data", "BLOB", "BLOB"]).as_deref(),
        Some("<a>1</a>")
    );
    // The base64 part is decoded.
    let img = t.path(kids[2], &["Data", "BLOB", "BLOB"]).ok().flatten();
    assert_eq!(
        img.and_then(|i| t.value_bytes(i)),
        Some(&[0u8, 1, 2, 3, 4, 255][..])
    );
}

#[test]
fn mime_unchanged_message_serialises_to_its_bytes() {
    let (mut t, m) = load(SWA, PartDomains::Blob);
    assert!(t.expand_all(m).is_ok());
    let mut out = Vec::new();
    let ct = serialize_entity(&mut t, m, &mut out).unwrap_or_default();
    assert_eq!(out, SWA);
    assert!(ct.contains("boundary=MIME_boundary"));
}

#[test]
fn mime_changed_part_is_rewritten_and_reparses() {
    let (mut t, m) = load(SWA, PartDomains::Blob);
    let img = t.path(m, &["Parts", "Part"]).ok().flatten();
    let Some(first) = img else { panic!("no part") };
    let second = t.next_sibling(first).ok().flatten().unwrap_or(first);
    let b = t
        .path(second, &["Data", "BLOB", "BLOB"])
        .ok()
        .flatten()
        .unwrap_or(second);
    set_text(&mut t, b, &[9u8; 100]);
    let mut out = Vec::new();
    let r = serialize_entity(&mut t, m, &mut out);
    assert!(r.is_ok(), "{r:?}");
    // The changed part is base64 again, in lines of 76.
    let s = String::from_utf8_lossy(&out).into_owned();
    assert!(s.contains("CQkJCQkJ"));
    assert!(s.contains("<a>1</a>"));
    let (mut t2, m2) = load(&out, PartDomains::Blob);
    let p = t2.path(m2, &["Parts"]).ok().flatten().unwrap_or(m2);
    let parts = t2.children(p).unwrap_or_default();
    let v = t2.path(parts[2], &["Data", "BLOB", "BLOB"]).ok().flatten();
    assert_eq!(v.and_then(|v| t2.value_bytes(v)), Some(&[9u8; 100][..]));
}

#[test]
fn mime_takes_content_type_from_properties_when_under_root() {
    let mut t = Tree::new("Root");
    let r = t.root();
    let props = t
        .create_last_child(r, NAME, Text::from_static("Properties"), Value::Null)
        .unwrap_or(r);
    let v = t.alloc_text(b"multipart/form-data; boundary=xyz");
    let _ = t.create_last_child(
        props,
        NAME_VALUE,
        Text::from_static("ContentType"),
        Value::Character(v),
    );
    let body = b"--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--xyz--\r\n";
    let m = attach(
        &mut t,
        r,
        Bytes::from_static(body),
        &parser(PartDomains::Blob),
    );
    assert_eq!(
        text(&mut t, m, &["Parts", "Part", "Content-Disposition"]).as_deref(),
        Some("form-data; name=\"file\"; filename=\"a.txt\"")
    );
    assert_eq!(
        text(&mut t, m, &["Parts", "Part", "Data", "BLOB", "BLOB"]).as_deref(),
        Some("hello")
    );
    let mut out = Vec::new();
    let ct = serialize_content(&mut t, m, &mut out).unwrap_or_default();
    assert_eq!(out, body);
    assert_eq!(ct, "multipart/form-data; boundary=xyz");
}

#[test]
fn mime_parse_error_names_byte_offset_when_malformed() {
    let (mut t, m) = load(
        b"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nno colon\r\n\r\nx\r\n--b--",
        PartDomains::Blob,
    );
    let e = t.first_child(m).err();
    match e {
        Some(TreeError::Parse { domain, offset, .. }) => {
            assert_eq!(domain, "MIME");
            assert_eq!(offset, 50);
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    // The element stays unparsed: the error repeats rather than leaving half a tree.
    assert!(t.first_child(m).is_err());
}

#[test]
fn mime_built_tree_gets_a_boundary_when_none_is_set() {
    let mut t = Tree::new("Root");
    let r = t.root();
    let m = t
        .create_last_child(r, NAME, Text::from_static("MIME"), Value::Null)
        .unwrap_or(r);
    let parts = t
        .create_last_child(m, NAME, Text::from_static("Parts"), Value::Null)
        .unwrap_or(r);
    for (ct, body) in [
        ("text/plain", &b"one"[..]),
        ("application/octet-stream", b"two"),
    ] {
        let p = t
            .create_last_child(parts, NAME, Text::from_static("Part"), Value::Null)
            .unwrap_or(r);
        let v = t.alloc_text(ct.as_bytes());
        let _ = t.create_last_child(
            p,
            NAME_VALUE,
            Text::from_static("Content-Type"),
            Value::Character(v),
        );
        let d = t
            .create_last_child(p, NAME, Text::from_static("Data"), Value::Null)
            .unwrap_or(r);
        blob::attach(&mut t, d, Bytes::copy_from_slice(body));
    }
    let mut out = Vec::new();
    let ct = serialize_content(&mut t, m, &mut out).unwrap_or_default();
    assert!(ct.starts_with("multipart/mixed; boundary="), "{ct}");
    let (mut t2, m2) = {
        let mut t2 = Tree::new("Root");
        let r2 = t2.root();
        let props = t2
            .create_last_child(r2, NAME, Text::from_static("Properties"), Value::Null)
            .unwrap_or(r2);
        let v = t2.alloc_text(ct.as_bytes());
        let _ = t2.create_last_child(
            props,
            NAME_VALUE,
            Text::from_static("ContentType"),
            Value::Character(v),
        );
        let m2 = attach(&mut t2, r2, Bytes::from(out), &parser(PartDomains::Blob));
        (t2, m2)
    };
    assert_eq!(
        text(&mut t2, m2, &["Parts", "Part", "Data", "BLOB", "BLOB"]).as_deref(),
        Some("one")
    );
}

#[test]
fn mime_refuses_a_chosen_boundary_that_occurs_in_a_part() {
    let body = b"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nx\r\n--b--";
    let (mut t, m) = load(body, PartDomains::Blob);
    let d = t
        .path(m, &["Parts", "Part", "Data", "BLOB", "BLOB"])
        .ok()
        .flatten()
        .unwrap_or(m);
    set_text(&mut t, d, b"a\r\n--b\r\nb");
    let mut out = Vec::new();
    let e = serialize_entity(&mut t, m, &mut out).err();
    assert!(e.is_some_and(|e| e.to_string().contains("occurs in the content")));
}

#[test]
fn mime_parts_parse_in_their_own_domain_by_content_type() {
    let (mut t, m) = load(SWA, PartDomains::ByContentType);
    assert_eq!(
        text(&mut t, m, &["Parts", "Part", "Data", "XMLNSC", "a"]).as_deref(),
        Some("1")
    );
}

#[test]
fn mime_single_part_body_is_data() {
    let body =
        b"Content-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\ncaf=C3=A9";
    let (mut t, m) = load(body, PartDomains::Blob);
    assert_eq!(
        text(&mut t, m, &["Data", "BLOB", "BLOB"]).as_deref(),
        Some("café")
    );
    let d = t
        .path(m, &["Data", "BLOB", "BLOB"])
        .ok()
        .flatten()
        .unwrap_or(m);
    set_text(&mut t, d, "thé".as_bytes());
    let mut out = Vec::new();
    assert!(serialize_entity(&mut t, m, &mut out).is_ok());
    assert!(out.ends_with(b"\r\n\r\nth=C3=A9"));
}

#[test]
fn mime_empty_body_is_an_empty_element() {
    let (mut t, m) = load(b"", PartDomains::Blob);
    assert_eq!(t.first_child(m).ok().flatten(), None);
}
