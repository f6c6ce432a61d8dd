//! The SFTP [`Store`]: one SSH connection per node, made when first used and again after it
//! broke, with the server's host key checked against a `known_hosts` file before anything is
//! sent. The SSH stack is async (russh); the file nodes are not, so each operation runs to
//! completion on a small runtime of the store's own.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use russh::client;
use russh::keys::{PrivateKeyWithHashAlg, PublicKeyOrCertificate, known_hosts};
use russh_sftp::client::SftpSession;
use russh_sftp::client::fs::File;
use russh_sftp::protocol::{OpenFlags, StatusCode};
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use tokio::runtime::Runtime;

use crate::FileError;
use crate::remote::Remote;
use crate::store::{Entry, Opened, Store, sort};

/// How long one SFTP request may take before the connection counts as broken.
const REQUEST_TIMEOUT_SECS: u64 = 30;

/// A directory tree on an SFTP server.
pub struct Sftp {
    remote: Remote,
    runtime: OnceLock<Arc<Runtime>>,
    conn: Mutex<Option<Conn>>,
}

struct Conn {
    /// Kept so that the SSH connection lives as long as the SFTP session on it.
    _ssh: client::Handle<HostCheck>,
    sftp: SftpSession,
    /// The file appended to last, kept open: most flows write one file at a time.
    appending: Option<(String, File, u64)>,
}

/// Why a host key was refused, kept by the handler for the error the connection returns.
type Refusal = Arc<Mutex<Option<FileError>>>;

struct HostCheck {
    host: String,
    port: u16,
    known_hosts: PathBuf,
    refusal: Refusal,
}

impl client::Handler for HostCheck {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let server = format!("{}:{}", self.host, self.port);
        let refused = match key {
            PublicKeyOrCertificate::PublicKey { key, .. } => {
                let fingerprint = key.fingerprint(Default::default()).to_string();
                match known_hosts::known_host_keys_path(&self.host, self.port, &self.known_hosts) {
                    Ok(known) if known.iter().any(|(_, k)| k == key) => return Ok(true),
                    Ok(known) => match known.iter().find(|(_, k)| k.algorithm() == key.algorithm())
                    {
                        Some((line, _)) => FileError::HostKeyChanged {
                            server,
                            known_hosts: self.known_hosts.clone(),
                            line: *line,
                            fingerprint,
                        },
                        None => FileError::UnknownHost {
                            server,
                            known_hosts: self.known_hosts.clone(),
                            fingerprint,
                        },
                    },
                    Err(e) => FileError::Remote {
                        server,
                        action: format!("read {}", self.known_hosts.display()),
                        source: Box::new(e),
                    },
                }
            }
            PublicKeyOrCertificate::Certificate(_) => FileError::UnknownHost {
                server,
                known_hosts: self.known_hosts.clone(),
                fingerprint: "a host certificate (not supported)".into(),
            },
        };
        if let Ok(mut r) = self.refusal.lock() {
            *r = Some(refused);
        }
        Ok(false)
    }
}

impl Sftp {
    /// The store of `remote`; nothing is opened until it is used.
    pub fn new(remote: Remote) -> Sftp {
        Sftp {
            remote,
            runtime: OnceLock::new(),
            conn: Mutex::new(None),
        }
    }

