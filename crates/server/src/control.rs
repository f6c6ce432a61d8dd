//! The admin API's routes with the role each needs, who a request comes from, and the
//! requests that change the server: stop, start, restart, instances, statistics reset,
//! deploy and rollback.

use serde_json::{Value, json};

use crate::ServerError;
use crate::admin::AdminState;
use crate::settings::{AdminSettings, Role};

/// One request the admin API answers. `{name}` in a path stands for one path segment.
pub struct Route {
    pub method: &'static str,
    pub path: &'static str,
    /// The least role that may make it.
    pub role: Role,
}

const fn route(method: &'static str, path: &'static str, role: Role) -> Route {
    Route { method, path, role }
}

/// Every route of the admin API (the queue manager's messaging API under `/ibmmq/rest/` is
/// served beside them, with its own credentials). The OpenAPI document lists exactly these.
pub const ROUTES: &[Route] = &[
    route("GET", "/health", Role::Viewer),
    route("GET", "/api/v1/health", Role::Viewer),
    route("GET", "/metrics", Role::Viewer),
    route("GET", "/api/v1/openapi.json", Role::Viewer),
    route("GET", "/api/v1/nodes", Role::Viewer),
    route("GET", "/api/v1/flows", Role::Viewer),
    route("GET", "/api/v1/server", Role::Viewer),
    route("GET", "/api/v1/flows/{name}", Role::Viewer),
    route("GET", "/api/v1/flows/{name}/graph", Role::Viewer),
    route("POST", "/api/v1/flows/{name}/stop", Role::Operator),
    route("POST", "/api/v1/flows/{name}/start", Role::Operator),
    route("POST", "/api/v1/flows/{name}/restart", Role::Operator),
    route("PUT", "/api/v1/flows/{name}/instances", Role::Operator),
    route(
        "POST",
        "/api/v1/flows/{name}/statistics/reset",
        Role::Operator,
    ),
    route("GET", "/api/v1/queues", Role::Viewer),
    route("GET", "/api/v1/queues/{name}", Role::Viewer),
    route("GET", "/api/v1/queues/{name}/messages", Role::Viewer),
    route("POST", "/api/v1/queues/{name}/messages", Role::Operator),
    route("POST", "/api/v1/queues/{name}/get", Role::Operator),
    route("POST", "/api/v1/queues/{name}/clear", Role::Operator),
    route("POST", "/api/v1/deploy", Role::Admin),
    route("POST", "/api/v1/deploy/rollback", Role::Admin),
];

/// The OpenAPI 3.0 document of [`ROUTES`].
pub const OPENAPI: &str = include_str!("openapi.json");

/// The `{name}` segment of `path` when it matches `template`.
fn matches(template: &str, path: &str) -> Option<Option<String>> {
    let (mut t, mut p) = (template.split('/'), path.split('/'));
    let mut name = None;
    loop {
        match (t.next(), p.next()) {
            (None, None) => return Some(name),
            (Some("{name}"), Some(seg)) if !seg.is_empty() => name = Some(seg.to_string()),
            (Some(a), Some(b)) if a == b => {}
            _ => return None,
        }
    }
}

/// How a request matched the routes.
pub enum Matched {
    /// A route, with its `{name}`.
    Route(&'static Route, Option<String>),
    /// The path is served, with other methods (HTTP 405).
    OtherMethod,
    /// No route has the path (HTTP 404).
    None,
}

pub fn find(method: &str, path: &str) -> Matched {
    let path = if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path
    };
    let mut other = false;
    for r in ROUTES {
        if let Some(name) = matches(r.path, path) {
            if r.method == method {
                return Matched::Route(r, name);
            }
            other = true;
        }
    }
    if other {
        Matched::OtherMethod
    } else {
        Matched::None
    }
}

fn sha256_hex(data: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, data);
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Equal, in a time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The role of `admin:`'s user or token the request's credentials name, if any.
fn admin_role(admin: &AdminSettings, headers: &[(String, String)]) -> Option<Role> {
    use base64::Engine;
    let (scheme, value) = header(headers, "authorization")?.split_once(' ')?;
    let value = value.trim();
    if scheme.eq_ignore_ascii_case("bearer") {
        let h = sha256_hex(value.as_bytes());
        return admin
            .tokens
            .iter()
            .filter(|t| same(&t.sha256, &h))
            .map(|t| t.role)
            .max();
    }
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(value)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())?;
    let (user, password) = decoded.split_once(':')?;
    let h = sha256_hex(password.as_bytes());
    admin
        .users
        .iter()
        .find(|(u, c)| u == user && same(&c.sha256, &h))
        .map(|(_, c)| c.role)
}

/// Who a request says it comes from, for the identity of a message it puts: the user of
/// HTTP basic credentials, else `admin` (a token names no one).
pub fn principal(headers: &[(String, String)]) -> String {
    use base64::Engine;
    header(headers, "authorization")
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
        .and_then(|(_, v)| {
            base64::engine::general_purpose::STANDARD
                .decode(v.trim())
                .ok()
        })
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|up| up.split_once(':').map(|(u, _)| u.to_string()))
        .unwrap_or_else(|| "admin".to_string())
}

/// Who the request comes from: its role, or None without valid credentials. Without
/// `admin:` in sluice.yaml, whoever the queue manager accepts may do everything (as before
/// roles existed).
pub fn role_of(state: &AdminState, headers: &[(String, String)]) -> Option<Role> {
    match &state.admin {
        Some(admin) => admin_role(admin, headers),
        None => sluice_qm::rest::authenticated(&state.auth, headers).map(|_| Role::Admin),
    }
}

/// An answer: status and JSON body.
pub type Answer = (u16, Value);

