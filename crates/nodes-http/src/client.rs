//! HTTPRequest's client side: the pooled connection client (built at the first call, so that
//! building a flow reads no files), redirects, and compressed responses.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

pub type HttpsClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// The most redirects followed for one request, as browsers and curl allow about as many.
pub const MAX_REDIRECTS: usize = 10;
/// The largest response body a compressed response may inflate to.
const MAX_INFLATED: u64 = 1 << 30;

/// A client trusting the public web roots and, when given, the PEM certificates in `ca_file`.
pub fn build(ca_file: Option<&Path>) -> Result<HttpsClient, String> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(path) = ca_file {
        let pem = std::fs::read(path)
            .map_err(|e| format!("cannot read tls_ca_file {}: {e}", path.display()))?;
        let mut n = 0;
        for cert in rustls_pemfile::certs(&mut &pem[..]) {
            let cert = cert.map_err(|e| format!("tls_ca_file {}: {e}", path.display()))?;
            roots
                .add(cert)
                .map_err(|e| format!("tls_ca_file {}: {e}", path.display()))?;
            n += 1;
        }
        if n == 0 {
            return Err(format!(
                "tls_ca_file {} holds no PEM certificate",
                path.display()
            ));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .build();
    Ok(Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(60))
        .build(connector))
}

/// Where the CA file of a node is: relative paths are the project's.
pub fn ca_path(project_dir: &Path, file: &str) -> PathBuf {
    project_dir.join(file)
}

/// An error with every cause below it: hyper's own text ("client error (SendRequest)") says
/// little without its sources ("connection closed before message completed").
pub fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut at = e.source();
    while let Some(s) = at {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        at = s.source();
    }
    text
}

/// The URL a redirect's `Location` points to, from the URL that answered with it.
pub fn resolve(base: &str, location: &str) -> Option<String> {
    let location = location.trim();
    let uri: hyper::Uri = base.parse().ok()?;
    let scheme = uri.scheme_str()?;
    if location.starts_with("http://") || location.starts_with("https://") {
        return Some(location.to_string());
    }
    if let Some(rest) = location.strip_prefix("//") {
        return Some(format!("{scheme}://{rest}"));
    }
    let authority = uri.authority()?.as_str();
    if location.starts_with('/') {
        return Some(format!("{scheme}://{authority}{location}"));
    }
    let path = uri.path();
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let dir = if dir.is_empty() { "/" } else { dir };
    Some(format!("{scheme}://{authority}{dir}{location}"))
}

/// The body of a response with `Content-Encoding` `encoding`, inflated; None when the
/// encoding is not one the node decompresses (the body stays as it came).
pub fn inflate(encoding: &str, body: &[u8]) -> Option<Result<Vec<u8>, String>> {
    let enc = encoding.trim().to_ascii_lowercase();
    let mut out = Vec::new();
    let read = match enc.as_str() {
        "gzip" | "x-gzip" => flate2::read::MultiGzDecoder::new(body)
            .take(MAX_INFLATED + 1)
            .read_to_end(&mut out),
        "deflate" => {
            // Servers send either zlib-wrapped (as RFC 9110 says) or raw deflate data.
            let zlib = flate2::read::ZlibDecoder::new(body)
                .take(MAX_INFLATED + 1)
                .read_to_end(&mut out);
            if zlib.is_err() {
                out.clear();
                flate2::read::DeflateDecoder::new(body)
                    .take(MAX_INFLATED + 1)
                    .read_to_end(&mut out)
            } else {
                zlib
            }
        }
        _ => return None,
    };
    Some(match read {
        Err(e) => Err(format!("the {enc} response body does not decompress: {e}")),
        Ok(_) if out.len() as u64 > MAX_INFLATED => Err(format!(
            "the {enc} response body inflates past {MAX_INFLATED} bytes"
        )),
        Ok(_) => Ok(out),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_handles_absolute_rooted_and_relative_locations() {
        let base = "http://a.example:8080/x/y?q=1";
        assert_eq!(resolve(base, "https://b/c").as_deref(), Some("https://b/c"));
        assert_eq!(
            resolve(base, "//c.example/d").as_deref(),
            Some("http://c.example/d")
        );
        assert_eq!(
            resolve(base, "/z").as_deref(),
            Some("http://a.example:8080/z")
        );
        assert_eq!(
            resolve(base, "w").as_deref(),
            Some("http://a.example:8080/x/w")
        );
    }

    #[test]
    fn inflate_reads_gzip_and_both_deflate_forms() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let _ = gz.write_all(b"hello");
        let gz = gz.finish().unwrap_or_default();
        assert_eq!(
            inflate("gzip", &gz).and_then(Result::ok).as_deref(),
            Some(&b"hello"[..])
        );
        let mut raw = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        let _ = raw.write_all(b"raw");
        let raw = raw.finish().unwrap_or_default();
        assert_eq!(
            inflate("deflate", &raw).and_then(Result::ok).as_deref(),
            Some(&b"raw"[..])
        );
        assert!(inflate("br", b"x").is_none());
        assert!(matches!(inflate("gzip", b"not gzip"), Some(Err(_))));
    }
}
