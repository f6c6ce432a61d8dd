//! A real OpenSSH server for the file nodes' remote tests, started from a temp folder (its own
//! host key, an authorized client key, the internal SFTP server) as the current user; its files
//! are in that folder, so a test looks at them directly. Shared with the sluice binary's tests
//! (`#[path]`), so it uses nothing of the node crate.

// Each test file uses the part it needs.
#![allow(dead_code)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An sshd on 127.0.0.1, killed and its folder removed on drop.
pub struct Sshd {
    child: Child,
    pub port: u16,
    pub dir: PathBuf,
    pub user: String,
}

fn keygen(tool: &Path, file: &Path) {
    let ok = Command::new(tool)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "sluice-test", "-f"])
        .arg(file)
        .stdin(Stdio::null())
        .status()
        .expect("run ssh-keygen")
        .success();
    assert!(ok, "ssh-keygen failed for {}", file.display());
}

impl Sshd {
    pub fn start(name: &str) -> Option<Sshd> {
        let sshd = sluice_flow_testing::require_tool("sshd", &["sshd", "/usr/sbin/sshd"])?;
        let keygen_tool = sluice_flow_testing::require_tool("ssh-keygen", &["ssh-keygen"])?;
        let dir = std::env::temp_dir().join(format!("sluice-sshd-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("files")).expect("create the server's folder");
        keygen(&keygen_tool, &dir.join("host_key"));
        keygen(&keygen_tool, &dir.join("client_key"));
        std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys"))
            .expect("authorize the client key");
        let user = String::from_utf8(
            Command::new("id")
                .arg("-un")
                .output()
                .expect("run id")
                .stdout,
        )
        .expect("a user name")
        .trim()
        .to_string();
        // sshd started as root insists on its privilege separation folder.
        if user == "root" {
            std::fs::create_dir_all("/run/sshd").expect("create /run/sshd");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let d = dir.display();
        let config = format!(
            "ListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\n\
             PermitRootLogin yes\nPubkeyAuthentication yes\nPasswordAuthentication yes\n\
             KbdInteractiveAuthentication no\nSubsystem sftp internal-sftp\nLogLevel ERROR\n"
        );
        std::fs::write(dir.join("sshd_config"), config).expect("write sshd_config");
        // Its log (-e) goes to a file: the readiness probe below makes it complain.
        let log = std::fs::File::create(dir.join("sshd.log")).expect("create the sshd log");
        let child = Command::new(&sshd)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(dir.join("sshd_config"))
            .arg("-p")
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start sshd");
        let s = Sshd {
            child,
            port,
            dir,
            user,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "sshd did not listen on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        s.write_known_hosts("known_hosts", "host_key.pub");
        Some(s)
    }

    /// A known_hosts file naming this server with the public key in `key_file`.
    pub fn write_known_hosts(&self, name: &str, key_file: &str) -> PathBuf {
        let key = std::fs::read_to_string(self.dir.join(key_file)).expect("read a public key");
        let path = self.dir.join(name);
        std::fs::write(&path, format!("[127.0.0.1]:{} {key}", self.port))
            .expect("write known_hosts");
        path
    }

    /// The absolute path of `rel` in the server's files.
    pub fn files(&self, rel: &str) -> PathBuf {
        self.dir.join("files").join(rel)
    }

    pub fn write(&self, rel: &str, data: &[u8]) {
        let p = self.files(rel);
        std::fs::create_dir_all(p.parent().expect("a folder")).expect("create a folder");
        std::fs::write(p, data).expect("write a remote file");
    }

    /// The remote properties of a node logging in with the client key.
    pub fn props(&self) -> String {
        format!(
            "remote_server: '127.0.0.1:{}', remote_user: {}, private_key: {}, known_hosts: {}, remote_retry_interval_ms: 100",
            self.port,
            self.user,
            self.dir.join("client_key").display(),
            self.dir.join("known_hosts").display()
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
