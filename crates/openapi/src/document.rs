//! Loading a document: the YAML (or JSON, which the same reader reads) keeps its lines, so that
//! an operation the deployment cannot serve is named with its `file:line`.

use serde_json::{Map, Value};
use sluice_flow::Diagnostic;
use sluice_flow::yaml::{self, Yaml, YamlKind};

use crate::path::PathTemplate;

/// Which specification a document follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecVersion {
    Swagger2,
    OpenApi30,
    OpenApi31,
}

/// Where a parameter is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    Path,
    Query,
    Header,
    Cookie,
}

/// One parameter of an operation, its `$ref` resolved.
#[derive(Clone, Debug)]
pub struct Parameter {
    pub name: String,
    pub location: Location,
    pub required: bool,
    /// Its JSON Schema (Swagger 2.0's inline `type`/`format`/`items` taken as one).
    pub schema: Value,
}

/// One operation: a method on a path template, implemented by the flow or subflow named after
/// its `operationId`.
#[derive(Clone, Debug)]
pub struct Operation {
    pub id: String,
    /// Upper case, as on the wire.
    pub method: String,
    pub template: PathTemplate,
    pub parameters: Vec<Parameter>,
    /// The JSON Schema of a JSON request body, when the operation declares one.
    pub request_body: Option<Value>,
    pub body_required: bool,
    /// Status (`200`, `2XX`, `default`) → the JSON Schema of a JSON response body, if any.
    pub responses: Vec<(String, Option<Value>)>,
    /// Where the operation is written (its method key).
    pub line: usize,
    pub col: usize,
}

/// Cross-origin requests an API accepts (the document's `x-sluice.cors`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cors {
    /// Origins allowed, `*` for any.
    pub allow_origins: Vec<String>,
    /// Request headers a browser may send besides the simple ones.
    pub allow_headers: Vec<String>,
    pub max_age_secs: u64,
}

/// How Sluice serves an API, from the document's `x-sluice` extension.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiOptions {
    /// Whether parameters and bodies are checked against the document's schemas.
    pub validation: bool,
    pub cors: Option<Cors>,
    /// Instances of the API's flow.
    pub instances: usize,
}

impl Default for ApiOptions {
    fn default() -> Self {
        ApiOptions {
            validation: false,
            cors: None,
            instances: 1,
        }
    }
}

/// A loaded document.
#[derive(Clone, Debug)]
pub struct Api {
    pub file: String,
    pub version: SpecVersion,
    /// The path every operation's template is below: `""` or `/a/b`, no trailing `/`.
    pub base_path: String,
    pub operations: Vec<Operation>,
    /// The whole document, for `$ref`s and for serving.
    pub document: Value,
    pub options: ApiOptions,
}

const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// A path template's parameters with the values a request path gave them.
pub type PathValues = Vec<(String, String)>;

impl Api {
    /// The operations on a path below the base path, with the values of its template's
    /// parameters; empty when no template matches.
    pub fn operations_at<'a>(&'a self, path: &str) -> Vec<(&'a Operation, PathValues)> {
        let Some(rest) = path.strip_prefix(self.base_path.as_str()) else {
            return Vec::new();
        };
        // The base path itself is the API's root, `/`.
        let rest = if rest.is_empty() { "/" } else { rest };
        let mut found: Vec<(&Operation, PathValues, usize)> = self
            .operations
            .iter()
            .filter_map(|op| {
                op.template
                    .matches(rest)
                    .map(|vals| (op, vals, op.template.literal_count()))
            })
            .collect();
        // A literal segment beats a parameter: `/orders/new` before `/orders/{id}`.
        let best = found.iter().map(|f| f.2).max().unwrap_or(0);
        found.retain(|f| f.2 == best);
        found.into_iter().map(|(o, v, _)| (o, v)).collect()
    }

    /// Follow a local `$ref` (`#/components/...`); other values are returned as they are.
    pub fn resolve<'a>(&'a self, v: &'a Value) -> &'a Value {
        resolve(&self.document, v)
    }
}

/// Follow local `$ref`s from `v` (at most 32, so a loop ends).
pub(crate) fn resolve<'a>(doc: &'a Value, mut v: &'a Value) -> &'a Value {
    for _ in 0..32 {
        let Some(r) = v.get("$ref").and_then(Value::as_str) else {
            return v;
        };
        match r.strip_prefix('#').and_then(|p| doc.pointer(p)) {
            Some(t) => v = t,
            None => return v,
        }
    }
    v
}

