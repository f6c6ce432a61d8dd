//! HTTPRequest against real sockets: a server started by each test (see `server.rs`) and a flow
//! `Inject → HTTPRequest → Capture` built in process.

mod server;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use server::{Reply, Request, Server, response};
use sluice_flow::{Registry, load_flow};
use sluice_flow_testing::{Captured, Harness};
use sluice_node_api::{Message, Services};
use sluice_nodes_core::domains::BodyParsing;
use sluice_tree::field_type::{NAME, NAME_VALUE};
use sluice_tree::{NodeId, Text, Tree, Value};

/// Run `props` (HTTPRequest's properties, YAML flow style) on each body; what reached `ok`,
/// `err` and `failed`, by label.
fn run(props: &str, project: &Path, bodies: &[Message]) -> Vec<Captured> {
    let mut registry = Registry::new();
    sluice_nodes_core::register(&mut |s| registry.register(s));
    sluice_nodes_http::register(&mut |s| registry.register(s));
    Harness::register(&mut registry);
    let src = format!(
        "flow: call\nnodes:\n  \
         in: {{ type: Inject, wires: {{ out: [call] }} }}\n  \
         call: {{ type: HTTPRequest, {props}, wires: {{ out: [ok], error: [err], failure: [failed] }} }}\n  \
         ok: {{ type: Capture }}\n  err: {{ type: Capture }}\n  failed: {{ type: Capture }}\n"
    );
    let def = load_flow("call.yaml", &src, &registry).unwrap_or_else(|d| panic!("{}", d[0]));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let services = Services {
        runtime: Some(runtime.handle().clone()),
        ..Services::none()
    };
    let harness = Harness::new();
    let flow = harness
        .build(&def, project, &services)
        .unwrap_or_else(|d| panic!("{}", d[0]));
    for b in bodies {
        harness.inject(b.clone());
    }
    harness.run(&flow);
    harness.take_captured()
}

fn blob(body: &[u8]) -> Message {
    let mut m = Message::new();
    let _ = BodyParsing::blob().attach(&mut m.root, Bytes::copy_from_slice(body));
    m
}

fn only<'a>(got: &'a [Captured], label: &str) -> &'a Captured {
    let labels: Vec<&str> = got.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, [label], "what reached the captures");
    &got[0]
}

fn value(t: &mut Tree, path: &[&str]) -> Option<String> {
    let r = t.root();
    let id = t.path(r, path).ok()??;
    match t.value(id) {
        Value::Integer(i) => Some(i.to_string()),
        _ => t
            .value_bytes(id)
            .map(|b| String::from_utf8_lossy(b).into_owned()),
    }
}

fn exception_text(c: &Captured) -> String {
    format!("{:?}", c.message.exception_list)
}

fn echo(req: &Request) -> Reply {
    response("200 OK", &[("Content-Type", "application/json")], &req.body)
}

