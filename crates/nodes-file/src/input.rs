//! FileInput: watches a directory and propagates one message per record of each file that
//! arrives, oldest first.
//!
//! The product's life of a file: it is moved into `mqsitransitin` under the input directory
//! (which also claims it: another instance or server sees it gone), its records are propagated
//! one invocation each, then an End of Data message; then the file is deleted or moved into the
//! archive folder (optionally with a time stamp prefix). A record whose flow fails is rolled
//! back and goes to the `failure` terminal with the ExceptionList; when that is not wired or
//! fails too, processing of the file stops and it is moved to `mqsibackout`.
//!
//! Each record's unit of work carries the file's [`Progress`]: when it commits, the checkpoint
//! records the next offset, so a server killed in the middle of a file resumes after the last
//! committed record (files found in `mqsitransitin` at start are resumed first).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, ExampleInput, ExampleOutcome, InputNode, InstanceRunner,
    Invocation, Message, NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminals,
    properties, property_enum, terminals,
};
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps, MessageModelProps};
use sluice_nodes_core::terminals::{CATCH_DOC, FAILURE_DOC};

use crate::checkpoint::{Checkpoint, Progress};
use crate::records::{Detection, Record, RecordReader};
use crate::remote::{Remote, RemoteProps};
use crate::retry::{RetryPolicy, RetryProps};
use crate::store::{Local, Store, move_in};
use crate::watch::{DirWatch, WatchMode};
use crate::{BACKOUT, FileError, TRANSIT_IN, absolute, epoch_micros, pattern, stamp};
use sluice_tree::{Text, Value, field_type};

terminals! {
    /// FileInput's outputs.
    pub enum FileInputOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": "Each record of a file, parsed in the node's domain, with `LocalEnvironment.File`.",
        EndOfData = "end_of_data": "After a file's last record: an empty message with `LocalEnvironment.File` (Offset is the file's length, Record the number of records).",
        Catch = "catch": CATCH_DOC,
    }
}

property_enum! {
    /// How FileInput cuts a file into records.
    pub enum RecordDetection {
        WholeFile = "whole_file", FixedLength = "fixed_length", Delimited = "delimited",
        ParsedRecordSequence = "parsed_record_sequence",
    }
}

property_enum! {
    /// The delimiter of delimited records.
    pub enum DelimiterKind { LineEnd = "line_end", Dos = "dos", Unix = "unix", Custom = "custom" }
}

property_enum! {
    /// Where a delimiter stands.
    pub enum DelimiterType { Postfix = "postfix", Infix = "infix" }
}

property_enum! {
    /// What FileInput does with a file it processed.
    pub enum SuccessAction { Archive = "archive", ArchiveWithTimestamp = "archive_with_timestamp", Delete = "delete" }
}

property_enum! {
    /// What FileInput does with a file whose processing failed.
    pub enum FailureAction { Backout = "backout", BackoutWithTimestamp = "backout_with_timestamp", Delete = "delete" }
}

properties! {
    /// How records are found in a file (shared by FileInput and FileRead).
    pub struct RecordProps {
        /// `whole_file`: the file is one message; `fixed_length`: records of
        /// `record_length_bytes` (the last may be shorter); `delimited`: records separated by
        /// `delimiter`; `parsed_record_sequence`: each record as long as the `domain` (XMLNSC,
        /// JSON or DFDL) parses, whitespace between records skipped.
        record_detection: RecordDetection = "whole_file",
        /// The length of a fixed-length record.
        record_length_bytes: u64 = "80",
        /// `line_end`: `\n` or `\r\n` (the product's "DOS or UNIX line end"); `dos`: `\r\n`
        /// only; `unix`: `\n` only; `custom`: `custom_delimiter` or `custom_delimiter_hex`.
        delimiter: DelimiterKind = "line_end",
        /// A custom delimiter as text (UTF-8).
        custom_delimiter: Option<String>,
        /// A custom delimiter as hexadecimal bytes (`0D0A`), as the product writes it.
        custom_delimiter_hex: Option<String>,
        /// `postfix`: every record ends with the delimiter; `infix`: the delimiter separates
        /// records, so a file ending with one has an empty last record.
        delimiter_type: DelimiterType = "postfix",
        /// The longest record (or whole file) read; a longer one fails the file.
        max_record_bytes: u64 = "104857600",
    }
}