fn to_json(y: &Yaml) -> Value {
    match &y.kind {
        YamlKind::Null => Value::Null,
        YamlKind::Bool(b) => Value::Bool(*b),
        YamlKind::Int(i) => Value::from(*i),
        YamlKind::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        YamlKind::Str(s) => Value::String(s.clone()),
        YamlKind::Seq(items) => Value::Array(items.iter().map(to_json).collect()),
        YamlKind::Map(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.scalar_text().unwrap_or_default(), to_json(v)))
                .collect::<Map<String, Value>>(),
        ),
    }
}

fn get<'a>(y: &'a Yaml, key: &str) -> Option<&'a Yaml> {
    match &y.kind {
        YamlKind::Map(m) => m
            .iter()
            .find(|(k, _)| k.scalar_text().as_deref() == Some(key))
            .map(|(_, v)| v),
        _ => None,
    }
}

struct Loader<'s> {
    file: &'s str,
    src: &'s str,
    problems: Vec<Diagnostic>,
}

impl Loader<'_> {
    fn problem(&mut self, at: &Yaml, message: impl Into<String>) {
        self.problems.push(Diagnostic::at(
            self.file, self.src, at.line, at.col, message,
        ));
    }

    fn problem_hint(&mut self, at: &Yaml, message: impl Into<String>, hint: &str) {
        self.problems
            .push(Diagnostic::at(self.file, self.src, at.line, at.col, message).with_hint(hint));
    }
}

/// Load a document's text; `file` names it in diagnostics. Every problem is reported.
pub fn load(file: &str, src: &str) -> Result<Api, Vec<Diagnostic>> {
    match load_partly(file, src) {
        (Some(api), problems) if problems.is_empty() => Ok(api),
        (_, problems) => Err(problems),
    }
}

/// Load a document's text as far as it goes: the API with the operations that could be read
/// (None when the document as a whole is unusable), and every problem found.
pub fn load_partly(file: &str, src: &str) -> (Option<Api>, Vec<Diagnostic>) {
    match load_inner(file, src) {
        Ok((api, problems)) => (Some(api), problems),
        Err(problems) => (None, problems),
    }
}

