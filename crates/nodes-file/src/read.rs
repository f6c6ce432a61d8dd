//! FileRead: reads one record of a file in the middle of a flow — the whole file, or the first
//! record that matches a pattern — and propagates the message with it as the body; a file or
//! record not found goes to `no_match`. Afterwards the file can be deleted or archived.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use sluice_node_api::{
    BuildContext, BuildNode, ConfigError, Ctx, ExampleInput, ExampleOutcome, Message, Node,
    NodeBuilder, NodeError, NodeExample, NodeImpl, NodeSpec, Runs, Terminal, Terminals, properties,
    property_enum, terminals,
};
use sluice_nodes_core::domains::{BodyParsing, BodyParsingProps, MessageModelProps};
use sluice_nodes_core::terminals::{FAILURE_DOC, In};

use crate::input::RecordProps;
use crate::records::{Detection, RecordReader};
use crate::{ARCHIVE, FieldValue, FileError, epoch_micros, le_text, move_file, pattern, stamp};

terminals! {
    /// FileRead's outputs.
    pub enum FileReadOutput {
        Failure = "failure": FAILURE_DOC,
        Out = "out": "The message with the record as its body and `LocalEnvironment.File` describing it.",
        NoMatch = "no_match": "The input message, unchanged: no file, or no record matched.",
    }
}

property_enum! {
    /// What FileRead does with the file after it read a record.
    pub enum ReadAction {
        None = "none",
        Delete = "delete",
        Archive = "archive",
        ArchiveWithTimestamp = "archive_with_timestamp",
    }
}

properties! {
    /// FileRead's properties.
    pub struct FileReadProps {
        /// The directory; a relative one is under the server's data folder.
        /// `LocalEnvironment.Destination.File.Directory` overrides it.
        directory: Option<String>,
        /// The file's name, or a pattern with `*` and `?` (the oldest matching file is read).
        /// `LocalEnvironment.Destination.File.Name` overrides it.
        file_name: Option<String>,
        /// The record propagated is the first whose text matches this pattern (`*` and `?`
        /// wildcards); empty, the first record.
        record_pattern: String = "",
        /// After a record was propagated: `none`, `delete` the file, or move it to
        /// `mqsiarchive` under the directory (`archive`, `archive_with_timestamp`).
        action_after_read: ReadAction = "none",
        /// Replace a file of the same name in `mqsiarchive`; off, archiving fails.
        replace_duplicate_archives: bool = "false",
        ..records: RecordProps,
        ..parsing: BodyParsingProps,
        ..model: MessageModelProps,
    }
}

pub static FILE_READ: NodeSpec = NodeSpec {
    type_name: "FileRead",
    summary: "Reads a file in the middle of a flow — the whole file, or its first record matching a pattern — \
              and propagates the message with that record as its body; `no_match` when there is none. \
              Optionally deletes or archives the file afterwards.",
    inputs: In::SPECS,
    outputs: FileReadOutput::SPECS,
    dynamic_outputs: false,
    dynamic_inputs: false,
    examples: &[NodeExample {
        title: "The line of `files/prices.txt` that starts with `apple` replaces the body",
        properties: "directory: files, file_name: prices.txt, record_detection: delimited, record_pattern: 'apple*'",
        esql: "",
        input: ExampleInput::xml("<order><id>7</id></order>"),
        raising_downstream: &[],
        outcome: ExampleOutcome::Propagates(&[("out", "apple 1.20")]),
        runs: Runs::No("it reads the server's data folder, which examples do not have."),
    }],
    builder: NodeBuilder::of::<FileReadProps>(),
};

impl BuildNode for FileReadProps {
    fn build(self, b: &BuildContext) -> Result<NodeImpl, ConfigError> {
        let parsing = BodyParsing::with_model(&self.parsing, &self.model, b.project_dir)?;
        Ok(NodeImpl::Process(Arc::new(FileRead {
            directory: self.directory.filter(|d| !d.is_empty()),
            file_name: self.file_name.filter(|n| !n.is_empty()),
            data_dir: b.services.data_dir.clone(),
            record_pattern: self.record_pattern,
            action: self.action_after_read,
            replace_archive: self.replace_duplicate_archives,
            detection: self.records.detection(&parsing)?,
            limit: self.records.limit(),
            parsing,
        })))
    }
}

struct FileRead {
    directory: Option<String>,
    file_name: Option<String>,
    data_dir: Option<PathBuf>,
    record_pattern: String,
    action: ReadAction,
    replace_archive: bool,
    detection: Detection,
    limit: usize,
    parsing: BodyParsing,
}