properties! {
    /// FileInput's properties.
    pub struct FileInputProps {
        /// The input directory; a relative one is under the server's data folder.
        directory: String,
        /// Files processed: a name with `*` and `?` wildcards.
        file_name_pattern: String = "*",
        /// Files left alone even when they match `file_name_pattern`.
        file_exclusion_pattern: Option<String>,
        /// How long the node waits before it looks for files again when there were none.
        polling_interval_ms: u64 = "5000",
        /// How new files are noticed: `auto` (directory events where the directory can be
        /// watched, else polling), `inotify` (directory events; failing to watch is an error,
        /// and polling goes on) or `poll` (only `polling_interval_ms`, for network file
        /// systems). With events, a file is taken as soon as its writer closes it or it is
        /// moved in; polling stays as the fallback.
        watch: WatchMode = "auto",
        /// After a file is processed: `archive` moves it into `archive_directory`,
        /// `archive_with_timestamp` does so with the UTC time prefixed to its name
        /// (`yyyyMMdd_HHmmss_ffffff_`), `delete` removes it.
        action_on_success: SuccessAction = "archive",
        /// The archive folder; a relative one is under the input directory.
        archive_directory: String = "mqsiarchive",
        /// Replace a file of the same name in the archive folder. Off, the file stays in
        /// `mqsitransitin` and the archive is tried again each polling interval.
        replace_duplicate_archives: bool = "false",
        /// After a failure: `backout` moves the file into `mqsibackout` under the input
        /// directory, `backout_with_timestamp` does so with a time stamp prefix, `delete`
        /// removes it.
        action_on_failure: FailureAction = "backout",
        ..retry: RetryProps,
        ..records: RecordProps,
        ..remote: RemoteProps,
        ..parsing: BodyParsingProps,
        ..model: MessageModelProps,
    }
}

pub static FILE_INPUT: NodeSpec = NodeSpec {
    type_name: "FileInput",
    summary: "Processes each file that arrives in a directory, oldest first: one message per record (whole \
              file, fixed length or delimited), `LocalEnvironment.File` describing it, End of Data after the \
              last; then archives or deletes the file, or backs it out after a failure. Restarts resume \
              after the last committed record.",
    inputs: &[],
    outputs: FileInputOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Each line of each `*.csv` file in `files/in` is a message",
        properties: "directory: files/in, file_name_pattern: '*.csv', record_detection: delimited",
        esql: "",
        input: ExampleInput {
            domain: "BLOB",
            body: "",
            local_environment: &[],
        },
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[]),
        runs: Runs::No("only a file arriving in its directory starts it."),
    }],
    builder: NodeBuilder::of::<FileInputProps>(),
};

impl RecordProps {
    /// The record detection these properties describe; `parsing` (the node's domain) finds
    /// the records of a parsed record sequence.
    pub fn detection(&self, parsing: &BodyParsing) -> Result<Detection, ConfigError> {
        use crate::records::Delimiter;
        Ok(match self.record_detection {
            RecordDetection::WholeFile => Detection::WholeFile,
            RecordDetection::FixedLength => {
                let n = usize::try_from(self.record_length_bytes).unwrap_or(0);
                if n == 0 || self.record_length_bytes > self.max_record_bytes {
                    return Err(ConfigError::property(
                        "record_length_bytes",
                        "must be from 1 to max_record_bytes",
                    ));
                }
                Detection::FixedLength(n)
            }
            RecordDetection::Delimited => {
                let delimiter = match self.delimiter {
                    DelimiterKind::LineEnd => Delimiter::AnyLineEnd,
                    DelimiterKind::Dos => Delimiter::Bytes(Bytes::from_static(b"\r\n")),
                    DelimiterKind::Unix => Delimiter::Bytes(Bytes::from_static(b"\n")),
                    DelimiterKind::Custom => Delimiter::Bytes(self.custom_bytes()?.into()),
                };
                Detection::Delimited {
                    delimiter,
                    infix: self.delimiter_type == DelimiterType::Infix,
                }
            }
            RecordDetection::ParsedRecordSequence => {
                Detection::Parsed(parsing.record_scanner().ok_or_else(|| {
                    ConfigError::property(
                        "record_detection",
                        "`parsed_record_sequence` needs `domain` XMLNSC, JSON or DFDL",
                    )
                })?)
            }
        })
    }