fn load_inner(file: &str, src: &str) -> Result<(Api, Vec<Diagnostic>), Vec<Diagnostic>> {
    let root = yaml::parse(file, src).map_err(|d| vec![d])?;
    let mut l = Loader {
        file,
        src,
        problems: Vec::new(),
    };
    if !matches!(root.kind, YamlKind::Map(_)) {
        l.problem(&root, "an OpenAPI document is a mapping");
        return Err(l.problems);
    }
    let document = to_json(&root);
    let version = match (
        get(&root, "openapi").and_then(Yaml::scalar_text),
        get(&root, "swagger").and_then(Yaml::scalar_text),
    ) {
        (Some(v), _) if v.starts_with("3.0") => SpecVersion::OpenApi30,
        (Some(v), _) if v.starts_with("3.1") => SpecVersion::OpenApi31,
        (_, Some(v)) if v.starts_with("2.") => SpecVersion::Swagger2,
        (Some(v), _) | (_, Some(v)) => {
            l.problem(&root, format!("OpenAPI version `{v}` is not supported"));
            return Err(l.problems);
        }
        (None, None) => {
            l.problem_hint(
                &root,
                "the document names no `openapi` (or `swagger`) version",
                "start it with `openapi: 3.0.3`",
            );
            return Err(l.problems);
        }
    };
    let base_path = base_path(&mut l, &root, version);
    let options = options(&mut l, &root);
    let mut operations = Vec::new();
    match get(&root, "paths") {
        Some(
            paths @ Yaml {
                kind: YamlKind::Map(entries),
                ..
            },
        ) => {
            for (key, item) in entries {
                let Some(p) = key.scalar_text() else { continue };
                let template = match PathTemplate::parse(&p) {
                    Ok(t) => t,
                    Err(why) => {
                        l.problem(key, format!("path `{p}`: {why}"));
                        continue;
                    }
                };
                let path_params = item_parameters(&mut l, &document, get(item, "parameters"));
                for m in METHODS {
                    let Some(op) = get(item, m) else { continue };
                    let at = match &item.kind {
                        YamlKind::Map(m2) => m2
                            .iter()
                            .find(|(k, _)| k.scalar_text().as_deref() == Some(*m))
                            .map_or(op, |(k, _)| k),
                        _ => op,
                    };
                    if let Some(o) = operation(
                        &mut l,
                        &document,
                        version,
                        (m, &p, at, op),
                        &template,
                        &path_params,
                    ) {
                        operations.push(o);
                    }
                }
            }
            if operations.is_empty() && l.problems.is_empty() {
                l.problem(paths, "the document has no operations");
            }
        }
        _ => l.problem(&root, "the document has no `paths`"),
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut dups = Vec::new();
    for o in &operations {
        if seen.contains(&o.id.as_str()) {
            dups.push((o.line, o.col, o.id.clone()));
        }
        seen.push(&o.id);
    }
    for (line, col, id) in dups {
        l.problems.push(Diagnostic::at(
            file,
            src,
            line,
            col,
            format!("operationId `{id}` is used by more than one operation"),
        ));
    }
    let api = Api {
        file: file.to_string(),
        version,
        base_path,
        operations,
        document,
        options,
    };
    Ok((api, l.problems))
}

fn base_path(l: &mut Loader<'_>, root: &Yaml, version: SpecVersion) -> String {
    let (raw, at) = match version {
        SpecVersion::Swagger2 => match get(root, "basePath") {
            Some(y) => (y.scalar_text().unwrap_or_default(), y),
            None => return String::new(),
        },
        _ => match get(root, "servers").and_then(|s| match &s.kind {
            YamlKind::Seq(items) => items.first(),
            _ => None,
        }) {
            Some(server) => match get(server, "url") {
                Some(u) => (u.scalar_text().unwrap_or_default(), u),
                None => return String::new(),
            },
            None => return String::new(),
        },
    };
    let path = match raw.find("://") {
        Some(i) => raw[i + 3..]
            .find('/')
            .map_or("", |j| &raw[i + 3 + j..])
            .to_string(),
        None => raw.clone(),
    };
    if !path.is_empty() && !path.starts_with('/') {
        l.problem(at, format!("the base path `{raw}` is not a URL path"));
    }
    if path.contains('{') {
        l.problem(at, format!("server variables in `{raw}` are not supported"));
    }
    path.trim_end_matches('/').to_string()
}

fn options(l: &mut Loader<'_>, root: &Yaml) -> ApiOptions {
    let mut o = ApiOptions::default();
    let Some(x) = get(root, "x-sluice") else {
        return o;
    };
    let YamlKind::Map(entries) = &x.kind else {
        l.problem(x, "`x-sluice` is a mapping (validation, cors, instances)");
        return o;
    };
    for (k, v) in entries {
        match k.scalar_text().as_deref() {
            Some("validation") => match (&v.kind, v.scalar_text().as_deref()) {
                (YamlKind::Bool(b), _) => o.validation = *b,
                (_, Some("on")) => o.validation = true,
                (_, Some("off")) => o.validation = false,
                _ => l.problem(v, "`validation` is `on` or `off`"),
            },
            Some("instances") => match &v.kind {
                YamlKind::Int(n) if (1..=256).contains(n) => o.instances = *n as usize,
                _ => l.problem(v, "`instances` is a number from 1 to 256"),
            },
            Some("cors") => o.cors = Some(cors(l, v)),
            other => l.problem_hint(
                k,
                format!("unknown `x-sluice` setting `{}`", other.unwrap_or("?")),
                "the settings are validation, cors and instances",
            ),
        }
    }
    o
}

fn cors(l: &mut Loader<'_>, y: &Yaml) -> Cors {
    let mut c = Cors {
        allow_origins: vec!["*".into()],
        allow_headers: vec!["Content-Type".into()],
        max_age_secs: 600,
    };
    let YamlKind::Map(entries) = &y.kind else {
        l.problem(
            y,
            "`cors` is a mapping (allow_origins, allow_headers, max_age_secs)",
        );
        return c;
    };
    let strings = |l: &mut Loader<'_>, v: &Yaml| -> Vec<String> {
        match &v.kind {
            YamlKind::Seq(items) => items.iter().filter_map(Yaml::scalar_text).collect(),
            _ => {
                l.problem(v, "a list of strings was expected");
                Vec::new()
            }
        }
    };
    for (k, v) in entries {
        match k.scalar_text().as_deref() {
            Some("allow_origins") => c.allow_origins = strings(l, v),
            Some("allow_headers") => c.allow_headers = strings(l, v),
            Some("max_age_secs") => match &v.kind {
                YamlKind::Int(n) if *n >= 0 => c.max_age_secs = *n as u64,
                _ => l.problem(v, "`max_age_secs` is a number of seconds"),
            },
            other => l.problem(
                k,
                format!("unknown `cors` setting `{}`", other.unwrap_or("?")),
            ),
        }
    }
    c
}

