//! The OpenAPI loader on arbitrary text.
//!
//! Checks: no panic on any input; a document that loads renders as YAML that loads again with
//! the same operations; matching request paths built from its templates, typing parameters and
//! validating values against its schemas never panic (a `$ref` loop included).

use serde_json::{Value, json};
use sluice_openapi::{Segment, coerce, load, render_yaml, validate};

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(api) = load("fuzz.yaml", &text) else {
        return;
    };
    let served = render_yaml(&api, "http://h:1");
    let again = load("served.yaml", &served)
        .unwrap_or_else(|e| panic!("the rendered document does not load: {e:?}\n{served}"));
    let ids = |a: &sluice_openapi::Api| {
        a.operations
            .iter()
            .map(|o| o.id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&api), ids(&again));
    let samples = [
        json!(null),
        json!(1),
        json!("x"),
        json!([1, "a"]),
        json!({"a": {"b": []}}),
    ];
    for op in &api.operations {
        let path: String = op
            .template
            .segments
            .iter()
            .map(|s| match s {
                Segment::Literal(l) => format!("/{l}"),
                Segment::Parameter(_) => "/7".to_string(),
            })
            .collect();
        let _ = api.operations_at(&format!("{}{path}", api.base_path));
        for p in &op.parameters {
            let v = coerce(&api.document, &p.schema, "7,a");
            let _ = validate(&api.document, &p.schema, &v);
        }
        let schemas = op
            .request_body
            .iter()
            .chain(op.responses.iter().filter_map(|(_, s)| s.as_ref()));
        for s in schemas {
            for v in &samples {
                let _ = validate(&api.document, s, v);
            }
        }
    }
    let _: Option<&Value> = api.document.get("paths");
}
