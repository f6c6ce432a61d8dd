//! TLS for the client protocol: rustls with the ring provider, configured from PEM files.

use std::io::BufReader;
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, RootCertStore, ServerConfig};

use crate::error::{QmError, Result};

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn tls_err(what: &str, e: impl Into<crate::error::BoxError>) -> QmError {
    QmError::Tls {
        what: what.into(),
        source: Some(e.into()),
    }
}

/// A TLS setting that holds nothing usable (no error behind it to keep).
fn tls_missing(what: &str, missing: &str) -> QmError {
    QmError::Tls {
        what: format!("{what}: {missing}"),
        source: None,
    }
}

/// Server configuration from a PEM certificate chain and a PEM private key.
pub fn server_config(cert_chain_pem: &[u8], key_pem: &[u8]) -> Result<Arc<ServerConfig>> {
    let certs = rustls_pemfile::certs(&mut BufReader::new(cert_chain_pem))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| tls_err("certificate PEM", e))?;
    if certs.is_empty() {
        return Err(tls_missing("certificate PEM", "no certificate found"));
    }
    let key = rustls_pemfile::private_key(&mut BufReader::new(key_pem))
        .map_err(|e| tls_err("key PEM", e))?
        .ok_or_else(|| tls_missing("key PEM", "no private key found"))?;
    let cfg = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_err("protocol versions", e))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| tls_err("certificate/key", e))?;
    Ok(Arc::new(cfg))
}

/// Client configuration trusting the CA certificates in `ca_pem`.
pub fn client_config(ca_pem: &[u8]) -> Result<Arc<ClientConfig>> {
    let mut roots = RootCertStore::empty();
    for c in rustls_pemfile::certs(&mut BufReader::new(ca_pem)) {
        let c = c.map_err(|e| tls_err("CA PEM", e))?;
        roots.add(c).map_err(|e| tls_err("CA certificate", e))?;
    }
    if roots.is_empty() {
        return Err(tls_missing("CA PEM", "no certificate found"));
    }
    let cfg = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_err("protocol versions", e))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(cfg))
}

/// Client-side TLS settings: configuration and the name the server's certificate must carry.
#[derive(Clone)]
pub struct ClientTls {
    /// rustls configuration.
    pub config: Arc<ClientConfig>,
    /// Expected server name (DNS name or IP address).
    pub server_name: String,
}

impl ClientTls {
    pub(crate) fn wrap(&self, tcp: std::net::TcpStream) -> Result<super::BoxStream> {
        let name = ServerName::try_from(self.server_name.clone())
            .map_err(|e| tls_err("server name", e))?;
        let conn = rustls::ClientConnection::new(self.config.clone(), name)
            .map_err(|e| tls_err("client", e))?;
        Ok(Box::new(rustls::StreamOwned::new(conn, tcp)))
    }
}

pub(crate) fn wrap_server(
    cfg: &Arc<ServerConfig>,
    tcp: std::net::TcpStream,
) -> std::io::Result<super::BoxStream> {
    let conn = rustls::ServerConnection::new(cfg.clone()).map_err(std::io::Error::other)?;
    Ok(Box::new(rustls::StreamOwned::new(conn, tcp)))
}