impl FileRead {
    /// The directory and the file's name (or pattern) the message asks for.
    fn target(&self, msg: &mut Message) -> Result<(PathBuf, String), NodeError> {
        let le = &mut msg.local_environment;
        let dir = le_text(le, &["Destination", "File", "Directory"])?
            .or_else(|| self.directory.clone())
            .ok_or_else(|| {
                NodeError::recoverable(
                    "no directory: set `directory` or LocalEnvironment.Destination.File.Directory",
                )
            })?;
        let name = le_text(le, &["Destination", "File", "Name"])?
            .or_else(|| self.file_name.clone())
            .ok_or_else(|| {
                NodeError::recoverable(
                    "no file name: set `file_name` or LocalEnvironment.Destination.File.Name",
                )
            })?;
        let dir = Path::new(&dir);
        let dir = match &self.data_dir {
            Some(d) if dir.is_relative() => d.join(dir),
            _ => dir.to_path_buf(),
        };
        Ok((crate::absolute(&dir), name))
    }

    /// The file to read: the name itself, or the oldest file matching it as a pattern.
    fn find(dir: &Path, name: &str) -> Option<String> {
        if name.contains('/') {
            return None;
        }
        if !name.contains(['*', '?']) {
            return dir.join(name).is_file().then(|| name.to_string());
        }
        let mut found: Vec<(SystemTime, String)> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| {
                let n = e.file_name().into_string().ok()?;
                let t = e.metadata().and_then(|m| m.modified()).ok()?;
                pattern::matches(name, &n).then_some((t, n))
            })
            .collect();
        found.sort();
        found.into_iter().next().map(|(_, n)| n)
    }

    fn after_read(&self, dir: &Path, name: &str) -> Result<(), FileError> {
        let path = dir.join(name);
        match self.action {
            ReadAction::None => Ok(()),
            ReadAction::Delete => {
                std::fs::remove_file(&path).map_err(FileError::io("delete", &path))
            }
            ReadAction::Archive => {
                move_file(&path, &dir.join(ARCHIVE).join(name), self.replace_archive)
            }
            ReadAction::ArchiveWithTimestamp => {
                let to = dir
                    .join(ARCHIVE)
                    .join(format!("{}_{name}", stamp(SystemTime::now())));
                move_file(&path, &to, self.replace_archive)
            }
        }
    }
}

impl Node for FileRead {
    fn evaluate(&self, ctx: &mut Ctx<'_>, _: Terminal, msg: &mut Message) -> Result<(), NodeError> {
        let (dir, wanted) = self.target(msg)?;
        let Some(name) = Self::find(&dir, &wanted) else {
            return ctx.propagate(FileReadOutput::NoMatch, msg);
        };
        let path = dir.join(&name);
        let file = std::fs::File::open(&path).map_err(FileError::io("open", &path))?;
        let modified = file
            .metadata()
            .and_then(|m| m.modified())
            .map(epoch_micros)
            .unwrap_or(0);
        let mut reader = RecordReader::new(file, self.detection.clone(), self.limit, 0, false);
        let mut number = 0i64;
        let mut previous: Option<bytes::Bytes> = None;
        let found = loop {
            let Some(rec) = reader.next_record()? else {
                break None;
            };
            number += 1;
            let matched = self.record_pattern.is_empty()
                || pattern::matches(&self.record_pattern, &String::from_utf8_lossy(&rec.bytes));
            if matched {
                break Some((rec, previous));
            }
            previous = rec.delimiter.clone();
        };
        let Some((rec, delimiter)) = found else {
            return ctx.propagate(FileReadOutput::NoMatch, msg);
        };
        // The input's headers stay; its body is replaced by the record.
        let mut out = msg.clone();
        if let Some(body) = out.body()? {
            out.root.delete(body)?;
        }
        self.parsing.attach(&mut out.root, rec.bytes)?;
        crate::write_file_folder(
            &mut out.local_environment,
            None,
            &[
                (
                    "Directory",
                    FieldValue::Text(dir.to_string_lossy().into_owned()),
                ),
                ("Name", FieldValue::Text(name.clone())),
                ("LastModified", FieldValue::GmtTimestamp(modified)),
                (
                    "Offset",
                    FieldValue::Int(i64::try_from(rec.offset).unwrap_or(i64::MAX)),
                ),
                ("Record", FieldValue::Int(number)),
                (
                    "Delimiter",
                    match delimiter {
                        Some(d) => FieldValue::Text(String::from_utf8_lossy(&d).into_owned()),
                        None => FieldValue::Null,
                    },
                ),
            ],
        )?;
        drop(reader);
        self.after_read(&dir, &name)?;
        ctx.propagate(FileReadOutput::Out, &mut out)
    }
}