    fn custom_bytes(&self) -> Result<Vec<u8>, ConfigError> {
        match (&self.custom_delimiter, &self.custom_delimiter_hex) {
            (Some(t), None) if !t.is_empty() => Ok(t.as_bytes().to_vec()),
            (None, Some(h)) => parse_hex(h).ok_or_else(|| {
                ConfigError::property(
                    "custom_delimiter_hex",
                    "must be an even number of hexadecimal digits, at least two",
                )
            }),
            _ => Err(ConfigError::property(
                "delimiter",
                "`delimiter: custom` needs one of `custom_delimiter` or `custom_delimiter_hex`",
            )),
        }
    }

    /// `max_record_bytes` as a size.
    pub fn limit(&self) -> usize {
        usize::try_from(self.max_record_bytes).unwrap_or(usize::MAX)
    }
}

/// Bytes from hexadecimal digits (`0D0A`).
pub fn parse_hex(h: &str) -> Option<Vec<u8>> {
    let h = h.trim();
    if h.is_empty() || !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

impl BuildNode for FileInputProps {
    /// Two FileInput nodes on one folder would take each other's files.
    fn claims(&self) -> Vec<String> {
        match self
            .remote
            .remote_server
            .as_deref()
            .filter(|s| !s.is_empty())
        {
            Some(server) => vec![format!("input folder {} on {server}", self.directory)],
            None => vec![format!("input folder {}", self.directory)],
        }
    }

    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        if self.directory.trim().is_empty() {
            return Err(ConfigError::property("directory", "must name a directory"));
        }
        let remote = self.remote.remote(b)?;
        let (dir, store): (PathBuf, Arc<dyn Store>) = match &remote {
            Some(r) => (
                PathBuf::from(&self.directory),
                crate::remote::store(r.clone())?,
            ),
            None => (
                absolute(&b.services.data_path(Path::new(&self.directory))),
                Arc::new(Local),
            ),
        };
        let archive = dir.join(&self.archive_directory);
        let parsing = BodyParsing::with_model(&self.parsing, &self.model, b.project_dir)?;
        // A remote directory cannot be watched from here: it is polled.
        let mode = if remote.is_some() {
            WatchMode::Poll
        } else {
            self.watch
        };
        let watch = DirWatch::new(mode, dir.clone());
        Ok(NodeImpl::Input(Arc::new(FileInput {
            store,
            remote,
            data_dir: b.services.data_dir.clone(),
            flow: b.flow.to_string(),
            label: b.label.to_string(),
            transit: dir.join(TRANSIT_IN),
            dir,
            archive,
            pattern: self.file_name_pattern,
            exclude: self.file_exclusion_pattern.filter(|p| !p.is_empty()),
            poll: Duration::from_millis(self.polling_interval_ms.max(1)),
            watch,
            on_success: self.action_on_success,
            replace_archive: self.replace_duplicate_archives,
            on_failure: self.action_on_failure,
            retry: RetryPolicy::from_props(&self.retry),
            detection: self.records.detection(&parsing)?,
            limit: self.records.limit(),
            parsing,
            claimed: Mutex::new(Vec::new()),
            unlistable: AtomicBool::new(false),
        })))
    }
}

struct FileInput {
    /// Set when a folder could not be listed: the next wait is the retry interval, not the
    /// polling interval, so that an unreachable server is not asked (and logged) every poll.
    unlistable: AtomicBool,
    store: Arc<dyn Store>,
    /// Set when the directory is on an SFTP server.
    remote: Option<Remote>,
    /// Where the checkpoints of remote files are kept.
    data_dir: Option<PathBuf>,
    flow: String,
    label: String,
    dir: PathBuf,
    transit: PathBuf,
    archive: PathBuf,
    pattern: String,
    exclude: Option<String>,
    poll: Duration,
    watch: DirWatch,
    on_success: SuccessAction,
    replace_archive: bool,
    on_failure: FailureAction,
    retry: RetryPolicy,
    detection: Detection,
    limit: usize,
    parsing: BodyParsing,
    /// Names of the files instances are processing (in the transit folder).
    claimed: Mutex<Vec<String>>,
}

/// A file an instance took: its name, in the transit folder.
struct Claim<'a> {
    node: &'a FileInput,
    name: String,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if let Ok(mut c) = self.node.claimed.lock() {
            c.retain(|n| *n != self.name);
        }
    }
}

