//! HTTP/2 over plain TCP (prior knowledge) and HTTPS with ALPN, against the real server.

mod common;

use std::sync::Arc;

use bytes::Bytes;
use common::Server;
use common::tempdir::TempDir;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};

const ECHO: &str = "flow: echo\nnodes:\n  in: { type: HTTPInput, path: /echo, wires: { out: [reply] } }\n  reply: { type: HTTPReply }\n";

fn project(settings: &str) -> TempDir {
    let d = TempDir::new("proto");
    std::fs::create_dir_all(d.path().join("flows")).unwrap();
    std::fs::write(d.path().join("flows/echo.yaml"), ECHO).unwrap();
    std::fs::write(d.path().join("sluice.yaml"), settings).unwrap();
    d
}

async fn h2_post<S>(io: S, authority: &str, body: &'static [u8]) -> (u16, Bytes)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(io))
            .await
            .expect("h2 handshake");
    tokio::spawn(conn);
    let req = hyper::Request::post(format!("https://{authority}/echo"))
        .body(Full::new(Bytes::from_static(body)))
        .unwrap();
    let resp = send.send_request(req).await.expect("h2 request");
    let status = resp.status().as_u16();
    (status, resp.into_body().collect().await.unwrap().to_bytes())
}

#[test]
fn http2_prior_knowledge_is_served() {
    let p = project("");
    let s = Server::start(p.path());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (status, body) = rt.block_on(async {
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", s.http_port))
            .await
            .unwrap();
        h2_post(tcp, "localhost", b"over h2").await
    });
    assert_eq!(status, 200);
    assert_eq!(&body[..], b"over h2");
}

#[test]
fn https_with_alpn_h2_is_served_when_tls_is_configured() {
    let p = project("http:\n  tls: { cert_file: cert.pem, key_file: key.pem }\n");
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    std::fs::write(p.path().join("cert.pem"), ck.cert.pem()).unwrap();
    std::fs::write(p.path().join("key.pem"), ck.signing_key.serialize_pem()).unwrap();
    let s = Server::start(p.path());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ck.cert.der().clone()).unwrap();
    let mut cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    cfg.alpn_protocols = vec![b"h2".to_vec()];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (status, body, alpn) = rt.block_on(async {
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", s.http_port))
            .await
            .unwrap();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let tls = tokio_rustls::TlsConnector::from(Arc::new(cfg))
            .connect(name, tcp)
            .await
            .expect("TLS handshake");
        let alpn = tls.get_ref().1.alpn_protocol().map(|a| a.to_vec());
        let (st, b) = h2_post(tls, "localhost", b"over https").await;
        (st, b, alpn)
    });
    assert_eq!(alpn.as_deref(), Some(&b"h2"[..]));
    assert_eq!(status, 200);
    assert_eq!(&body[..], b"over https");
}
