//! Starting and stopping the server under test as a child process:
//! `sluice run PROJECT --http-port N --admin-port N --qm-port N --tcpip-port N --data-dir D`
//! on free loopback ports, or a peer's own command answering on one port; ready when it prints
//! a line `ready` (a peer also when its port accepts connections); stopped with SIGTERM, then SIGKILL if it does not exit in time.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::BenchError;

/// How to start the server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The `sluice` binary.
    pub binary: PathBuf,
    /// The project directory it runs.
    pub project: PathBuf,
    /// Where it keeps queue data.
    pub data_dir: PathBuf,
    /// How long to wait for `ready`.
    pub ready_timeout: Duration,
    /// How long to wait for exit after SIGTERM before SIGKILL.
    pub stop_timeout: Duration,
    /// Further arguments after the ports and data directory.
    pub extra_args: Vec<String>,
    /// A peer's command, run instead of `binary run …`: `{port}`, `{project}` and `{data}` in
    /// its arguments are replaced, and it answers HTTP and TCP/IP on that one port.
    pub command: Option<Vec<String>>,
    /// Only a `ready` line makes a peer ready, not its port answering.
    pub says_ready: bool,
}

impl ServerConfig {
    /// Defaults: 60 s to become ready, 10 s to stop.
    pub fn new(binary: &Path, project: &Path, data_dir: &Path) -> Self {
        ServerConfig {
            binary: binary.to_path_buf(),
            project: project.to_path_buf(),
            data_dir: data_dir.to_path_buf(),
            ready_timeout: Duration::from_secs(60),
            stop_timeout: Duration::from_secs(10),
            extra_args: Vec::new(),
            command: None,
            says_ready: false,
        }
    }

    /// A peer started by `command` (program first) instead of Sluice.
    pub fn peer(command: &[String], project: &Path, data_dir: &Path) -> Self {
        let mut config = ServerConfig::new(
            Path::new(command.first().map_or("", String::as_str)),
            project,
            data_dir,
        );
        config.command = Some(command.to_vec());
        config
    }

    fn command(&self, [http_port, admin_port, qm_port, tcpip_port]: [u16; 4]) -> Command {
        let Some(words) = &self.command else {
            let mut command = Command::new(&self.binary);
            command
                .arg("run")
                .arg(&self.project)
                .args(["--http-port", &http_port.to_string()])
                .args(["--admin-port", &admin_port.to_string()])
                .args(["--qm-port", &qm_port.to_string()])
                .args(["--tcpip-port", &tcpip_port.to_string()])
                .arg("--data-dir")
                .arg(&self.data_dir)
                .args(&self.extra_args);
            return command;
        };
        let fill = |word: &String| {
            word.replace("{port}", &http_port.to_string())
                .replace("{project}", &self.project.display().to_string())
                .replace("{data}", &self.data_dir.display().to_string())
        };
        // An empty command (refused when a suite is read) fails to spawn, with that error.
        let Some((program, args)) = words.split_first() else {
            return Command::new("");
        };
        let mut command = Command::new(fill(program));
        command.args(args.iter().map(fill));
        command
    }
}

/// Where a started server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEndpoints {
    /// The host to connect to (loopback).
    pub host: String,
    /// HTTP listener for flows.
    pub http_port: u16,
    /// Admin REST API.
    pub admin_port: u16,
    /// Queue-manager client protocol.
    pub qm_port: u16,
    /// TCP/IP server nodes' shared listener (`--tcpip-port`).
    pub tcpip_port: u16,
    /// The queue manager's local socket, used instead of `qm_port` when set.
    pub qm_socket: Option<PathBuf>,
    /// Its data directory.
    pub data_dir: PathBuf,
    /// The project it runs (in-process transports deploy the same project in the harness).
    pub project: PathBuf,
    /// Its process id.
    pub pid: u32,
}

impl ServerEndpoints {
    /// What a queue-manager client connects to: the local socket's path, or `HOST:PORT`.
    pub fn qm_address(&self) -> String {
        match &self.qm_socket {
            Some(p) => p.display().to_string(),
            None => format!("{}:{}", self.host, self.qm_port),
        }
    }
}

