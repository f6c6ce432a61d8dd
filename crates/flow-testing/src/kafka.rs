//! An Apache Kafka broker of a test's own, in KRaft mode (one process that is both broker and
//! controller): its storage formatted in a temporary folder, listening on free ports, killed
//! and removed when the guard drops.
//!
//! The broker's jars come from Maven Central through `scripts/kafka-jars`, into
//! `$SLUICE_KAFKA_JARS` or `~/.cache/sluice/kafka-jars`; Kafka 4 needs Java 17 or later. Either
//! missing skips the test with a printed reason, except under `CI=true` (`.ci/run` fetches and
//! installs them).

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::require_tool;

/// A running Kafka broker; dropping it kills the broker and removes its folder.
pub struct KafkaServer {
    child: Child,
    dir: PathBuf,
    port: u16,
}

/// Base64 of 16 bytes, as `kafka-storage random-uuid` prints one: every test broker is a
/// cluster of its own, so one id serves them all.
const CLUSTER_ID: &str = "c2x1aWNlLXRlc3RzLWthZg";

/// The folder the jars are in.
pub fn jar_dir() -> PathBuf {
    match std::env::var_os("SLUICE_KAFKA_JARS") {
        Some(d) => PathBuf::from(d),
        None => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default()
            .join(".cache/sluice/kafka-jars"),
    }
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn java(java: &Path, jars: &Path) -> Command {
    let mut c = Command::new(java);
    c.args([
        "-Xmx512m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Djava.awt.headless=true",
    ])
    .arg("-cp")
    .arg(jars.join("*"))
    .stdin(Stdio::null());
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent; it makes the
    // broker die with the test process even when that is killed.
    unsafe {
        c.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    c
}

/// The broker every test of this process shares, started at the first call; it is killed when
/// the process exits.
static SHARED: std::sync::Mutex<Option<Option<&'static KafkaServer>>> = std::sync::Mutex::new(None);

extern "C" fn stop_shared() {
    if let Ok(Some(Some(s))) = SHARED.lock().as_deref() {
        let pid = s.child.id() as libc::pid_t;
        // SAFETY: signalling the broker this process started; no memory is involved.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
        let _ = std::fs::remove_dir_all(&s.dir);
    }
}

impl KafkaServer {
    /// A broker shared by the tests of this process (each using topics and groups of its own),
    /// so that the broker starts once. None as for [`KafkaServer::start`].
    ///
    /// # Panics
    /// As [`KafkaServer::start`].
    pub fn shared() -> Option<&'static KafkaServer> {
        let mut slot = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = *slot {
            return s;
        }
        // Started from a thread that never ends: the broker's parent-death signal follows the
        // thread that started it, and a test's thread ends with the test.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let s = KafkaServer::start().map(|s| &*Box::leak(Box::new(s)));
            let _ = tx.send(s);
            loop {
                std::thread::park();
            }
        });
        let Ok(s) = rx.recv() else {
            panic!("Kafka could not be started: see the panic above");
        };
        if s.is_some() {
            // SAFETY: registering a plain function with no captured state.
            unsafe {
                libc::atexit(stop_shared);
            }
        }
        *slot = Some(s);
        s
    }

    /// Start a broker, or None (after printing why) when Java or the jars are missing and CI
    /// is not `true`.
    ///
    /// # Panics
    /// When both are there but the broker cannot be set up or started: the test cannot run.
    pub fn start() -> Option<KafkaServer> {
        let java_bin = require_tool(
            "a Java runtime (Kafka 4 needs Java 17 or later)",
            &["java", "/usr/lib/jvm/*/bin/java"],
        )?;
        let jars = jar_dir();
        let kafka_jar = format!("{}/kafka_2.13-*.jar", jars.display());
        require_tool(
            "Apache Kafka's jars (scripts/kafka-jars fetches them from Maven Central)",
            &[&kafka_jar],
        )?;
        let port = free_port().expect("a free port");
        let controller = free_port().expect("a free port");
        let dir = std::env::temp_dir().join(format!("sluice-kafka-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temporary folder for Kafka");
        let config = dir.join("server.properties");
        let data = dir.join("data");
        let props = format!(
            "process.roles=broker,controller\n\
             node.id=1\n\
             controller.quorum.voters=1@127.0.0.1:{controller}\n\
             listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}\n\
             advertised.listeners=PLAINTEXT://127.0.0.1:{port}\n\
             controller.listener.names=CONTROLLER\n\
             inter.broker.listener.name=PLAINTEXT\n\
             listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n\
             log.dirs={}\n\
             num.partitions=1\n\
             offsets.topic.replication.factor=1\n\
             offsets.topic.num.partitions=4\n\
             transaction.state.log.replication.factor=1\n\
             transaction.state.log.min.isr=1\n\
             group.initial.rebalance.delay.ms=0\n\
             auto.create.topics.enable=true\n",
            data.display()
        );
        std::fs::write(&config, props).expect("write server.properties");
        let out = java(&java_bin, &jars)
            .args(["kafka.tools.StorageTool", "format", "-t", CLUSTER_ID, "-c"])
            .arg(&config)
            .output()
            .expect("run Kafka's storage tool");
        assert!(
            out.status.success(),
            "formatting Kafka's storage failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let log_path = dir.join("broker.log");
        let log = std::fs::File::create(&log_path).expect("broker log");
        let child = java(&java_bin, &jars)
            .arg("kafka.Kafka")
            .arg(&config)
            .stdout(log.try_clone().expect("broker log"))
            .stderr(log)
            .spawn()
            .expect("start Kafka");
        let mut server = KafkaServer { child, dir, port };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let text = std::fs::read_to_string(&log_path).unwrap_or_default();
            if text.contains("Kafka Server started") {
                break;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("Kafka exited ({status}) while starting:\n{text}");
            }
            assert!(
                Instant::now() < deadline,
                "Kafka did not start within 120 s:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        Some(server)
    }

    /// The broker's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The bootstrap servers, as a `kafka:` broker entry writes them.
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The broker's log so far, for a failing test's message.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("broker.log")).unwrap_or_default()
    }
}

impl Drop for KafkaServer {
    fn drop(&mut self) {
        // The data is thrown away: no clean shutdown is needed.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
