//! XSLTransform in a flow: where the stylesheet comes from, parameters, the output domain, a bad
//! stylesheet at deploy and an error while transforming.

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use sluice_flow::{Flow, Registry, load_flow};
use sluice_flow_testing::{Captured, Harness};
use sluice_node_api::Services;
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps, Domain, ParseTiming};
use sluice_tree::{Message, Value, field_type};

struct Project(PathBuf);

impl Project {
    fn new(name: &str) -> Project {
        let d = std::env::temp_dir().join(format!("sluice-xslt-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("xsl")).expect("create the project");
        Project(d)
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().expect("a folder")).expect("create a folder");
        std::fs::write(p, text).expect("write a file");
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn sheet(body: &str) -> String {
    format!(
        "<xsl:stylesheet version=\"1.0\" xmlns:xsl=\"http://www.w3.org/1999/XSL/Transform\">\n{body}\n</xsl:stylesheet>\n"
    )
}

const NAMED: &str = "<xsl:output omit-xml-declaration=\"yes\"/>\
    <xsl:param name=\"p\" select=\"'none'\"/><xsl:param name=\"q\" select=\"'none'\"/>\
    <xsl:template match=\"/\"><by NAME=\"\" p=\"{$p}\" q=\"{$q}\"><xsl:value-of select=\"/a\"/></by></xsl:template>";

fn named(name: &str) -> String {
    sheet(&NAMED.replace("NAME=\"\"", &format!("name=\"{name}\"")))
}

fn build(project: &Project, props: &str) -> Result<(Arc<Harness>, Arc<Flow>), String> {
    let mut registry = Registry::new();
    sluice_nodes_core::register(&mut |s| registry.register(s));
    sluice_nodes_xslt::register(&mut |s| registry.register(s));
    Harness::register(&mut registry);
    let src = format!(
        "nodes:\n  in: {{ type: Inject, wires: {{ out: [xslt] }} }}\n  xslt: {{ type: XSLTransform, {props}, wires: {{ out: [out], failure: [failed] }} }}\n  out: {{ type: Capture }}\n  failed: {{ type: Capture }}\n"
    );
    let def = load_flow("xslt.yaml", &src, &registry).map_err(|d| d[0].to_string())?;
    let harness = Harness::new();
    let flow = harness
        .build(&def, &project.0, &Services::none())
        .map_err(|d| {
            d.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        })?;
    Ok((harness, flow))
}

fn message(domain: Domain, body: &str, le: &[(&[&str], &str)]) -> Message {
    let parsing = BodyParsing::from_props(&BodyParsingProps {
        domain,
        parse_timing: ParseTiming::OnDemand,
        opaque_elements: Vec::new(),
    })
    .expect("parsing");
    let mut msg = Message::new();
    parsing
        .attach(&mut msg.root, Bytes::copy_from_slice(body.as_bytes()))
        .expect("attach");
    for (path, value) in le {
        let t = &mut msg.local_environment;
        let mut at = t.root();
        for (i, name) in path.iter().enumerate() {
            let existing = t
                .child_named(at, None, name.as_bytes(), 0)
                .expect("navigate");
            at = match existing {
                Some(id) => id,
                None if i + 1 == path.len() => {
                    let v = t.alloc_text(value.as_bytes());
                    let n = t.alloc_text(name.as_bytes());
                    t.create_last_child(at, field_type::NAME_VALUE, n, Value::Character(v))
                        .expect("create")
                }
                None => {
                    let n = t.alloc_text(name.as_bytes());
                    t.create_last_child(at, field_type::NAME, n, Value::Null)
                        .expect("create")
                }
            };
        }
    }
    msg
}

fn run(harness: &Harness, flow: &Arc<Flow>, msgs: Vec<Message>) -> Vec<Captured> {
    for m in msgs {
        harness.inject(m);
    }
    harness.run(flow);
    harness.take_captured()
}

fn body(c: &Captured) -> (String, String) {
    let mut msg = c.message.clone();
    let b = msg.body().expect("body").expect("a body");
    let domain = String::from_utf8_lossy(msg.root.name_bytes(b)).into_owned();
    let (bytes, _) = sluice_nodes_core::domains::serialize_body(&mut msg).expect("serialise");
    (domain, String::from_utf8_lossy(&bytes).into_owned())
}

#[test]
fn xsl_transform_replaces_the_body_in_xmlnsc_when_the_stylesheet_is_a_property() {
    let p = Project::new("property");
    p.write("xsl/prop.xsl", &named("prop"));
    let (h, flow) = build(&p, "stylesheet: xsl/prop.xsl").expect("deploys");
    let got = run(&h, &flow, vec![message(Domain::Xmlnsc, "<a>1</a>", &[])]);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].label, "out");
    assert_eq!(
        body(&got[0]),
        (
            "XMLNSC".into(),
            "<by name=\"prop\" p=\"none\" q=\"none\">1</by>\n".into()
        )
    );
    // The result parses on demand in its domain.
    let mut msg = got[0].message.clone();
    let r = msg.root.root();
    let by = msg.root.path(r, &["XMLNSC", "by"]).expect("parses");
    assert!(by.is_some());
}

#[test]
fn xsl_transform_prefers_the_instruction_then_local_environment_then_the_property() {
    let p = Project::new("order");
    p.write("xsl/prop.xsl", &named("prop"));
    p.write("xsl/pi.xsl", &named("pi"));
    p.write("xsl/le.xsl", &named("le"));
    p.write("xsl/old.xsl", &named("old"));
    let (h, flow) = build(&p, "stylesheet: xsl/prop.xsl").expect("deploys");
    let pi = "<?xml-stylesheet type=\"text/xsl\" href=\"pi.xsl\"?><a>1</a>";
    let got = run(
        &h,
        &flow,
        vec![
            message(
                Domain::Xmlnsc,
                pi,
                &[(&["XSL", "StyleSheetName"], "le.xsl")],
            ),
            message(
                Domain::Xmlnsc,
                "<a>2</a>",
                &[(&["XSL", "StyleSheetName"], "le.xsl")],
            ),
            message(
                Domain::Xmlnsc,
                "<a>3</a>",
                &[(&["ComIbmXslXmltStylesheetname"], "old.xsl")],
            ),
            message(Domain::Xmlnsc, "<a>4</a>", &[]),
        ],
    );
    let names: Vec<String> = got
        .iter()
        .map(|c| body(c).1.split('"').nth(1).unwrap_or_default().to_string())
        .collect();
    assert_eq!(names, ["pi", "le", "old", "prop"]);
}

#[test]
fn xsl_transform_passes_parameters_from_properties_overridden_by_local_environment() {
    let p = Project::new("params");
    p.write("xsl/prop.xsl", &named("prop"));
    let (h, flow) = build(
        &p,
        "stylesheet: xsl/prop.xsl, parameters: { p: from-props, q: 'it''s' }",
    )
    .expect("deploys");
    let got = run(
        &h,
        &flow,
        vec![
            message(Domain::Xmlnsc, "<a>1</a>", &[]),
            message(
                Domain::Xmlnsc,
                "<a>2</a>",
                &[(&["XSL", "Parameters", "p"], "from-le")],
            ),
        ],
    );
    assert_eq!(
        body(&got[0]).1,
        "<by name=\"prop\" p=\"from-props\" q=\"it's\">1</by>\n"
    );
    assert_eq!(
        body(&got[1]).1,
        "<by name=\"prop\" p=\"from-le\" q=\"it's\">2</by>\n"
    );
}

#[test]
fn xsl_transform_attaches_blob_when_the_output_method_is_text() {
    let p = Project::new("text");
    p.write(
        "xsl/csv.xsl",
        &sheet("<xsl:output method=\"text\"/><xsl:template match=\"/\"><xsl:for-each select=\"//v\"><xsl:value-of select=\".\"/>,</xsl:for-each></xsl:template>"),
    );
    let (h, flow) = build(&p, "stylesheet: xsl/csv.xsl").expect("deploys");
    let got = run(
        &h,
        &flow,
        vec![
            message(Domain::Xmlnsc, "<a><v>1</v><v>x &amp; y</v></a>", &[]),
            message(
                Domain::Blob,
                "<a><v>3</v></a>",
                &[(&["XSL", "MessageDomain"], "JSON")],
            ),
        ],
    );
    assert_eq!(body(&got[0]), ("BLOB".into(), "1,x & y,".into()));
    assert_eq!(body(&got[1]).0, "JSON");
}

#[test]
fn xsl_transform_fails_deployment_naming_file_and_line_when_the_stylesheet_is_bad() {
    let p = Project::new("bad");
    p.write(
        "xsl/malformed.xsl",
        &sheet("<xsl:template match=\"/\">\n<x>\n</xsl:template>"),
    );
    let e = build(&p, "stylesheet: xsl/malformed.xsl")
        .err()
        .expect("fails");
    assert!(e.contains("malformed.xsl:4"), "{e}");
    p.write(
        "xsl/invalid.xsl",
        &sheet("<xsl:template match=\"/\">\n<xsl:value-of/>\n</xsl:template>"),
    );
    let e = build(&p, "stylesheet: xsl/invalid.xsl")
        .err()
        .expect("fails");
    assert!(e.contains("invalid.xsl:3"), "{e}");
    let e = build(&p, "stylesheet: xsl/missing.xsl")
        .err()
        .expect("fails");
    assert!(e.contains("missing.xsl"), "{e}");
}

#[test]
fn xsl_transform_sends_runtime_errors_to_failure_with_an_exception_list() {
    let p = Project::new("runtime");
    p.write(
        "xsl/stop.xsl",
        &sheet("<xsl:template match=\"/\"><xsl:message terminate=\"yes\">no orders today</xsl:message></xsl:template>"),
    );
    let (h, flow) = build(&p, "stylesheet: xsl/stop.xsl").expect("deploys");
    let got = run(
        &h,
        &flow,
        vec![
            message(Domain::Xmlnsc, "<a>1</a>", &[]),
            message(Domain::Blob, "<a>unclosed", &[]),
            message(
                Domain::Xmlnsc,
                "<?xml-stylesheet type=\"text/xsl\" href=\"../../etc/passwd\"?><a/>",
                &[],
            ),
        ],
    );
    assert_eq!(got.len(), 3);
    let texts: Vec<String> = got
        .iter()
        .map(|c| {
            assert_eq!(c.label, "failed");
            let el = c.message.exception_list.clone();
            format!("{el:?}")
        })
        .collect();
    assert!(
        texts[0].contains("xslt") && texts[0].contains("no orders today"),
        "{}",
        texts[0]
    );
    assert!(texts[1].contains("not well-formed XML"), "{}", texts[1]);
    assert!(
        texts[2].contains("leaves the stylesheet folder"),
        "{}",
        texts[2]
    );
}
