//! The document as served at `/NAME/openapi.json` and `.yaml`: the servers it names are replaced
//! by the endpoint it is really served at, and Sluice's own extension is left out.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::document::{Api, SpecVersion};

/// The served form of the document; `origin` is `http://host:port` as the client reached us.
fn served(api: &Api, origin: &str) -> Value {
    let mut doc = api.document.clone();
    if let Some(m) = doc.as_object_mut() {
        m.remove("x-sluice");
        match api.version {
            SpecVersion::Swagger2 => {
                let (scheme, host) = origin.split_once("://").unwrap_or(("http", origin));
                m.insert("host".into(), Value::String(host.into()));
                m.insert("schemes".into(), json!([scheme]));
                m.insert(
                    "basePath".into(),
                    Value::String(format!("{}/", api.base_path).replace("//", "/")),
                );
            }
            SpecVersion::OpenApi30 | SpecVersion::OpenApi31 => {
                m.insert(
                    "servers".into(),
                    json!([{ "url": format!("{origin}{}", api.base_path) }]),
                );
            }
        }
    }
    doc
}

/// The document as pretty-printed JSON.
pub fn render_json(api: &Api, origin: &str) -> String {
    serde_json::to_string_pretty(&served(api, origin)).unwrap_or_default()
}

/// The document as block-style YAML; every string is double-quoted, so that none reads back as
/// another type.
pub fn render_yaml(api: &Api, origin: &str) -> String {
    let mut out = String::new();
    yaml_value(&mut out, &served(api, origin), 0, true);
    out
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
        other => other.to_string(),
    }
}

fn is_empty_container(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => true,
    }
}

/// Write `v` at `indent`; `top` values start on a fresh line.
fn yaml_value(out: &mut String, v: &Value, indent: usize, top: bool) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (i, (k, val)) in m.iter().enumerate() {
                if i > 0 || top {
                    out.push_str(&pad);
                }
                let key = serde_json::to_string(k).unwrap_or_default();
                if is_empty_container(val) {
                    let text = match val {
                        Value::Object(_) => "{}".into(),
                        Value::Array(_) => "[]".into(),
                        other => scalar(other),
                    };
                    let _ = writeln!(out, "{key}: {text}");
                } else {
                    let _ = writeln!(out, "{key}:");
                    yaml_value(out, val, indent + 2, true);
                }
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, item) in a.iter().enumerate() {
                if i > 0 || top {
                    out.push_str(&pad);
                }
                if is_empty_container(item) {
                    let text = match item {
                        Value::Object(_) => "{}".into(),
                        Value::Array(_) => "[]".into(),
                        other => scalar(other),
                    };
                    let _ = writeln!(out, "- {text}");
                } else {
                    out.push_str("- ");
                    yaml_value(out, item, indent + 2, false);
                }
            }
        }
        Value::Object(_) => out.push_str("{}\n"),
        Value::Array(_) => out.push_str("[]\n"),
        other => {
            out.push_str(&pad);
            let _ = writeln!(out, "{}", scalar(other));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::load;

    const DOC: &str = "openapi: 3.0.3\ninfo: { title: t, version: '1' }\nservers: [{ url: 'http://old/api' }]\nx-sluice: { validation: on }\npaths:\n  /a:\n    get:\n      operationId: getA\n      tags: [x, y]\n      responses: { '200': { description: ok } }\n";

    #[test]
    fn render_replaces_servers_and_drops_the_extension_when_served() {
        let api = load("a.yaml", DOC).unwrap();
        let j: Value = serde_json::from_str(&render_json(&api, "http://127.0.0.1:7800")).unwrap();
        assert_eq!(j["servers"][0]["url"], "http://127.0.0.1:7800/api");
        assert!(j.get("x-sluice").is_none());
    }

    #[test]
    fn render_yaml_reads_back_as_the_same_document() {
        let api = load("a.yaml", DOC).unwrap();
        let y = render_yaml(&api, "http://h:1");
        let back = load("served.yaml", &y).unwrap();
        let mut expected = served(&api, "http://h:1");
        expected.as_object_mut().map(|m| m.remove("x-sluice"));
        assert_eq!(back.document, expected, "{y}");
    }
}
