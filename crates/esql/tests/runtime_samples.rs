//! The ESQL of the project samples (`samples/esql`), run over the seeds' messages.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use sluice_esql::runtime::{Host, Program, PropagateTo, RunOptions};
use sluice_node_api::NodeError;
use sluice_parsers::xmlnsc;
use sluice_tree::{Message, Tree};

const SALE: &str = "<Parent><First>1</First><SaleList><Invoice><Initial>K</Initial><Initial>A</Initial><Surname>Braithwaite</Surname><Item><Code>00</Code><Code>01</Code><Code>02</Code><Description>Twister</Description><Category>Games</Category><Price>00.30</Price><Quantity>01</Quantity></Item><Item><Code>02</Code><Code>03</Code><Code>01</Code><Description>The Times Newspaper</Description><Category>Books and Media</Category><Price>00.20</Price><Quantity>01</Quantity></Item><Balance>00.50</Balance><Currency>Sterling</Currency></Invoice><Invoice><Initial>T</Initial><Initial>J</Initial><Surname>Dunnwin</Surname><Item><Code>04</Code><Code>05</Code><Code>01</Code><Description>The Origin of Species</Description><Category>Books and Media</Category><Price>22.34</Price><Quantity>02</Quantity></Item><Item><Code>06</Code><Code>07</Code><Code>01</Code><Description>Microscope</Description><Category>Miscellaneous</Category><Price>36.20</Price><Quantity>01</Quantity></Item><Balance>81.84</Balance><Currency>Euros</Currency></Invoice></SaleList><Last>Test</Last></Parent>";

fn program() -> Arc<Program> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/esql");
    Arc::new(Program::compile_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "{}",
            e.iter().map(|x| x.render()).collect::<Vec<_>>().join("\n")
        )
    }))
}

fn message(body: &str) -> Message {
    let mut msg = Message::new();
    let r = msg.root.root();
    xmlnsc::attach(
        &mut msg.root,
        r,
        Bytes::from(body.to_string()),
        Arc::new(xmlnsc::XmlnscParser::default()),
    );
    msg
}

#[derive(Default)]
struct Collect {
    bodies: Vec<String>,
}

impl Host for Collect {
    fn propagate(
        &mut self,
        _: PropagateTo,
        msg: &mut Message,
        _: &mut Tree,
    ) -> Result<(), NodeError> {
        self.bodies.push(xml_body(msg));
        Ok(())
    }
}

fn xml_body(msg: &mut Message) -> String {
    let mut out = Vec::new();
    if let Ok(Some(b)) = msg.body() {
        let _ = xmlnsc::serialize_to(&mut msg.root, b, &mut out);
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn run(module: &str, body: &str) -> (Option<bool>, Option<Message>, Vec<String>) {
    let p = program();
    let m = p.module(module).expect("module exists");
    let mut msg = message(body);
    let mut env = Tree::new("Environment");
    let mut host = Collect::default();
    let out = m
        .run(&mut msg, &mut env, &mut host, &RunOptions::default())
        .unwrap_or_else(|e| panic!("{e} at {}:{}", e.exception.file, e.exception.line));
    (out.result, out.output, host.bodies)
}

#[test]
fn transform_produces_the_seeds_statement() {
    let (r, out, _) = run("Transform", SALE);
    assert_eq!(r, Some(true));
    let mut out = out.expect("output");
    let xml = xml_body(&mut out);
    let want = "<Parent><SaleList>\
<Statement Type=\"Monthly\" Style=\"Full\"><Customer><Initials>KA</Initials><Name>Braithwaite</Name><Balance>00.50</Balance></Customer>\
<Purchases><Article><Desc>Twister</Desc><Cost>4.8E-1</Cost><Qty>01</Qty></Article><Article><Desc>The Times Newspaper</Desc><Cost>3.2E-1</Cost><Qty>01</Qty></Article></Purchases><Amount>8E-1</Amount></Statement>\
<Statement Type=\"Monthly\" Style=\"Full\"><Customer><Initials>TJ</Initials><Name>Dunnwin</Name><Balance>81.84</Balance></Customer>\
<Purchases><Article><Desc>The Origin of Species</Desc><Cost>3.5744E+1</Cost><Qty>02</Qty></Article><Article><Desc>Microscope</Desc><Cost>5.792E+1</Cost><Qty>01</Qty></Article></Purchases><Amount>1.29408E+2</Amount></Statement>\
</SaleList></Parent>";
    assert_eq!(xml, want);
}

#[test]
fn filters_test_first_and_last_elements() {
    assert_eq!(run("FilterFirst", SALE).0, Some(true));
    assert_eq!(run("FilterLast", SALE).0, Some(true));
    assert_eq!(
        run("FilterLast", "<Parent><Last>No</Last></Parent>").0,
        Some(false)
    );
}

#[test]
fn esql_write_changes_the_last_element() {
    let (_, out, _) = run("EsqlWrite", SALE);
    let xml = xml_body(&mut out.expect("output"));
    assert!(xml.ends_with("<Last>Changed</Last></Parent>"), "{xml}");
    assert!(
        xml.starts_with("<Parent><First>1</First><SaleList>"),
        "{xml}"
    );
}

#[test]
fn esql_parse_sends_headers_only() {
    let (_, out, _) = run("EsqlParse", SALE);
    let mut out = out.expect("output");
    assert_eq!(xml_body(&mut out), "");
    let r = out.root.root();
    assert!(
        out.root
            .child_named(r, None, b"Properties", 0)
            .ok()
            .flatten()
            .is_some()
    );
}

#[test]
fn split_propagates_one_message_per_sale_list() {
    let body = format!(
        "<SaleEnvelope>{}{}</SaleEnvelope>",
        "<SaleList><Invoice><Surname>A</Surname></Invoice></SaleList>",
        "<SaleList><Invoice><Surname>B</Surname></Invoice></SaleList>"
    );
    let (_, out, sent) = run("Split", &body);
    assert_eq!(
        sent,
        [
            "<SaleList><Invoice><Surname>A</Surname></Invoice></SaleList>",
            "<SaleList><Invoice><Surname>B</Surname></Invoice></SaleList>"
        ]
    );
    let xml = xml_body(&mut out.expect("output"));
    assert_eq!(
        xml,
        "<SplitResult><SaleListCount>2</SaleListCount></SplitResult>"
    );
}

#[test]
fn json_modify_changes_the_last_leaf() {
    let p = program();
    let m = p.module("JsonModify").expect("module exists");
    let mut msg = Message::new();
    let r = msg.root.root();
    let parser = Arc::new(sluice_parsers::json::JsonParser::default());
    sluice_parsers::json::attach(
        &mut msg.root,
        r,
        Bytes::from_static(br#"{"Parent":{"First":"1","SaleList":[{"a":1}],"Last":"Test"}}"#),
        &parser,
    )
    .expect("attach");
    let mut env = Tree::new("Environment");
    let out = m
        .run(
            &mut msg,
            &mut env,
            &mut Collect::default(),
            &RunOptions::default(),
        )
        .expect("runs");
    let mut o = out.output.expect("output");
    let body = o.body().ok().flatten().expect("JSON body");
    let bytes = sluice_parsers::json::to_bytes(&mut o.root, body, &parser).expect("serialises");
    assert_eq!(
        String::from_utf8_lossy(&bytes),
        r#"{"Parent":{"First":"1","SaleList":[{"a":1}],"Last":"Changed"}}"#
    );
}
