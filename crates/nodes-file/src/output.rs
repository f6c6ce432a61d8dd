//! FileOutput: appends each message, as a record, to a file in the `mqsitransit` folder under
//! its directory; a message on `finish_file` moves the file into the directory in one rename,
//! so readers of the directory never see half a file.
//!
//! The directory and name come from the properties, or from
//! `LocalEnvironment.Destination.File.Directory` and `.Name` when the message sets them. Under
//! a FileInput's unit of work the node reports each append to the input file's checkpoint, so
//! that a record rolled back, or processed again after a crash, is not in the file twice.

use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
    property_enum, terminals,
};
use sluice_nodes_core::domains::serialize_body;
use sluice_nodes_core::terminals::{FAILURE_DOC, OUT_DOC};

use crate::checkpoint::Progress;
use crate::input::{DelimiterKind, DelimiterType, parse_hex};
use crate::remote::RemoteProps;
use crate::store::{Local, Store, move_in};
use crate::{ARCHIVE, FieldValue, FileError, TRANSIT_OUT, le_text, stamp};

terminals! {
    /// FileOutput's inputs.
    pub enum FileOutputInput {
        In = "in": "A record to write to the file.",
        FinishFile = "finish_file": "Finish the file: move it from the transit folder into the directory.",
    }
}

terminals! {
    /// FileOutput's outputs.
    pub enum FileOutputOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": OUT_DOC,
        EndOfData = "end_of_data": "The message that arrived on `finish_file`, after the file was finished.",
    }
}

property_enum! {
    /// How FileOutput writes each message.
    pub enum RecordDefinition {
        WholeFile = "whole_file",
        Unchanged = "unchanged",
        FixedLength = "fixed_length",
        Delimited = "delimited",
    }
}

property_enum! {
    /// What FileOutput does when the finished file's name is taken.
    pub enum OutputFileAction {
        Replace = "replace",
        FailIfExists = "fail_if_exists",
        ArchiveAndReplace = "archive_and_replace",
        TimestampArchiveAndReplace = "timestamp_archive_and_replace",
        Append = "append",
    }
}

properties! {
    /// FileOutput's properties.
    pub struct FileOutputProps {
        /// The output directory; a relative one is under the server's data folder.
        /// `LocalEnvironment.Destination.File.Directory` overrides it.
        directory: Option<String>,
        /// The output file's name. `LocalEnvironment.Destination.File.Name` overrides it.
        file_name: Option<String>,
        /// When the finished file's name is taken: `replace` it; `fail_if_exists` (the
        /// message on `finish_file` fails, the file stays in transit); `archive_and_replace`
        /// (the old file moves to `mqsiarchive` under the directory first);
        /// `timestamp_archive_and_replace` (archived with a time stamp prefix); `append` (the
        /// records are added to the end of the existing file).
        output_file_action: OutputFileAction = "replace",
        /// Replace a file of the same name in `mqsiarchive` when archiving; off, the finish
        /// fails instead.
        replace_duplicate_archives: bool = "false",
        /// `whole_file`: each message is a whole file, finished at once; `unchanged`: its
        /// bytes are appended as they are; `fixed_length`: padded with `padding_byte_hex` to
        /// `record_length_bytes` (a longer one fails); `delimited`: with `delimiter`.
        record_definition: RecordDefinition = "whole_file",
        /// The length of a fixed-length record.
        record_length_bytes: u64 = "80",
        /// The byte that pads a short fixed-length record, in hexadecimal.
        padding_byte_hex: String = "20",
        /// `line_end` and `unix`: `\n`; `dos`: `\r\n`; `custom`: `custom_delimiter` or
        /// `custom_delimiter_hex`.
        delimiter: DelimiterKind = "line_end",
        /// A custom delimiter as text (UTF-8).
        custom_delimiter: Option<String>,
        /// A custom delimiter as hexadecimal bytes (`0D0A`).
        custom_delimiter_hex: Option<String>,
        /// `postfix`: after every record; `infix`: between records.
        delimiter_type: DelimiterType = "postfix",
        ..remote: RemoteProps,
    }
}

pub static FILE_OUTPUT: NodeSpec = NodeSpec {
    type_name: "FileOutput",
    summary: "Writes each message as a record of a file built in the `mqsitransit` folder and moved into the \
              directory when a message reaches `finish_file` (or at once, when each record is a whole \
              file); sets `LocalEnvironment.WrittenDestination.File`.",
    inputs: FileOutputInput::SPECS,
    outputs: FileOutputOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "Each message becomes a line of `files/out/orders.txt`",
        properties: "directory: files/out, file_name: orders.txt, record_definition: delimited",
        esql: "",
        input: ExampleInput::xml("<order><id>7</id></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "<order><id>7</id></order>")]),
        runs: Runs::No("it writes to the server's data folder, which examples do not have."),
    }],
    builder: NodeBuilder::of::<FileOutputProps>(),
};