#[test]
fn request_success_propagates_response_body_and_headers() {
    let s = Server::start(None, echo);
    let props = format!("url: '{}', domain: JSON", s.url("http", "/echo"));
    let mut got = run(&props, Path::new("."), &[blob(br#"{"n":7}"#)]);
    let c = &mut got[0];
    assert_eq!(c.label, "ok");
    assert_eq!(
        value(&mut c.message.root, &["JSON", "Data", "n"]).as_deref(),
        Some("7")
    );
    assert_eq!(
        value(
            &mut c.message.root,
            &["HTTPResponseHeader", "X-Original-HTTP-Status-Code"]
        )
        .as_deref(),
        Some("200")
    );
    assert_eq!(
        value(&mut c.message.root, &["Properties", "ContentType"]).as_deref(),
        Some("application/json")
    );
    let seen = s.requests();
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].body, br#"{"n":7}"#);
}

#[test]
fn request_reuses_one_connection_when_kept_alive() {
    let s = Server::start(None, echo);
    let props = format!("url: '{}'", s.url("http", "/"));
    let got = run(
        &props,
        Path::new("."),
        &[blob(b"1"), blob(b"2"), blob(b"3")],
    );
    assert_eq!(got.len(), 3);
    assert_eq!(s.requests().len(), 3);
    assert_eq!(s.connections.load(std::sync::atomic::Ordering::SeqCst), 1);
}

fn redirecting(req: &Request) -> Reply {
    match req.path.as_str() {
        "/old" => response("302 Found", &[("Location", "/new")], b""),
        "/see" => response("303 See Other", &[("Location", "new")], b""),
        "/keep" => response("307 Temporary Redirect", &[("Location", "/new")], b""),
        "/loop" => response("302 Found", &[("Location", "/loop")], b""),
        _ => response(
            "200 OK",
            &[],
            format!("{} {}", req.method, req.body.len()).as_bytes(),
        ),
    }
}

#[test]
fn request_follows_redirects_when_asked() {
    let s = Server::start(None, redirecting);
    for (path, expect) in [("/old", "GET 0"), ("/see", "GET 0"), ("/keep", "POST 4")] {
        let props = format!("url: '{}', follow_redirects: true", s.url("http", path));
        let mut got = run(&props, Path::new("."), &[blob(b"body")]);
        let c = &mut got[0];
        assert_eq!(c.label, "ok", "{path}");
        assert_eq!(
            value(&mut c.message.root, &["BLOB", "BLOB"]).as_deref(),
            Some(expect)
        );
    }
}

#[test]
fn request_propagates_redirect_response_when_not_following() {
    let s = Server::start(None, redirecting);
    let props = format!("url: '{}'", s.url("http", "/old"));
    let mut got = run(&props, Path::new("."), &[blob(b"body")]);
    let c = &mut got[0];
    assert_eq!(c.label, "ok");
    assert_eq!(
        value(
            &mut c.message.root,
            &["HTTPResponseHeader", "X-Original-HTTP-Status-Code"]
        )
        .as_deref(),
        Some("302")
    );
    assert_eq!(
        value(&mut c.message.root, &["HTTPResponseHeader", "Location"]).as_deref(),
        Some("/new")
    );
    assert_eq!(s.requests().len(), 1);
}

#[test]
fn request_fails_when_redirects_loop() {
    let s = Server::start(None, redirecting);
    let props = format!("url: '{}', follow_redirects: true", s.url("http", "/loop"));
    let got = run(&props, Path::new("."), &[blob(b"")]);
    let c = only(&got, "failed");
    assert!(
        exception_text(c).contains("redirected more than 10 times"),
        "{}",
        exception_text(c)
    );
}

#[test]
fn request_reads_chunked_response() {
    let s = Server::start(None, |_: &Request| {
        Reply::Raw(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
                .to_vec(),
        )
    });
    let props = format!("url: '{}'", s.url("http", "/"));
    let mut got = run(&props, Path::new("."), &[blob(b"x")]);
    let c = &mut got[0];
    assert_eq!(c.label, "ok");
    assert_eq!(
        value(&mut c.message.root, &["BLOB", "BLOB"]).as_deref(),
        Some("hello world")
    );
}

fn gzip_when_asked(req: &Request) -> Reply {
    use std::io::Write;
    if req
        .header("Accept-Encoding")
        .is_some_and(|a| a.contains("gzip"))
    {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let _ = gz.write_all(b"<a>compressed</a>");
        let body = gz.finish().unwrap_or_default();
        response("200 OK", &[("Content-Encoding", "gzip")], &body)
    } else {
        response("200 OK", &[], b"<a>plain</a>")
    }
}

#[test]
fn request_accepts_and_inflates_gzip_when_asked() {
    let s = Server::start(None, gzip_when_asked);
    let props = format!(
        "url: '{}', domain: XMLNSC, accept_compressed: true",
        s.url("http", "/")
    );
    let mut got = run(&props, Path::new("."), &[blob(b"x")]);
    let c = &mut got[0];
    assert_eq!(c.label, "ok");
    assert_eq!(
        value(&mut c.message.root, &["XMLNSC", "a"]).as_deref(),
        Some("compressed")
    );
    assert_eq!(
        value(
            &mut c.message.root,
            &["HTTPResponseHeader", "Content-Encoding"]
        ),
        None
    );

    let props = format!("url: '{}', domain: XMLNSC", s.url("http", "/"));
    let mut got = run(&props, Path::new("."), &[blob(b"x")]);
    assert_eq!(
        value(&mut got[0].message.root, &["XMLNSC", "a"]).as_deref(),
        Some("plain")
    );
}

#[test]
fn request_timeout_goes_to_failure_naming_the_timeout() {
    let s = Server::start(None, |_: &Request| Reply::Stall(Duration::from_secs(4)));
    let props = format!("url: '{}', timeout_secs: 1", s.url("http", "/"));
    let started = Instant::now();
    let got = run(&props, Path::new("."), &[blob(b"x")]);
    assert!(started.elapsed() < Duration::from_secs(3));
    let c = only(&got, "failed");
    let text = exception_text(c);
    assert!(text.contains("timeout of 1 seconds"), "{text}");
}

#[test]
fn request_fails_clearly_when_server_closes_early() {
    for (reply, says) in [
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort".to_vec(),
            "the response body was cut short",
        ),
        (Vec::new(), "closed before"),
    ] {
        let s = Server::start(None, move |_: &Request| Reply::RawThenClose(reply.clone()));
        let props = format!("url: '{}', timeout_secs: 30", s.url("http", "/"));
        let started = Instant::now();
        let got = run(&props, Path::new("."), &[blob(b"x")]);
        assert!(started.elapsed() < Duration::from_secs(10), "no hang");
        let c = only(&got, "failed");
        let text = exception_text(c);
        assert!(text.contains(says), "{text}");
    }
}

#[test]
fn request_routes_error_status_to_error_terminal() {
    let s = Server::start(None, |_: &Request| {
        response("503 Service Unavailable", &[], b"busy")
    });
    let props = format!("url: '{}'", s.url("http", "/"));
    let got = run(&props, Path::new("."), &[blob(b"x")]);
    only(&got, "err");
}

/// A CA and a certificate it signed for localhost, as PEM: (CA cert, leaf cert, leaf key).
fn test_ca() -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().expect("a CA key");
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "Sluice test CA");
    let ca_cert = ca.self_signed(&ca_key).expect("a CA certificate");
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().expect("a server key");
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .expect("leaf params")
        .signed_by(&key, &issuer)
        .expect("a server certificate");
    (ca_cert.pem(), leaf.pem(), key.serialize_pem())
}

