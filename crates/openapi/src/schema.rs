//! A focused JSON Schema validator: the keywords OpenAPI documents use for request and response
//! bodies and parameters (OpenAPI 3.0's schema objects, 3.1's JSON Schema 2020-12 core, and
//! Swagger 2.0's subset). `format` is an annotation only, as JSON Schema 2020-12 makes it by
//! default; `$ref` is followed within the document.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::Value;

use crate::document::resolve;

/// Why a value does not match its schema: where (a JSON Pointer below the value) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub pointer: String,
    pub message: String,
}

/// Check `value` against `schema`, whose `$ref`s point into `doc`.
pub fn validate(doc: &Value, schema: &Value, value: &Value) -> Result<(), Failure> {
    let mut at = String::new();
    check(doc, schema, value, &mut at, 0)
}

/// A parameter's text as the value its schema says it is (`7` as an integer, `true` as a
/// boolean, `a,b` as an array); text that does not convert stays text, for validation to name.
pub fn coerce(doc: &Value, schema: &Value, text: &str) -> Value {
    let schema = resolve(doc, schema);
    match type_names(schema).first().copied() {
        Some("integer") => text
            .parse::<i64>()
            .map_or_else(|_| Value::String(text.into()), Value::from),
        Some("number") => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Value::String(text.into()), Value::Number),
        Some("boolean") => match text {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::String(text.into()),
        },
        Some("array") => {
            let items = schema.get("items").unwrap_or(&Value::Bool(true));
            Value::Array(
                text.split(',')
                    .filter(|s| !s.is_empty())
                    .map(|s| coerce(doc, items, s))
                    .collect(),
            )
        }
        _ => Value::String(text.into()),
    }
}

fn type_names(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_type(v: &Value, t: &str) -> bool {
    match (t, v) {
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        ("number", Value::Number(_)) => true,
        _ => kind(v) == t,
    }
}

fn fail(at: &str, message: String) -> Result<(), Failure> {
    Err(Failure {
        pointer: if at.is_empty() { "/".into() } else { at.into() },
        message,
    })
}

fn number(v: &Value) -> Option<f64> {
    v.as_f64()
}

thread_local! {
    static PATTERNS: RefCell<HashMap<String, Option<regex::Regex>>> = RefCell::new(HashMap::new());
}

/// Whether `s` matches `pattern` (unanchored, as JSON Schema says); None when the pattern is
/// not a regular expression this engine reads.
fn pattern_matches(pattern: &str, s: &str) -> Option<bool> {
    PATTERNS.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() > 1024 {
            p.clear();
        }
        p.entry(pattern.to_string())
            .or_insert_with(|| regex::Regex::new(pattern).ok())
            .as_ref()
            .map(|r| r.is_match(s))
    })
}

