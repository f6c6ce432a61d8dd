//! The web UI's files, built into the binary: one page, its modules and its style sheet, served
//! on the admin listener at `/` and `/ui/…`. They need no credentials (they hold no data); the
//! page then calls the admin API, which does.

use std::sync::LazyLock;

use bytes::Bytes;

/// What the page may load and where it may connect: its own files and the admin API only. No
/// inline script or style, so an injected tag does nothing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// One embedded file.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $type:expr) => {
        Asset {
            path: concat!("/ui/", $path),
            content_type: $type,
            body: include_bytes!(concat!("../ui/", $path)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

static ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("favicon.svg", "image/svg+xml"),
    asset!("app.js", JS),
    asset!("api.js", JS),
    asset!("dom.js", JS),
    asset!("overview.js", JS),
    asset!("flows.js", JS),
    asset!("graph.js", JS),
    asset!("queues.js", JS),
];

/// Each asset's entity tag: the start of its SHA-256, so a browser revalidates cheaply and
/// never keeps a file of an older binary.
static ETAGS: LazyLock<Vec<String>> = LazyLock::new(|| {
    ASSETS
        .iter()
        .map(|a| {
            let d = ring::digest::digest(&ring::digest::SHA256, a.body);
            let hex: String = d.as_ref()[..12]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!("\"{hex}\"")
        })
        .collect()
});

/// An answer for the UI's files.
pub struct UiResponse {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Bytes,
}

/// Whether `path` is one of the UI's: the page at `/` and everything under `/ui/`.
pub fn serves(path: &str) -> bool {
    path == "/" || path == "/ui" || path.starts_with("/ui/") || path == "/favicon.ico"
}

/// Answer a GET or HEAD of a UI path; `if_none_match` is the request's `If-None-Match`.
pub fn serve(method: &str, path: &str, if_none_match: Option<&str>) -> UiResponse {
    let mut headers = vec![
        (
            "Content-Security-Policy",
            CONTENT_SECURITY_POLICY.to_string(),
        ),
        ("X-Content-Type-Options", "nosniff".to_string()),
        ("Referrer-Policy", "no-referrer".to_string()),
        ("X-Frame-Options", "DENY".to_string()),
    ];
    if method != "GET" && method != "HEAD" {
        headers.push(("Allow", "GET, HEAD".to_string()));
        return plain(405, headers, "the web UI's files are only read (GET)");
    }
    let wanted = match path {
        "/" | "/ui" | "/ui/" => "/ui/index.html",
        "/favicon.ico" => "/ui/favicon.svg",
        p => p,
    };
    let Some(i) = ASSETS.iter().position(|a| a.path == wanted) else {
        return plain(404, headers, "no such file of the web UI");
    };
    let (asset, etag) = (&ASSETS[i], &ETAGS[i]);
    // Revalidated on every use: a new binary's files show at the next load.
    headers.push(("Cache-Control", "no-cache".to_string()));
    headers.push(("ETag", etag.clone()));
    let fresh =
        if_none_match.is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    if fresh {
        return UiResponse {
            status: 304,
            headers,
            body: Bytes::new(),
        };
    }
    headers.push(("Content-Type", asset.content_type.to_string()));
    UiResponse {
        status: 200,
        headers,
        body: Bytes::from_static(asset.body),
    }
}

fn plain(status: u16, mut headers: Vec<(&'static str, String)>, text: &'static str) -> UiResponse {
    headers.push(("Content-Type", "text/plain; charset=utf-8".to_string()));
    headers.push(("Cache-Control", "no-store".to_string()));
    UiResponse {
        status,
        headers,
        body: Bytes::from_static(text.as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header<'r>(r: &'r UiResponse, name: &str) -> Option<&'r str> {
        r.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn serve_gives_the_page_at_root_with_csp_and_type_when_asked() {
        let r = serve("GET", "/", None);
        assert_eq!(r.status, 200);
        assert_eq!(header(&r, "content-type"), Some("text/html; charset=utf-8"));
        assert!(
            header(&r, "content-security-policy").is_some_and(|c| c.contains("script-src 'self'"))
        );
        assert!(String::from_utf8_lossy(&r.body).contains("<title>Sluice</title>"));
        let js = serve("GET", "/ui/app.js", None);
        assert_eq!(header(&js, "content-type"), Some(JS));
        assert_eq!(serve("GET", "/ui/nothing.js", None).status, 404);
        assert_eq!(serve("POST", "/ui/app.js", None).status, 405);
    }

    #[test]
    fn serve_answers_304_when_the_etag_matches() {
        let r = serve("GET", "/ui/app.css", None);
        let etag = header(&r, "etag").expect("etag").to_string();
        assert_eq!(header(&r, "cache-control"), Some("no-cache"));
        let again = serve("GET", "/ui/app.css", Some(&format!("\"x\", {etag}")));
        assert_eq!((again.status, again.body.len()), (304, 0));
        assert_eq!(serve("GET", "/ui/app.css", Some("\"other\"")).status, 200);
    }

    #[test]
    fn every_asset_is_referenced_by_the_page_or_a_module_when_shipped() {
        // A file nobody loads is dead weight; a module imported but not listed would 404.
        let all: String = ASSETS
            .iter()
            .map(|a| String::from_utf8_lossy(a.body).into_owned())
            .collect();
        for a in ASSETS.iter().filter(|a| a.path != "/ui/index.html") {
            let file = a.path.trim_start_matches("/ui/");
            assert!(all.contains(file), "{file} is shipped but nothing loads it");
        }
        for line in all
            .lines()
            .filter(|l| l.trim_start().starts_with("import "))
        {
            let Some(from) = line.split('\'').nth(1) else {
                continue;
            };
            let path = format!("/ui/{}", from.trim_start_matches("./"));
            assert!(
                ASSETS.iter().any(|a| a.path == path),
                "{line} imports a file that is not embedded"
            );
        }
    }
}