/// How processing of a file ended.
enum Outcome {
    Done,
    Failed,
    /// The flow is stopping: the file stays in transit, to resume at the next start.
    Stopped,
    /// The remote server could not be reached or the transfer broke off: the file stays in
    /// transit, to resume from its checkpoint after the retry interval.
    Retry,
}

impl FileInput {
    fn claim(&self) -> Option<Claim<'_>> {
        let mut claimed = self.claimed.lock().ok()?;
        // Files left in transit by a server that stopped or died come first.
        for name in self.files(&self.transit)? {
            if !name.starts_with('.') && !claimed.contains(&name) {
                claimed.push(name.clone());
                return Some(Claim { node: self, name });
            }
        }
        for name in self.files(&self.dir)? {
            if !pattern::matches(&self.pattern, &name)
                || self
                    .exclude
                    .as_ref()
                    .is_some_and(|x| pattern::matches(x, &name))
                || claimed.contains(&name)
            {
                continue;
            }
            if let Err(error) = self.store.create_dir_all(&self.transit) {
                tracing::error!(%error, flow = %self.flow, dir = %self.transit.display(), "Cannot create the transit folder.");
                return None;
            }
            let to = self.transit.join(&name);
            // Whoever renames first owns the file; another server sees it gone.
            if self.store.rename(&self.dir.join(&name), &to).is_ok() {
                claimed.push(name.clone());
                return Some(Claim { node: self, name });
            }
        }
        None
    }

    /// The names of the files in `dir`, oldest first; None (after logging why) when the folder
    /// cannot be listed.
    fn files(&self, dir: &Path) -> Option<Vec<String>> {
        match self.store.files(dir) {
            Ok(files) => Some(files.into_iter().map(|e| e.name).collect()),
            Err(error) => {
                self.unlistable.store(true, Ordering::Relaxed);
                tracing::error!(%error, flow = %self.flow, node = %self.label, dir = %dir.display(), retry_ms = self.retry().as_millis(), "Cannot list the folder.");
                None
            }
        }
    }

    /// Where the checkpoint of the file at `path` (in the transit folder) is kept: beside it
    /// for a local file, in the data folder for a remote one.
    fn checkpoint(&self, path: &Path) -> PathBuf {
        match (&self.remote, &self.data_dir) {
            (Some(r), Some(data)) => crate::remote::checkpoint_path(data, r, path),
            (Some(r), None) => crate::remote::checkpoint_path(Path::new("."), r, path),
            (None, _) => crate::checkpoint::progress_path(path),
        }
    }

    /// How long to wait after the remote server failed.
    fn retry(&self) -> Duration {
        self.remote.as_ref().map_or(self.poll, |r| r.retry)
    }

    fn process(&self, runner: &mut dyn InstanceRunner, name: &str) {
        let path = self.transit.join(name);
        let outcome = match self.records(runner, &path, name) {
            Ok(o) => o,
            Err(error) if self.store.read_errors_are_transient() => {
                tracing::warn!(%error, flow = %self.flow, node = %self.label, file = %path.display(), "Cannot read the remote file; it stays in the transit folder and is resumed later.");
                Outcome::Retry
            }
            Err(error) => {
                tracing::error!(%error, flow = %self.flow, node = %self.label, file = %path.display(), "Cannot process the file.");
                Outcome::Failed
            }
        };
        let disposed = match outcome {
            Outcome::Stopped => return,
            Outcome::Retry => {
                runner.stop().sleep(self.retry());
                return;
            }
            Outcome::Done => self.dispose_done(&path, name),
            Outcome::Failed => self.dispose_failed(&path, name),
        };
        match disposed {
            Ok(()) => {
                let _ = std::fs::remove_file(self.checkpoint(&path));
            }
            Err(error) => {
                tracing::error!(%error, flow = %self.flow, node = %self.label, file = %path.display(), "Cannot move the processed file; it stays in the transit folder and is tried again.");
                runner.stop().sleep(self.retry());
            }
        }
    }

    fn records(
        &self,
        runner: &mut dyn InstanceRunner,
        path: &Path,
        name: &str,
    ) -> Result<Outcome, FileError> {
        let (mut progress, found) = Progress::open_at(&self.checkpoint(path))?;
        let start = found.unwrap_or_default();
        // A file whose End of Data committed waits only for its disposal: its outputs are as
        // committed, and may have grown since with other files' records.
        if start.done {
            return Ok(Outcome::Done);
        }
        start.restore_outputs();
        let opened = self.store.open(path, start.offset)?;
        let modified = epoch_micros(opened.modified);
        let file = opened.reader;
        let info = FileInfo::new(
            &self.dir.to_string_lossy(),
            name,
            modified,
            &stamp(SystemTime::now()),
        );
        let mut reader = RecordReader::new(
            file,
            self.detection.clone(),
            self.limit,
            start.offset,
            start.after_delimiter,
        );
        let mut number = start.record;
        let mut previous = start.delimiter.clone();
        loop {
            if runner.stop().is_stopped() {
                return Ok(Outcome::Stopped);
            }
            let rec = match reader.next_record() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(FileError::Read(e)) if self.store.read_errors_are_transient() => {
                    return Err(FileError::Read(e));
                }
                Err(e) => {
                    // The file cannot be read further: its failure, like a failed record's.
                    let mut msg = Message::new();
                    info.write(&mut msg, reader.offset(), number as i64 + 1, None)?;
                    let next = progress.committed().clone();
                    let handled = self.fail(runner, &mut progress, &mut msg, self.own(e), next);
                    return Ok(if handled {
                        Outcome::Done
                    } else {
                        Outcome::Failed
                    });
                }
            };
            number += 1;
            runner.record_input_bytes(rec.bytes.len() as u64);
            progress.next = Checkpoint {
                offset: reader.offset(),
                record: number,
                delimiter: rec.delimiter.clone(),
                after_delimiter: reader.after_delimiter(),
                done: false,
                outputs: Vec::new(),
            };
            let delimiter_before = std::mem::replace(&mut previous, rec.delimiter.clone());
            match self.record(runner, &mut progress, &info, rec, number, delimiter_before)? {
                Outcome::Done => {}
                other => return Ok(other),
            }
        }
        // End of Data, in a unit of work of its own that marks the file done.
        let finished = Checkpoint {
            done: true,
            ..progress.committed().clone()
        };
        progress.next = finished.clone();
        if !runner.is_wired(FileInputOutput::EndOfData.into()) {
            progress.save()?;
            return Ok(Outcome::Done);
        }
        let mut msg = Message::new();
        info.write(&mut msg, reader.offset(), number as i64, None)?;
        let mut inv = Invocation::new();
        inv.unit_of_work.join(Progress::KEY, progress);
        let r = runner.invoke(&mut inv, FileInputOutput::EndOfData.into(), &mut msg);
        let (ok, mut progress) = self.end(&mut inv, r.is_ok());
        if !ok {
            let e = self.own(NodeError::recoverable("the End of Data flow failed"));
            let handled = self.fail(runner, &mut progress, &mut msg, e, finished);
            return Ok(if handled {
                Outcome::Done
            } else {
                Outcome::Failed
            });
        }
        Ok(Outcome::Done)
    }

    /// Propagate one record, retried as the retry properties say: `Failed` when it failed and
    /// nothing handled it (the file fails), `Stopped` when the flow stopped during a retry
    /// wait (the record is rolled back, to be processed again at the next start).
    fn record(
        &self,
        runner: &mut dyn InstanceRunner,
        progress: &mut Progress,
        info: &FileInfo,
        rec: Record,
        number: u64,
        delimiter_before: Option<Bytes>,
    ) -> Result<Outcome, FileError> {
        let next = progress.next.clone();
        // Built again from the record for a retry rather than copied up front: most records
        // are propagated once.
        let with_file = || -> Result<Message, FileError> {
            let mut msg = Message::new();
            info.write(
                &mut msg,
                rec.offset,
                number as i64,
                delimiter_before.as_deref(),
            )?;
            Ok(msg)
        };
        let message = || -> Result<(Message, Result<(), NodeError>), FileError> {
            let mut msg = with_file()?;
            let parsed = self.parsing.attach(&mut msg.root, rec.bytes.clone());
            Ok((msg, parsed.map(|_| ()).map_err(NodeError::from)))
        };
        let (mut msg, parsed) = message()?;
        if let Err(e) = parsed {
            // A body that does not parse is this node's failure: the record as BLOB goes to
            // the failure terminal.
            msg = with_file()?;
            let _ = BodyParsing::blob().attach(&mut msg.root, rec.bytes.clone());
            return Ok(self.failed(runner, progress, &mut msg, self.own(e), next));
        }
        let mut failures = 0;
        loop {
            let mut inv = Invocation::new();
            inv.unit_of_work.join(
                Progress::KEY,
                std::mem::replace(progress, Progress::detached()),
            );
            let r = match runner.invoke(&mut inv, FileInputOutput::Out.into(), &mut msg) {
                Err(e) if runner.is_wired(FileInputOutput::Catch.into()) => e
                    .exception
                    .write_to(&mut msg.exception_list)
                    .map_err(NodeError::from)
                    .and_then(|_| runner.invoke(&mut inv, FileInputOutput::Catch.into(), &mut msg)),
                r => r,
            };
            let (ok, p) = self.end(&mut inv, r.is_ok());
            *progress = p;
            let e = match r {
                Ok(()) if ok => return Ok(Outcome::Done),
                Ok(()) => self.own(NodeError::recoverable(
                    "the record's unit of work did not commit",
                )),
                Err(e) => e,
            };
            failures += 1;
            let Some(wait) = self.retry.delay(failures) else {
                return Ok(self.failed(runner, progress, &mut msg, e, next));
            };
            tracing::warn!(error = %e, flow = %self.flow, node = %self.label, failures, "A record's flow failed; it is propagated again after the retry interval.");
            if runner.stop().sleep(wait) {
                return Ok(Outcome::Stopped);
            }
            progress.next = next.clone();
            let (again, parsed) = message()?;
            msg = again;
            if let Err(e) = parsed {
                return Ok(self.failed(runner, progress, &mut msg, self.own(e), next));
            }
        }
    }

    /// [`FileInput::fail`] as the outcome of a record.
    fn failed(
        &self,
        runner: &mut dyn InstanceRunner,
        progress: &mut Progress,
        msg: &mut Message,
        e: NodeError,
        next: Checkpoint,
    ) -> Outcome {
        if self.fail(runner, progress, msg, e, next) {
            Outcome::Done
        } else {
            Outcome::Failed
        }
    }

    /// End an invocation: commit its unit of work (the checkpoint last) after a success, roll
    /// it back otherwise. Returns whether it committed, and the progress taken back.
    fn end(&self, inv: &mut Invocation, succeeded: bool) -> (bool, Progress) {
        let progress = inv.unit_of_work.leave::<Progress>(Progress::KEY);
        let mut ok = succeeded;
        if ok && let Err(error) = inv.unit_of_work.commit() {
            tracing::error!(%error, flow = %self.flow, "Failed to commit the invocation's resources.");
            ok = false;
        }
        if !ok {
            inv.unit_of_work.rollback();
        }
        let Some(mut progress) = progress else {
            // Nothing in a flow takes the checkpoint out of the unit of work.
            tracing::error!(flow = %self.flow, "The input file's checkpoint left the unit of work; this is a bug, please report it.");
            return (false, Progress::detached());
        };
        if ok {
            if let Err(error) = sluice_node_api::Resource::commit(&mut progress) {
                tracing::error!(%error, flow = %self.flow, "Failed to write the input file's checkpoint.");
                ok = false;
            }
        } else {
            sluice_node_api::Resource::rollback(&mut progress);
        }
        (ok, progress)
    }

    /// This node's failure of a record: to the failure terminal with `e` in the ExceptionList;
    /// true when that handled it (the record counts as processed).
    fn fail(
        &self,
        runner: &mut dyn InstanceRunner,
        progress: &mut Progress,
        msg: &mut Message,
        e: NodeError,
        next: Checkpoint,
    ) -> bool {
        tracing::warn!(error = %e, flow = %self.flow, node = %self.label, "A record of the file failed.");
        if !runner.is_wired(FileInputOutput::Failure.into()) {
            return false;
        }
        if e.exception.write_to(&mut msg.exception_list).is_err() {
            return false;
        }
        progress.next = next;
        let mut inv = Invocation::new();
        inv.unit_of_work.join(
            Progress::KEY,
            std::mem::replace(progress, Progress::detached()),
        );
        let r = runner.invoke(&mut inv, FileInputOutput::Failure.into(), msg);
        let (ok, p) = self.end(&mut inv, r.is_ok());
        *progress = p;
        ok
    }

    /// An error of this node's own (not one from downstream), named after it.
    fn own(&self, e: impl Into<NodeError>) -> NodeError {
        let mut e = e.into();
        e.exception.label.clone_from(&self.label);
        e.exception.node_type = "FileInput".into();
        e
    }

    fn dispose_done(&self, path: &Path, name: &str) -> Result<(), FileError> {
        match self.on_success {
            SuccessAction::Delete => self.store.remove(path),
            SuccessAction::Archive => move_in(
                &*self.store,
                path,
                &self.archive.join(name),
                self.replace_archive,
            ),
            SuccessAction::ArchiveWithTimestamp => {
                let to = self
                    .archive
                    .join(format!("{}_{name}", stamp(SystemTime::now())));
                move_in(&*self.store, path, &to, self.replace_archive)
            }
        }
    }

    fn dispose_failed(&self, path: &Path, name: &str) -> Result<(), FileError> {
        let backout = self.dir.join(BACKOUT);
        match self.on_failure {
            FailureAction::Delete => self.store.remove(path),
            FailureAction::Backout => move_in(&*self.store, path, &backout.join(name), true),
            FailureAction::BackoutWithTimestamp => {
                let to = backout.join(format!("{}_{name}", stamp(SystemTime::now())));
                move_in(&*self.store, path, &to, true)
            }
        }
    }
}