fn tls_config(cert: &str, key: &str) -> Arc<rustls::ServerConfig> {
    let certs: Vec<_> = rustls_pemfile::certs(&mut cert.as_bytes())
        .collect::<Result<_, _>>()
        .expect("certificates");
    let key = rustls_pemfile::private_key(&mut key.as_bytes())
        .expect("a key")
        .expect("a key");
    let cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .expect("a server config");
    Arc::new(cfg)
}

#[test]
fn request_trusts_test_ca_from_tls_ca_file() {
    let (ca, cert, key) = test_ca();
    let dir = std::env::temp_dir().join(format!("sluice-http-ca-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    std::fs::write(dir.join("ca.pem"), ca).expect("write ca.pem");
    let s = Server::start(Some(tls_config(&cert, &key)), echo);
    let props = format!("url: '{}', tls_ca_file: ca.pem", s.url("https", "/"));
    let got = run(&props, &dir, &[blob(b"secret")]);
    let c = only(&got, "ok");
    let mut root = c.message.root.clone();
    assert_eq!(
        value(&mut root, &["BLOB", "BLOB"]).as_deref(),
        Some("secret")
    );

    // Without the CA the server's certificate is refused.
    let props = format!("url: '{}'", s.url("https", "/"));
    let got = run(&props, &dir, &[blob(b"secret")]);
    let text = exception_text(only(&got, "failed"));
    assert!(text.to_lowercase().contains("certificate"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn child(t: &mut Tree, p: NodeId, ty: u32, name: &'static str, v: Value) -> NodeId {
    t.create_last_child(p, ty, Text::from_static(name), v)
        .expect("a child")
}

#[test]
fn request_sends_mime_with_boundary_and_parses_multipart_response() {
    let s = Server::start(None, |req: &Request| {
        let ct = req.header("Content-Type").unwrap_or("").to_string();
        response("200 OK", &[("Content-Type", &ct)], &req.body)
    });
    // A MIME message built as flows build one, with no boundary set.
    let mut m = Message::new();
    let r = m.root.root();
    let mime = child(&mut m.root, r, NAME, "MIME", Value::Null);
    let parts = child(&mut m.root, mime, NAME, "Parts", Value::Null);
    for text in ["first", "second"] {
        let part = child(&mut m.root, parts, NAME, "Part", Value::Null);
        let v = m.root.alloc_text(b"text/plain");
        child(
            &mut m.root,
            part,
            NAME_VALUE,
            "Content-Type",
            Value::Character(v),
        );
        let data = child(&mut m.root, part, NAME, "Data", Value::Null);
        let v = m.root.alloc_text(text.as_bytes());
        child(&mut m.root, data, NAME_VALUE, "BLOB", Value::Blob(v));
    }
    let props = format!("url: '{}', domain: MIME", s.url("http", "/"));
    let mut got = run(&props, Path::new("."), &[m]);
    let sent = s.requests();
    let ct = sent[0].header("Content-Type").unwrap_or("");
    assert!(ct.starts_with("multipart/mixed; boundary="), "{ct}");
    let c = &mut got[0];
    assert_eq!(c.label, "ok");
    let root = &mut c.message.root;
    let r = root.root();
    let second = root
        .path(r, &["MIME", "Parts"])
        .ok()
        .flatten()
        .and_then(|p| root.children(p).ok())
        .and_then(|k| k.get(1).copied());
    let Some(second) = second else {
        panic!("two parts")
    };
    let data = root.path(second, &["Data", "BLOB", "BLOB"]).ok().flatten();
    assert_eq!(data.and_then(|d| root.value_bytes(d)), Some(&b"second"[..]));
}