fn check(
    doc: &Value,
    schema: &Value,
    v: &Value,
    at: &mut String,
    depth: usize,
) -> Result<(), Failure> {
    if depth > 64 {
        return fail(at, "the schema nests too deeply (a `$ref` loop?)".into());
    }
    let schema = resolve(doc, schema);
    let s = match schema {
        Value::Bool(true) => return Ok(()),
        Value::Bool(false) => return fail(at, "no value is allowed here".into()),
        Value::Object(s) => s,
        _ => return Ok(()),
    };
    if v.is_null() && s.get("nullable").and_then(Value::as_bool) == Some(true) {
        return Ok(());
    }
    let types = type_names(schema);
    if !types.is_empty() && !types.iter().any(|t| is_type(v, t)) {
        return fail(
            at,
            format!("expected {}, found {}", types.join(" or "), kind(v)),
        );
    }
    if let Some(Value::Array(allowed)) = s.get("enum")
        && !allowed.contains(v)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return fail(at, format!("{v} is not one of {}", list.join(", ")));
    }
    if let Some(c) = s.get("const")
        && c != v
    {
        return fail(at, format!("expected {c}, found {v}"));
    }
    match v {
        Value::Number(_) => check_number(s, v, at)?,
        Value::String(text) => check_string(s, text, at)?,
        Value::Array(items) => {
            let n = items.len() as u64;
            if let Some(min) = s.get("minItems").and_then(Value::as_u64)
                && n < min
            {
                return fail(at, format!("{n} items, fewer than minItems {min}"));
            }
            if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
                && n > max
            {
                return fail(at, format!("{n} items, more than maxItems {max}"));
            }
            if let Some(item_schema) = s.get("items") {
                for (i, item) in items.iter().enumerate() {
                    let len = at.len();
                    at.push_str(&format!("/{i}"));
                    check(doc, item_schema, item, at, depth + 1)?;
                    at.truncate(len);
                }
            }
        }
        Value::Object(fields) => {
            if let Some(Value::Array(req)) = s.get("required") {
                for r in req.iter().filter_map(Value::as_str) {
                    if !fields.contains_key(r) {
                        return fail(at, format!("required property `{r}` is missing"));
                    }
                }
            }
            let props = s.get("properties").and_then(Value::as_object);
            for (name, value) in fields {
                let len = at.len();
                at.push('/');
                at.push_str(&name.replace('~', "~0").replace('/', "~1"));
                match props.and_then(|p| p.get(name)) {
                    Some(ps) => check(doc, ps, value, at, depth + 1)?,
                    None => match s.get("additionalProperties") {
                        Some(Value::Bool(false)) => {
                            return fail(at, format!("property `{name}` is not allowed"));
                        }
                        Some(extra) => check(doc, extra, value, at, depth + 1)?,
                        None => {}
                    },
                }
                at.truncate(len);
            }
        }
        Value::Null | Value::Bool(_) => {}
    }
    if let Some(Value::Array(all)) = s.get("allOf") {
        for sub in all {
            check(doc, sub, v, at, depth + 1)?;
        }
    }
    if let Some(Value::Array(any)) = s.get("anyOf")
        && !any
            .iter()
            .any(|sub| check(doc, sub, v, &mut at.clone(), depth + 1).is_ok())
    {
        return fail(at, "matches none of the schemas of anyOf".into());
    }
    if let Some(Value::Array(one)) = s.get("oneOf") {
        let n = one
            .iter()
            .filter(|sub| check(doc, sub, v, &mut at.clone(), depth + 1).is_ok())
            .count();
        if n != 1 {
            return fail(
                at,
                format!("matches {n} of the schemas of oneOf, not exactly one"),
            );
        }
    }
    if let Some(not) = s.get("not")
        && check(doc, not, v, &mut at.clone(), depth + 1).is_ok()
    {
        return fail(at, "matches the schema of `not`".into());
    }
    Ok(())
}

fn check_number(s: &serde_json::Map<String, Value>, v: &Value, at: &str) -> Result<(), Failure> {
    let Some(x) = number(v) else { return Ok(()) };
    // OpenAPI 3.0 and Swagger 2.0 write exclusive bounds as booleans beside minimum/maximum;
    // 3.1 (JSON Schema 2020-12) writes them as numbers.
    let excl_min = s.get("exclusiveMinimum");
    let excl_max = s.get("exclusiveMaximum");
    if let Some(min) = s.get("minimum").and_then(number) {
        let exclusive = excl_min.and_then(Value::as_bool) == Some(true);
        if x < min || (exclusive && x == min) {
            let how = if exclusive { "at most" } else { "less than" };
            return fail(at, format!("{v} is {how} the minimum {min}"));
        }
    }
    if let Some(max) = s.get("maximum").and_then(number) {
        let exclusive = excl_max.and_then(Value::as_bool) == Some(true);
        if x > max || (exclusive && x == max) {
            let how = if exclusive { "at least" } else { "more than" };
            return fail(at, format!("{v} is {how} the maximum {max}"));
        }
    }
    if let Some(min) = excl_min.and_then(number)
        && x <= min
    {
        return fail(at, format!("{v} is not above the exclusive minimum {min}"));
    }
    if let Some(max) = excl_max.and_then(number)
        && x >= max
    {
        return fail(at, format!("{v} is not below the exclusive maximum {max}"));
    }
    if let Some(m) = s.get("multipleOf").and_then(number)
        && m > 0.0
        && ((x / m) - (x / m).round()).abs() > 1e-9
    {
        return fail(at, format!("{v} is not a multiple of {m}"));
    }
    Ok(())
}