/// What `LocalEnvironment.File` says of a file.
struct FileInfo {
    /// The directory, the name and the time processing started, one after the other: one
    /// buffer shared by every record's LocalEnvironment, so that a record copies none of them.
    texts: Bytes,
    dir_len: u32,
    name_len: u32,
    modified: i64,
}

impl FileInfo {
    fn new(dir: &str, name: &str, modified: i64, started: &str) -> FileInfo {
        let texts = Bytes::from([dir, name, started].concat());
        FileInfo {
            dir_len: u32::try_from(dir.len()).unwrap_or(0),
            name_len: u32::try_from(name.len()).unwrap_or(0),
            texts,
            modified,
        }
    }

    /// Write `LocalEnvironment.File` into `msg`, a new message.
    fn write(
        &self,
        msg: &mut Message,
        offset: u64,
        record: i64,
        delimiter: Option<&[u8]>,
    ) -> Result<(), FileError> {
        let le = &mut msg.local_environment;
        // File and its seven fields, in one allocation rather than the vector's doublings.
        le.reserve(8);
        let buf = le.add_buffer(self.texts.clone());
        let total = u32::try_from(self.texts.len()).unwrap_or(0);
        let (dir, name) = (self.dir_len, self.name_len);
        let delimiter = match delimiter {
            // The line ends, which nearly every delimited file has, need no copy.
            Some(b"\n") => Value::Character(Text::from_static("\n")),
            Some(b"\r\n") => Value::Character(Text::from_static("\r\n")),
            Some(d) => Value::Character(le.alloc_text(String::from_utf8_lossy(d).as_bytes())),
            None => Value::Null,
        };
        let root = le.root();
        let fields = [
            (
                "Directory",
                Value::Character(Text::src_or_empty(buf, 0, dir)),
            ),
            ("Name", Value::Character(Text::src_or_empty(buf, dir, name))),
            ("LastModified", Value::GmtTimestamp(self.modified)),
            (
                "TimeStamp",
                Value::Character(Text::src_or_empty(buf, dir + name, total - dir - name)),
            ),
            (
                "Offset",
                Value::Integer(i64::try_from(offset).unwrap_or(i64::MAX)),
            ),
            ("Record", Value::Integer(record)),
            ("Delimiter", delimiter),
        ];
        let wrote = le
            .create_last_child(
                root,
                field_type::NAME,
                Text::from_static("File"),
                Value::Null,
            )
            .and_then(|file| {
                fields.into_iter().try_for_each(|(n, v)| {
                    le.create_last_child(file, field_type::NAME_VALUE, Text::from_static(n), v)
                        .map(|_| ())
                })
            });
        wrote.map_err(|e| FileError::Read(std::io::Error::other(e)))
    }
}

impl InputNode for FileInput {
    fn start(&self) {
        self.watch.start(&self.flow);
    }

    fn run_instance(&self, runner: &mut dyn InstanceRunner) {
        while !runner.stop().is_stopped() {
            let seen = self.watch.seen();
            match self.claim() {
                Some(c) => {
                    let name = c.name.clone();
                    self.process(runner, &name);
                    drop(c);
                }
                None if self.unlistable.swap(false, Ordering::Relaxed) => {
                    runner.stop().sleep(self.retry());
                }
                None => self.watch.wait(seen, self.poll, runner.stop()),
            }
        }
    }

    fn stopped(&self) {
        self.watch.stop();
    }
}
