//! Starting the real `sluice` binary on free ports for end-to-end tests, and a small HTTP client.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running server, stopped (SIGTERM) when dropped.
pub struct Server {
    pub child: Child,
    pub http_port: u16,
    pub admin_port: u16,
    pub qm_port: u16,
    /// `--tcpip-port`: TCP/IP server nodes without a port of their own listen here.
    pub tcpip_port: u16,
    pub stderr: PathBuf,
    /// The server's `--data-dir`.
    pub data_dir: PathBuf,
    _data: tempdir::TempDir,
}

pub mod tempdir {
    use std::path::{Path, PathBuf};

    /// A directory removed when dropped.
    pub struct TempDir(PathBuf);
    impl TempDir {
        pub fn new(tag: &str) -> TempDir {
            static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let p =
                std::env::temp_dir().join(format!("sluice-test-{tag}-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).expect("create temp dir");
            TempDir(p)
        }
        pub fn path(&self) -> &Path {
            &self.0
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

pub fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples")
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_sluice")
}

impl Server {
    /// Start `sluice run DIR` and wait for its `ready` line.
    pub fn start(dir: &Path) -> Server {
        Self::try_start(dir).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Start with a data folder that outlives the server (for restart tests).
    pub fn start_with_data(dir: &Path, data_dir: &Path) -> Server {
        Self::try_start_with_data(dir, data_dir).unwrap_or_else(|e| panic!("{e}"))
    }

    pub fn try_start(dir: &Path) -> Result<Server, String> {
        Self::launch(dir, None)
    }

    pub fn try_start_with_data(dir: &Path, data_dir: &Path) -> Result<Server, String> {
        Self::launch(dir, Some(data_dir))
    }

    fn launch(dir: &Path, data_dir: Option<&Path>) -> Result<Server, String> {
        // A free port can be taken by another test between our probe and the server's bind:
        // then the server exits naming the port, and a new set of ports is tried.
        let mut tries = 0;
        loop {
            match Self::launch_once(dir, data_dir) {
                Err(e) if e.contains("cannot listen on") && tries < 3 => tries += 1,
                r => return r,
            }
        }
    }

    fn launch_once(dir: &Path, data_dir: Option<&Path>) -> Result<Server, String> {
        let data = tempdir::TempDir::new("data");
        let data_path = data_dir
            .map(Path::to_path_buf)
            .unwrap_or_else(|| data.path().to_path_buf());
        let (http_port, admin_port, qm_port, tcpip_port) =
            (free_port(), free_port(), free_port(), free_port());
        let stderr = data.path().join("stderr.log");
        let mut child = Command::new(bin())
            .args(["run", &dir.display().to_string(), "--bind", "127.0.0.1"])
            .args([
                "--http-port",
                &http_port.to_string(),
                "--admin-port",
                &admin_port.to_string(),
            ])
            .args([
                "--qm-port",
                &qm_port.to_string(),
                "--data-dir",
                &data_path.display().to_string(),
            ])
            .args(["--tcpip-port", &tcpip_port.to_string()])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).map_err(|e| e.to_string())?)
            .spawn()
            .map_err(|e| format!("cannot start sluice: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            while let Some(Ok(l)) = lines.next() {
                let _ = tx.send(l);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(l) if l.trim() == "ready" => break,
                Ok(_) => {}
                Err(_) => {
                    if let Ok(Some(status)) = child.try_wait() {
                        let log = std::fs::read_to_string(&stderr).unwrap_or_default();
                        return Err(format!("sluice exited with {status} before ready:\n{log}"));
                    }
                    if Instant::now() > deadline {
                        let _ = child.kill();
                        return Err("sluice did not print ready within 30 s".into());
                    }
                }
            }
        }
        Ok(Server {
            child,
            http_port,
            admin_port,
            qm_port,
            tcpip_port,
            stderr,
            data_dir: data_path,
            _data: data,
        })
    }

    pub fn post(&self, path: &str, body: &[u8]) -> Response {
        request(self.http_port, "POST", path, &[], body)
    }

    pub fn admin_get(&self, path: &str) -> Response {
        request(self.admin_port, "GET", path, &[], b"")
    }

    /// SIGTERM, then the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc_kill(self.child.id() as i32, 15) };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                return s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("sluice did not stop within 30 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
    fn atexit(f: extern "C" fn()) -> i32;
}

/// The servers to stop when the test process exits (0: a free slot).
static AT_EXIT_PIDS: [std::sync::atomic::AtomicI32; 4] =
    [const { std::sync::atomic::AtomicI32::new(0) }; 4];

extern "C" fn stop_registered_servers() {
    for slot in &AT_EXIT_PIDS {
        let pid = slot.load(std::sync::atomic::Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill(2) on a server this process started.
            unsafe { libc_kill(pid, 15) };
        }
    }
}

/// SIGTERM `server` when the test process exits (for a server kept in a static, which is never
/// dropped). Up to four servers per process.
pub fn stop_at_exit(server: &Server) {
    use std::sync::atomic::Ordering::SeqCst;
    let pid = server.child.id() as i32;
    let registered = AT_EXIT_PIDS
        .iter()
        .any(|slot| slot.compare_exchange(0, pid, SeqCst, SeqCst).is_ok());
    assert!(
        registered,
        "more servers kept for the whole test process than stop_at_exit holds"
    );
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: registers a plain function with no captured state.
    ONCE.call_once(|| unsafe {
        atexit(stop_registered_servers);
    });
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SAFETY: kill(2) on our own child's pid.
            unsafe { libc_kill(self.child.id() as i32, 15) };
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A parsed HTTP/1.1 response; header names as the server sent them.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One request on a fresh connection.
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    send(&mut s, method, path, headers, body);
    read_response(&mut s)
}

/// Send a request; `Host: localhost` unless `headers` name another host.
pub fn send(s: &mut TcpStream, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) {
    let is_host = |n: &str| n.eq_ignore_ascii_case("host");
    let host = headers
        .iter()
        .find(|(n, _)| is_host(n))
        .map_or("localhost", |(_, v)| *v);
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (n, v) in headers.iter().filter(|(n, _)| !is_host(n)) {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).expect("write head");
    s.write_all(body).expect("write body");
}

/// [`request`] with `Host: 127.0.0.1:PORT` unless `headers` name another host (a served WSDL
/// takes its address from it).
pub fn call_at(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let host = format!("127.0.0.1:{port}");
    let mut all = headers.to_vec();
    all.push(("Host", &host));
    request(port, method, path, &all, body)
}

pub fn read_response(s: &mut TcpStream) -> Response {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 65536];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let n = s.read(&mut tmp).expect("read");
        assert!(
            n > 0,
            "connection closed before the response head: {:?}",
            String::from_utf8_lossy(&buf)
        );
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("status");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| {
            l.split_once(':')
                .map(|(n, v)| (n.to_string(), v.trim().to_string()))
        })
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = s.read(&mut tmp).expect("read body");
        assert!(n > 0, "connection closed in the body");
        body.extend_from_slice(&tmp[..n]);
    }
    body.truncate(len);
    Response {
        status,
        headers,
        body,
    }
}