/// How a record is framed in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Framing {
    WholeFile,
    Unchanged,
    Fixed { len: usize, pad: u8 },
    Delimited { delimiter: Vec<u8>, infix: bool },
}

impl BuildNode for FileOutputProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let framing = match self.record_definition {
            RecordDefinition::WholeFile => Framing::WholeFile,
            RecordDefinition::Unchanged => Framing::Unchanged,
            RecordDefinition::FixedLength => {
                let len = usize::try_from(self.record_length_bytes).unwrap_or(0);
                if len == 0 {
                    return Err(ConfigError::property(
                        "record_length_bytes",
                        "must be from 1",
                    ));
                }
                let pad = match parse_hex(&self.padding_byte_hex).as_deref() {
                    Some([b]) => *b,
                    _ => {
                        return Err(ConfigError::property(
                            "padding_byte_hex",
                            "must be one byte in hexadecimal, such as `20`",
                        ));
                    }
                };
                Framing::Fixed { len, pad }
            }
            RecordDefinition::Delimited => Framing::Delimited {
                delimiter: match self.delimiter {
                    DelimiterKind::LineEnd | DelimiterKind::Unix => b"\n".to_vec(),
                    DelimiterKind::Dos => b"\r\n".to_vec(),
                    DelimiterKind::Custom => {
                        match (&self.custom_delimiter, &self.custom_delimiter_hex) {
                            (Some(t), None) if !t.is_empty() => t.as_bytes().to_vec(),
                            (None, Some(h)) => parse_hex(h).ok_or_else(|| {
                                ConfigError::property(
                                    "custom_delimiter_hex",
                                    "must be an even number of hexadecimal digits, at least two",
                                )
                            })?,
                            _ => {
                                return Err(ConfigError::property(
                                    "delimiter",
                                    "`delimiter: custom` needs one of `custom_delimiter` or `custom_delimiter_hex`",
                                ));
                            }
                        }
                    }
                },
                infix: self.delimiter_type == DelimiterType::Infix,
            },
        };
        let remote = match self.remote.remote(b)? {
            Some(r) => Some(crate::remote::store(r)?),
            None => None,
        };
        let mut node = FileOutput {
            remote,
            directory: self.directory.filter(|d| !d.is_empty()),
            file_name: self.file_name.filter(|n| !n.is_empty()),
            data_dir: b.services.data_dir.clone(),
            action: self.output_file_action,
            replace_archive: self.replace_duplicate_archives,
            framing,
            open: Mutex::new(None),
            fixed: None,
            named: Mutex::new(None),
        };
        // Building makes no file system calls, and `absolute` makes none.
        if let (Some(dir), Some(name)) = (&node.directory, &node.file_name) {
            node.fixed = node.locate(dir, name.clone()).ok().map(Arc::new);
        }
        Ok(NodeImpl::Process(Arc::new(node)))
    }
}

struct FileOutput {
    /// Set when the directory is on an SFTP server.
    remote: Option<Arc<dyn Store>>,
    directory: Option<String>,
    file_name: Option<String>,
    data_dir: Option<PathBuf>,
    action: OutputFileAction,
    replace_archive: bool,
    framing: Framing,
    /// The transit file written last, kept open: most flows write one file at a time.
    open: Mutex<Option<Open>>,
    /// The target of the properties, made once: a message that does not name its own
    /// directory and file goes there without a path being built for it.
    fixed: Option<Arc<Target>>,
    /// The target a message named last, with the directory and name it was made from: a flow
    /// that names its file in LocalEnvironment names the same one for many records, and
    /// making a target builds three paths.
    named: Mutex<Option<Named>>,
}

/// A target made from a message's `Destination.File` directory and name.
struct Named {
    dir: Option<String>,
    name: String,
    target: Arc<Target>,
}

/// The transit file written last.
struct Open {
    path: PathBuf,
    file: std::fs::File,
    /// The framed record, kept for its allocation.
    record: Vec<u8>,
    /// Where the file ended after this handle's last append, and the [`OUTPUT_CHANGES`] count
    /// that append left: while no other change came between, that is still the end.
    end: Option<(u64, u64)>,
}