/// The parameters a path item or operation lists (body parameters of Swagger 2.0 excluded),
/// with the body parameter's schema of Swagger 2.0 when there is one.
fn item_parameters(
    l: &mut Loader<'_>,
    doc: &Value,
    y: Option<&Yaml>,
) -> (Vec<Parameter>, Option<(Value, bool)>) {
    let mut out = Vec::new();
    let mut body = None;
    let Some(y) = y else {
        return (out, body);
    };
    let YamlKind::Seq(items) = &y.kind else {
        l.problem(y, "`parameters` is a list");
        return (out, body);
    };
    for item in items {
        let raw = to_json(item);
        let p = resolve(doc, &raw);
        let name = p.get("name").and_then(Value::as_str);
        let location = p.get("in").and_then(Value::as_str);
        let required = p.get("required").and_then(Value::as_bool).unwrap_or(false);
        let location = match location {
            Some("path") => Location::Path,
            Some("query") => Location::Query,
            Some("header") => Location::Header,
            Some("cookie") => Location::Cookie,
            Some("body") => {
                body = Some((
                    p.get("schema").cloned().unwrap_or(Value::Bool(true)),
                    required,
                ));
                continue;
            }
            // Swagger 2.0's form parameters describe a form body, not JSON; not validated.
            Some("formData") => continue,
            other => {
                l.problem(
                    item,
                    format!("parameter location `{}` is not known", other.unwrap_or("")),
                );
                continue;
            }
        };
        let Some(name) = name else {
            l.problem(item, "a parameter without a `name`");
            continue;
        };
        let schema = match p.get("schema") {
            Some(s) => s.clone(),
            None => {
                // Swagger 2.0 writes the schema keywords on the parameter itself.
                let mut m = Map::new();
                for k in [
                    "type",
                    "format",
                    "items",
                    "enum",
                    "minimum",
                    "maximum",
                    "pattern",
                    "minLength",
                    "maxLength",
                    "default",
                ] {
                    if let Some(v) = p.get(k) {
                        m.insert(k.to_string(), v.clone());
                    }
                }
                Value::Object(m)
            }
        };
        out.push(Parameter {
            name: name.to_string(),
            location,
            required: required || location == Location::Path,
            schema,
        });
    }
    (out, body)
}

/// The JSON media type's schema in an OpenAPI 3 `content` map.
fn json_content_schema(content: Option<&Value>) -> Option<Value> {
    let c = content?.as_object()?;
    let (_, media) = c
        .iter()
        .find(|(k, _)| k.contains("json"))
        .or_else(|| c.iter().find(|(k, _)| k.as_str() == "*/*"))?;
    Some(media.get("schema").cloned().unwrap_or(Value::Bool(true)))
}

fn operation(
    l: &mut Loader<'_>,
    doc: &Value,
    version: SpecVersion,
    (method, path, at, op): (&str, &str, &Yaml, &Yaml),
    template: &PathTemplate,
    path_params: &(Vec<Parameter>, Option<(Value, bool)>),
) -> Option<Operation> {
    let upper = method.to_ascii_uppercase();
    let id = get(op, "operationId").and_then(Yaml::scalar_text);
    let Some(id) = id.filter(|s| !s.is_empty()) else {
        l.problem_hint(
            at,
            format!("operation {upper} {path} has no operationId"),
            "give it `operationId: NAME` and implement it by the subflow `subflows/NAME.yaml`",
        );
        return None;
    };
    if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        l.problem(
            get(op, "operationId").unwrap_or(at),
            format!("operationId `{id}` may use only letters, digits, `_` and `-`"),
        );
        return None;
    }
    let (own, own_body) = item_parameters(l, doc, get(op, "parameters"));
    let mut parameters = path_params.0.clone();
    for p in own {
        parameters.retain(|q| !(q.name == p.name && q.location == p.location));
        parameters.push(p);
    }
    for name in template.parameter_names() {
        if !parameters
            .iter()
            .any(|p| p.location == Location::Path && p.name == name)
        {
            // Undeclared path parameters are still delivered, as strings.
            parameters.push(Parameter {
                name: name.to_string(),
                location: Location::Path,
                required: true,
                schema: Value::Object(Map::new()),
            });
        }
    }
    let op_json = to_json(op);
    let (request_body, body_required) = match version {
        SpecVersion::Swagger2 => match own_body.or_else(|| path_params.1.clone()) {
            Some((s, r)) => (Some(s), r),
            None => (None, false),
        },
        _ => match op_json.get("requestBody").map(|b| resolve(doc, b)) {
            Some(b) => (
                json_content_schema(b.get("content")),
                b.get("required").and_then(Value::as_bool).unwrap_or(false),
            ),
            None => (None, false),
        },
    };
    let responses = op_json
        .get("responses")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(code, r)| {
                    let r = resolve(doc, r);
                    let schema = match version {
                        SpecVersion::Swagger2 => r.get("schema").cloned(),
                        _ => json_content_schema(r.get("content")),
                    };
                    (code.clone(), schema)
                })
                .collect()
        })
        .unwrap_or_default();
    Some(Operation {
        id,
        method: upper,
        template: template.clone(),
        parameters,
        request_body,
        body_required,
        responses,
        line: at.line,
        col: at.col,
    })
}

#[cfg(test)]
mod tests;
