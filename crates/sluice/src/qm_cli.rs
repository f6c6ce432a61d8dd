//! `sluice qm`: define and inspect queues and move messages, over the client protocol of a
//! running server.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use sluice_qm::net::{Client, Credentials};
use sluice_qm::{
    BrowseCursor, GetOptions, Message, Persistence, PropertyValue, PutOptions, QmError, QueueDef,
    id_from_hex, id_from_str, id_to_hex, to_hex, validate_name,
};

#[derive(Args)]
pub struct QmArgs {
    /// The server's queue manager: HOST:PORT, or the path of its local socket
    /// (DATA_DIR/qm.sock, for applications on the server's host).
    #[arg(long, global = true, default_value = "127.0.0.1:7802")]
    server: String,
    /// User name (with --password), when the server requires credentials.
    #[arg(long, global = true, default_value = "")]
    user: String,
    /// The password of --user.
    #[arg(long, global = true, default_value = "")]
    password: String,
    /// Bearer token, instead of user and password.
    #[arg(long, global = true, default_value = "")]
    token: String,
    /// JSON output instead of tables.
    #[arg(long, global = true)]
    json: bool,
    /// Connect with TLS, trusting the CA certificates in this PEM file (for a server whose
    /// sluice.yaml sets `queue_manager.tls`).
    #[arg(long, global = true)]
    tls_ca: Option<PathBuf>,
    /// The name the server's certificate must carry (default: the host of --server).
    #[arg(long, global = true)]
    tls_server_name: Option<String>,
    #[command(subcommand)]
    command: QmCommand,
}

#[derive(Args, Clone)]
struct QueueAttrs {
    /// Most messages the queue holds.
    #[arg(long)]
    max_depth: Option<usize>,
    /// Longest message in bytes.
    #[arg(long)]
    max_msg_length: Option<usize>,
    /// Backouts after which MQInput moves a message to the backout queue.
    #[arg(long)]
    backout_threshold: Option<u32>,
    /// The backout requeue queue.
    #[arg(long)]
    backout_queue: Option<String>,
    /// Messages put with "as queue default" persistence are persistent.
    #[arg(long)]
    persistent_default: Option<bool>,
    #[arg(long)]
    put_inhibited: Option<bool>,
    #[arg(long)]
    get_inhibited: Option<bool>,
    /// Make a persistent message's raised BackoutCount durable when it is got (HARDENBO).
    #[arg(long)]
    harden_get_backout: Option<bool>,
}

impl QueueAttrs {
    fn apply(&self, d: &mut QueueDef) {
        if let Some(v) = self.max_depth {
            d.max_depth = v;
        }
        if let Some(v) = self.max_msg_length {
            d.max_msg_length = v;
        }
        if let Some(v) = self.backout_threshold {
            d.backout_threshold = v;
        }
        if let Some(v) = &self.backout_queue {
            d.backout_requeue_queue = v.clone();
        }
        if let Some(v) = self.persistent_default {
            d.default_persistence = if v {
                Persistence::Persistent
            } else {
                Persistence::NotPersistent
            };
        }
        if let Some(v) = self.put_inhibited {
            d.put_inhibited = v;
        }
        if let Some(v) = self.get_inhibited {
            d.get_inhibited = v;
        }
        if let Some(v) = self.harden_get_backout {
            d.harden_get_backout = v;
        }
    }
}

/// The kinds of queue `define` makes.
#[derive(Clone, Copy, clap::ValueEnum)]
enum DefineType {
    Local,
    Alias,
    Model,
}