/// A running server; stopped when dropped.
pub struct ServerProcess {
    child: Option<Child>,
    endpoints: ServerEndpoints,
    stop_timeout: Duration,
    output: Arc<Mutex<VecDeque<String>>>,
    readers: Vec<thread::JoinHandle<()>>,
}

/// Lines of server output kept for error messages.
const OUTPUT_TAIL: usize = 20;

impl ServerProcess {
    /// Starts the server and waits for its `ready` line.
    pub fn start(config: &ServerConfig) -> Result<ServerProcess, BenchError> {
        let start_error = |reason: String| BenchError::ServerStart {
            binary: config.binary.clone(),
            reason,
            source: None,
        };
        let ports = free_ports()?;
        let [http_port, admin_port, qm_port, mut tcpip_port] = ports;
        if config.command.is_some() {
            tcpip_port = http_port;
        }
        std::fs::create_dir_all(&config.data_dir).map_err(|e| {
            BenchError::io(
                format!("creating data dir {}", config.data_dir.display()),
                e,
            )
        })?;
        let mut child = config
            .command(ports)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| BenchError::ServerStart {
                binary: config.binary.clone(),
                reason: "cannot start it".into(),
                source: Some(e),
            })?;
        let output = Arc::new(Mutex::new(VecDeque::new()));
        let (ready_tx, ready_rx) = mpsc::channel();
        let mut readers = Vec::new();
        if let Some(stdout) = child.stdout.take() {
            readers.extend(drain(stdout, output.clone(), Some(ready_tx)));
        }
        if let Some(stderr) = child.stderr.take() {
            readers.extend(drain(stderr, output.clone(), None));
        }
        let endpoints = ServerEndpoints {
            host: "127.0.0.1".into(),
            http_port,
            admin_port,
            qm_port,
            tcpip_port,
            qm_socket: None,
            data_dir: config.data_dir.clone(),
            project: config.project.clone(),
            pid: child.id(),
        };
        let mut server = ServerProcess {
            child: Some(child),
            endpoints,
            stop_timeout: config.stop_timeout,
            output,
            readers,
        };
        let deadline = Instant::now() + config.ready_timeout;
        loop {
            // A peer is ready when it says so or when its port answers: not every peer's own
            // output can be made to say `ready`.
            if config.command.is_some() && !config.says_ready && answers(http_port) {
                return Ok(server);
            }
            match ready_rx.recv_timeout(Duration::from_millis(100)) {
                Ok(()) => return Ok(server),
                Err(mpsc::RecvTimeoutError::Disconnected)
                | Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Some(status) = server.exited() {
                        server.wait_for_output(Duration::from_secs(1));
                        return Err(start_error(format!(
                            "it exited ({status}) before printing `ready`; its last output:\n{}",
                            server.output_tail()
                        )));
                    }
                    if Instant::now() >= deadline {
                        let tail = server.output_tail();
                        server.stop();
                        return Err(start_error(format!(
                            "no `ready` line within {:?}; its last output:\n{tail}",
                            config.ready_timeout
                        )));
                    }
                }
            }
        }
    }

    /// Where it listens.
    pub fn endpoints(&self) -> &ServerEndpoints {
        &self.endpoints
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.endpoints.pid
    }

    /// The last lines it printed.
    pub fn output_tail(&self) -> String {
        let lines = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Gives the output readers up to `limit` to reach the end of the pipes.
    fn wait_for_output(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline && !self.readers.iter().all(|r| r.is_finished()) {
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// How it exited, if it has (without waiting).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// Sends SIGTERM, waits, then kills; returns how it exited.
    pub fn stop(&mut self) -> Option<ExitStatus> {
        let mut child = self.child.take()?;
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: kill() with a pid we spawned and still own (not yet reaped).
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        let deadline = Instant::now() + self.stop_timeout;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        child.wait().ok()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Reads a child's output line by line, keeping the tail and signalling the
/// `ready` line.
fn drain<R: Read + Send + 'static>(
    stream: R,
    tail: Arc<Mutex<VecDeque<String>>>,
    ready: Option<mpsc::Sender<()>>,
) -> Option<thread::JoinHandle<()>> {
    thread::Builder::new()
        .name("server-output".into())
        .spawn(move || {
            let mut ready = ready;
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { break };
                if line.trim() == "ready"
                    && let Some(tx) = ready.take()
                {
                    let _ = tx.send(());
                }
                let mut lines = tail.lock().unwrap_or_else(PoisonError::into_inner);
                if lines.len() == OUTPUT_TAIL {
                    lines.pop_front();
                }
                lines.push_back(line);
            }
        })
        .ok()
}

/// Whether something accepts connections on the loopback `port`.
fn answers(port: u16) -> bool {
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    std::net::TcpStream::connect_timeout(&address, Duration::from_millis(50)).is_ok()
}

/// Four distinct free loopback ports (held together while picked, so they differ).
pub fn free_ports() -> Result<[u16; 4], BenchError> {
    let bind =
        || TcpListener::bind("127.0.0.1:0").map_err(|e| BenchError::io("finding a free port", e));
    let listeners = [bind()?, bind()?, bind()?, bind()?];
    let mut ports = [0u16; 4];
    for (port, listener) in ports.iter_mut().zip(&listeners) {
        *port = listener
            .local_addr()
            .map_err(|e| BenchError::io("finding a free port", e))?
            .port();
    }
    Ok(ports)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(name: &str, body: &str) -> PathBuf {
        let path =
            std::env::temp_dir().join(format!("sluice-bench-{}-{name}.sh", std::process::id()));
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
        let mut perms = std::fs::metadata(&path).expect("metadata").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).expect("chmod");
        path
    }

    #[test]
    fn start_waits_for_ready_and_stop_terminates() {
        let bin = script(
            "ready",
            "echo starting; echo \"$@\" >&2; echo ready; exec sleep 30",
        );
        let data = std::env::temp_dir().join(format!("sluice-bench-data-{}", std::process::id()));
        let config = ServerConfig::new(&bin, Path::new("samples"), &data);
        let mut server = ServerProcess::start(&config).expect("server starts");
        let e = server.endpoints().clone();
        assert!(e.http_port != e.admin_port && e.admin_port != e.qm_port);
        let status = server.stop();
        assert!(status.is_some_and(|s| !s.success()));
        let _ = std::fs::remove_file(bin);
        let _ = std::fs::remove_dir_all(data);
    }

    #[test]
    fn peer_command_gets_its_port_project_and_data() {
        let bin = script("peer", "echo \"args $*\"; echo ready; exec sleep 30");
        let data = std::env::temp_dir().join(format!("sluice-bench-peer-{}", std::process::id()));
        let command = [
            bin.display().to_string(),
            "--listen={port}".to_string(),
            "{project}".to_string(),
            "{data}/x".to_string(),
        ];
        let config = ServerConfig::peer(&command, Path::new("samples"), &data);
        let mut server = ServerProcess::start(&config).expect("peer starts");
        let e = server.endpoints().clone();
        server.wait_for_output(Duration::from_millis(200));
        let said = server.output_tail();
        server.stop();
        let _ = std::fs::remove_file(bin);
        let _ = std::fs::remove_dir_all(&data);
        assert_eq!(e.tcpip_port, e.http_port);
        assert!(
            said.contains(&format!(
                "args --listen={} samples {}/x",
                e.http_port,
                data.display()
            )),
            "{said}"
        );
    }

    #[test]
    fn start_reports_early_exit_with_output() {
        let bin = script("fail", "echo 'flow file broken' >&2; exit 3");
        let data = std::env::temp_dir().join(format!("sluice-bench-data2-{}", std::process::id()));
        let config = ServerConfig::new(&bin, Path::new("samples"), &data);
        let err = ServerProcess::start(&config).err().map(|e| e.to_string());
        let _ = std::fs::remove_file(bin);
        let _ = std::fs::remove_dir_all(data);
        assert!(err.is_some_and(|e| e.contains("flow file broken")));
    }
}
