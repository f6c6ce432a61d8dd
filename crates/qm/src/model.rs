//! The data model: message descriptor, message, properties, queue definitions, options.

use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// A 24-byte MQ identifier (MsgId, CorrelId, GroupId).
pub type MsgId = [u8; 24];

/// The all-zero identifier (MQMI_NONE / MQCI_NONE).
pub const ID_NONE: MsgId = [0; 24];

/// MQMD Persistence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Persistence {
    /// MQPER_NOT_PERSISTENT: kept in memory only, gone after a restart.
    NotPersistent,
    /// MQPER_PERSISTENT: logged before the put returns, survives a crash.
    Persistent,
    /// MQPER_PERSISTENCE_AS_Q_DEF: take the queue's `default_persistence`.
    #[default]
    AsQueueDef,
}

impl Persistence {
    /// Wire / log code (MQ's values: 0, 1, 2).
    pub fn code(self) -> u8 {
        match self {
            Persistence::NotPersistent => 0,
            Persistence::Persistent => 1,
            Persistence::AsQueueDef => 2,
        }
    }
    /// Inverse of [`Persistence::code`]; unknown codes are `None`.
    pub fn from_code(c: u8) -> Option<Persistence> {
        match c {
            0 => Some(Persistence::NotPersistent),
            1 => Some(Persistence::Persistent),
            2 => Some(Persistence::AsQueueDef),
            _ => None,
        }
    }
}

/// MQMD MsgType values.
pub mod msg_type {
    /// MQMT_REQUEST.
    pub const REQUEST: i32 = 1;
    /// MQMT_REPLY.
    pub const REPLY: i32 = 2;
    /// MQMT_REPORT.
    pub const REPORT: i32 = 4;
    /// MQMT_DATAGRAM.
    pub const DATAGRAM: i32 = 8;
}

/// The MQ message descriptor (MQMD), field names as in MQ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mqmd {
    /// MsgId; all zeros on put means "generate one".
    pub msg_id: MsgId,
    /// CorrelId.
    pub correl_id: MsgId,
    /// ReplyToQ.
    pub reply_to_q: String,
    /// ReplyToQMgr.
    pub reply_to_qmgr: String,
    /// Persistence.
    pub persistence: Persistence,
    /// Expiry in tenths of a second from the put; -1 is unlimited.
    pub expiry: i32,
    /// Priority 0 (lowest) to 9.
    pub priority: u8,
    /// Format, 8 characters, blank padded ("MQSTR   ", "        ").
    pub format: String,
    /// Encoding (546 = little-endian native).
    pub encoding: i32,
    /// CodedCharSetId (1208 = UTF-8).
    pub coded_char_set_id: i32,
    /// MsgType (see [`msg_type`]).
    pub msg_type: i32,
    /// Feedback (report reason).
    pub feedback: i32,
    /// BackoutCount: how many times a get of this message was rolled back.
    pub backout_count: u32,
    /// PutApplName.
    pub put_appl_name: String,
    /// PutDate, "YYYYMMDD" (UTC), set by put.
    pub put_date: String,
    /// PutTime, "HHMMSSTH" (UTC), set by put.
    pub put_time: String,
    /// UserIdentifier.
    pub user_identifier: String,
    /// ApplIdentityData.
    pub appl_identity_data: String,
    /// GroupId.
    pub group_id: MsgId,
    /// MsgSeqNumber within the group (1 based).
    pub msg_seq_number: i32,
    /// MsgFlags (MQMF_*).
    pub msg_flags: i32,
    /// Report options (MQRO_*): what reports the sender asks for and how a reply sets its
    /// MsgId and CorrelId.
    pub report: i32,
    /// PutApplType (MQAT_*), set with PutApplName.
    pub put_appl_type: i32,
    /// AccountingToken (identity context).
    pub accounting_token: [u8; 32],
    /// ApplOriginData (origin context).
    pub appl_origin_data: String,
}

impl Default for Mqmd {
    fn default() -> Self {
        Mqmd {
            msg_id: ID_NONE,
            correl_id: ID_NONE,
            reply_to_q: String::new(),
            reply_to_qmgr: String::new(),
            persistence: Persistence::AsQueueDef,
            expiry: -1,
            priority: 0,
            format: "        ".to_string(),
            encoding: 546,
            coded_char_set_id: 1208,
            msg_type: msg_type::DATAGRAM,
            feedback: 0,
            backout_count: 0,
            put_appl_name: String::new(),
            put_date: String::new(),
            put_time: String::new(),
            user_identifier: String::new(),
            appl_identity_data: String::new(),
            group_id: ID_NONE,
            msg_seq_number: 1,
            msg_flags: 0,
            report: 0,
            put_appl_type: 0,
            accounting_token: [0; 32],
            appl_origin_data: String::new(),
        }
    }
}

/// A named message property value (the MQRFH2 / JMS property role).
#[derive(Debug, Clone, PartialEq)]
pub enum PropertyValue {
    /// Boolean.
    Bool(bool),
    /// 64-bit integer.
    Int(i64),
    /// 64-bit float.
    Float(f64),
    /// Text.
    String(String),
    /// Raw bytes.
    Bytes(Bytes),
}

