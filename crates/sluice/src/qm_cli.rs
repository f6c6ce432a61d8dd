//! `sluice qm`: define and inspect queues and move messages, over the client protocol of a
//! running server.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use sluice_qm::net::{Client, Credentials};
use sluice_qm::{
    BrowseCursor, GetOptions, Message, Persistence, PutOptions, QueueDef, id_from_hex, id_from_str,
    id_to_hex,
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
    #[arg(long, global = true, default_value = "")]
    password: String,
    /// Bearer token, instead of user and password.
    #[arg(long, global = true, default_value = "")]
    token: String,
    /// JSON output instead of tables.
    #[arg(long, global = true)]
    json: bool,
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
    }
}

#[derive(Subcommand)]
enum QmCommand {
    /// Define a local queue.
    Define {
        queue: String,
        #[command(flatten)]
        attrs: QueueAttrs,
    },
    /// Change a queue's attributes.
    Alter {
        queue: String,
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
    Show { queue: String },
    /// Every queue.
    List,
    /// Put messages: the body from a file (or standard input with `-` or no --file).
    Put {
        queue: String,
        #[arg(long)]
        file: Option<PathBuf>,
        #[arg(long)]
        persistent: bool,
        /// How many copies to put.
        #[arg(long, default_value_t = 1)]
        count: u64,
        /// CorrelId: 48 hex digits, or text (padded to 24 bytes).
        #[arg(long)]
        correl_id: Option<String>,
        #[arg(long)]
        reply_to_q: Option<String>,
        #[arg(long)]
        priority: Option<u8>,
        /// Expiry in tenths of a second.
        #[arg(long)]
        expiry: Option<i32>,
        #[arg(long)]
        format: Option<String>,
    },
    /// Take messages off a queue: bodies to standard output, or one file each in --out.
    Get {
        queue: String,
        /// Wait up to this many seconds for a message.
        #[arg(long, default_value_t = 0.0)]
        wait: f64,
        /// Every message, not just one.
        #[arg(long)]
        all: bool,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Show the messages on a queue without removing them.
    Browse { queue: String },
    /// Print the number of messages on a queue.
    Depth { queue: String },
    /// Remove every message from a queue.
    Clear { queue: String },
}

fn id_arg(s: &str) -> [u8; 24] {
    id_from_hex(s).unwrap_or_else(|| id_from_str(s))
}

fn table_row(d: &QueueDef, depth: usize) -> String {
    format!(
        "{:<32} {:<6} {:>8} {:>10} {:>8} {:<20}",
        d.name,
        d.kind.name(),
        depth,
        d.max_depth,
        d.backout_threshold,
        d.backout_requeue_queue
    )
}

const TABLE_HEAD: &str =
    "QUEUE                            TYPE      DEPTH  MAX DEPTH  BOTHRESH BOQUEUE";

fn message_json(m: &Message) -> serde_json::Value {
    serde_json::json!({
        "msg_id": id_to_hex(&m.md.msg_id),
        "correl_id": id_to_hex(&m.md.correl_id),
        "persistent": m.md.persistence == Persistence::Persistent,
        "priority": m.md.priority,
        "reply_to_q": m.md.reply_to_q,
        "backout_count": m.md.backout_count,
        "put_date": m.md.put_date,
        "put_time": m.md.put_time,
        "format": m.md.format,
        "length": m.body.len(),
        "body": String::from_utf8_lossy(&m.body),
    })
}

pub fn run(a: QmArgs) -> Result<()> {
    let creds = Credentials {
        user: a.user.clone(),
        password: a.password.clone(),
        token: a.token.clone(),
    };
    let mut c = Client::connect(&a.server, creds)
        .with_context(|| format!("cannot connect to the queue manager at {}", a.server))?;
    let mut out = std::io::stdout().lock();
    match a.command {
        QmCommand::Define { queue, attrs } => {
            let mut d = QueueDef::local(&queue);
            attrs.apply(&mut d);
            c.define(&d)?;
            writeln!(out, "defined {queue}")?;
        }
        QmCommand::Alter { queue, attrs } => {
            let mut d = c.show(&queue)?;
            attrs.apply(&mut d);
            c.alter(&d)?;
            writeln!(out, "altered {queue}")?;
        }
        QmCommand::Delete { queue, purge } => {
            c.delete(&queue, purge)?;
            writeln!(out, "deleted {queue}")?;
        }
        QmCommand::Show { queue } => {
            let d = c.show(&queue)?;
            let depth = c.depth(&queue).unwrap_or(0);
            if a.json {
                let mut v = serde_json::to_value(&d)?;
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
                    let mut v = serde_json::to_value(d)?;
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
                m.md.correl_id = id_arg(&id);
            }
            if let Some(q) = reply_to_q {
                m.md.reply_to_q = q;
            }
            if let Some(p) = priority {
                if p > 9 {
                    bail!("--priority goes from 0 to 9");
                }
                m.md.priority = p;
            }
            if let Some(e) = expiry {
                m.md.expiry = e;
            }
            if let Some(f) = format {
                m.md.format = format!("{f:<8}");
            }
            for _ in 0..count {
                let id = c.put(&queue, &m, &PutOptions::default())?;
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
        } => {
            let mut n = 0u64;
            loop {
                let mut opts = GetOptions::new();
                if wait > 0.0 {
                    opts = opts.wait(Duration::from_secs_f64(wait));
                }
                let Some(m) = c.get(&queue, &opts)? else {
                    break;
                };
                n += 1;
                match &dir {
                    Some(d) => {
                        std::fs::create_dir_all(d)?;
                        let p = d.join(format!("{}.msg", id_to_hex(&m.md.msg_id)));
                        std::fs::write(&p, &m.body)
                            .with_context(|| format!("cannot write {}", p.display()))?;
                    }
                    None if a.json => writeln!(out, "{}", message_json(&m))?,
                    None => out.write_all(&m.body)?,
                }
                if !all {
                    break;
                }
            }
            if n == 0 {
                eprintln!("no message on {queue}");
                std::process::exit(3);
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
            writeln!(out, "cleared {n} message(s) from {queue}")?;
        }
    }
    Ok(())
}