#[derive(Subcommand)]
enum QmCommand {
    /// Define a queue: local (default), alias or model.
    Define {
        queue: String,
        /// local, alias (of --target) or model (for temporary dynamic queues).
        #[arg(long = "type", value_enum, default_value = "local")]
        kind: DefineType,
        /// The queue an alias stands for.
        #[arg(long)]
        target: Option<String>,
        #[command(flatten)]
        attrs: QueueAttrs,
    },
    /// Change a queue's attributes.
    Alter {
        queue: String,
        /// The queue an alias stands for from now on.
        #[arg(long)]
        target: Option<String>,
        #[command(flatten)]
        attrs: QueueAttrs,
    },
    /// Delete a queue (with --purge even when it holds messages).
    Delete {
        queue: String,
        #[arg(long)]
        purge: bool,
    },
    /// A queue's attributes and depth.
    Show {
        /// The queue's name.
        queue: String,
    },
    /// Every queue.
    List,
    /// Put messages: the body from a file (or standard input with `-` or no --file).
    Put {
        /// The queue to put to.
        queue: String,
        /// The file holding the message body; standard input when absent or `-`.
        #[arg(long)]
        file: Option<PathBuf>,
        /// Put persistent messages (they survive a restart of the server); the default is
        /// non-persistent.
        #[arg(long)]
        persistent: bool,
        /// How many copies to put.
        #[arg(long, default_value_t = 1)]
        count: u64,
        /// CorrelId: hex digits (0A0B…, zero padded to 24 bytes) or
        /// text:VALUE.
        #[arg(long)]
        correl_id: Option<String>,
        /// The queue a reply should go to (MQMD ReplyToQ).
        #[arg(long)]
        reply_to_q: Option<String>,
        /// The message priority, 0 (lowest) to 9.
        #[arg(long)]
        priority: Option<u8>,
        /// Expiry in tenths of a second (-1: unlimited).
        #[arg(long, allow_negative_numbers = true)]
        expiry: Option<i32>,
        /// The MQMD Format, for example MQSTR for text (at most 8 characters).
        #[arg(long)]
        format: Option<String>,
    },
    /// Take messages off a queue: bodies to standard output, or one file each in --out. Each
    /// message is taken under syncpoint and committed once written, so a failed write leaves
    /// it on the queue. Exits with 3 when there was no message (MQRC 2033).
    Get {
        /// The queue to take messages from.
        queue: String,
        /// Wait up to this many seconds for a message.
        #[arg(long, default_value_t = 0.0)]
        wait: f64,
        /// Every message, not just one.
        #[arg(long)]
        all: bool,
        /// Write each body to DIR/<msgid>.msg (<msgid>-2.msg... when MsgIds repeat).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Only a message with this CorrelId: hex digits (0A0B…, zero padded to 24 bytes) or
        /// text:VALUE.
        #[arg(long)]
        correl_id: Option<String>,
        /// Only a message with this MsgId: hex digits (0A0B…, zero padded to 24 bytes) or
        /// text:VALUE.
        #[arg(long)]
        msg_id: Option<String>,
    },
    /// Show the messages on a queue without removing them.
    Browse {
        /// The queue's name.
        queue: String,
    },
    /// Print the number of messages on a queue.
    Depth {
        /// The queue's name.
        queue: String,
    },
    /// Remove every message from a queue.
    Clear {
        /// The queue's name.
        queue: String,
    },
}

/// A MsgId or CorrelId option: hex digits (2 to 48, an even number; zero padded as MQ pads
/// ids), or `text:` and 1 to 24 bytes of text (zero padded). A value that is neither is refused
/// rather than guessed at.
fn id_arg(option: &str, s: &str) -> Result<[u8; 24]> {
    let usage = || {
        format!(
            "{option} takes hex digits (an even number, at most 48: 0A0B) or text:VALUE (at most \
             24 bytes: text:ORDER-7), not {s:?}"
        )
    };
    if let Some(text) = s.strip_prefix("text:") {
        if text.is_empty() || text.len() > 24 {
            bail!(usage());
        }
        return Ok(id_from_str(text));
    }
    let digits = s.strip_prefix("ID:").unwrap_or(s);
    if digits.is_empty() || digits.len() > 48 || !digits.len().is_multiple_of(2) {
        bail!(usage());
    }
    // Trailing zero digits are the zero bytes MQ pads an id with.
    id_from_hex(&format!("{digits:0<48}")).with_context(usage)
}

