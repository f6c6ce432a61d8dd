//! One request to a REST API: its operation found by path template and method, its parameters
//! typed (and, with validation on, checked) per the document, and what RESTInput writes in
//! `LocalEnvironment.REST.Input`.

use serde_json::Value as Json;
use sluice_node_api::NodeError;
use sluice_node_api::http_listener::{HttpRequest, HttpResponse};
use sluice_openapi::{Api, Location, Operation, PathValues, validate};
use sluice_tree::{NodeId, Text, Tree, Value, field_type};

use super::response::{Field, problem};

/// A request matched to an operation, its parameters typed.
pub struct Matched<'a> {
    pub op: &'a Operation,
    pub parameters: Vec<(String, Json)>,
}

fn location_name(l: Location) -> &'static str {
    match l {
        Location::Path => "path",
        Location::Query => "query",
        Location::Header => "header",
        Location::Cookie => "cookie",
    }
}

/// The methods of the operations on a path, as an `Allow` header lists them.
pub fn methods<'a>(found: &[(&'a Operation, PathValues)]) -> Vec<&'a str> {
    let mut m: Vec<&str> = found.iter().map(|(o, _)| o.method.as_str()).collect();
    m.sort_unstable();
    m.dedup();
    m
}

/// Find the operation of `req`; the response when there is none (404, 405) or when a parameter
/// fails validation (400).
pub fn route<'a>(
    api: &'a Api,
    req: &HttpRequest,
    validation: bool,
) -> Result<Matched<'a>, HttpResponse> {
    let found = api.operations_at(&req.path);
    if found.is_empty() {
        return Err(problem(
            404,
            &format!("no operation of the API serves {}", req.path),
            None,
        ));
    }
    let Some((op, path_values)) = found.iter().find(|(o, _)| o.method == req.method) else {
        let allow = methods(&found).join(", ");
        let mut r = problem(
            405,
            &format!(
                "{} is not an operation on {}; allowed: {allow}",
                req.method, req.path
            ),
            None,
        );
        r.headers.push(("Allow".into(), bytes::Bytes::from(allow)));
        return Err(r);
    };
    let query = query_pairs(&req.query);
    let mut parameters = Vec::with_capacity(op.parameters.len());
    for p in &op.parameters {
        let raw: Option<String> = match p.location {
            Location::Path => path_values
                .iter()
                .find(|(n, _)| *n == p.name)
                .map(|(_, v)| v.clone()),
            Location::Query => {
                let vals: Vec<&str> = query
                    .iter()
                    .filter(|(n, _)| *n == p.name)
                    .map(|(_, v)| v.as_str())
                    .collect();
                (!vals.is_empty()).then(|| vals.join(","))
            }
            Location::Header => header(req, &p.name).map(str::to_string),
            Location::Cookie => header(req, "cookie").and_then(|c| {
                c.split(';')
                    .filter_map(|kv| kv.trim().split_once('='))
                    .find(|(k, _)| *k == p.name)
                    .map(|(_, v)| v.to_string())
            }),
        };
        let Some(raw) = raw else {
            if validation && p.required {
                return Err(problem(
                    400,
                    &format!(
                        "the request lacks a required {} parameter",
                        location_name(p.location)
                    ),
                    Some(Field {
                        location: location_name(p.location),
                        name: &p.name,
                        reason: "required parameter is missing",
                    }),
                ));
            }
            continue;
        };
        let value = sluice_openapi::coerce(&api.document, &p.schema, &raw);
        if validation && let Err(f) = validate(&api.document, &p.schema, &value) {
            return Err(problem(
                400,
                &format!(
                    "{} parameter `{}` is not valid: {}",
                    location_name(p.location),
                    p.name,
                    f.message
                ),
                Some(Field {
                    location: location_name(p.location),
                    name: &p.name,
                    reason: &f.message,
                }),
            ));
        }
        parameters.push((p.name.clone(), value));
    }
    Ok(Matched { op, parameters })
}

/// Check a request body against the operation's schema (validation on).
pub fn check_body(api: &Api, op: &Operation, body: &[u8]) -> Result<(), HttpResponse> {
    let Some(schema) = &op.request_body else {
        return Ok(());
    };
    if body.iter().all(u8::is_ascii_whitespace) {
        if op.body_required {
            return Err(problem(
                400,
                "the operation requires a request body",
                Some(Field {
                    location: "body",
                    name: "/",
                    reason: "the body is empty",
                }),
            ));
        }
        return Ok(());
    }
    let value: Json = serde_json::from_slice(body).map_err(|e| {
        let reason = format!("not JSON: {e}");
        problem(
            400,
            "the request body is not JSON",
            Some(Field {
                location: "body",
                name: "/",
                reason: &reason,
            }),
        )
    })?;
    validate(&api.document, schema, &value).map_err(|f| {
        problem(
            400,
            &format!(
                "the request body is not valid at {}: {}",
                f.pointer, f.message
            ),
            Some(Field {
                location: "body",
                name: &f.pointer,
                reason: &f.message,
            }),
        )
    })
}

