//! A PostgreSQL server of a test's own: `initdb` into a temporary folder, `postgres` on a
//! free port, stopped and removed when the guard drops.
//!
//! `initdb` and `postgres` refuse to run as root; when the test runs as root (this machine,
//! CI) they run as the `postgres` user through `setpriv`, in a folder that user may write.
//! `setpriv` replaces itself with the program, so the process the guard stops is the server.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::require_tool;

/// A running PostgreSQL server; dropping it stops the server and removes its folder.
pub struct PgServer {
    child: Child,
    dir: PathBuf,
    port: u16,
}

/// The user the server runs as, when the test runs as root.
const SERVER_USER: &str = "postgres";

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn command(program: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args([
            &format!("--reuid={SERVER_USER}"),
            &format!("--regid={SERVER_USER}"),
            "--clear-groups",
            "--",
        ])
        .arg(program);
        c
    } else {
        let mut c = Command::new(program);
        c.env_remove("PGDATA");
        c
    }
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl PgServer {
    /// Start a server, or None (after printing why) when PostgreSQL is not installed and CI
    /// is not `true`.
    ///
    /// # Panics
    /// When the server is installed but cannot be set up or started: the test cannot run.
    pub fn start() -> Option<PgServer> {
        let initdb = require_tool(
            "PostgreSQL",
            &["initdb", "/usr/lib/postgresql/*/bin/initdb"],
        )?;
        // The real folder, not that of a symbolic link in PATH: pg_isready lives there too.
        let initdb = std::fs::canonicalize(&initdb).unwrap_or(initdb);
        let bin = initdb.parent().map(Path::to_path_buf).unwrap_or_default();
        let postgres = bin.join("postgres");
        let root = std::env::temp_dir().join(format!(
            "sluice-pg-{}-{}",
            std::process::id(),
            free_port().unwrap_or(0)
        ));
        let data = root.join("data");
        std::fs::create_dir_all(&root).expect("temporary folder for PostgreSQL");
        if is_root() {
            let status = Command::new("chown")
                .args([
                    &format!("{SERVER_USER}:"),
                    root.to_str().unwrap_or_default(),
                ])
                .status()
                .expect("chown");
            assert!(status.success(), "chown {SERVER_USER} {}", root.display());
        }
        let out = command(&initdb)
            .args(["-D", data.to_str().unwrap_or_default()])
            .args([
                "-U",
                "postgres",
                "-A",
                "trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ])
            .stdin(Stdio::null())
            .output()
            .expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let port = free_port().expect("a free port");
        let child = command(&postgres)
            .args(["-D", data.to_str().unwrap_or_default()])
            .args(["-p", &port.to_string()])
            .args(["-k", root.to_str().unwrap_or_default()])
            .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
            .args(["-c", "max_prepared_transactions=10"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start postgres");
        let server = PgServer {
            child,
            dir: root,
            port,
        };
        // The port opens before the server accepts logins; pg_isready tells the two apart.
        let isready = bin.join("pg_isready");
        let ready = || {
            if isready.is_file() {
                Command::new(&isready)
                    .args(["-q", "-h", "127.0.0.1", "-p", &port.to_string()])
                    .status()
                    .is_ok_and(|s| s.success())
            } else {
                std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            }
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !ready() {
            assert!(
                Instant::now() < deadline,
                "postgres did not start on port {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(server)
    }

    /// The server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A connection URL for the superuser and the `postgres` database.
    pub fn url(&self) -> String {
        format!("postgresql://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        // SIGINT is PostgreSQL's fast shutdown; its child processes end with it.
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: signalling a process we started; no memory is involved.
        unsafe {
            libc::kill(pid, libc::SIGINT);
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