fn check_string(s: &serde_json::Map<String, Value>, text: &str, at: &str) -> Result<(), Failure> {
    let n = text.chars().count() as u64;
    if let Some(min) = s.get("minLength").and_then(Value::as_u64)
        && n < min
    {
        return fail(at, format!("{n} characters, fewer than minLength {min}"));
    }
    if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
        && n > max
    {
        return fail(at, format!("{n} characters, more than maxLength {max}"));
    }
    if let Some(p) = s.get("pattern").and_then(Value::as_str)
        && pattern_matches(p, text) == Some(false)
    {
        return fail(at, format!("\"{text}\" does not match the pattern `{p}`"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({"components": {"schemas": {
            "Order": {"type": "object", "required": ["item", "quantity"], "additionalProperties": false,
                "properties": {"item": {"type": "string", "minLength": 1},
                               "quantity": {"type": "integer", "minimum": 1, "maximum": 100},
                               "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}}}}}})
    }

    fn order() -> Value {
        json!({"$ref": "#/components/schemas/Order"})
    }

    #[test]
    fn validate_accepts_a_value_when_it_matches_through_a_ref() {
        let d = doc();
        assert_eq!(
            validate(&d, &order(), &json!({"item": "pen", "quantity": 3})),
            Ok(())
        );
    }

    #[test]
    fn validate_names_the_field_and_why_when_a_value_fails() {
        let d = doc();
        let cases = [
            (
                json!({"item": "pen"}),
                "/",
                "required property `quantity` is missing",
            ),
            (
                json!({"item": "pen", "quantity": 0}),
                "/quantity",
                "0 is less than the minimum 1",
            ),
            (
                json!({"item": "pen", "quantity": "3"}),
                "/quantity",
                "expected integer, found string",
            ),
            (
                json!({"item": "pen", "quantity": 1, "x": 1}),
                "/x",
                "property `x` is not allowed",
            ),
            (
                json!({"item": "pen", "quantity": 1, "tags": ["a", 2]}),
                "/tags/1",
                "expected string, found integer",
            ),
            (
                json!({"item": "", "quantity": 1}),
                "/item",
                "0 characters, fewer than minLength 1",
            ),
        ];
        for (v, pointer, message) in cases {
            let f = validate(&d, &order(), &v).unwrap_err();
            assert_eq!(
                (f.pointer.as_str(), f.message.as_str()),
                (pointer, message),
                "{v}"
            );
        }
    }

    #[test]
    fn validate_handles_composition_and_nullable_when_present() {
        let d = json!({});
        let s = json!({"oneOf": [{"type": "integer"}, {"type": "string", "pattern": "^[a-z]+$"}]});
        assert!(validate(&d, &s, &json!(3)).is_ok());
        assert!(validate(&d, &s, &json!("abc")).is_ok());
        assert!(validate(&d, &s, &json!("ABC")).is_err());
        let n = json!({"type": "string", "nullable": true});
        assert!(validate(&d, &n, &Value::Null).is_ok());
        let e = json!({"type": "number", "exclusiveMinimum": 0});
        assert!(validate(&d, &e, &json!(0)).is_err());
        assert!(validate(&d, &e, &json!(0.5)).is_ok());
    }

    #[test]
    fn validate_stops_when_refs_loop() {
        let d = json!({"a": {"$ref": "#/a"}});
        assert!(validate(&d, &json!({"$ref": "#/a"}), &json!(1)).is_ok());
        let d = json!({"a": {"properties": {"x": {"$ref": "#/a"}}}});
        let mut v = json!(1);
        for _ in 0..100 {
            v = json!({"x": v});
        }
        assert!(validate(&d, &json!({"$ref": "#/a"}), &v).is_err());
    }

    #[test]
    fn coerce_types_parameters_when_the_schema_says_so() {
        let d = json!({});
        assert_eq!(coerce(&d, &json!({"type": "integer"}), "7"), json!(7));
        assert_eq!(coerce(&d, &json!({"type": "integer"}), "x"), json!("x"));
        assert_eq!(coerce(&d, &json!({"type": "boolean"}), "true"), json!(true));
        assert_eq!(
            coerce(
                &d,
                &json!({"type": "array", "items": {"type": "number"}}),
                "1,2.5"
            ),
            json!([1.0, 2.5])
        );
        assert_eq!(coerce(&d, &json!({}), "x"), json!("x"));
    }
}