/// A queue's definition in JSON with the names and values sluice.yaml uses for it, so that
/// what `show --json` prints can be written back into a project's `queues:`.
fn queue_json(d: &QueueDef) -> serde_json::Value {
    let mut v = serde_json::json!({
        "name": d.name,
        "type": match d.kind {
            sluice_qm::QueueKind::Local => "local",
            sluice_qm::QueueKind::Alias { .. } => "alias",
            sluice_qm::QueueKind::Model => "model",
        },
        "max_depth": d.max_depth,
        "max_msg_length": d.max_msg_length,
        "default_persistence": match d.default_persistence {
            sluice_qm::Persistence::Persistent => "persistent",
            _ => "not_persistent",
        },
        "backout_threshold": d.backout_threshold,
        "backout_queue": d.backout_requeue_queue,
        "put_inhibited": d.put_inhibited,
        "get_inhibited": d.get_inhibited,
        "harden_get_backout": d.harden_get_backout,
    });
    if let sluice_qm::QueueKind::Alias { target } = &d.kind {
        v["target"] = target.as_str().into();
    }
    if d.temporary_dynamic {
        v["temporary_dynamic"] = true.into();
    }
    v
}

fn table_row(d: &QueueDef, depth: usize) -> String {
    let inhibited = match (d.put_inhibited, d.get_inhibited) {
        (true, true) => "put,get",
        (true, false) => "put",
        (false, true) => "get",
        (false, false) => "-",
    };
    let persistent = match d.default_persistence {
        Persistence::Persistent => "yes",
        _ => "no",
    };
    let target = match &d.kind {
        sluice_qm::QueueKind::Alias { target } => target.as_str(),
        _ => "",
    };
    format!(
        "{:<32} {:<6} {:>8} {:>10} {:>11} {:<7} {:<8} {:>8} {:<20} {}",
        d.name,
        d.kind.name(),
        depth,
        d.max_depth,
        d.max_msg_length,
        persistent,
        inhibited,
        d.backout_threshold,
        d.backout_requeue_queue,
        target
    )
    .trim_end()
    .to_string()
}

const TABLE_HEAD: &str = "QUEUE                            TYPE      DEPTH  MAX DEPTH  MAX LENGTH PERSIST INHIBIT  BOTHRESH BOQUEUE              TARGET";

/// A message as JSON: its descriptor's main fields, its properties, and the body as text
/// (`body`) when it is UTF-8, else as hex digits (`body_hex`).
fn message_json(m: &Message) -> serde_json::Value {
    let properties: serde_json::Map<String, serde_json::Value> = m
        .properties
        .iter()
        .map(|(name, v)| {
            let v = match v {
                PropertyValue::Bool(b) => (*b).into(),
                PropertyValue::Int(i) => (*i).into(),
                PropertyValue::Float(f) => (*f).into(),
                PropertyValue::String(s) => s.clone().into(),
                PropertyValue::Bytes(b) => to_hex(b).into(),
            };
            (name.clone(), v)
        })
        .collect();
    let md = &m.md;
    let mut v = serde_json::json!({
        "msg_id": id_to_hex(&md.msg_id),
        "correl_id": id_to_hex(&md.correl_id),
        "persistent": md.persistence == Persistence::Persistent,
        "priority": md.priority,
        "expiry": md.expiry,
        "msg_type": md.msg_type,
        "feedback": md.feedback,
        "encoding": md.encoding,
        "ccsid": md.coded_char_set_id,
        "format": md.format,
        "reply_to_q": md.reply_to_q,
        "reply_to_qmgr": md.reply_to_qmgr,
        "backout_count": md.backout_count,
        "put_appl_name": md.put_appl_name,
        "put_date": md.put_date,
        "put_time": md.put_time,
        "user_identifier": md.user_identifier,
        "appl_identity_data": md.appl_identity_data,
        "group_id": id_to_hex(&md.group_id),
        "msg_seq_number": md.msg_seq_number,
        "msg_flags": md.msg_flags,
        "report": md.report,
        "put_appl_type": md.put_appl_type,
        "accounting_token": to_hex(&md.accounting_token),
        "appl_origin_data": md.appl_origin_data,
        "properties": properties,
        "length": m.body.len(),
    });
    match std::str::from_utf8(&m.body) {
        Ok(text) => v["body"] = text.into(),
        Err(_) => v["body_hex"] = to_hex(&m.body).into(),
    }
    v
}

