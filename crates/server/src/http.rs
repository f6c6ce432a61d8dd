//! The one HTTP listener every HTTPInput node shares: HTTP/1.1 with keep-alive, HTTP/2 (prior
//! knowledge, or ALPN under TLS), TLS when configured, a request size limit and timeouts for slow
//! clients. Response header names go out in canonical case (`Content-Length`), because widely used
//! clients match them case-sensitively.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use sluice_node_api::http_listener::{
    HttpRequest, HttpResponse, HttpRouter, RouteError, canonical_header,
};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::ServerError;
use crate::settings::HttpSettings;

/// The listener's state shared by every connection.
pub struct HttpState {
    pub router: Arc<HttpRouter>,
    pub settings: HttpSettings,
    /// Paths of flows an operator stopped: 503, not 404.
    pub stopped: crate::deploy::StoppedPaths,
}

fn plain(status: u16, text: String) -> Response<Full<Bytes>> {
    to_hyper(HttpResponse::error(status, text))
}

fn to_hyper(r: HttpResponse) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(r.body));
    *resp.status_mut() =
        StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = resp.headers_mut();
    for (name, value) in r.headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_maybe_shared(value),
        ) {
            h.append(n, v);
        }
    }
    resp
}

/// The whole request body in one buffer. A body that arrives in one piece is kept as it is;
/// otherwise each piece is copied into a buffer sized from Content-Length as it arrives and
/// then dropped, so a large body is held once, not once in pieces and again joined.
async fn read_body(
    mut body: Limited<Incoming>,
    declared: Option<u64>,
) -> Result<Bytes, Box<dyn std::error::Error + Send + Sync>> {
    let mut first: Option<Bytes> = None;
    let mut joined = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else {
            continue; // trailers
        };
        match first.take() {
            None if joined.is_empty() => first = Some(data),
            None => joined.extend_from_slice(&data),
            Some(f) => {
                let want = declared.unwrap_or(0) as usize;
                joined.reserve(want.max(f.len() + data.len()));
                joined.extend_from_slice(&f);
                joined.extend_from_slice(&data);
            }
        }
    }
    Ok(first.unwrap_or_else(|| joined.freeze()))
}

async fn handle(
    state: Arc<HttpState>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let s = &state.settings;
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > s.max_request_bytes) {
        return Ok(plain(
            413,
            format!(
                "the request body is larger than the limit of {} bytes",
                s.max_request_bytes
            ),
        ));
    }
    let (parts, body) = req.into_parts();
    let limited = Limited::new(body, s.max_request_bytes as usize);
    let body = match tokio::time::timeout(
        Duration::from_secs(s.request_timeout_secs),
        read_body(limited, declared),
    )
    .await
    {
        Err(_) => {
            return Ok(plain(
                408,
                format!(
                    "the request body did not arrive within {} seconds",
                    s.request_timeout_secs
                ),
            ));
        }
        Ok(Err(e)) => {
            return Ok(
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some()
                {
                    plain(
                        413,
                        format!(
                            "the request body is larger than the limit of {} bytes",
                            s.max_request_bytes
                        ),
                    )
                } else {
                    plain(400, format!("the request body could not be read: {e}"))
                },
            );
        }
        Ok(Ok(b)) => b,
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let version = match parts.version {
        hyper::Version::HTTP_2 => "HTTP/2",
        hyper::Version::HTTP_10 => "HTTP/1.0",
        _ => "HTTP/1.1",
    };
    let request = HttpRequest {
        method: parts.method.as_str().to_string(),
        uri: parts
            .uri
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/")
            .to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or("").to_string(),
        version,
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    canonical_header(n.as_str()),
                    Bytes::copy_from_slice(v.as_bytes()),
                )
            })
            .collect(),
        body,
        reply: tx,
    };
    if let Err(e) = state.router.dispatch(request) {
        let (why, req) = *e;
        return Ok(match why {
            RouteError::NotFound => {
                match crate::deploy::stopped_flow_serving(&state.stopped, &req.path) {
                    Some(flow) => plain(
                        503,
                        format!("flow '{flow}', which serves {}, is stopped", req.path),
                    ),
                    None => plain(404, format!("no flow serves {}", req.path)),
                }
            }
            RouteError::Unavailable => {
                plain(503, format!("the flow serving {} is stopping", req.path))
            }
        });
    }
    Ok(
        match tokio::time::timeout(Duration::from_secs(s.reply_timeout_secs), rx).await {
            Ok(Ok(r)) => to_hyper(r),
            Ok(Err(_)) => plain(500, "the flow ended without replying".into()),
            Err(_) => plain(
                504,
                format!(
                    "the flow did not reply within {} seconds",
                    s.reply_timeout_secs
                ),
            ),
        },
    )
}

fn builder(s: &HttpSettings) -> auto::Builder<TokioExecutor> {
    let mut b = auto::Builder::new(TokioExecutor::new());
    b.http1()
        .title_case_headers(true)
        .keep_alive(true)
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(s.header_timeout_secs));
    b.http2().timer(TokioTimer::new());
    b
}

/// Accept connections until `shutdown` fires, then let open connections finish their requests.
pub async fn serve(
    listener: TcpListener,
    state: Arc<HttpState>,
    tls: Option<TlsAcceptor>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = shutdown.changed() => break,
        };
        let (stream, _) = match accepted {
            Ok(a) => a,
            Err(error) => {
                tracing::warn!(%error, "Failed to accept an HTTP connection.");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let st = Arc::clone(&state);
        let svc = hyper::service::service_fn(move |req| handle(Arc::clone(&st), req));
        let b = builder(&state.settings);
        match &tls {
            None => {
                let conn = b.serve_connection(TokioIo::new(stream), svc).into_owned();
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                let timeout = Duration::from_secs(state.settings.header_timeout_secs);
                let watcher = graceful.watcher();
                tokio::spawn(async move {
                    let Ok(Ok(tls_stream)) =
                        tokio::time::timeout(timeout, acceptor.accept(stream)).await
                    else {
                        return;
                    };
                    let conn = b
                        .serve_connection(TokioIo::new(tls_stream), svc)
                        .into_owned();
                    let _ = watcher.watch(conn).await;
                });
            }
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(Duration::from_secs(30), graceful.shutdown()).await;
}

/// A TLS acceptor offering HTTP/2 and HTTP/1.1 by ALPN, from PEM files.
pub fn tls_acceptor(
    cert_file: &std::path::Path,
    key_file: &std::path::Path,
) -> Result<TlsAcceptor, ServerError> {
    let file_err = |action, path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| ServerError::TlsFile {
            action,
            path,
            source,
        }
    };
    let certs = {
        let f = std::fs::File::open(cert_file).map_err(file_err("open", cert_file))?;
        rustls_pemfile::certs(&mut std::io::BufReader::new(f))
            .collect::<Result<Vec<_>, _>>()
            .map_err(file_err("read certificates from", cert_file))?
    };
    let key = {
        let f = std::fs::File::open(key_file).map_err(file_err("open", key_file))?;
        rustls_pemfile::private_key(&mut std::io::BufReader::new(f))
            .map_err(file_err("read the key from", key_file))?
            .ok_or_else(|| ServerError::NoPrivateKey {
                path: key_file.to_path_buf(),
            })?
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(ServerError::TlsVersions)?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(ServerError::TlsKeyPair)?;
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(cfg)))
}