/// Counts every append to and every cut-back of an output file in this process, so that a
/// FileOutput whose own append was the last change knows where its file ends without asking the
/// file system (a seek per record).
pub(crate) static OUTPUT_CHANGES: AtomicU64 = AtomicU64::new(0);

/// Where a message goes: the directory and the file's name.
#[derive(Clone)]
struct Target {
    dir: PathBuf,
    name: String,
    /// The file in the directory's transit folder.
    transit: PathBuf,
}

impl Target {
    fn new(dir: PathBuf, name: String) -> Target {
        let transit = dir.join(TRANSIT_OUT).join(&name);
        Target { dir, name, transit }
    }

    fn transit(&self) -> PathBuf {
        self.transit.clone()
    }
}

impl FileOutput {
    fn target(&self, msg: &mut Message) -> Result<Arc<Target>, NodeError> {
        let le = &mut msg.local_environment;
        let dir = le_text(le, &["Destination", "File", "Directory"])?;
        let name = le_text(le, &["Destination", "File", "Name"])?;
        if let (None, None, Some(fixed)) = (&dir, &name, &self.fixed) {
            return Ok(Arc::clone(fixed));
        }
        let mut named = self
            .named
            .lock()
            .map_err(|_| NodeError::recoverable("the output target's lock is poisoned"))?;
        if let Some(n) = named.as_ref()
            && n.dir == dir
            && name.as_ref() == Some(&n.name)
        {
            return Ok(Arc::clone(&n.target));
        }
        let key = dir.clone();
        let dir = dir.or_else(|| self.directory.clone()).ok_or_else(|| {
            NodeError::recoverable(
                "no output directory: set `directory` or LocalEnvironment.Destination.File.Directory",
            )
        })?;
        let Some(name) = name else {
            let name = self.file_name.clone().ok_or_else(|| {
                NodeError::recoverable(
                    "no output file name: set `file_name` or LocalEnvironment.Destination.File.Name",
                )
            })?;
            return self.locate(&dir, name).map(Arc::new);
        };
        let target = Arc::new(self.locate(&dir, name.clone())?);
        *named = Some(Named {
            dir: key,
            name,
            target: Arc::clone(&target),
        });
        Ok(target)
    }

    /// The target for directory `dir` and file `name`.
    fn locate(&self, dir: &str, name: String) -> Result<Target, NodeError> {
        // A name is a name, not a path out of the directory.
        if name.contains('/') || name == "." || name == ".." {
            return Err(NodeError::recoverable(format!(
                "the output file name `{name}` is not a plain file name"
            )));
        }
        let dir = Path::new(dir);
        if self.remote.is_some() {
            // A relative remote directory is the server's business (under the login folder).
            return Ok(Target::new(dir.to_path_buf(), name));
        }
        let dir = match &self.data_dir {
            Some(d) if dir.is_relative() => d.join(dir),
            _ => dir.to_path_buf(),
        };
        Ok(Target::new(crate::absolute(&dir), name))
    }

    /// The record as it goes into the file, given whether the file has data already.
    fn frame(&self, body: &[u8], file_has_data: bool) -> Result<Vec<u8>, NodeError> {
        let mut v = Vec::new();
        self.frame_into(&mut v, body, file_has_data)?;
        Ok(v)
    }

    /// [`FileOutput::frame`] into `v` (cleared first).
    fn frame_into(
        &self,
        v: &mut Vec<u8>,
        body: &[u8],
        file_has_data: bool,
    ) -> Result<(), NodeError> {
        v.clear();
        match &self.framing {
            Framing::WholeFile | Framing::Unchanged => v.extend_from_slice(body),
            Framing::Fixed { len, pad } => {
                if body.len() > *len {
                    return Err(NodeError::recoverable(format!(
                        "the record is {} bytes, longer than the fixed length of {len}",
                        body.len()
                    )));
                }
                v.extend_from_slice(body);
                v.resize(*len, *pad);
            }
            Framing::Delimited { delimiter, infix } => {
                if *infix && file_has_data {
                    v.extend_from_slice(delimiter);
                }
                v.extend_from_slice(body);
                if !infix {
                    v.extend_from_slice(delimiter);
                }
            }
        }
        Ok(())
    }

    /// Whether framing a record depends on whether the file has data (an infix delimiter
    /// goes only between records).
    fn framing_needs_length(&self) -> bool {
        matches!(self.framing, Framing::Delimited { infix: true, .. })
    }