/// The seeds' SaleList message (Appendix C), white space removed, repeated `n` times.
pub fn sale_list(n: usize) -> Vec<u8> {
    let mut s = String::from("<Parent><First>1</First>");
    for i in 0..n {
        s.push_str(&format!(
            "<SaleList><Invoice><Initial>K</Initial><Initial>A</Initial><Surname>Braithwaite{i}</Surname>\
<Item><Code>00</Code><Code>01</Code><Code>02</Code><Description>Twister</Description><Category>Games</Category>\
<Price>00.30</Price><Quantity>01</Quantity></Item><Item><Code>02</Code><Code>03</Code><Code>01</Code>\
<Description>The Times Newspaper</Description><Category>Books and Media</Category><Price>00.20</Price>\
<Quantity>01</Quantity></Item><Balance>00.50</Balance><Currency>Sterling</Currency></Invoice><Invoice>\
<Initial>T</Initial><Initial>J</Initial><Surname>Dunnwin</Surname><Item><Code>04</Code><Code>05</Code>\
<Code>01</Code><Description>The Origin of Species</Description><Category>Books and Media</Category>\
<Price>22.34</Price><Quantity>02</Quantity></Item><Item><Code>06</Code><Code>07</Code><Code>01</Code>\
<Description>Microscope</Description><Category>Miscellaneous</Category><Price>36.20</Price>\
<Quantity>01</Quantity></Item><Balance>81.84</Balance><Currency>Euros</Currency></Invoice></SaleList>"
        ));
    }
    s.push_str("<Last>Test</Last></Parent>");
    s.into_bytes()
}

