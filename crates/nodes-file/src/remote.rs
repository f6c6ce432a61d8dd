//! Remote transfer: FileInput's and FileOutput's directory on an SFTP server. The properties
//! follow the product's remote transfer group (server and port, security identity, retry);
//! the security identity is here a password in an environment variable or a private key file,
//! and the server's host key must be listed in a `known_hosts` file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sluice_node_api::{BuildContext, ConfigError, properties};

use crate::store::Store;

properties! {
    /// Remote transfer (SFTP), shared by FileInput and FileOutput.
    pub struct RemoteProps {
        /// `host` or `host:port` of an SFTP server (port 22 when not given). Set, the node's
        /// `directory` and its transit, archive and backout folders are on that server (a
        /// relative directory is under the user's login folder there).
        remote_server: Option<String>,
        /// The user the node logs in as on `remote_server`.
        remote_user: Option<String>,
        /// The environment variable that holds the user's password.
        password_env: Option<String>,
        /// A private key file (OpenSSH format, not encrypted) to log in with; a relative path is
        /// under the server's data folder. Tried before the password when both are set.
        private_key: Option<String>,
        /// The `known_hosts` file that must list the server's host key (as `ssh-keyscan`
        /// writes it; `[host]:port` for a port other than 22); a relative path is under the
        /// server's data folder. A server whose key is not there is refused.
        known_hosts: Option<String>,
        /// How long the node waits before it connects again after the server could not be
        /// reached or a transfer broke off (a file being read is then resumed from its
        /// checkpoint).
        remote_retry_interval_ms: u64 = "10000",
    }
}

/// How the node logs in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Login {
    pub user: String,
    /// The environment variable holding the password.
    pub password_env: Option<String>,
    pub private_key: Option<PathBuf>,
}

/// A checked remote transfer configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remote {
    pub host: String,
    pub port: u16,
    pub login: Login,
    pub known_hosts: PathBuf,
    pub retry: Duration,
}

impl Remote {
    /// `host:port`, as messages name the server.
    pub fn server(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

impl RemoteProps {
    /// The remote transfer these properties describe, None when `remote_server` is not set.
    /// Checks only the properties: building a node opens no connection.
    pub fn remote(&self, b: &BuildContext) -> Result<Option<Remote>, ConfigError> {
        let Some(server) = self
            .remote_server
            .as_deref()
            .filter(|s| !s.trim().is_empty())
        else {
            return Ok(None);
        };
        let (host, port) = split_server(server.trim()).ok_or_else(|| {
            ConfigError::property("remote_server", "must be `host` or `host:port`")
        })?;
        let user = self
            .remote_user
            .clone()
            .filter(|u| !u.is_empty())
            .ok_or_else(|| ConfigError::property("remote_user", "is needed with remote_server"))?;
        let known_hosts = self
            .known_hosts
            .as_deref()
            .filter(|k| !k.is_empty())
            .ok_or_else(|| {
                ConfigError::property(
                    "known_hosts",
                    "is needed with remote_server: the server's host key is always checked",
                )
            })?;
        let password_env = self.password_env.clone().filter(|p| !p.is_empty());
        let private_key = self
            .private_key
            .as_deref()
            .filter(|k| !k.is_empty())
            .map(|k| b.services.data_path(Path::new(k)));
        if password_env.is_none() && private_key.is_none() {
            return Err(ConfigError::property(
                "remote_server",
                "needs `private_key` or `password_env` to log in",
            ));
        }
        Ok(Some(Remote {
            host,
            port,
            login: Login {
                user,
                password_env,
                private_key,
            },
            known_hosts: b.services.data_path(Path::new(known_hosts)),
            retry: Duration::from_millis(self.remote_retry_interval_ms.max(1)),
        }))
    }
}

/// `host` and port of `host`, `host:port` or `[v6]:port`.
fn split_server(s: &str) -> Option<(String, u16)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => 22,
            None => return None,
        };
        return Some((host.to_string(), port));
    }
    match s.split_once(':') {
        Some((h, p)) if !h.is_empty() && !p.contains(':') => Some((h.to_string(), p.parse().ok()?)),
        Some(_) => None,
        None => Some((s.to_string(), 22)),
    }
}

/// The store for `remote`: an SFTP connection made when first used.
#[cfg(feature = "sftp")]
pub fn store(remote: Remote) -> Result<Arc<dyn Store>, ConfigError> {
    Ok(Arc::new(crate::sftp::Sftp::new(remote)))
}

/// This build has no SFTP client.
#[cfg(not(feature = "sftp"))]
pub fn store(_remote: Remote) -> Result<Arc<dyn Store>, ConfigError> {
    Err(ConfigError::property(
        "remote_server",
        "this build of sluice has no SFTP support (the `sftp` feature of sluice-nodes-file)",
    ))
}

/// Where FileInput keeps the checkpoint of a remote file in transit: in the server's local data
/// folder, named after the server, user and the file's remote path, since the remote folder
/// is not ours to write checkpoints into at every record.
pub fn checkpoint_path(data_dir: &Path, remote: &Remote, transit_file: &Path) -> PathBuf {
    let escape = |s: &str| s.replace('%', "%25").replace('/', "%2F");
    data_dir
        .join("sftp-checkpoints")
        .join(escape(&format!(
            "{}@{}_{}",
            remote.login.user, remote.host, remote.port
        )))
        .join(format!(
            ".{}.progress",
            escape(&transit_file.to_string_lossy())
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_server_reads_host_and_port_when_given_each_form() {
        assert_eq!(split_server("h"), Some(("h".into(), 22)));
        assert_eq!(split_server("h:2222"), Some(("h".into(), 2222)));
        assert_eq!(split_server("[::1]:2022"), Some(("::1".into(), 2022)));
        assert_eq!(split_server("[::1]"), Some(("::1".into(), 22)));
        assert_eq!(split_server("h:x"), None);
        assert_eq!(split_server(":22"), None);
    }

    #[test]
    fn checkpoint_path_keeps_remote_paths_apart_when_they_differ_only_in_folders() {
        let r = Remote {
            host: "h".into(),
            port: 22,
            login: Login {
                user: "u".into(),
                password_env: None,
                private_key: None,
            },
            known_hosts: PathBuf::new(),
            retry: Duration::from_secs(1),
        };
        let a = checkpoint_path(Path::new("/d"), &r, Path::new("in/a/b"));
        let b = checkpoint_path(Path::new("/d"), &r, Path::new("in/a%2Fb"));
        assert_ne!(a, b);
        assert!(a.starts_with("/d/sftp-checkpoints/u@h_22"));
    }
}
