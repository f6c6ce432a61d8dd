//! TLS on TCP/IP connections (rustls on the ring provider): a server port's certificate and key,
//! optionally asking clients for a certificate (mutual TLS), and a client pool's trusted CAs,
//! optional client certificate and server name check.
//!
//! Building a node only records the files; they are read when the node starts (a server port)
//! or opens its first connection (a client pool), so that `sluice validate` touches no files.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use sluice_node_api::{ConfigError, properties};
use tokio_rustls::{TlsAcceptor, TlsConnector};

use crate::TcpipError;

properties! {
    /// TLS of a server port (TCPIPServerInput serves it for every connection of the port).
    pub struct ServerTlsProps {
        /// The server's certificate chain (PEM); set with `tls_key_file`, connections to the
        /// port speak TLS. A relative path is in the project folder.
        tls_cert_file: Option<String>,
        /// The server's private key (PEM).
        tls_key_file: Option<String>,
        /// CA certificates (PEM) that clients' certificates must chain to; set, every client
        /// must present one (mutual TLS).
        tls_client_ca_file: Option<String>,
    }
}

properties! {
    /// TLS of a client pool's connections.
    pub struct ClientTlsProps {
        /// Connect with TLS.
        tls: bool = "false",
        /// CA certificates (PEM) the server's certificate must chain to; without it, the
        /// public web roots. A relative path is in the project folder.
        tls_ca_file: Option<String>,
        /// A client certificate chain (PEM) to present, with `tls_key_file` (mutual TLS).
        tls_cert_file: Option<String>,
        /// The client certificate's private key (PEM).
        tls_key_file: Option<String>,
        /// The name the server's certificate must carry; without it, the host of
        /// `connection_details`.
        tls_server_name: Option<String>,
    }
}

/// A server port's TLS files.
#[derive(Clone, Debug)]
pub struct ServerTls {
    cert: PathBuf,
    key: PathBuf,
    client_ca: Option<PathBuf>,
}

impl ServerTls {
    /// The TLS of a server node's properties; `None` without a certificate.
    pub fn from_props(
        p: &ServerTlsProps,
        project_dir: &Path,
    ) -> Result<Option<ServerTls>, ConfigError> {
        match (&p.tls_cert_file, &p.tls_key_file) {
            (None, None) if p.tls_client_ca_file.is_some() => Err(ConfigError::property(
                "tls_client_ca_file",
                "client certificates need TLS: set `tls_cert_file` and `tls_key_file`",
            )),
            (None, None) => Ok(None),
            (Some(cert), Some(key)) => Ok(Some(ServerTls {
                cert: project_dir.join(cert),
                key: project_dir.join(key),
                client_ca: p.tls_client_ca_file.as_ref().map(|c| project_dir.join(c)),
            })),
            (Some(_), None) => Err(ConfigError::property(
                "tls_key_file",
                "`tls_cert_file` needs `tls_key_file`",
            )),
            (None, Some(_)) => Err(ConfigError::property(
                "tls_cert_file",
                "`tls_key_file` needs `tls_cert_file`",
            )),
        }
    }

    /// Read the files and make the acceptor.
    pub fn acceptor(&self) -> Result<TlsAcceptor, TcpipError> {
        let builder = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(TcpipError::TlsConfig)?;
        let builder = match &self.client_ca {
            Some(ca) => {
                let roots = roots(Some(ca))?;
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider(),
                )
                .build()
                .map_err(|e| TcpipError::TlsConfig(rustls::Error::General(e.to_string())))?;
                builder.with_client_cert_verifier(verifier)
            }
            None => builder.with_no_client_auth(),
        };
        let config = builder
            .with_single_cert(read_certs(&self.cert)?, read_key(&self.key)?)
            .map_err(TcpipError::TlsConfig)?;
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}

/// A client pool's TLS: the connector and the name the server must carry.
#[derive(Clone)]
pub struct ClientTls {
    pub connector: TlsConnector,
    pub server_name: ServerName<'static>,
}