/// Wait until `done`, polling every few milliseconds; panics naming `what` after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A file's length; 0 when it does not exist (yet).
pub fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// Every line `line NNNNNNNN` for 0..`lines` appears in `out` exactly once.
pub fn assert_each_line_once(out: &str, lines: usize) {
    let mut seen = vec![0u32; lines];
    for l in out.lines() {
        let n: usize = l
            .trim_start_matches("line ")
            .parse()
            .expect("a numbered line");
        seen[n] += 1;
    }
    let missing = seen.iter().filter(|&&c| c == 0).count();
    let repeated = seen.iter().filter(|&&c| c > 1).count();
    assert_eq!((missing, repeated), (0, 0), "lines missing, lines repeated");
}

/// Python's zeep, from `SLUICE_ZEEP_PYTHON` or the venv `.ci/run` makes in `target/py-tools`.
pub fn zeep_python() -> Option<std::path::PathBuf> {
    let venv = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/py-tools/bin/python3"
    );
    let from_env = std::env::var("SLUICE_ZEEP_PYTHON").unwrap_or_default();
    let mut candidates = vec![venv];
    if !from_env.is_empty() {
        candidates.insert(0, from_env.as_str());
    }
    let python = sluice_flow_testing::require_tool("Python with zeep (SOAP client)", &candidates)?;
    let ok = std::process::Command::new(&python)
        .args(["-c", "import zeep"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok || std::env::var("CI").as_deref() != Ok("true"),
        "{} cannot import zeep",
        python.display()
    );
    if !ok {
        eprintln!("skipped: {} cannot import zeep", python.display());
        return None;
    }
    Some(python)
}

/// A SOAP service with binary content (an upload answered with what was uploaded), for the
/// MTOM tests.
pub const FILES_WSDL: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions targetNamespace="urn:test:files" xmlns:tns="urn:test:files"
    xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <wsdl:types>
    <xsd:schema targetNamespace="urn:test:files" elementFormDefault="qualified">
      <xsd:element name="upload">
        <xsd:complexType><xsd:sequence>
          <xsd:element name="name" type="xsd:string"/>
          <xsd:element name="data" type="xsd:base64Binary"/>
        </xsd:sequence></xsd:complexType>
      </xsd:element>
    </xsd:schema>
  </wsdl:types>
  <wsdl:message name="uploadMsg"><wsdl:part name="parameters" element="tns:upload"/></wsdl:message>
  <wsdl:portType name="FilesPortType">
    <wsdl:operation name="upload">
      <wsdl:input message="tns:uploadMsg"/>
      <wsdl:output message="tns:uploadMsg"/>
    </wsdl:operation>
  </wsdl:portType>
  <wsdl:binding name="FilesBinding" type="tns:FilesPortType">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="upload">
      <soap:operation soapAction="urn:test:files/upload"/>
      <wsdl:input><soap:body use="literal"/></wsdl:input>
      <wsdl:output><soap:body use="literal"/></wsdl:output>
    </wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="FilesService">
    <wsdl:port name="FilesPort" binding="tns:FilesBinding">
      <soap:address location="http://localhost:7800/files"/>
    </wsdl:port>
  </wsdl:service>
</wsdl:definitions>
"#;