    fn runtime(&self) -> Result<Arc<Runtime>, FileError> {
        if let Some(rt) = self.runtime.get() {
            return Ok(rt.clone());
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("sluice-sftp")
            .enable_all()
            .build()
            .map_err(|e| self.error("start the SFTP client's runtime", e))?;
        Ok(self.runtime.get_or_init(|| Arc::new(rt)).clone())
    }

    fn error(
        &self,
        action: impl Into<String>,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> FileError {
        FileError::Remote {
            server: self.remote.server(),
            action: action.into(),
            source: Box::new(e),
        }
    }

    async fn connect(&self) -> Result<Conn, FileError> {
        let r = &self.remote;
        // A missing known_hosts file would refuse every server; say so rather than "unknown".
        if !r.known_hosts.is_file() {
            return Err(FileError::Io {
                action: "read the known hosts file",
                path: r.known_hosts.clone(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
        let refusal: Refusal = Arc::default();
        let check = HostCheck {
            host: r.host.clone(),
            port: r.port,
            known_hosts: r.known_hosts.clone(),
            refusal: refusal.clone(),
        };
        let config = Arc::new(client::Config {
            inactivity_timeout: Some(Duration::from_secs(300)),
            keepalive_interval: Some(Duration::from_secs(30)),
            ..Default::default()
        });
        let connected = client::connect(config, (r.host.as_str(), r.port), check).await;
        let mut ssh = match connected {
            Ok(h) => h,
            Err(e) => {
                let refused = refusal.lock().ok().and_then(|mut g| g.take());
                return Err(refused.unwrap_or_else(|| self.error("connect", e)));
            }
        };
        self.log_in(&mut ssh).await?;
        let channel = ssh
            .channel_open_session()
            .await
            .map_err(|e| self.error("open a session", e))?;
        channel
            .request_subsystem(true, "sftp")
            .await
            .map_err(|e| self.error("start the sftp subsystem", e))?;
        let sftp = SftpSession::new(channel.into_stream())
            .await
            .map_err(|e| self.error("start the sftp subsystem", e))?;
        sftp.set_timeout(REQUEST_TIMEOUT_SECS);
        tracing::info!(server = %r.server(), user = %r.login.user, "Connected to the SFTP server.");
        Ok(Conn {
            _ssh: ssh,
            sftp,
            appending: None,
        })
    }

    async fn log_in(&self, ssh: &mut client::Handle<HostCheck>) -> Result<(), FileError> {
        let login = &self.remote.login;
        if let Some(path) = &login.private_key {
            let key = russh::keys::load_secret_key(path, None)
                .map_err(|e| self.error(format!("read the private key {}", path.display()), e))?;
            let hash = ssh
                .best_supported_rsa_hash()
                .await
                .map_err(|e| self.error("log in", e))?
                .flatten();
            let r = ssh
                .authenticate_publickey(
                    &login.user,
                    PrivateKeyWithHashAlg::new(Arc::new(key), hash),
                )
                .await
                .map_err(|e| self.error("log in", e))?;
            if r.success() {
                return Ok(());
            }
        }
        if let Some(var) = &login.password_env {
            let password = std::env::var(var).map_err(|_| FileError::Login {
                server: self.remote.server(),
                user: login.user.clone(),
                reason: format!("the environment variable {var} holding the password is not set"),
            })?;
            let r = ssh
                .authenticate_password(&login.user, password)
                .await
                .map_err(|e| self.error("log in", e))?;
            if r.success() {
                return Ok(());
            }
        }
        Err(FileError::Login {
            server: self.remote.server(),
            user: login.user.clone(),
            reason: "the server refused the key and password given".into(),
        })
    }

    /// Run `op` on the connection, connecting first when there is none. A failure other than
    /// the server's answer to the request (a status) drops the connection, for the next
    /// operation to make a new one.
    fn with<T>(
        &self,
        op: impl AsyncFnOnce(&mut Conn) -> Result<T, russh_sftp::client::error::Error>,
        action: impl FnOnce() -> String,
    ) -> Result<T, FileError> {
        let rt = self.runtime()?;
        let mut guard = self.conn.lock().map_err(|_| {
            self.error("use the connection", std::io::Error::other("lock poisoned"))
        })?;
        rt.block_on(async {
            if guard.is_none() {
                *guard = Some(self.connect().await?);
            }
            let Some(conn) = guard.as_mut() else {
                return Err(self.error(action(), std::io::Error::other("not connected")));
            };
            match op(conn).await {
                Ok(v) => Ok(v),
                Err(e) => {
                    if !matches!(e, russh_sftp::client::error::Error::Status(_)) {
                        *guard = None;
                    }
                    Err(self.error(action(), e))
                }
            }
        })
    }

    fn text(path: &Path) -> String {
        path.to_string_lossy().into_owned()
    }
}

/// Whether `e` is the server saying there is no such file.
fn no_such_file(e: &russh_sftp::client::error::Error) -> bool {
    matches!(e, russh_sftp::client::error::Error::Status(s) if s.status_code == StatusCode::NoSuchFile)
}

/// Close the file being appended to, when it is `path` (it is about to be moved or removed).
async fn release(conn: &mut Conn, path: &str) {
    if conn.appending.as_ref().is_some_and(|(p, _, _)| p == path)
        && let Some((_, f, _)) = conn.appending.take()
    {
        let _ = f.close().await;
    }
}

impl Store for Sftp {
    fn files(&self, dir: &Path) -> Result<Vec<Entry>, FileError> {
        let d = Sftp::text(dir);
        let mut files = self.with(
            async |c| match c.sftp.read_dir(d.clone()).await {
                Ok(rd) => Ok(rd
                    .filter(|e| e.file_type().is_file())
                    .map(|e| Entry {
                        name: e.file_name(),
                        modified: e.metadata().modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    })
                    .collect()),
                Err(e) if no_such_file(&e) => Ok(Vec::new()),
                Err(e) => Err(e),
            },
            || format!("list {}", dir.display()),
        )?;
        sort(&mut files);
        Ok(files)
    }

    fn exists(&self, path: &Path) -> Result<bool, FileError> {
        let p = Sftp::text(path);
        self.with(
            async |c| c.sftp.try_exists(p.clone()).await,
            || format!("look at {}", path.display()),
        )
    }

    fn create_dir_all(&self, dir: &Path) -> Result<(), FileError> {
        let mut prefix = PathBuf::new();
        let mut steps = Vec::new();
        for part in dir.components() {
            prefix.push(part);
            steps.push(Sftp::text(&prefix));
        }
        self.with(
            async |c| {
                for p in &steps {
                    match c.sftp.metadata(p.clone()).await {
                        Ok(m) if m.is_dir() => continue,
                        Ok(_) => {}
                        Err(e) if no_such_file(&e) => {}
                        Err(e) => return Err(e),
                    }
                    c.sftp.create_dir(p.clone()).await?;
                }
                Ok(())
            },
            || format!("create {}", dir.display()),
        )
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<(), FileError> {
        let (f, t) = (Sftp::text(from), Sftp::text(to));
        // SFTP version 3 (OpenSSH's) refuses to rename onto an existing name, which is what a
        // claim needs: whoever renames first owns the file.
        let renamed = self.with(
            async |c| {
                release(c, &f).await;
                c.sftp.rename(f.clone(), t.clone()).await
            },
            || format!("move {} to {}", from.display(), to.display()),
        );
        // The refusal is a bare "Failure": say why when it is the name being taken.
        if renamed.is_err() && self.exists(to).unwrap_or(false) {
            return Err(FileError::Exists {
                path: to.to_path_buf(),
            });
        }
        renamed
    }

    fn replace(&self, from: &Path, to: &Path) -> Result<(), FileError> {
        let (f, t) = (Sftp::text(from), Sftp::text(to));
        // Not atomic: SFTP version 3 has no rename over an existing name, so there is a moment
        // when `to` is gone.
        self.with(
            async |c| {
                release(c, &f).await;
                release(c, &t).await;
                match c.sftp.remove_file(t.clone()).await {
                    Ok(()) => {}
                    Err(e) if no_such_file(&e) => {}
                    Err(e) => return Err(e),
                }
                c.sftp.rename(f.clone(), t.clone()).await
            },
            || format!("move {} to {}", from.display(), to.display()),
        )
    }

    fn len(&self, path: &Path) -> Result<Option<u64>, FileError> {
        let p = Sftp::text(path);
        self.with(
            async |c| {
                if let Some((q, _, len)) = &c.appending
                    && *q == p
                {
                    return Ok(Some(*len));
                }
                match c.sftp.metadata(p.clone()).await {
                    Ok(m) => Ok(Some(m.len())),
                    Err(e) if no_such_file(&e) => Ok(None),
                    Err(e) => Err(e),
                }
            },
            || format!("look at {}", path.display()),
        )
    }

    fn remove(&self, path: &Path) -> Result<(), FileError> {
        let p = Sftp::text(path);
        self.with(
            async |c| {
                release(c, &p).await;
                c.sftp.remove_file(p.clone()).await
            },
            || format!("delete {}", path.display()),
        )
    }

    fn open(&self, path: &Path, offset: u64) -> Result<Opened, FileError> {
        let p = Sftp::text(path);
        let (file, modified) = self.with(
            async |c| {
                let mut f = c.sftp.open(p.clone()).await?;
                let modified = f
                    .metadata()
                    .await?
                    .modified()
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                f.seek(std::io::SeekFrom::Start(offset)).await?;
                Ok((f, modified))
            },
            || format!("open {}", path.display()),
        )?;
        Ok(Opened {
            reader: Box::new(RemoteReader {
                file: Some(file),
                runtime: self.runtime()?,
            }),
            modified,
        })
    }

    fn append(&self, path: &Path, data: &[u8]) -> Result<(u64, u64), FileError> {
        let p = Sftp::text(path);
        self.with(
            async |c| {
                if c.appending.as_ref().is_none_or(|(q, _, _)| *q != p) {
                    if let Some((_, f, _)) = c.appending.take() {
                        let _ = f.close().await;
                    }
                    let f = c
                        .sftp
                        .open_with_flags(p.clone(), OpenFlags::WRITE | OpenFlags::CREATE)
                        .await?;
                    let len = f.metadata().await?.len();
                    c.appending = Some((p.clone(), f, len));
                }
                let Some((_, f, len)) = c.appending.as_mut() else {
                    return Err(russh_sftp::client::error::Error::UnexpectedBehavior(
                        "no file open for appending".into(),
                    ));
                };
                let before = *len;
                f.seek(std::io::SeekFrom::Start(before)).await?;
                f.write_all(data).await?;
                // The write is the server's only once it acknowledged it.
                f.flush().await?;
                *len = before + data.len() as u64;
                Ok((before, *len))
            },
            || format!("append to {}", path.display()),
        )
        .inspect_err(|_| {
            if let Ok(mut g) = self.conn.lock()
                && let Some(c) = g.as_mut()
            {
                // Its length is unknown after a failed write: opened again next time.
                c.appending = None;
            }
        })
    }

    fn write(&self, path: &Path, data: &[u8]) -> Result<(), FileError> {
        let p = Sftp::text(path);
        self.with(
            async |c| {
                release(c, &p).await;
                let mut f = c.sftp.create(p.clone()).await?;
                f.write_all(data).await?;
                f.close().await?;
                Ok(())
            },
            || format!("write {}", path.display()),
        )
    }

    fn append_file(&self, from: &Path, to: &Path) -> Result<(), FileError> {
        let (f, t) = (Sftp::text(from), Sftp::text(to));
        self.with(
            async |c| {
                release(c, &f).await;
                release(c, &t).await;
                let mut src = c.sftp.open(f.clone()).await?;
                let mut dest = c.sftp.open_with_flags(t.clone(), OpenFlags::WRITE).await?;
                let len = dest.metadata().await?.len();
                dest.seek(std::io::SeekFrom::Start(len)).await?;
                tokio::io::copy(&mut src, &mut dest).await?;
                dest.close().await?;
                drop(src);
                c.sftp.remove_file(f.clone()).await
            },
            || format!("append {} to {}", from.display(), to.display()),
        )
    }

    fn read_errors_are_transient(&self) -> bool {
        true
    }
}

/// A remote file read through the store's runtime.
struct RemoteReader {
    file: Option<File>,
    runtime: Arc<Runtime>,
}

impl Read for RemoteReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(f) = self.file.as_mut() else {
            return Ok(0);
        };
        self.runtime.block_on(f.read(buf))
    }
}

impl Drop for RemoteReader {
    fn drop(&mut self) {
        // Closing the handle sends a request, which needs the runtime.
        let _guard = self.runtime.enter();
        self.file = None;
    }
}
