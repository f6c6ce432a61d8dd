//! Responses RESTInput writes itself: problem details (RFC 9457), the served document, and the
//! CORS headers of an API.

use bytes::Bytes;
use serde_json::json;
use sluice_node_api::http_listener::HttpResponse;
use sluice_openapi::Cors;

/// Where a failed value was: a parameter (with its location) or the body.
pub struct Field<'a> {
    pub location: &'a str,
    /// The parameter's name, or a JSON Pointer into the body.
    pub name: &'a str,
    pub reason: &'a str,
}

fn title(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

/// An `application/problem+json` response; `field` names the value that failed and why.
pub fn problem(status: u16, detail: &str, field: Option<Field<'_>>) -> HttpResponse {
    let mut body = json!({
        "type": "about:blank",
        "title": title(status),
        "status": status,
        "detail": detail,
    });
    if let Some(f) = field {
        body["errors"] = json!([{ "in": f.location, "field": f.name, "reason": f.reason }]);
    }
    HttpResponse {
        status,
        headers: vec![(
            "Content-Type".into(),
            Bytes::from_static(b"application/problem+json"),
        )],
        body: Bytes::from(body.to_string()),
    }
}

/// A document served as text of `content_type`.
pub fn document(text: String, content_type: &'static str) -> HttpResponse {
    HttpResponse {
        status: 200,
        headers: vec![(
            "Content-Type".into(),
            Bytes::from_static(content_type.as_bytes()),
        )],
        body: Bytes::from(text),
    }
}

/// The value of `Access-Control-Allow-Origin` for a request from `origin`, when allowed.
pub fn allowed_origin(cors: &Cors, origin: &str) -> Option<Bytes> {
    if cors.allow_origins.iter().any(|o| o == "*") {
        return Some(Bytes::from_static(b"*"));
    }
    cors.allow_origins
        .iter()
        .any(|o| o.eq_ignore_ascii_case(origin))
        .then(|| Bytes::copy_from_slice(origin.as_bytes()))
}

/// Add the CORS headers of an actual (not preflight) response.
pub fn add_cors(resp: &mut HttpResponse, cors: Option<&Cors>, origin: Option<&str>) {
    let (Some(cors), Some(origin)) = (cors, origin) else {
        return;
    };
    if let Some(allow) = allowed_origin(cors, origin) {
        let vary = allow.as_ref() != b"*";
        resp.headers
            .push(("Access-Control-Allow-Origin".into(), allow));
        if vary {
            resp.headers
                .push(("Vary".into(), Bytes::from_static(b"Origin")));
        }
    }
}

/// The answer to a preflight `OPTIONS` request for a path whose operations use `methods`.
pub fn preflight(cors: &Cors, origin: &str, methods: &[&str]) -> HttpResponse {
    let Some(allow) = allowed_origin(cors, origin) else {
        return problem(
            403,
            &format!("cross-origin requests from {origin} are not allowed"),
            None,
        );
    };
    let mut headers = vec![
        ("Access-Control-Allow-Origin".to_string(), allow),
        (
            "Access-Control-Allow-Methods".into(),
            Bytes::from(methods.join(", ")),
        ),
        (
            "Access-Control-Allow-Headers".into(),
            Bytes::from(cors.allow_headers.join(", ")),
        ),
        (
            "Access-Control-Max-Age".into(),
            Bytes::from(cors.max_age_secs.to_string()),
        ),
    ];
    headers.push(("Vary".into(), Bytes::from_static(b"Origin")));
    HttpResponse {
        status: 204,
        headers,
        body: Bytes::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_names_the_field_when_one_failed() {
        let r = problem(
            400,
            "the request body is not valid",
            Some(Field {
                location: "body",
                name: "/quantity",
                reason: "0 is less than the minimum 1",
            }),
        );
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(v["status"], 400);
        assert_eq!(v["errors"][0]["field"], "/quantity");
        assert_eq!(
            r.headers[0].1,
            Bytes::from_static(b"application/problem+json")
        );
    }

    #[test]
    fn preflight_allows_listed_origins_only_when_configured() {
        let cors = Cors {
            allow_origins: vec!["https://a.example".into()],
            allow_headers: vec!["Content-Type".into()],
            max_age_secs: 60,
        };
        let ok = preflight(&cors, "https://a.example", &["GET", "POST"]);
        assert_eq!(ok.status, 204);
        assert!(
            ok.headers
                .iter()
                .any(|(n, v)| n == "Access-Control-Allow-Methods" && v == "GET, POST")
        );
        assert_eq!(preflight(&cors, "https://b.example", &["GET"]).status, 403);
    }
}