/// A message: descriptor, named properties and body.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Message {
    /// The descriptor.
    pub md: Mqmd,
    /// Named properties, in order.
    pub properties: Vec<(String, PropertyValue)>,
    /// The body; shared, never copied by the queue manager.
    pub body: Bytes,
}

impl Message {
    /// A datagram with the given body and default descriptor.
    pub fn new(body: impl Into<Bytes>) -> Message {
        Message {
            md: Mqmd::default(),
            properties: Vec::new(),
            body: body.into(),
        }
    }

    /// First property of that name.
    pub fn property(&self, name: &str) -> Option<&PropertyValue> {
        self.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// Set (replace or append) a property.
    pub fn set_property(&mut self, name: &str, value: PropertyValue) {
        match self.properties.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => self.properties.push((name.to_string(), value)),
        }
    }
}

/// What kind of queue a definition describes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum QueueKind {
    /// A queue that holds messages.
    #[default]
    Local,
    /// Another name for `target` (a local queue).
    Alias {
        /// The queue the alias resolves to.
        target: String,
    },
    /// A template from which temporary dynamic queues are created.
    Model,
}

impl QueueKind {
    /// Short name for errors and listings.
    pub fn name(&self) -> &'static str {
        match self {
            QueueKind::Local => "local",
            QueueKind::Alias { .. } => "alias",
            QueueKind::Model => "model",
        }
    }
}

/// A queue definition and its attributes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct QueueDef {
    /// Queue name (1-48 characters of A-Z a-z 0-9 . / _ %).
    pub name: String,
    /// Local, alias or model.
    pub kind: QueueKind,
    /// Most messages the queue holds (MAXDEPTH); counts uncommitted puts.
    pub max_depth: usize,
    /// Longest body accepted (MAXMSGL), bytes.
    pub max_msg_length: usize,
    /// Persistence used when a put says `AsQueueDef` (DEFPSIST).
    pub default_persistence: Persistence,
    /// Backout count at which a consumer should requeue (BOTHRESH); 0 = none.
    pub backout_threshold: u32,
    /// Where a consumer requeues backed-out messages (BOQNAME); empty = dead-letter queue.
    pub backout_requeue_queue: String,
    /// PUT(DISABLED).
    pub put_inhibited: bool,
    /// GET(DISABLED).
    pub get_inhibited: bool,
    /// HARDENBO: a get under syncpoint makes the raised BackoutCount of a persistent message
    /// durable before returning it (one more log sync per such get), so that a crash while
    /// processing counts as a backout. Off (NOHARDENBO, MQ's default): counts raised by
    /// rollbacks are kept in memory only.
    pub harden_get_backout: bool,
    /// Set on temporary dynamic queues: never persisted, no persistent messages.
    pub temporary_dynamic: bool,
}

impl Default for QueueDef {
    fn default() -> Self {
        QueueDef {
            name: String::new(),
            kind: QueueKind::Local,
            max_depth: 5000,
            max_msg_length: 100 * 1024 * 1024,
            default_persistence: Persistence::NotPersistent,
            backout_threshold: 0,
            backout_requeue_queue: String::new(),
            put_inhibited: false,
            get_inhibited: false,
            harden_get_backout: false,
            temporary_dynamic: false,
        }
    }
}

impl QueueDef {
    /// A local queue with default attributes.
    pub fn local(name: &str) -> QueueDef {
        QueueDef {
            name: name.to_string(),
            ..QueueDef::default()
        }
    }
    /// An alias queue for `target`.
    pub fn alias(name: &str, target: &str) -> QueueDef {
        QueueDef {
            name: name.to_string(),
            kind: QueueKind::Alias {
                target: target.to_string(),
            },
            ..QueueDef::default()
        }
    }
    /// A model queue.
    pub fn model(name: &str) -> QueueDef {
        QueueDef {
            name: name.to_string(),
            kind: QueueKind::Model,
            ..QueueDef::default()
        }
    }
}

/// The identity and origin context the queue manager gives a put that does not set all
/// context itself (MQ's default context): the user who put it (UserIdentifier, 12
/// characters in MQ) and the program (PutApplName, 28); ApplIdentityData, ApplOriginData and
/// AccountingToken are cleared. PutApplType stays as the application gave it: setting it
/// would give every message the descriptor's extended fields (see `codec`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PutContext {
    user: String,
    appl_name: String,
}

impl PutContext {
    /// A context for `user` running `appl_name`, cut to MQ's field lengths.
    pub fn new(user: &str, appl_name: &str) -> PutContext {
        PutContext {
            user: user.chars().take(12).collect(),
            appl_name: appl_name.chars().take(28).collect(),
        }
    }

    /// The user this process runs as and its program's name.
    pub fn of_this_process() -> PutContext {
        PutContext::new(&os_user(), &program_name())
    }

    pub fn user(&self) -> &str {
        &self.user
    }

    pub fn appl_name(&self) -> &str {
        &self.appl_name
    }