fn error(e: &ServerError) -> Answer {
    let mut v = json!({"error": e.to_string()});
    if let ServerError::InvalidArchive { problems } = e {
        v["problems"] = json!(problems);
    }
    (e.http_status(), v)
}

/// The number of instances of a `PUT …/instances` body: `{"instances": N}`, or N alone.
fn instances_of(body: &[u8]) -> Option<usize> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let n = match &v {
        Value::Object(m) => m.get("instances")?.as_u64()?,
        other => other.as_u64()?,
    };
    usize::try_from(n).ok().filter(|n| (1..=1024).contains(n))
}

/// Answer a request of a route (`template`, one of [`ROUTES`]) that changes the server.
/// Runs on a blocking thread: it waits for flows to stop and for the disk.
pub fn change(state: &AdminState, template: &str, name: Option<&str>, body: &[u8]) -> Answer {
    let dep = &state.deployment;
    let name = name.unwrap_or_default();
    let flow_state =
        |state: &str, changed: bool| json!({"flow": name, "state": state, "changed": changed});
    let r = match template {
        "/api/v1/deploy" => {
            crate::archive::deploy(dep, body).map(|d| json!({"deployed": true, "flows": d.flows}))
        }
        "/api/v1/deploy/rollback" => {
            crate::archive::rollback(dep).map(|d| json!({"rolled_back": true, "flows": d.flows}))
        }
        "/api/v1/flows/{name}/stop" => dep.stop(name).map(|c| flow_state("stopped", c)),
        "/api/v1/flows/{name}/start" => dep.start(name).map(|c| flow_state("running", c)),
        "/api/v1/flows/{name}/restart" => dep.restart(name).map(|()| flow_state("running", true)),
        "/api/v1/flows/{name}/statistics/reset" => dep
            .reset_statistics(name)
            .map(|()| json!({"flow": name, "statistics": "reset"})),
        "/api/v1/flows/{name}/instances" => {
            let Some(n) = instances_of(body) else {
                return (
                    400,
                    json!({"error": "the body must be {\"instances\": N} with N from 1 to 1024"}),
                );
            };
            dep.set_instances(name, n)
                .map(|()| json!({"flow": name, "instances": n, "state": "running"}))
        }
        // A route of ROUTES without a handler here: a mistake of this file, answered rather
        // than panicking.
        other => {
            return (
                500,
                json!({"error": format!("the server has no handler for {other}")}),
            );
        }
    };
    match r {
        Ok(v) => (200, v),
        Err(e) => error(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openapi_lists_every_route_and_nothing_else_when_compared() {
        let doc: Value = serde_json::from_str(OPENAPI).expect("openapi.json is JSON");
        assert_eq!(doc["openapi"].as_str().map(|v| &v[..2]), Some("3."));
        let paths = doc["paths"].as_object().expect("paths");
        for r in ROUTES {
            assert!(
                paths
                    .get(r.path)
                    .and_then(|p| p.get(r.method.to_ascii_lowercase()))
                    .is_some(),
                "openapi.json lacks {} {}",
                r.method,
                r.path
            );
        }
        for (path, ops) in paths {
            for method in ops.as_object().expect("operations").keys() {
                if method == "parameters" {
                    continue;
                }
                assert!(
                    ROUTES
                        .iter()
                        .any(|r| r.path == path && r.method.eq_ignore_ascii_case(method)),
                    "openapi.json has {method} {path}, which no route serves"
                );
            }
        }
    }

    #[test]
    fn find_matches_a_flow_route_and_tells_a_wrong_method_when_asked() {
        match find("POST", "/api/v1/flows/orders/stop") {
            Matched::Route(r, Some(n)) => {
                assert_eq!(
                    (r.path, n.as_str()),
                    ("/api/v1/flows/{name}/stop", "orders")
                )
            }
            _ => panic!("no match"),
        }
        assert!(matches!(
            find("DELETE", "/api/v1/flows/orders"),
            Matched::OtherMethod
        ));
        assert!(matches!(find("GET", "/api/v1/nothing"), Matched::None));
        assert!(matches!(
            find("GET", "/api/v1/flows/"),
            Matched::Route(r, None) if r.path == "/api/v1/flows"
        ));
    }

    #[test]
    fn admin_role_checks_the_password_hash_when_given_basic_or_bearer() {
        use crate::settings::AdminCredential;
        use base64::Engine;
        let admin = AdminSettings {
            users: vec![(
                "alice".into(),
                AdminCredential {
                    sha256: sha256_hex(b"secret"),
                    role: Role::Operator,
                },
            )],
            tokens: vec![AdminCredential {
                sha256: sha256_hex(b"tok"),
                role: Role::Viewer,
            }],
        };
        let basic = |up: &str| {
            vec![(
                "Authorization".to_string(),
                format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(up)
                ),
            )]
        };
        assert_eq!(
            admin_role(&admin, &basic("alice:secret")),
            Some(Role::Operator)
        );
        assert_eq!(admin_role(&admin, &basic("alice:wrong")), None);
        assert_eq!(admin_role(&admin, &basic("bob:secret")), None);
        let bearer = vec![("authorization".to_string(), "Bearer tok".to_string())];
        assert_eq!(admin_role(&admin, &bearer), Some(Role::Viewer));
        assert_eq!(admin_role(&admin, &[]), None);
        assert_eq!(
            sha256_hex(b"secret"),
            "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"
        );
    }

    #[test]
    fn instances_of_reads_an_object_or_a_number_when_in_range() {
        assert_eq!(instances_of(br#"{"instances": 3}"#), Some(3));
        assert_eq!(instances_of(b"2"), Some(2));
        assert_eq!(instances_of(br#"{"instances": 0}"#), None);
        assert_eq!(instances_of(b"many"), None);
    }
}
