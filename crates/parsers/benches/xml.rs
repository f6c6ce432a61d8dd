//! XMLNSC parse and serialise costs on the reports' SaleList messages (2 KB, 200 KB, 20 MB).
//!
//! `cargo bench -p sluice-parsers --bench xml`. Two cases per size: parse completely and write
//! the unchanged message (copied), and parse completely, change every field, and write the
//! whole message from the tree.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sluice_parsers::xmlnsc::{self, XmlnscParser};
use sluice_tree::{NodeId, Tree};

const SURNAMES: &[&str] = &[
    "Braithwaite",
    "Dunnwin",
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
];
const ITEMS: &[(&str, &str)] = &[
    ("Twister", "Games"),
    ("The Times Newspaper", "Books and Media"),
    ("The Origin of Species", "Books and Media"),
    ("Microscope", "Miscellaneous"),
];

/// One Invoice of the SaleList message (seeds/000 Appendix C), white space removed, with
/// values varied by `i` as the reports' generator does.
fn invoice(i: usize, out: &mut String) {
    let s = SURNAMES[i % SURNAMES.len()];
    out.push_str("<Invoice><Initial>");
    out.push((b'A' + (i % 26) as u8) as char);
    out.push_str("</Initial><Initial>");
    out.push((b'A' + (i * 7 % 26) as u8) as char);
    out.push_str(&format!("</Initial><Surname>{s}{i}</Surname>"));
    for k in 0..2 {
        let (d, c) = ITEMS[(i + k) % ITEMS.len()];
        out.push_str(&format!(
            "<Item><Code>{:02}</Code><Code>{:02}</Code><Code>{:02}</Code><Description>{d}</Description><Category>{c}</Category><Price>{}.{:02}</Price><Quantity>{:02}</Quantity></Item>",
            (i + k) % 100,
            (i + k + 1) % 100,
            (i * 3 + k) % 100,
            (i + k) % 50,
            (i * 13 + k) % 100,
            1 + (i + k) % 9
        ));
    }
    out.push_str(&format!(
        "<Balance>{}.{:02}</Balance><Currency>{}</Currency></Invoice>",
        i % 90,
        i % 100,
        if i.is_multiple_of(2) {
            "Sterling"
        } else {
            "Euros"
        }
    ));
}

/// A message of about `size` bytes.
fn sale_list(size: usize) -> Bytes {
    let mut s = String::from("<Parent><First>1</First><SaleList>");
    let mut i = 0;
    while s.len() + 40 < size {
        invoice(i, &mut s);
        i += 1;
    }
    s.push_str("</SaleList><Last>Test</Last></Parent>");
    Bytes::from(s)
}

fn parse(body: &Bytes, parser: &Arc<XmlnscParser>) -> (Tree, NodeId) {
    let mut t = Tree::new("Root");
    let r = t.root();
    let id = xmlnsc::attach(&mut t, r, body.clone(), parser.clone());
    if let Err(e) = t.expand_all(id) {
        panic!("benchmark message failed to parse: {e}");
    }
    (t, id)
}

fn touch_all(t: &mut Tree, id: NodeId) {
    let mut stack = vec![id];
    while let Some(n) = stack.pop() {
        let mut c = t.peek_first_child(n);
        while let Some(k) = c {
            let v = t.value(k);
            t.set_value(k, v);
            stack.push(k);
            c = t.peek_next_sibling(k);
        }
    }
}

fn bench(c: &mut Criterion) {
    let parser = Arc::new(XmlnscParser::default());
    let mut g = c.benchmark_group("xmlnsc");
    for (label, size) in [
        ("2KB", 2_000usize),
        ("200KB", 200_000),
        ("20MB", 20_000_000),
    ] {
        let body = sale_list(size);
        g.throughput(Throughput::Bytes(body.len() as u64));
        if size >= 1_000_000 {
            g.sample_size(10);
            g.measurement_time(Duration::from_secs(20));
        } else {
            g.sample_size(50);
            g.measurement_time(Duration::from_secs(5));
        }
        let mut out = Vec::with_capacity(body.len() + 1024);
        g.bench_with_input(
            BenchmarkId::new("parse_complete_serialise_unchanged", label),
            &body,
            |b, body| {
                b.iter(|| {
                    let (mut t, id) = parse(body, &parser);
                    out.clear();
                    if let Err(e) = xmlnsc::serialize_to(&mut t, id, &mut out) {
                        panic!("{e}");
                    }
                    black_box(out.len())
                })
            },
        );
        g.bench_with_input(
            BenchmarkId::new("parse_complete_reserialise", label),
            &body,
            |b, body| {
                b.iter(|| {
                    let (mut t, id) = parse(body, &parser);
                    touch_all(&mut t, id);
                    out.clear();
                    if let Err(e) = xmlnsc::serialize_to(&mut t, id, &mut out) {
                        panic!("{e}");
                    }
                    black_box(out.len())
                })
            },
        );
        g.bench_with_input(
            BenchmarkId::new("first_field_on_demand", label),
            &body,
            |b, body| {
                b.iter(|| {
                    let mut t = Tree::new("Root");
                    let r = t.root();
                    let id = xmlnsc::attach(&mut t, r, body.clone(), parser.clone());
                    black_box(t.path(id, &["Parent", "First"]).ok().flatten())
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