    /// Append `record` to the transit file; returns its length before and after, and whether
    /// the file was created.
    fn append(&self, path: &Path, body: &[u8]) -> Result<(u64, u64, bool), NodeError> {
        let mut open = self
            .open
            .lock()
            .map_err(|_| NodeError::recoverable("the output file's lock is poisoned"))?;
        if open
            .as_ref()
            .is_none_or(|o| o.path.as_os_str() != path.as_os_str())
        {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(FileError::io("create", dir))?;
            }
            // Appending whatever the file holds: records survive a restart in transit, and a
            // checkpoint's cut-back does not move this handle's position.
            let f = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
                .map_err(FileError::io("open", path))?;
            *open = Some(Open {
                path: path.to_path_buf(),
                file: f,
                record: Vec::new(),
                end: None,
            });
        }
        let Some(Open {
            file, record, end, ..
        }) = open.as_mut()
        else {
            return Err(NodeError::recoverable(
                "the output file is not open (this is a bug, please report it)",
            ));
        };
        // The file's length is known from this handle's last append when nothing changed an
        // output file since. Otherwise it is asked of the file (a checkpoint's cut-back or
        // another node may have changed it): before the write when framing needs it, else
        // after it, where an appending handle's position is the file's end (a seek, cheaper
        // than a stat).
        let change = OUTPUT_CHANGES.fetch_add(1, Ordering::Relaxed);
        let cached = end.filter(|(_, c)| *c == change).map(|(len, _)| len);
        let known = match cached {
            None if self.framing_needs_length() => {
                Some(file.metadata().map_err(FileError::io("read", path))?.len())
            }
            known => known,
        };
        self.frame_into(record, body, known.is_some_and(|l| l > 0))?;
        *end = None;
        file.write_all(record)
            .map_err(FileError::io("write", path))?;
        let (before, after) = match known {
            Some(before) => (before, before + record.len() as u64),
            None => {
                let after = file
                    .stream_position()
                    .map_err(FileError::io("read", path))?;
                (after.saturating_sub(record.len() as u64), after)
            }
        };
        *end = Some((after, change + 1));
        Ok((before, after, before == 0))
    }

    /// Move the transit file into place per the output file action. False when there was no
    /// file in transit.
    fn finish(&self, t: &Target) -> Result<bool, NodeError> {
        let transit = t.transit();
        if let Ok(mut open) = self.open.lock()
            && open.as_ref().is_some_and(|o| o.path == transit)
        {
            *open = None;
        }
        let store = self.store();
        if !store.exists(&transit)? {
            return Ok(false);
        }
        let to = t.dir.join(&t.name);
        if store.exists(&to)? {
            let archive = t.dir.join(ARCHIVE);
            match self.action {
                OutputFileAction::Replace => {}
                OutputFileAction::FailIfExists => {
                    return Err(FileError::Exists { path: to }.into());
                }
                OutputFileAction::ArchiveAndReplace => {
                    move_in(store, &to, &archive.join(&t.name), self.replace_archive)?;
                }
                OutputFileAction::TimestampArchiveAndReplace => {
                    let stamped = format!("{}_{}", stamp(SystemTime::now()), t.name);
                    move_in(store, &to, &archive.join(stamped), self.replace_archive)?;
                }
                OutputFileAction::Append => {
                    store.append_file(&transit, &to)?;
                    return Ok(true);
                }
            }
        }
        move_in(store, &transit, &to, true)?;
        Ok(true)
    }

    /// Where the files are.
    fn store(&self) -> &dyn Store {
        match &self.remote {
            Some(s) => &**s,
            None => &Local,
        }
    }

    /// Write one message to a remote file (see [`Node::evaluate`] for the local one). Remote
    /// appends are not in a FileInput's checkpoint: a record processed again after a crash
    /// can be in a remote file twice.
    fn write_remote(
        &self,
        store: &dyn Store,
        t: &Target,
        body: &[u8],
    ) -> Result<&'static str, NodeError> {
        let transit = t.transit();
        if self.framing == Framing::WholeFile {
            if let Some(dir) = transit.parent() {
                store.create_dir_all(dir)?;
            }
            let replaced = store.exists(&t.dir.join(&t.name))?;
            store.write(&transit, body)?;
            self.finish(t)?;
            return Ok(if replaced { "Replace" } else { "Create" });
        }
        let len = store.len(&transit)?;
        if len.is_none()
            && let Some(dir) = transit.parent()
        {
            store.create_dir_all(dir)?;
        }
        let record = self.frame(body, len.is_some_and(|l| l > 0))?;
        let (before, _) = store.append(&transit, &record)?;
        Ok(if before == 0 { "Create" } else { "Append" })
    }

    fn written(&self, msg: &Message, t: &Target, action: &str) -> Result<Message, NodeError> {
        let mut out = msg.clone();
        crate::write_file_folder(
            &mut out.local_environment,
            Some("WrittenDestination"),
            &[
                (
                    "Directory",
                    FieldValue::Text(t.dir.to_string_lossy().into_owned()),
                ),
                ("Name", FieldValue::Text(t.name.clone())),
                ("Action", FieldValue::Text(action.to_string())),
                ("Timestamp", FieldValue::Text(stamp(SystemTime::now()))),
            ],
        )?;
        Ok(out)
    }
}