/// Write `body` to `DIR/NAME.msg`, or `DIR/NAME-2.msg`, `-3`… when that exists: MsgIds need
/// not be unique, and no file already there is overwritten.
fn write_new_file(dir: &std::path::Path, name: &str, body: &[u8]) -> Result<()> {
    for n in 1u32..=u32::MAX {
        let p = match n {
            1 => dir.join(format!("{name}.msg")),
            n => dir.join(format!("{name}-{n}.msg")),
        };
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
        {
            Ok(mut f) => {
                let written = f.write_all(body).and_then(|_| f.sync_all());
                if written.is_err() {
                    // The message stays on its queue: no half-written copy is left behind.
                    let _ = std::fs::remove_file(&p);
                }
                return written.with_context(|| format!("cannot write {}", p.display()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", p.display())),
        }
    }
    bail!("no free file name for {name} in {}", dir.display())
}

/// What a command did: `json` with `--json`, else `text`.
fn say(out: &mut impl Write, json: bool, v: &serde_json::Value, text: &str) -> Result<()> {
    if json {
        writeln!(out, "{v}")?;
    } else {
        writeln!(out, "{text}")?;
    }
    Ok(())
}

/// Exit status when a get found no message (MQRC 2033).
const EXIT_NO_MESSAGE: u8 = 3;

/// A get that found no message: not a failure of the command, but its own exit status.
#[derive(Debug)]
struct NoMessage(String);

impl std::fmt::Display for NoMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no message on {} (MQRC 2033)", self.0)
    }
}

impl std::error::Error for NoMessage {}

/// Run one `sluice qm` command and report how it ended: an error on stderr (as a JSON object
/// with `--json`, carrying the MQ reason code when there is one) and the exit status.
pub fn run(a: QmArgs) -> std::process::ExitCode {
    let json = a.json;
    let Err(e) = execute(a) else {
        return std::process::ExitCode::SUCCESS;
    };
    // A reader that stopped reading a listing (`| head`) is not an error; a get that could
    // not write its message says so (its error has context: the message stays queued).
    if e.chain().count() == 1
        && e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    {
        return std::process::ExitCode::SUCCESS;
    }
    let (mqrc, status) = match (e.downcast_ref::<NoMessage>(), e.downcast_ref::<QmError>()) {
        (Some(_), _) => (Some(2033), EXIT_NO_MESSAGE),
        (None, Some(q)) => (Some(q.reason_code()), 1),
        (None, None) => (None, 1),
    };
    if json {
        let mut v = serde_json::json!({ "error": format!("{e:#}") });
        if let Some(code) = mqrc {
            v["mqrc"] = code.into();
        }
        eprintln!("{v}");
    } else if status == EXIT_NO_MESSAGE {
        eprintln!("{e}");
    } else {
        eprintln!("error: {e:#}");
    }
    std::process::ExitCode::from(status)
}

fn execute(a: QmArgs) -> Result<()> {
    let creds = Credentials {
        user: a.user.clone(),
        password: a.password.clone(),
        token: a.token.clone(),
    };
    let connected = match &a.tls_ca {
        Some(ca) => {
            let pem = std::fs::read(ca).with_context(|| format!("cannot read {}", ca.display()))?;
            let server_name = a.tls_server_name.clone().unwrap_or_else(|| {
                let host = a
                    .server
                    .rsplit_once(':')
                    .map_or(a.server.as_str(), |(h, _)| h);
                host.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_string()
            });
            let tls = sluice_qm::net::tls::ClientTls {
                config: sluice_qm::net::tls::client_config(&pem)?,
                server_name,
            };
            Client::connect_tls(&a.server, creds, tls)
        }
        None => Client::connect(&a.server, creds),
    };
    let mut c = connected
        .with_context(|| format!("cannot connect to the queue manager at {}", a.server))?;
    let mut out = std::io::stdout().lock();
    match a.command {
        QmCommand::Define {
            queue,
            kind,
            target,
            attrs,
        } => {
            let mut d = match (kind, target.as_deref()) {
                (DefineType::Alias, Some(t)) => QueueDef::alias(&queue, t),
                (DefineType::Alias, None) => bail!("an alias queue needs --target QUEUE"),
                (_, Some(_)) => bail!("--target is for --type alias"),
                (DefineType::Local, None) => QueueDef::local(&queue),
                (DefineType::Model, None) => QueueDef::model(&queue),
            };
            attrs.apply(&mut d);
            c.define(&d)?;
            let v = serde_json::json!({ "defined": queue_json(&d) });
            say(&mut out, a.json, &v, &format!("defined {queue}"))?;
        }
        QmCommand::Alter {
            queue,
            target,
            attrs,
        } => {
            let mut d = c.show(&queue)?;
            match (&mut d.kind, target) {
                (sluice_qm::QueueKind::Alias { target: t }, Some(new)) => *t = new,
                (_, Some(_)) => bail!("--target is for alias queues; {queue} is not one"),
                (_, None) => {}
            }
            attrs.apply(&mut d);
            c.alter(&d)?;
            let v = serde_json::json!({ "altered": queue_json(&d) });
            say(&mut out, a.json, &v, &format!("altered {queue}"))?;
        }
        QmCommand::Delete { queue, purge } => {
            c.delete(&queue, purge)?;
            let v = serde_json::json!({ "deleted": queue });
            say(&mut out, a.json, &v, &format!("deleted {queue}"))?;
        }
        QmCommand::Show { queue } => {
            let d = c.show(&queue)?;
            let depth = c.depth(&queue).unwrap_or(0);
            if a.json {
                let mut v = queue_json(&d);
                v["depth"] = depth.into();
                writeln!(out, "{v}")?;
            } else {
                writeln!(out, "{TABLE_HEAD}\n{}", table_row(&d, depth))?;
            }
        }
        QmCommand::List => {
            let defs = c.list()?;
            if a.json {
                let mut all = Vec::new();
                for d in &defs {
                    let mut v = queue_json(d);
                    v["depth"] = c.depth(&d.name).unwrap_or(0).into();
                    all.push(v);
                }
                writeln!(out, "{}", serde_json::Value::Array(all))?;
            } else {
                writeln!(out, "{TABLE_HEAD}")?;
                for d in &defs {
                    let depth = c.depth(&d.name).unwrap_or(0);
                    writeln!(out, "{}", table_row(d, depth))?;
                }
            }
        }
        QmCommand::Put {
            queue,
            file,
            persistent,
            count,
            correl_id,
            reply_to_q,
            priority,
            expiry,
            format,
        } => {
            if count == 0 {
                bail!("--count is at least 1");
            }
            let mut body = Vec::new();
            match file.as_deref() {
                Some(p) if p.as_os_str() != "-" => {
                    body =
                        std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
                }
                _ => {
                    std::io::stdin().read_to_end(&mut body)?;
                }
            }
            let mut m = Message::new(body);
            m.md.persistence = if persistent {
                Persistence::Persistent
            } else {
                Persistence::AsQueueDef
            };
            if let Some(id) = correl_id {
                m.md.correl_id = id_arg("--correl-id", &id)?;
            }
            if let Some(q) = reply_to_q {
                validate_name(&q).context("--reply-to-q")?;
                m.md.reply_to_q = q;
            }
            if let Some(p) = priority {
                if p > 9 {
                    bail!("--priority goes from 0 to 9");
                }
                m.md.priority = p;
            }
            if let Some(e) = expiry {
                if e <= 0 && e != -1 {
                    bail!(
                        "--expiry is a positive number of tenths of a second, or -1 for none (MQRC 2013)"
                    );
                }
                m.md.expiry = e;
            }
            if let Some(f) = format {
                if f.len() > 8 {
                    bail!("--format is at most 8 characters, not {f:?}");
                }
                m.md.format = format!("{f:<8}");
            }
            for i in 0..count {
                let id = c.put(&queue, &m, &PutOptions::default()).with_context(|| {
                    format!("put {i} of {count} message(s) to {queue}, then failed")
                })?;
                if a.json {
                    writeln!(out, "{}", serde_json::json!({ "msg_id": id_to_hex(&id) }))?;
                }
            }
            if !a.json {
                writeln!(out, "put {count} message(s) to {queue}")?;
            }
        }
        QmCommand::Get {
            queue,
            wait,
            all,
            out: dir,
            correl_id,
            msg_id,
        } => {
            let mut opts = GetOptions::new();
            if wait > 0.0 {
                opts = opts.wait(Duration::from_secs_f64(wait));
            }
            if let Some(id) = correl_id {
                opts = opts.correl_id(id_arg("--correl-id", &id)?);
            }
            if let Some(id) = msg_id {
                opts = opts.msg_id(id_arg("--msg-id", &id)?);
            }
            // Where the bodies go is checked before anything is taken.
            if let Some(d) = &dir {
                std::fs::create_dir_all(d)
                    .with_context(|| format!("cannot create the folder {}", d.display()))?;
            }
            let mut n = 0u64;
            while let Some(m) = c.get_syncpoint(&queue, &opts)? {
                let written = match &dir {
                    Some(d) => write_new_file(d, &id_to_hex(&m.md.msg_id), &m.body),
                    None if a.json => writeln!(out, "{}", message_json(&m))
                        .and_then(|_| out.flush())
                        .context("cannot write to standard output"),
                    None => out
                        .write_all(&m.body)
                        .and_then(|_| out.flush())
                        .context("cannot write to standard output"),
                };
                if let Err(e) = written {
                    // The message goes back to the queue (its BackoutCount raised).
                    let _ = c.rollback();
                    return Err(e.context(format!(
                        "the message stays on {queue}; {n} message(s) were taken before"
                    )));
                }
                c.commit()
                    .with_context(|| format!("the message written last may still be on {queue}"))?;
                n += 1;
                if !all {
                    break;
                }
            }
            if n == 0 {
                return Err(NoMessage(queue).into());
            }
            if dir.is_some() {
                writeln!(out, "got {n} message(s)")?;
            }
        }
        QmCommand::Browse { queue } => {
            let mut cursor = BrowseCursor::new();
            while let Some(m) = c.browse(&queue, &GetOptions::new(), &mut cursor)? {
                if a.json {
                    writeln!(out, "{}", message_json(&m))?;
                } else {
                    writeln!(
                        out,
                        "{} correl={} {} bytes{}",
                        id_to_hex(&m.md.msg_id),
                        id_to_hex(&m.md.correl_id),
                        m.body.len(),
                        if m.md.persistence == Persistence::Persistent {
                            " persistent"
                        } else {
                            ""
                        }
                    )?;
                }
            }
        }
        QmCommand::Depth { queue } => writeln!(out, "{}", c.depth(&queue)?)?,
        QmCommand::Clear { queue } => {
            let n = c.clear(&queue)?;
            let v = serde_json::json!({ "cleared": n, "queue": queue });
            say(
                &mut out,
                a.json,
                &v,
                &format!("cleared {n} message(s) from {queue}"),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_hex_padded_with_zeros_or_marked_text_and_anything_else_is_refused() {
        let id = id_arg("--correl-id", "0A0B").unwrap();
        assert_eq!(&id[..3], &[0x0a, 0x0b, 0]);
        assert_eq!(id_arg("--correl-id", &"ab".repeat(24)).unwrap(), [0xab; 24]);
        let text = id_arg("--correl-id", "text:ORDER-7").unwrap();
        assert_eq!(&text[..8], b"ORDER-7\0");
        for bad in ["0A0", "ORDER-7", "zz", "", "text:", &"ab".repeat(25)] {
            let e = id_arg("--correl-id", bad).unwrap_err().to_string();
            assert!(e.contains("--correl-id takes hex digits"), "{bad}: {e}");
        }
    }
}