/// The schema the document gives a response of `status`: its own code, then `2XX`, then
/// `default`.
fn response_schema(op: &Operation, status: u16) -> Option<&Json> {
    let code = status.to_string();
    let range = format!("{}XX", status / 100);
    op.responses
        .iter()
        .find(|(c, _)| *c == code)
        .or_else(|| {
            op.responses
                .iter()
                .find(|(c, _)| c.eq_ignore_ascii_case(&range))
        })
        .or_else(|| op.responses.iter().find(|(c, _)| c == "default"))
        .and_then(|(_, s)| s.as_ref())
}

/// Check a JSON response body against the document (validation on): a 500 problem when it does
/// not match, as the fault is the flow's.
pub fn check_response(api: &Api, op: &Operation, resp: &HttpResponse) -> Result<(), HttpResponse> {
    let Some(schema) = response_schema(op, resp.status) else {
        return Ok(());
    };
    let is_json = resp
        .headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("content-type") && v.windows(4).any(|w| w == b"json"));
    if !is_json || resp.body.is_empty() {
        return Ok(());
    }
    let failed = |pointer: &str, reason: &str| {
        problem(
            500,
            &format!(
                "the response of operation {} does not match the API document at {pointer}: {reason}",
                op.id
            ),
            Some(Field {
                location: "response",
                name: pointer,
                reason,
            }),
        )
    };
    let value: Json =
        serde_json::from_slice(&resp.body).map_err(|e| failed("/", &format!("not JSON: {e}")))?;
    validate(&api.document, schema, &value).map_err(|f| failed(&f.pointer, &f.message))
}

/// A header's value as text.
pub fn header<'r>(req: &'r HttpRequest, name: &str) -> Option<&'r str> {
    req.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| std::str::from_utf8(v).ok())
}

/// `a=1&b=x+y` → pairs, percent-decoded (`+` is a space in a query string).
fn query_pairs(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            let d = |s: &str| sluice_openapi::percent_decode(&s.replace('+', " "));
            (d(k), d(v))
        })
        .collect()
}

fn character(t: &mut Tree, parent: NodeId, name: &'static str, v: &str) -> Result<(), NodeError> {
    let text = t.alloc_text(v.as_bytes());
    t.create_last_child(
        parent,
        field_type::NAME_VALUE,
        Text::from_static(name),
        Value::Character(text),
    )?;
    Ok(())
}

fn json_value(t: &mut Tree, parent: NodeId, name: &str, v: &Json) -> Result<(), NodeError> {
    let n = t.alloc_text(name.as_bytes());
    let value = match v {
        Json::Array(items) => {
            // An array parameter repeats its name, as a repeating element of the tree does.
            for i in items {
                json_value(t, parent, name, i)?;
            }
            return Ok(());
        }
        Json::Object(m) => {
            let f = t.create_last_child(parent, field_type::NAME, n, Value::Null)?;
            for (k, x) in m {
                json_value(t, f, k, x)?;
            }
            return Ok(());
        }
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(x) => match x.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Float(x.as_f64().unwrap_or_default()),
        },
        Json::String(s) => Value::Character(t.alloc_text(s.as_bytes())),
    };
    t.create_last_child(parent, field_type::NAME_VALUE, n, value)?;
    Ok(())
}

/// Write `LocalEnvironment.REST.Input`: Method, Operation, Path, URI and Parameters.
pub fn write_input(le: &mut Tree, req: &HttpRequest, m: &Matched<'_>) -> Result<(), NodeError> {
    let r = le.root();
    let rest = le.create_last_child(r, field_type::NAME, Text::from_static("REST"), Value::Null)?;
    let input = le.create_last_child(
        rest,
        field_type::NAME,
        Text::from_static("Input"),
        Value::Null,
    )?;
    character(le, input, "Method", &req.method)?;
    character(le, input, "Operation", &m.op.id)?;
    character(le, input, "Path", &req.path)?;
    character(le, input, "URI", &req.uri)?;
    let params = le.create_last_child(
        input,
        field_type::NAME,
        Text::from_static("Parameters"),
        Value::Null,
    )?;
    for (name, v) in &m.parameters {
        json_value(le, params, name, v)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_pairs_decodes_names_and_values_when_escaped() {
        assert_eq!(
            query_pairs("a=1&b=x+y%21&c&&d="),
            [
                ("a".to_string(), "1".to_string()),
                ("b".into(), "x y!".into()),
                ("c".into(), "".into()),
                ("d".into(), "".into())
            ]
        );
    }
}