/// A client pool's TLS files, read at the first connect.
#[derive(Clone, Debug)]
pub struct ClientTlsFiles {
    ca: Option<PathBuf>,
    identity: Option<(PathBuf, PathBuf)>,
    server_name: String,
}

impl ClientTlsFiles {
    /// The TLS of a client node's properties; `None` when `tls` is off.
    pub fn from_props(
        p: &ClientTlsProps,
        host: &str,
        project_dir: &Path,
    ) -> Result<Option<ClientTlsFiles>, ConfigError> {
        if !p.tls {
            let set = [
                ("tls_ca_file", p.tls_ca_file.is_some()),
                ("tls_cert_file", p.tls_cert_file.is_some()),
                ("tls_key_file", p.tls_key_file.is_some()),
                ("tls_server_name", p.tls_server_name.is_some()),
            ];
            if let Some((name, _)) = set.iter().find(|(_, s)| *s) {
                return Err(ConfigError::property(
                    name,
                    format!("`{name}` needs `tls: true`"),
                ));
            }
            return Ok(None);
        }
        let identity = match (&p.tls_cert_file, &p.tls_key_file) {
            (Some(c), Some(k)) => Some((project_dir.join(c), project_dir.join(k))),
            (None, None) => None,
            _ => {
                return Err(ConfigError::property(
                    "tls_cert_file",
                    "a client certificate needs both `tls_cert_file` and `tls_key_file`",
                ));
            }
        };
        let server_name = p
            .tls_server_name
            .clone()
            .unwrap_or_else(|| host.to_string());
        if ServerName::try_from(server_name.clone()).is_err() {
            return Err(ConfigError::property(
                "tls_server_name",
                format!("`{server_name}` is not a host name or IP address"),
            ));
        }
        Ok(Some(ClientTlsFiles {
            ca: p.tls_ca_file.as_ref().map(|c| project_dir.join(c)),
            identity,
            server_name,
        }))
    }

    /// Read the files and make the connector.
    pub fn load(&self) -> Result<ClientTls, TcpipError> {
        let builder = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(TcpipError::TlsConfig)?
            .with_root_certificates(roots(self.ca.as_deref())?);
        let config = match &self.identity {
            Some((cert, key)) => builder
                .with_client_auth_cert(read_certs(cert)?, read_key(key)?)
                .map_err(TcpipError::TlsConfig)?,
            None => builder.with_no_client_auth(),
        };
        let server_name = ServerName::try_from(self.server_name.clone())
            .map_err(|e| TcpipError::TlsConfig(rustls::Error::General(e.to_string())))?;
        Ok(ClientTls {
            connector: TlsConnector::from(Arc::new(config)),
            server_name,
        })
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn roots(ca: Option<&Path>) -> Result<rustls::RootCertStore, TcpipError> {
    let mut roots = rustls::RootCertStore::empty();
    match ca {
        Some(path) => {
            for cert in read_certs(path)? {
                roots.add(cert).map_err(TcpipError::TlsConfig)?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    Ok(roots)
}

fn file_error(path: &Path) -> impl FnOnce(std::io::Error) -> TcpipError {
    let path = path.to_path_buf();
    move |source| TcpipError::TlsFile { path, source }
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TcpipError> {
    let file = File::open(path).map_err(file_error(path))?;
    let certs = rustls_pemfile::certs(&mut BufReader::new(file))
        .collect::<Result<Vec<_>, _>>()
        .map_err(file_error(path))?;
    if certs.is_empty() {
        return Err(file_error(path)(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "no PEM certificate in the file",
        )));
    }
    Ok(certs)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TcpipError> {
    let file = File::open(path).map_err(file_error(path))?;
    rustls_pemfile::private_key(&mut BufReader::new(file))
        .map_err(file_error(path))?
        .ok_or_else(|| {
            file_error(path)(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "no PEM private key in the file",
            ))
        })
}
