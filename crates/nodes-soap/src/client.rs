//! The HTTP client SOAPRequest and asynchronous WS-Addressing replies use: pooled, kept-alive
//! connections per host, HTTPS with the Mozilla root certificates, run on the server's runtime.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// A pooled HTTP(S) client.
pub type SoapClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The client's TLS settings could not be made.
    #[error("TLS setup failed: {0}")]
    Tls(#[source] rustls::Error),
    /// The request could not be built from the URL and headers.
    #[error("cannot build the request to {url}: {source}")]
    Request {
        url: String,
        #[source]
        source: hyper::http::Error,
    },
    /// Connecting, sending or receiving failed.
    #[error("the request to {url} failed: {source}")]
    Transport {
        url: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// No whole response came within the timeout.
    #[error("no response from {url} within {secs} seconds")]
    Timeout { url: String, secs: u64 },
}

/// A new client; connections idle for a minute are closed.
pub fn new_client() -> Result<SoapClient, CallError> {
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(CallError::Tls)?
        .with_root_certificates(rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        })
        .with_no_client_auth();
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .build();
    Ok(Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(60))
        .build(connector))
}

/// A response: status, headers (names as the product shows them) and body.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, Bytes)>,
    pub body: Bytes,
}

/// POST `body` to `url` and wait for the whole response.
pub async fn post(
    client: &SoapClient,
    url: &str,
    headers: &[(String, String)],
    body: Bytes,
    timeout: Duration,
) -> Result<Answer, CallError> {
    let mut req = hyper::Request::builder()
        .method(hyper::Method::POST)
        .uri(url);
    for (n, v) in headers {
        req = req.header(n.as_str(), v.as_str());
    }
    let req = req
        .body(Full::new(body))
        .map_err(|source| CallError::Request {
            url: url.to_string(),
            source,
        })?;
    let call = async {
        let resp = client.request(req).await?;
        let (parts, body) = resp.into_parts();
        let bytes = body.collect().await?.to_bytes();
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>((parts, bytes))
    };
    match tokio::time::timeout(timeout, call).await {
        Err(_) => Err(CallError::Timeout {
            url: url.to_string(),
            secs: timeout.as_secs(),
        }),
        Ok(Err(source)) => Err(CallError::Transport {
            url: url.to_string(),
            source,
        }),
        Ok(Ok((parts, body))) => Ok(Answer {
            status: parts.status.as_u16(),
            headers: parts
                .headers
                .iter()
                .map(|(n, v)| {
                    (
                        sluice_node_api::http_listener::canonical_header(n.as_str()),
                        Bytes::copy_from_slice(v.as_bytes()),
                    )
                })
                .collect(),
            body,
        }),
    }
}
