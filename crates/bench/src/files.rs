//! The file transport, for the seeds' "File out and file in": each request is a file of one
//! record (the test message) written into the flow's FileInput directory, each reply the file
//! of the same name that the flow's FileOutput moves into its output directory. The request is
//! written under a `.part` name and renamed, so that FileInput never sees half of it; the reply
//! is removed once seen, so that the output folder stays small.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::driver::{Transport, TransportFactory};
use crate::error::BenchError;

/// How long a requester waits for its file to come out of the flow.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// Makes a [`FileClient`] per requester.
pub struct FileFactory {
    input: PathBuf,
    output: PathBuf,
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
        })
    }
}

impl TransportFactory for FileFactory {
    fn create(&self, requester: usize) -> Result<Box<dyn Transport>, BenchError> {
        Ok(Box::new(FileClient {
            input: self.input.clone(),
            output: self.output.clone(),
            requester,
            sent: 0,
        }))
    }

    fn describe(&self) -> String {
        format!(
            "files {} -> {}",
            self.input.display(),
            self.output.display()
        )
    }
}

/// One requester's files, named `r<requester>-<n>.dat`.
pub struct FileClient {
    input: PathBuf,
    output: PathBuf,
    requester: usize,
    sent: u64,
}

impl Transport for FileClient {
    fn round_trip(&mut self, msg: &[u8]) -> Result<usize, BenchError> {
        self.sent += 1;
        let name = format!("r{}-{}.dat", self.requester, self.sent);
        let part = self.input.join(format!("{name}.part"));
        std::fs::write(&part, msg)
            .map_err(|e| BenchError::io(format!("writing {}", part.display()), e))?;
        std::fs::rename(&part, self.input.join(&name))
            .map_err(|e| BenchError::io(format!("renaming {}", part.display()), e))?;
        let reply = self.output.join(&name);
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
}
