//! JSON domain: complete parse and serialise of the reports' SaleList message in JSON form, at
//! 2 KB and 200 KB (the reports repeat the SaleList content to reach a size, with distinct values).

use std::hint::black_box;
use std::sync::Arc;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_parsers::json::{JsonParser, attach, parse_complete, to_bytes};
use sluice_tree::{NodeId, Tree, Value};

/// One SaleList entry: two invoices with two items each, values made distinct by `n`.
fn sale_list(n: usize) -> String {
    format!(
        concat!(
            r#"{{"Invoice":[{{"Initial":["K","A"],"Surname":"Braithwaite{n}","Item":["#,
            r#"{{"Code":["00","01","02"],"Description":"Twister{n}","Category":"Games","Price":0.30,"Quantity":1}},"#,
            r#"{{"Code":["02","03","01"],"Description":"The Times Newspaper{n}","Category":"Books and Media","Price":0.20,"Quantity":1}}],"#,
            r#""Balance":0.50,"Currency":"Sterling"}},"#,
            r#"{{"Initial":["T","J"],"Surname":"Dunnwin{n}","Item":["#,
            r#"{{"Code":["04","05","01"],"Description":"The Origin of Species{n}","Category":"Books and Media","Price":22.34,"Quantity":2}},"#,
            r#"{{"Code":["06","07","01"],"Description":"Microscope{n}","Category":"Miscellaneous","Price":36.20,"Quantity":1}}],"#,
            r#""Balance":81.84,"Currency":"Euros"}}]}}"#
        ),
        n = n
    )
}

/// `{"Parent":{"First":1,"SaleList":[...],"Last":"Test"}}` of about `size` bytes.
fn message(size: usize) -> Bytes {
    let mut lists = Vec::new();
    let mut len = 60;
    while len < size {
        let s = sale_list(lists.len());
        len += s.len() + 1;
        lists.push(s);
    }
    let m = format!(
        r#"{{"Parent":{{"First":1,"SaleList":[{}],"Last":"Test"}}}}"#,
        lists.join(",")
    );
    Bytes::from(m)
}

fn parse(msg: &Bytes, parser: &Arc<JsonParser>) -> (Tree, NodeId) {
    let mut tree = Tree::new("Root");
    let root = tree.root();
    let json = attach(&mut tree, root, msg.clone(), parser).expect("attach");
    tree.expand_all(json).expect("parse");
    (tree, json)
}

fn parse_fast(msg: &Bytes, parser: &Arc<JsonParser>) -> (Tree, NodeId) {
    let mut tree = Tree::new("Root");
    let root = tree.root();
    let json = attach(&mut tree, root, msg.clone(), parser).expect("attach");
    parse_complete(&mut tree, json).expect("parse");
    (tree, json)
}

/// Mark every element changed so that the serialiser writes all of them from the tree.
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

fn bench(c: &mut Criterion) {
    let parser = Arc::new(JsonParser::new());
    for (label, size) in [("2KB", 2 * 1024), ("200KB", 200 * 1024)] {
        let msg = message(size);
        let mut g = c.benchmark_group(format!("json_{label}"));
        g.throughput(Throughput::Bytes(msg.len() as u64));
        g.bench_function("parse_complete", |b| {
            b.iter(|| black_box(parse(&msg, &parser)))
        });
        g.bench_function("json_parse_complete", |b| {
            b.iter(|| black_box(parse_fast(&msg, &parser)))
        });
        g.bench_function("json_parse_complete_serialise_unchanged", |b| {
            b.iter(|| {
                let (mut tree, json) = parse_fast(&msg, &parser);
                black_box(to_bytes(&mut tree, json, &parser).expect("serialise"))
            })
        });
        g.bench_function("parse_complete_serialise_unchanged", |b| {
            b.iter(|| {
                let (mut tree, json) = parse(&msg, &parser);
                black_box(to_bytes(&mut tree, json, &parser).expect("serialise"))
            })
        });
        g.bench_function("parse_complete_change_first_serialise", |b| {
            b.iter(|| {
                let (mut tree, json) = parse(&msg, &parser);
                let first = tree
                    .path(json, &["Data", "Parent", "First"])
                    .expect("path")
                    .expect("First");
                tree.set_value(first, Value::Integer(2));
                black_box(to_bytes(&mut tree, json, &parser).expect("serialise"))
            })
        });
        g.bench_function("parse_complete_serialise_rebuilt", |b| {
            b.iter(|| {
                let (mut tree, json) = parse(&msg, &parser);
                touch_all(&mut tree, json);
                black_box(to_bytes(&mut tree, json, &parser).expect("serialise"))
            })
        });
        g.bench_function("first_member_on_demand", |b| {
            b.iter(|| {
                let mut tree = Tree::new("Root");
                let root = tree.root();
                let json = attach(&mut tree, root, msg.clone(), &parser).expect("attach");
                black_box(tree.path(json, &["Data", "Parent", "First"]).expect("path"))
            })
        });
        g.bench_function("serde_json_value_parse_serialise", |b| {
            b.iter(|| {
                let v: serde_json::Value = serde_json::from_slice(&msg).expect("parse");
                black_box(serde_json::to_vec(&v).expect("serialise"))
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
