//! The file transport, for the seeds' "File out and file in": each request is a file of one
//! record (the test message) written into the flow's FileInput directory, each reply the file
//! of the same name that the flow's FileOutput moves into its output directory. The request is
//! written under a `.part` name and renamed, so that FileInput never sees half of it; the reply
//! is removed once seen, so that the output folder stays small.
//!
//! In records mode each request is instead a file of many line-delimited records of one size
//! (`record 00000001 abcd…`), and the reply is the file of the same name in the output
//! directory once it holds as many lines: a flow that finishes its output file at end of data
//! makes it appear whole, a peer that appends record by record makes it grow, and both are
//! read the same way.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::driver::{Transport, TransportFactory};
use crate::error::BenchError;

/// How long a requester waits for its file to come out of the flow.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// Makes a [`FileClient`] per requester.
pub struct FileFactory {
    input: PathBuf,
    output: PathBuf,
    records: Option<Arc<RecordFile>>,
}

/// The file every requester writes in records mode.
struct RecordFile {
    body: Vec<u8>,
    count: usize,
}

impl FileFactory {
    /// Requests into `input`, replies from `output` (both created when missing).
    pub fn new(input: &Path, output: &Path) -> Result<FileFactory, BenchError> {
        for dir in [input, output] {
            std::fs::create_dir_all(dir)
                .map_err(|e| BenchError::io(format!("creating {}", dir.display()), e))?;
        }
        Ok(FileFactory {
            input: input.to_path_buf(),
            output: output.to_path_buf(),
            records: None,
        })
    }

    /// Records mode: each request a file of `count` records of `record_bytes` bytes (the line
    /// end included), each reply `count` lines.
    pub fn records(
        input: &Path,
        output: &Path,
        count: usize,
        record_bytes: usize,
    ) -> Result<FileFactory, BenchError> {
        if count == 0 || record_bytes < 2 {
            return Err(BenchError::InvalidSetting(format!(
                "a file of {count} records of {record_bytes} bytes: records must be at least 1 \
                 and each at least 2 bytes"
            )));
        }
        let mut factory = FileFactory::new(input, output)?;
        factory.records = Some(Arc::new(RecordFile {
            body: record_lines(count, record_bytes),
            count,
        }));
        Ok(factory)
    }
}

/// `count` numbered records, each `bytes` long with its line end: the number, then lower-case
/// letters for a transformation to change.
fn record_lines(count: usize, bytes: usize) -> Vec<u8> {
    let mut body = Vec::with_capacity(count * bytes);
    let text = bytes - 1;
    for i in 1..=count {
        let start = body.len();
        body.extend(format!("record {i:08} ").bytes().take(text));
        let letters = (b'a'..=b'z').cycle().take(text - (body.len() - start));
        body.extend(letters);
        body.push(b'\n');
    }
    body
}

impl TransportFactory for FileFactory {
    fn create(&self, requester: usize) -> Result<Box<dyn Transport>, BenchError> {
        Ok(Box::new(FileClient {
            input: self.input.clone(),
            output: self.output.clone(),
            requester,
            sent: 0,
            records: self.records.clone(),
        }))
    }

    fn describe(&self) -> String {
        let records = match &self.records {
            Some(r) => format!(", {} records a file", r.count),
            None => String::new(),
        };
        format!(
            "files {} -> {}{records}",
            self.input.display(),
            self.output.display()
        )
    }

    fn records_per_round_trip(&self) -> u64 {
        self.records.as_ref().map_or(1, |r| r.count as u64)
    }
}

/// One requester's files, named `r<requester>-<n>.dat`.
pub struct FileClient {
    input: PathBuf,
    output: PathBuf,
    requester: usize,
    sent: u64,
    records: Option<Arc<RecordFile>>,
}

impl Transport for FileClient {
    fn round_trip(&mut self, msg: &[u8]) -> Result<usize, BenchError> {
        self.sent += 1;
        let name = format!("r{}-{}.dat", self.requester, self.sent);
        let part = self.input.join(format!("{name}.part"));
        let body = self.records.as_ref().map_or(msg, |r| &r.body[..]);
        std::fs::write(&part, body)
            .map_err(|e| BenchError::io(format!("writing {}", part.display()), e))?;
        std::fs::rename(&part, self.input.join(&name))
            .map_err(|e| BenchError::io(format!("renaming {}", part.display()), e))?;
        let reply = self.output.join(&name);
        if let Some(records) = &self.records {
            return wait_for_lines(&reply, records.count);
        }
        let deadline = Instant::now() + REPLY_TIMEOUT;
        // Short sleeps: a file's way through the flow takes tens of microseconds upwards, and
        // the server's CPU, not the harness's, is what is measured.
        let mut nap = Duration::from_micros(20);
        loop {
            match std::fs::metadata(&reply) {
                Ok(m) => {
                    let _ = std::fs::remove_file(&reply);
                    return Ok(usize::try_from(m.len()).unwrap_or(usize::MAX));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(BenchError::io(format!("looking at {}", reply.display()), e));
                }
            }
            if Instant::now() > deadline {
                return Err(BenchError::io(
                    format!("waiting for {}", reply.display()),
                    std::io::Error::from(std::io::ErrorKind::TimedOut),
                ));
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(1));
        }
    }
}