    /// Give `msg` this context: the identity and origin fields the application did not set.
    pub fn apply(&self, msg: &mut Message) {
        let md = &mut msg.md;
        md.user_identifier.clone_from(&self.user);
        md.put_appl_name.clone_from(&self.appl_name);
        md.appl_identity_data.clear();
        md.appl_origin_data.clear();
        md.accounting_token = [0; 32];
    }
}

/// The name of the user this process runs as (from the password database, else `$USER`).
fn os_user() -> String {
    // SAFETY: getpwuid_r writes into `pw` and `buf`, both alive and sized as passed; the name
    // pointer it returns points into `buf`.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut buf = [0 as libc::c_char; 1024];
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        if libc::getpwuid_r(
            libc::geteuid(),
            &mut pw,
            buf.as_mut_ptr(),
            buf.len(),
            &mut found,
        ) == 0
            && !found.is_null()
            && !pw.pw_name.is_null()
        {
            return std::ffi::CStr::from_ptr(pw.pw_name)
                .to_string_lossy()
                .into_owned();
        }
    }
    std::env::var("USER").unwrap_or_default()
}

/// This program's file name (MQ's PutApplName for a client).
fn program_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default()
}

/// Options for a put.
#[derive(Debug, Clone, Default)]
pub struct PutOptions {
    /// Always generate a new MsgId (MQPMO_NEW_MSG_ID). Without it, a MsgId set by the caller
    /// is kept and an all-zero one is replaced by a generated one.
    pub new_msg_id: bool,
    /// Keep the put date/time the caller set (MQPMO_SET_ALL_CONTEXT); default sets them now.
    pub set_all_context: bool,
}

/// Position of a browse cursor: the last message seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BrowseCursor {
    pub(crate) last: Option<(u8, u64)>,
}

impl BrowseCursor {
    /// A cursor before the first message (browse first).
    pub fn new() -> BrowseCursor {
        BrowseCursor::default()
    }
    /// Opaque encoding for the client protocol: (priority rank, sequence) or none.
    pub fn to_wire(&self) -> Option<(u8, u64)> {
        self.last
    }
    /// Inverse of [`BrowseCursor::to_wire`].
    pub fn from_wire(last: Option<(u8, u64)>) -> BrowseCursor {
        BrowseCursor { last }
    }
}

/// Options for a get.
#[derive(Debug, Clone, Default)]
pub struct GetOptions {
    /// Wait up to this long for a matching message (MQGMO_WAIT with WaitInterval); `None` = no wait.
    pub wait: Option<Duration>,
    /// Match this MsgId.
    pub msg_id: Option<MsgId>,
    /// Match this CorrelId.
    pub correl_id: Option<MsgId>,
    /// Match this GroupId.
    pub group_id: Option<MsgId>,
}

impl GetOptions {
    /// No wait, no match.
    pub fn new() -> GetOptions {
        GetOptions::default()
    }
    /// Wait up to `d`.
    pub fn wait(mut self, d: Duration) -> GetOptions {
        self.wait = Some(d);
        self
    }
    /// Match a CorrelId.
    pub fn correl_id(mut self, id: MsgId) -> GetOptions {
        self.correl_id = Some(id);
        self
    }
    /// Match a MsgId.
    pub fn msg_id(mut self, id: MsgId) -> GetOptions {
        self.msg_id = Some(id);
        self
    }
    /// Match a GroupId.
    pub fn group_id(mut self, id: MsgId) -> GetOptions {
        self.group_id = Some(id);
        self
    }
}

/// Build a 24-byte id from text: its bytes, zero padded (longer text is cut).
pub fn id_from_str(s: &str) -> MsgId {
    let mut id = ID_NONE;
    let b = s.as_bytes();
    let n = b.len().min(24);
    id[..n].copy_from_slice(&b[..n]);
    id
}

/// An id as people and headers give it: 48 hex digits (after an optional `ID:`), or text of
/// 1 to 24 bytes, zero padded.
pub fn id_from_text(s: &str) -> Option<MsgId> {
    id_from_hex(s).or_else(|| {
        (!s.is_empty() && s.len() <= 24 && !s.starts_with("ID:")).then(|| id_from_str(s))
    })
}

/// Hex text of an id (48 lower-case digits).
pub fn id_to_hex(id: &MsgId) -> String {
    to_hex(id)
}

/// Bytes as lower-case hex digits.
pub fn to_hex(bytes: &[u8]) -> String {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(H[(b >> 4) as usize] as char);
        s.push(H[(b & 15) as usize] as char);
    }
    s
}

/// Parse 48 hex digits (an optional `ID:` prefix allowed) into an id.
pub fn id_from_hex(s: &str) -> Option<MsgId> {
    let s = s.strip_prefix("ID:").unwrap_or(s);
    if s.len() != 48 {
        return None;
    }
    let mut id = ID_NONE;
    let b = s.as_bytes();
    for i in 0..24 {
        let hi = (b[2 * i] as char).to_digit(16)?;
        let lo = (b[2 * i + 1] as char).to_digit(16)?;
        id[i] = (hi * 16 + lo) as u8;
    }
    Some(id)
}