impl Node for FileOutput {
    fn evaluate(
        &self,
        ctx: &mut Ctx<'_>,
        input: Terminal,
        msg: &mut Message,
    ) -> Result<(), NodeError> {
        let t = self.target(msg)?;
        if FileOutputInput::from_terminal(input) == Some(FileOutputInput::FinishFile) {
            let finished = self.finish(&t)?;
            if finished && let Some(p) = ctx.inv.unit_of_work.get_mut::<Progress>(Progress::KEY) {
                p.finished(&t.transit());
            }
            if !ctx.is_wired(FileOutputOutput::EndOfData) {
                return Ok(());
            }
            let mut out = self.written(msg, &t, if finished { "Finish" } else { "None" })?;
            return ctx.propagate(FileOutputOutput::EndOfData, &mut out);
        }
        let (body, _) = serialize_body(msg)?;
        let transit = &t.transit;
        let action = if let Some(store) = &self.remote {
            self.write_remote(&**store, &t, &body)?
        } else if self.framing == Framing::WholeFile {
            // Each message is a whole file: written fresh in transit, then finished.
            if let Some(dir) = transit.parent() {
                std::fs::create_dir_all(dir).map_err(FileError::io("create", dir))?;
            }
            let replaced = t.dir.join(&t.name).exists();
            std::fs::write(transit, &body).map_err(FileError::io("write", transit))?;
            self.finish(&t)?;
            if replaced { "Replace" } else { "Create" }
        } else {
            // Under a FileInput, the file's length before its first write is in the
            // checkpoint before the write.
            if let Some(p) = ctx.inv.unit_of_work.get_mut::<Progress>(Progress::KEY)
                && !p.tracks(transit)
            {
                let len = std::fs::metadata(transit).map(|m| m.len()).unwrap_or(0);
                p.track(transit, len)?;
            }
            let (before, after, created) = self.append(transit, &body)?;
            if let Some(p) = ctx.inv.unit_of_work.get_mut::<Progress>(Progress::KEY) {
                p.wrote(transit, before, after);
            }
            if created { "Create" } else { "Append" }
        };
        // The message with WrittenDestination is a copy: not made when nothing would see it.
        if !ctx.is_wired(FileOutputOutput::Out) {
            return Ok(());
        }
        let mut out = self.written(msg, &t, action)?;
        ctx.propagate(FileOutputOutput::Out, &mut out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> FileOutput {
        FileOutput {
            remote: None,
            directory: None,
            file_name: None,
            data_dir: None,
            action: OutputFileAction::Replace,
            replace_archive: false,
            framing: Framing::Delimited {
                delimiter: b"\n".to_vec(),
                infix: false,
            },
            open: Mutex::new(None),
            fixed: None,
            named: Mutex::new(None),
        }
    }

    #[test]
    fn append_reports_the_files_end_when_a_cut_back_or_another_writer_changed_it() {
        let dir = std::env::temp_dir().join(format!("sluice-out-end-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.txt");
        let (a, other) = (node(), node());
        assert_eq!(a.append(&path, b"one").unwrap(), (0, 4, true));
        assert_eq!(a.append(&path, b"two").unwrap(), (4, 8, false));
        // A rolled-back record's write is cut back, as a checkpoint does.
        crate::checkpoint::Checkpoint {
            outputs: vec![(path.clone(), 4)],
            ..Default::default()
        }
        .restore_outputs();
        assert_eq!(a.append(&path, b"three").unwrap(), (4, 10, false));
        assert_eq!(other.append(&path, b"4").unwrap(), (10, 12, false));
        assert_eq!(a.append(&path, b"five").unwrap(), (12, 17, false));
        assert_eq!(std::fs::read(&path).unwrap(), b"one\nthree\n4\nfive\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