/// Waits until `reply` holds `lines` line ends, reading only what was added since the last
/// look; removes it then and returns its length. Gives up when it stops growing for
/// [`REPLY_TIMEOUT`].
fn wait_for_lines(reply: &Path, lines: usize) -> Result<usize, BenchError> {
    let failed =
        |what: &str, e: std::io::Error| BenchError::io(format!("{what} {}", reply.display()), e);
    let mut file = None;
    let mut seen = 0usize;
    let mut length = 0usize;
    let mut buf = vec![0u8; 256 * 1024];
    let mut deadline = Instant::now() + REPLY_TIMEOUT;
    let mut nap = Duration::from_micros(50);
    loop {
        if file.is_none() {
            match std::fs::File::open(reply) {
                Ok(f) => file = Some(f),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(failed("opening", e)),
            }
        }
        if let Some(f) = file.as_mut() {
            loop {
                let n = f.read(&mut buf).map_err(|e| failed("reading", e))?;
                if n == 0 {
                    break;
                }
                length += n;
                seen += count_lines(&buf[..n]);
                deadline = Instant::now() + REPLY_TIMEOUT;
                nap = Duration::from_micros(50);
            }
            if seen >= lines {
                std::fs::remove_file(reply).map_err(|e| failed("removing", e))?;
                return Ok(length);
            }
        }
        if Instant::now() > deadline {
            return Err(BenchError::io(
                format!(
                    "waiting for {lines} lines in {} (saw {seen})",
                    reply.display()
                ),
                std::io::Error::from(std::io::ErrorKind::TimedOut),
            ));
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(5));
    }
}

fn count_lines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_returns_the_reply_length_when_the_file_comes_out() {
        let d = std::env::temp_dir().join(format!("sluice-bench-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let f = FileFactory::new(&d.join("in"), &d.join("out")).unwrap();
        // A stand-in for the flow: moves each whole request into the output folder.
        let (input, output) = (d.join("in"), d.join("out"));
        let mover = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                for e in std::fs::read_dir(&input).unwrap().flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name.ends_with(".dat") {
                        std::fs::rename(e.path(), output.join(&name)).unwrap();
                        return name;
                    }
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            String::new()
        });
        let mut t = f.create(3).unwrap();
        assert_eq!(t.round_trip(b"hello").unwrap(), 5);
        assert_eq!(mover.join().unwrap(), "r3-1.dat");
        assert_eq!(std::fs::read_dir(d.join("out")).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn record_lines_are_numbered_and_of_the_size_asked_when_the_size_fits_the_number() {
        let body = record_lines(3, 24);
        assert_eq!(body.len(), 72);
        let text = String::from_utf8(body).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "record 00000001 abcdefg");
        assert_eq!(lines[2], "record 00000003 abcdefg");
        assert_eq!(String::from_utf8(record_lines(2, 4)).unwrap(), "rec\nrec\n");
    }

    #[test]
    fn records_round_trip_waits_for_every_line_when_the_reply_grows_record_by_record() {
        let d = std::env::temp_dir().join(format!("sluice-bench-recs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let f = FileFactory::records(&d.join("in"), &d.join("out"), 50, 10).unwrap();
        assert_eq!(f.records_per_round_trip(), 50);
        // A stand-in for a peer that appends one transformed record at a time.
        let (input, output) = (d.join("in"), d.join("out"));
        let appender = std::thread::spawn(move || {
            use std::io::Write;
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                for e in std::fs::read_dir(&input).unwrap().flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name.ends_with(".dat") {
                        let body = std::fs::read_to_string(e.path()).unwrap();
                        std::fs::remove_file(e.path()).unwrap();
                        let mut out = std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(output.join(&name))
                            .unwrap();
                        for line in body.lines() {
                            writeln!(out, "{}", line.to_uppercase()).unwrap();
                            std::thread::sleep(Duration::from_micros(100));
                        }
                        return body.lines().count();
                    }
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            0
        });
        let mut t = f.create(0).unwrap();
        assert_eq!(t.round_trip(b"ignored").unwrap(), 500);
        assert_eq!(appender.join().unwrap(), 50);
        assert_eq!(std::fs::read_dir(d.join("out")).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn records_factory_refuses_records_too_small_for_a_line_end() {
        let d = std::env::temp_dir().join(format!("sluice-bench-small-{}", std::process::id()));
        assert!(FileFactory::records(&d.join("in"), &d.join("out"), 10, 1).is_err());
        assert!(FileFactory::records(&d.join("in"), &d.join("out"), 0, 200).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn file_peers_suite_reads_records_mode_and_refuses_zero_records() {
        use crate::suite::{Suite, TransportSpec};
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/bench/file-peers.yaml");
        let text = std::fs::read_to_string(&path).expect("samples/bench/file-peers.yaml");
        let suite = Suite::parse(&text, &path).expect("valid suite");
        assert_eq!(
            suite.tests[0].transport,
            TransportSpec::File {
                input: "bench/records-in".into(),
                output: "bench/records-out".into(),
                records: Some(10_000),
            }
        );
        let names: Vec<String> = suite.cases(None).into_iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "file-records",
                "file-records [camel]",
                "file-records [benthos]"
            ]
        );
        let zero =
            "tests: [{name: a, transport: {file: {in: i, out: o, records: 0}}, sizes: [200]}]";
        assert!(Suite::parse(zero, Path::new("zero.yaml")).is_err());
    }
}
