//! `sluice.yaml`: the server settings of a project. Every setting is optional.
//!
//! ```yaml
//! http:
//!   max_request_bytes: 104857600   # larger bodies get 413
//!   request_timeout_secs: 60       # a client slower than this sending its request gets 408
//!   header_timeout_secs: 10        # ... or, while sending its headers, loses the connection
//!   reply_timeout_secs: 180        # a flow slower than this to reply gets 504
//!   tls: { cert_file: certs/server.pem, key_file: certs/server.key }
//! queue_manager:
//!   name: SLUICE
//!   dead_letter_queue: SYSTEM.DEAD.LETTER.QUEUE
//!   allow_anonymous: true          # client-protocol connections without credentials
//!   users: { app: secret }         # user → password
//!   tokens: [ "…" ]                # bearer tokens
//!   tls: { cert_file: certs/qm.pem, key_file: certs/qm.key }   # the client protocol's TCP port
//! admin:                           # roles on the admin API (without it: queue_manager's users)
//!   users: { alice: { password_sha256: "…", role: admin } }
//!   tokens: [ { sha256: "…", role: viewer } ]
//! queues:
//!   - { name: ORDERS.IN, max_depth: 10000, backout_threshold: 3, backout_queue: ORDERS.BACKOUT }
//!   - { name: ORDERS.ALIAS, type: alias, target: ORDERS.IN }
//! ```

use std::path::PathBuf;

use sluice_flow::diag::{Diagnostic, did_you_mean};
use sluice_flow::yaml::{self, Yaml, YamlKind};

/// HTTP listener settings.
#[derive(Clone, Debug)]
pub struct HttpSettings {
    pub max_request_bytes: u64,
    pub request_timeout_secs: u64,
    pub header_timeout_secs: u64,
    pub reply_timeout_secs: u64,
    pub tls: Option<TlsSettings>,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            max_request_bytes: 100 * 1024 * 1024,
            request_timeout_secs: 60,
            header_timeout_secs: 10,
            reply_timeout_secs: 180,
            tls: None,
        }
    }
}

/// Certificate and key files (PEM), relative to the project folder.
#[derive(Clone, Debug)]
pub struct TlsSettings {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
}

/// The embedded queue manager's settings.
#[derive(Clone, Debug)]
pub struct QmSettings {
    pub name: String,
    pub dead_letter_queue: String,
    /// Clients may connect without credentials.
    pub allow_anonymous: bool,
    /// user → password for the client protocol.
    pub users: Vec<(String, String)>,
    /// Bearer tokens accepted by the client protocol.
    pub tokens: Vec<String>,
    /// Serve the client protocol's TCP port with TLS (the local socket stays plain).
    pub tls: Option<TlsSettings>,
}

impl Default for QmSettings {
    fn default() -> Self {
        QmSettings {
            name: "SLUICE".into(),
            dead_letter_queue: "SYSTEM.DEAD.LETTER.QUEUE".into(),
            allow_anonymous: true,
            users: Vec::new(),
            tokens: Vec::new(),
            tls: None,
        }
    }
}

/// What an admin API client may do; each role may do what the ones before it may.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Read: flows, statistics, node types, health, metrics.
    Viewer,
    /// And control flows: start, stop, restart, instances, statistics reset.
    Operator,
    /// And deploy archives and roll back.
    Admin,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
        }
    }
}

/// A credential of the admin API: the SHA-256 of its password or token (lowercase hex).
#[derive(Clone, Debug)]
pub struct AdminCredential {
    pub sha256: String,
    pub role: Role,
}

/// `admin:`: the admin API's users and tokens with their roles.
#[derive(Clone, Debug, Default)]
pub struct AdminSettings {
    /// user name → password hash and role.
    pub users: Vec<(String, AdminCredential)>,
    pub tokens: Vec<AdminCredential>,
}

/// Everything sluice.yaml sets.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    pub http: HttpSettings,
    pub queue_manager: QmSettings,
    /// Roles on the admin API; None leaves it to the queue manager's users and tokens.
    pub admin: Option<AdminSettings>,
    /// Queues to define (or alter to match) at start.
    pub queues: Vec<sluice_qm::QueueDef>,
    /// Named datasources, paths as written (relative to the project folder).
    pub datasources: std::collections::BTreeMap<String, sluice_node_api::DatasourceDef>,
    /// Named message brokers, paths as written (relative to the project folder).
    pub brokers: std::collections::BTreeMap<String, sluice_node_api::BrokerDef>,
    /// The global cache's declared maps (`cache:`).
    pub cache: std::collections::BTreeMap<String, sluice_cache::MapSettings>,
}

struct Reader<'a> {
    file: &'a str,
    src: &'a str,
    problems: Vec<Diagnostic>,
}

impl Reader<'_> {
    fn err(&mut self, y: &Yaml, msg: impl Into<String>, hint: Option<String>) {
        self.problems
            .push(Diagnostic::at(self.file, self.src, y.line, y.col, msg).with_hint_opt(hint));
    }

    fn entries<'y>(&mut self, y: &'y Yaml, what: &str, known: &[&str]) -> Vec<(&'y str, &'y Yaml)> {
        let YamlKind::Map(m) = &y.kind else {
            self.err(y, format!("`{what}` must be a mapping"), None);
            return Vec::new();
        };
        let mut out = Vec::new();
        for (k, v) in m {
            let key = k.as_str().unwrap_or_default();
            if known.contains(&key) {
                out.push((key, v));
            } else {
                let hint = did_you_mean(key, known.iter().copied())
                    .or_else(|| Some(format!("`{what}` has {}", known.join(", "))));
                self.err(k, format!("unknown setting `{key}` in `{what}`"), hint);
            }
        }
        out
    }

    fn text(&mut self, v: &Yaml) -> String {
        match v.scalar_text() {
            Some(t) => t,
            None => {
                self.err(v, "expected a string", None);
                String::new()
            }
        }
    }

    fn flag(&mut self, v: &Yaml) -> bool {
        match v.kind {
            YamlKind::Bool(b) => b,
            _ => {
                self.err(v, "expected true or false", None);
                false
            }
        }
    }

    fn count(&mut self, v: &Yaml) -> u64 {
        match v.kind {
            YamlKind::Int(n) if n >= 0 => n as u64,
            _ => {
                self.err(v, "expected a whole number, 0 or more", None);
                0
            }
        }
    }

    fn positive(&mut self, v: &Yaml) -> u64 {
        match v.kind {
            YamlKind::Int(n) if n > 0 => n as u64,
            _ => {
                self.err(v, "expected a positive whole number", None);
                1
            }
        }
    }
}

/// Read sluice.yaml (`src` is its text).
pub fn parse(file: &str, src: &str) -> Result<Settings, Vec<Diagnostic>> {
    let mut s = Settings::default();
    if src.trim().is_empty() {
        return Ok(s);
    }
    let doc = yaml::parse(file, src).map_err(|d| vec![d])?;
    let mut r = Reader {
        file,
        src,
        problems: Vec::new(),
    };
    let mut queue_items = None;
    for (k, v) in r.entries(&doc, "sluice.yaml", TOP_KEYS) {
        match k {
            "http" => {
                for (hk, hv) in r.entries(v, "http", HTTP_KEYS) {
                    match hk {
                        "max_request_bytes" => s.http.max_request_bytes = r.positive(hv),
                        "request_timeout_secs" => s.http.request_timeout_secs = r.positive(hv),
                        "header_timeout_secs" => s.http.header_timeout_secs = r.positive(hv),
                        "reply_timeout_secs" => s.http.reply_timeout_secs = r.positive(hv),
                        _ => s.http.tls = read_tls(&mut r, hv),
                    }
                }
            }
            "queue_manager" => read_qm(&mut r, v, &mut s.queue_manager),
            "admin" => s.admin = Some(read_admin(&mut r, v)),
            "datasources" => read_datasources(&mut r, v, &mut s.datasources),
            "brokers" => read_brokers(&mut r, v, &mut s.brokers),
            "cache" => read_cache(&mut r, v, &mut s.cache),
            "queues" => {
                read_queues(&mut r, v, &mut s.queues);
                queue_items = Some(v);
            }
            _ => {}
        }
    }
    // The queue manager creates its dead-letter queue as a local queue: one defined here as
    // another kind could never be applied. (Checked once every queue item was read, so that
    // the definitions and the items line up.)
    let dlq = &s.queue_manager.dead_letter_queue;
    if r.problems.is_empty()
        && let (Some(def), Some(YamlKind::Seq(items))) = (
            s.queues
                .iter()
                .position(|d| &d.name == dlq && d.kind != sluice_qm::QueueKind::Local),
            queue_items.map(|v| &v.kind),
        )
        && let Some(item) = items.get(def)
    {
        r.err(
            item,
            format!("the dead-letter queue `{dlq}` must be a local queue"),
            Some("define it without `type`, or name another queue in `queue_manager.dead_letter_queue`".into()),
        );
    }
    if r.problems.is_empty() {
        Ok(s)
    } else {
        Err(r.problems)
    }
}

/// A `tls:` map: `cert_file` and `key_file`, both needed.
fn read_tls(r: &mut Reader, v: &Yaml) -> Option<TlsSettings> {
    let mut cert = None;
    let mut key = None;
    for (k, val) in r.entries(v, "tls", TLS_KEYS) {
        let p = val.as_str().map(PathBuf::from);
        if k == "cert_file" { cert = p } else { key = p }
    }
    match (cert, key) {
        (Some(cert_file), Some(key_file)) => Some(TlsSettings {
            cert_file,
            key_file,
        }),
        _ => {
            r.err(v, "`tls` needs `cert_file` and `key_file`", None);
            None
        }
    }
}

/// `cache: { MAP: { persistent: BOOL, ttl_secs: N } }`: the global cache's maps that are
/// written to the data folder or whose entries expire.
fn read_cache(
    r: &mut Reader,
    v: &Yaml,
    out: &mut std::collections::BTreeMap<String, sluice_cache::MapSettings>,
) {
    let YamlKind::Map(m) = &v.kind else {
        r.err(
            v,
            "`cache` maps names of global cache maps to their settings",
            Some("for example `RATES: { persistent: true, ttl_secs: 3600 }`".into()),
        );
        return;
    };
    for (name, def) in m {
        let map = r.text(name);
        let mut settings = sluice_cache::MapSettings::default();
        for (k, val) in r.entries(def, "cache map", CACHE_MAP_KEYS) {
            match k {
                "persistent" => settings.persistent = r.flag(val),
                _ => settings.ttl = Some(std::time::Duration::from_secs(r.positive(val))),
            }
        }
        let file_name = !map.is_empty()
            && !map.starts_with('.')
            && map
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if settings.persistent && !file_name {
            r.err(
                name,
                format!("the persistent cache map `{map}` needs a name that can be a file name"),
                Some("use letters, digits, `.`, `_` and `-`".into()),
            );
        }
        out.insert(map, settings);
    }
}

/// `datasources: { NAME: { sqlite: PATH } }` or
/// `{ postgres: CONNINFO, password_env: VARIABLE }`.
fn read_datasources(
    r: &mut Reader,
    v: &Yaml,
    out: &mut std::collections::BTreeMap<String, sluice_node_api::DatasourceDef>,
) {
    use sluice_node_api::DatasourceDef;
    let YamlKind::Map(m) = &v.kind else {
        r.err(
            v,
            "`datasources` maps names to datasources",
            Some("for example `ORDERS: { sqlite: data/orders.sqlite }`".into()),
        );
        return;
    };
    for (name, def) in m {
        let name = r.text(name);
        let (mut path, mut conninfo, mut password_env) = (None, None, None);
        for (k, val) in r.entries(def, "datasource", DATASOURCE_KEYS) {
            match k {
                "sqlite" => path = Some((val.as_str().map(PathBuf::from), val)),
                "postgres" => conninfo = Some((r.text(val), val)),
                _ => password_env = Some((r.text(val), val)),
            }
        }
        match (path, conninfo) {
            (Some((Some(path), _)), None) if !path.as_os_str().is_empty() => {
                if let Some((_, at)) = password_env {
                    r.err(at, "`password_env` belongs to `postgres` datasources", None);
                }
                out.insert(name, DatasourceDef::Sqlite { path });
            }
            (None, Some((conninfo, at))) => {
                if let Err(e) = sluice_db::check_conninfo(&conninfo) {
                    let why = match &e {
                        sluice_db::DbError::Config { .. } => {
                            format!("bad PostgreSQL connection string: {}", e.database_text())
                        }
                        other => other.to_string(),
                    };
                    r.err(
                        at,
                        format!("datasource `{name}`: {why}"),
                        Some(
                            "write `postgresql://USER@HOST:PORT/DATABASE` or \
                             `host=HOST port=PORT user=USER dbname=DATABASE`"
                                .into(),
                        ),
                    );
                    continue;
                }
                let password_env = match password_env {
                    Some((var, at)) if var.is_empty() => {
                        r.err(at, "`password_env` names an environment variable", None);
                        None
                    }
                    Some((var, _)) => Some(var),
                    None => None,
                };
                out.insert(
                    name,
                    DatasourceDef::Postgres {
                        conninfo,
                        password_env,
                    },
                );
            }
            (Some(_), Some(_)) => r.err(
                def,
                format!("datasource `{name}` is either `sqlite` or `postgres`, not both"),
                None,
            ),
            _ => r.err(
                def,
                format!(
                    "datasource `{name}` needs `sqlite: PATH` (a database file) or \
                     `postgres: CONNINFO` (a PostgreSQL server)"
                ),
                None,
            ),
        }
    }
}

fn read_qm(r: &mut Reader, v: &Yaml, q: &mut QmSettings) {
    for (k, val) in r.entries(v, "queue_manager", QM_KEYS) {
        match k {
            "name" => {
                q.name = r.text(val);
                // A queue manager name follows the rules of queue names (MQ's MQ_Q_MGR_NAME).
                if sluice_qm::validate_name(&q.name).is_err() {
                    r.err(
                        val,
                        format!(
                            "`{}` is not a valid queue manager name (1-48 of A-Z a-z 0-9 . / _ %)",
                            q.name
                        ),
                        None,
                    );
                }
            }
            "tls" => q.tls = read_tls(r, val),
            "dead_letter_queue" => q.dead_letter_queue = r.text(val),
            "allow_anonymous" => q.allow_anonymous = r.flag(val),
            "users" => match &val.kind {
                YamlKind::Map(m) => {
                    for (u, p) in m {
                        let (u, p) = (r.text(u), r.text(p));
                        q.users.push((u, p));
                    }
                }
                _ => r.err(val, "`users` maps user names to passwords", None),
            },
            _ => match &val.kind {
                YamlKind::Seq(items) => {
                    for t in items {
                        let t = r.text(t);
                        q.tokens.push(t);
                    }
                }
                _ => r.err(val, "`tokens` is a list of strings", None),
            },
        }
    }
}

/// `admin:`: users (name → password hash and role) and tokens (hash and role).
fn read_admin(r: &mut Reader, v: &Yaml) -> AdminSettings {
    let mut a = AdminSettings::default();
    for (k, val) in r.entries(v, "admin", ADMIN_KEYS) {
        if k == "users" {
            let YamlKind::Map(m) = &val.kind else {
                r.err(
                    val,
                    "`users` maps user names to `{ password_sha256: HEX, role: ROLE }`",
                    None,
                );
                continue;
            };
            for (name, def) in m {
                let name = r.text(name);
                if let Some(c) = read_credential(r, def, "user", "password_sha256") {
                    a.users.push((name, c));
                }
            }
        } else {
            let YamlKind::Seq(items) = &val.kind else {
                r.err(
                    val,
                    "`tokens` is a list of `{ sha256: HEX, role: ROLE }`",
                    None,
                );
                continue;
            };
            for item in items {
                if let Some(c) = read_credential(r, item, "token", "sha256") {
                    a.tokens.push(c);
                }
            }
        }
    }
    a
}

/// One user's or token's hash and role.
fn read_credential(
    r: &mut Reader,
    v: &Yaml,
    what: &str,
    hash_key: &str,
) -> Option<AdminCredential> {
    let keys = if what == "user" {
        ADMIN_USER_KEYS
    } else {
        ADMIN_TOKEN_KEYS
    };
    let mut hash = None;
    let mut role = None;
    let before = r.problems.len();
    for (k, val) in r.entries(v, what, keys) {
        if k == "role" {
            let t = r.text(val);
            role = match t.as_str() {
                "viewer" => Some(Role::Viewer),
                "operator" => Some(Role::Operator),
                "admin" => Some(Role::Admin),
                other => {
                    r.err(
                        val,
                        format!("unknown role `{other}`"),
                        Some("use viewer, operator or admin".into()),
                    );
                    None
                }
            };
        } else {
            let t = r.text(val).to_ascii_lowercase();
            if t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
                hash = Some(t);
            } else {
                r.err(
                    val,
                    format!("`{hash_key}` must be a SHA-256 as 64 hex digits"),
                    Some("make it with `printf %s 'SECRET' | sha256sum`".into()),
                );
            }
        }
    }
    match (hash, role) {
        (Some(sha256), Some(role)) => Some(AdminCredential { sha256, role }),
        _ => {
            if r.problems.len() == before {
                r.err(v, format!("a {what} needs `{hash_key}` and `role`"), None);
            }
            None
        }
    }
}

const TOP_KEYS: &[&str] = &[
    "http",
    "queues",
    "queue_manager",
    "admin",
    "datasources",
    "brokers",
    "cache",
];
const CACHE_MAP_KEYS: &[&str] = &["persistent", "ttl_secs"];
const ADMIN_KEYS: &[&str] = &["users", "tokens"];
const ADMIN_USER_KEYS: &[&str] = &["password_sha256", "role"];
const ADMIN_TOKEN_KEYS: &[&str] = &["sha256", "role"];
const DATASOURCE_KEYS: &[&str] = &["sqlite", "postgres", "password_env"];
const HTTP_KEYS: &[&str] = &[
    "max_request_bytes",
    "request_timeout_secs",
    "header_timeout_secs",
    "reply_timeout_secs",
    "tls",
];
const TLS_KEYS: &[&str] = &["cert_file", "key_file"];
const QM_KEYS: &[&str] = &[
    "name",
    "dead_letter_queue",
    "allow_anonymous",
    "users",
    "tokens",
    "tls",
];

/// Every key of sluice.yaml, by the mapping it is in: docs/configuration.md must show each.
pub const KEYS: &[(&str, &[&str])] = &[
    ("sluice.yaml", TOP_KEYS),
    ("http", HTTP_KEYS),
    ("tls", TLS_KEYS),
    ("queue_manager", QM_KEYS),
    ("admin", ADMIN_KEYS),
    ("admin user", ADMIN_USER_KEYS),
    ("admin token", ADMIN_TOKEN_KEYS),
    ("queue", QUEUE_KEYS),
    ("datasource", DATASOURCE_KEYS),
    ("broker", BROKER_KEYS),
    ("broker tls", BROKER_TLS_KEYS),
];

const QUEUE_KEYS: &[&str] = &[
    "name",
    "type",
    "target",
    "max_depth",
    "max_msg_length",
    "default_persistence",
    "backout_threshold",
    "backout_queue",
    "put_inhibited",
    "get_inhibited",
    "harden_get_backout",
];

fn read_queues(r: &mut Reader, v: &Yaml, out: &mut Vec<sluice_qm::QueueDef>) {
    let YamlKind::Seq(items) = &v.kind else {
        r.err(
            v,
            "`queues` is a list of queue definitions",
            Some("for example `- { name: ORDERS.IN, max_depth: 10000 }`".into()),
        );
        return;
    };
    for item in items {
        let mut def = sluice_qm::QueueDef::default();
        let mut kind = "local".to_string();
        let mut target = String::new();
        for (k, val) in r.entries(item, "queue", QUEUE_KEYS) {
            match k {
                "name" => def.name = r.text(val),
                "type" => kind = r.text(val),
                "target" => target = r.text(val),
                // 0 is MQ's MAXDEPTH(0): a queue that accepts no message.
                "max_depth" => def.max_depth = r.count(val) as usize,
                "max_msg_length" => def.max_msg_length = r.positive(val) as usize,
                "default_persistence" => {
                    def.default_persistence = match r.text(val).as_str() {
                        "persistent" => sluice_qm::Persistence::Persistent,
                        "not_persistent" => sluice_qm::Persistence::NotPersistent,
                        other => {
                            r.err(
                                val,
                                format!("`{other}` is not persistent or not_persistent"),
                                None,
                            );
                            sluice_qm::Persistence::NotPersistent
                        }
                    }
                }
                "backout_threshold" => def.backout_threshold = r.count(val) as u32,
                "backout_queue" => def.backout_requeue_queue = r.text(val),
                "put_inhibited" => def.put_inhibited = r.flag(val),
                "get_inhibited" => def.get_inhibited = r.flag(val),
                _ => def.harden_get_backout = r.flag(val),
            }
        }
        if def.name.is_empty() {
            r.err(item, "a queue needs a `name`", None);
            continue;
        }
        def.kind = match kind.as_str() {
            "local" => sluice_qm::QueueKind::Local,
            "model" => sluice_qm::QueueKind::Model,
            "alias" if !target.is_empty() => sluice_qm::QueueKind::Alias { target },
            "alias" => {
                r.err(item, "an alias queue needs a `target`", None);
                continue;
            }
            other => {
                r.err(
                    item,
                    format!("unknown queue type `{other}`"),
                    Some("use local, alias or model".into()),
                );
                continue;
            }
        };
        if let Err(e) = sluice_qm::validate_name(&def.name) {
            r.err(item, e.to_string(), None);
            continue;
        }
        if out.iter().any(|d| d.name == def.name) {
            r.err(
                item,
                format!("queue `{}` is defined twice", def.name),
                Some("give each queue one entry".into()),
            );
            continue;
        }
        out.push(def);
    }
}

/// A broker entry's keys: one protocol key (`mqtt`, `kafka`; `amqp` is reserved for its nodes)
/// and its connection settings.
const BROKER_KEYS: &[&str] = &[
    "mqtt",
    "kafka",
    "amqp",
    "client_id",
    "username",
    "password_env",
    "sasl_mechanism",
    "keep_alive_secs",
    "tls",
];
const BROKER_TLS_KEYS: &[&str] = &["ca_file", "cert_file", "key_file"];

/// `brokers: { NAME: { mqtt: URL | kafka: SERVERS, client_id, username, password_env,
/// sasl_mechanism, keep_alive_secs, tls } }`.
fn read_brokers(
    r: &mut Reader,
    v: &Yaml,
    out: &mut std::collections::BTreeMap<String, sluice_node_api::BrokerDef>,
) {
    let YamlKind::Map(m) = &v.kind else {
        r.err(
            v,
            "`brokers` maps names to brokers",
            Some("for example `local: { mqtt: \"tcp://127.0.0.1:1883\" }`".into()),
        );
        return;
    };
    for (name, def) in m {
        let name = r.text(name);
        if let Some(b) = read_broker(r, &name, def) {
            out.insert(name, b);
        }
    }
}

/// The keys of a broker entry, whichever its protocol.
struct BrokerEntry<'y> {
    /// The protocol key, its value as text, and where it is.
    protocol: Option<(&'static str, String, &'y Yaml)>,
    client_id: Option<String>,
    username: Option<String>,
    password_env: Option<String>,
    sasl_mechanism: Option<(String, &'y Yaml)>,
    keep_alive_secs: Option<(u16, &'y Yaml)>,
    tls: Option<sluice_node_api::BrokerTls>,
}

fn read_broker(r: &mut Reader, name: &str, def: &Yaml) -> Option<sluice_node_api::BrokerDef> {
    let before = r.problems.len();
    let mut e = BrokerEntry {
        protocol: None,
        client_id: None,
        username: None,
        password_env: None,
        sasl_mechanism: None,
        keep_alive_secs: None,
        tls: None,
    };
    for (k, val) in r.entries(def, "broker", BROKER_KEYS) {
        match k {
            "mqtt" => e.protocol = Some(("mqtt", r.text(val), val)),
            "kafka" => e.protocol = Some(("kafka", r.text(val), val)),
            "amqp" => r.err(
                val,
                format!("`{k}` brokers are not supported yet"),
                Some("docs/brokers.md says what is there".into()),
            ),
            "client_id" => e.client_id = Some(r.text(val)),
            "username" => e.username = Some(r.text(val)),
            "password_env" => e.password_env = Some(r.text(val)),
            "sasl_mechanism" => e.sasl_mechanism = Some((r.text(val), val)),
            "keep_alive_secs" => {
                e.keep_alive_secs = Some((u16::try_from(r.positive(val)).unwrap_or(u16::MAX), val))
            }
            _ => {
                let mut tls = sluice_node_api::BrokerTls::default();
                for (tk, tv) in r.entries(val, "tls", BROKER_TLS_KEYS) {
                    let p = Some(PathBuf::from(r.text(tv)));
                    match tk {
                        "ca_file" => tls.ca_file = p,
                        "cert_file" => tls.cert_file = p,
                        _ => tls.key_file = p,
                    }
                }
                if tls.cert_file.is_some() != tls.key_file.is_some() {
                    r.err(
                        val,
                        "a client certificate needs both `cert_file` and `key_file`",
                        None,
                    );
                }
                e.tls = Some(tls);
            }
        }
    }
    let Some((protocol, text, at)) = e.protocol.take() else {
        if r.problems.len() == before {
            r.err(
                def,
                format!("broker `{name}` needs a protocol key"),
                Some(
                    "for example `mqtt: \"tcp://127.0.0.1:1883\"` or `kafka: \"127.0.0.1:9092\"`"
                        .into(),
                ),
            );
        }
        return None;
    };
    let b = if protocol == "kafka" {
        kafka_broker(r, e, text, at)
    } else {
        mqtt_broker(r, e, text, at)
    };
    b.filter(|_| r.problems.len() == before)
}

fn mqtt_broker(
    r: &mut Reader,
    e: BrokerEntry,
    text: String,
    at: &Yaml,
) -> Option<sluice_node_api::BrokerDef> {
    if let Some((_, v)) = &e.sasl_mechanism {
        r.err(
            v,
            "`sasl_mechanism` belongs to `kafka` brokers",
            Some("MQTT sends `username` and the password in its CONNECT".into()),
        );
    }
    match parse_mqtt_url(&text) {
        Ok((tls, host, port)) => {
            let tls = match e.tls {
                None if tls => Some(sluice_node_api::BrokerTls::default()),
                t => t,
            };
            Some(sluice_node_api::BrokerDef::Mqtt(
                sluice_node_api::MqttBroker {
                    url: text,
                    host,
                    port,
                    client_id: e.client_id,
                    username: e.username,
                    password_env: e.password_env,
                    tls,
                    keep_alive_secs: e.keep_alive_secs.map_or(30, |(s, _)| s),
                },
            ))
        }
        Err(why) => {
            r.err(
                at,
                format!("`{text}` is not an MQTT URL: {why}"),
                Some("write `tcp://HOST:PORT`, or `ssl://HOST:PORT` for TLS".into()),
            );
            None
        }
    }
}

fn kafka_broker(
    r: &mut Reader,
    e: BrokerEntry,
    text: String,
    at: &Yaml,
) -> Option<sluice_node_api::BrokerDef> {
    use sluice_node_api::KafkaSasl;
    if let Some((_, v)) = &e.keep_alive_secs {
        r.err(v, "`keep_alive_secs` belongs to `mqtt` brokers", None);
    }
    let sasl_mechanism = match &e.sasl_mechanism {
        None => KafkaSasl::Plain,
        Some((m, v)) => match KafkaSasl::from_name(m) {
            Some(m) if e.username.is_some() => m,
            Some(_) => {
                r.err(v, "`sasl_mechanism` needs a `username`", None);
                return None;
            }
            None => {
                r.err(
                    v,
                    format!("`{m}` is not a SASL mechanism Kafka nodes offer"),
                    Some("write PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512".into()),
                );
                return None;
            }
        },
    };
    if e.password_env.is_some() && e.username.is_none() {
        r.err(at, "`password_env` needs a `username` (SASL)", None);
        return None;
    }
    if let Err(why) = check_bootstrap(&text) {
        r.err(
            at,
            format!("`{text}` is not a list of bootstrap servers: {why}"),
            Some("write `HOST:PORT`, several separated by commas".into()),
        );
        return None;
    }
    Some(sluice_node_api::BrokerDef::Kafka(
        sluice_node_api::KafkaBroker {
            bootstrap_servers: text,
            client_id: e.client_id,
            username: e.username,
            password_env: e.password_env,
            sasl_mechanism,
            tls: e.tls,
        },
    ))
}

/// Kafka's bootstrap list: `host:port`, comma-separated, each with a host and a port.
fn check_bootstrap(servers: &str) -> Result<(), String> {
    for s in servers.split(',').map(str::trim) {
        let Some((host, port)) = s.rsplit_once(':') else {
            return Err(format!("`{s}` has no port"));
        };
        if host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .is_empty()
            || host.contains('/')
        {
            return Err(format!("`{s}` has no host"));
        }
        if port.parse::<u16>().map_or(true, |p| p == 0) {
            return Err(format!("`{port}` is not a port"));
        }
    }
    Ok(())
}

/// `tcp://host:port` (also `mqtt://`) or `ssl://host:port` (also `mqtts://`, `tls://`): whether
/// TLS, the host and the port (1883, or 8883 with TLS, when none is given).
fn parse_mqtt_url(url: &str) -> Result<(bool, String, u16), String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| "it has no scheme".to_string())?;
    let tls = match scheme {
        "tcp" | "mqtt" => false,
        "ssl" | "mqtts" | "tls" => true,
        other => return Err(format!("unknown scheme `{other}`")),
    };
    let rest = rest.trim_end_matches('/');
    let (host, port) = match rest.rsplit_once(':') {
        // `[::1]` alone splits inside its brackets: it has no port.
        Some((h, p)) if !p.contains(']') => {
            let port = p
                .parse::<u16>()
                .map_err(|_| format!("`{p}` is not a port"))?;
            (h, port)
        }
        _ => (rest, if tls { 8883 } else { 1883 }),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() || host.contains('/') {
        return Err("it has no host".into());
    }
    Ok((tls, host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::parse;

    fn problems(src: &str) -> Vec<String> {
        match parse("sluice.yaml", src) {
            Ok(_) => Vec::new(),
            Err(d) => d.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn a_queue_defined_twice_and_a_bad_queue_manager_name_fail_with_their_line() {
        let p = problems("queues:\n  - { name: A }\n  - { name: A, max_depth: 2 }\n");
        assert!(
            p.len() == 1 && p[0].contains("sluice.yaml:3:") && p[0].contains("defined twice"),
            "{p:?}"
        );
        let p = problems("queue_manager:\n  name: bad name\n");
        assert!(
            p.len() == 1 && p[0].contains("sluice.yaml:2:") && p[0].contains("queue manager name"),
            "{p:?}"
        );
        assert!(problems("queue_manager:\n  name: QM1\nqueues:\n  - { name: A }\n").is_empty());
        let p = problems(
            "queue_manager:\n  dead_letter_queue: DLA\nqueues:\n  - { name: Y.IN }\n  - { name: DLA, type: alias, target: Y.IN }\n",
        );
        assert!(
            p.len() == 1
                && p[0].contains("sluice.yaml:5:")
                && p[0].contains("must be a local queue"),
            "{p:?}"
        );
        let p = problems("queues:\n  - { name: H, harden_get_backout: true }\n");
        assert!(p.is_empty(), "{p:?}");
        let s = super::parse(
            "sluice.yaml",
            "queues:\n  - { name: H, harden_get_backout: true }\n",
        );
        assert!(s.expect("valid").queues[0].harden_get_backout);
    }

    #[test]
    fn brokers_parse_mqtt_urls_and_fail_with_their_line_when_wrong() {
        let s = super::parse(
            "sluice.yaml",
            "brokers:\n  local: { mqtt: \"tcp://127.0.0.1:1884\", client_id: c1, username: u, password_env: PW }\n  secure: { mqtt: \"ssl://broker.example\" }\n",
        )
        .expect("valid");
        let Some(sluice_node_api::BrokerDef::Mqtt(b)) = s.brokers.get("local") else {
            panic!("{:?}", s.brokers);
        };
        assert_eq!((b.host.as_str(), b.port), ("127.0.0.1", 1884));
        assert_eq!(b.client_id.as_deref(), Some("c1"));
        assert!(b.tls.is_none());
        let Some(sluice_node_api::BrokerDef::Mqtt(b)) = s.brokers.get("secure") else {
            panic!("{:?}", s.brokers);
        };
        assert_eq!(b.port, 8883);
        assert!(b.tls.is_some());
        let p = problems(
            "brokers:\n  a: { mqtt: \"http://x:1\" }\n  b: { amqp: \"x:5672\" }\n  c: { client_id: x }\n",
        );
        assert!(
            p.len() == 3
                && p[0].contains("sluice.yaml:2:")
                && p[1].contains("sluice.yaml:3:")
                && p[1].contains("not supported yet")
                && p[2].contains("sluice.yaml:4:"),
            "{p:?}"
        );
    }

    #[test]
    fn brokers_parse_kafka_entries_and_fail_with_their_line_when_wrong() {
        use sluice_node_api::{BrokerDef, KafkaSasl};
        let s = super::parse(
            "sluice.yaml",
            "brokers:\n  events: { kafka: \"k1:9092,k2:9093\", client_id: app }\n  cloud:\n    kafka: \"cloud.example:9094\"\n    username: app\n    password_env: KAFKA_PW\n    sasl_mechanism: scram-sha-512\n    tls: {}\n",
        )
        .expect("valid");
        let Some(BrokerDef::Kafka(b)) = s.brokers.get("events") else {
            panic!("{:?}", s.brokers);
        };
        assert_eq!(b.bootstrap_servers, "k1:9092,k2:9093");
        assert_eq!(b.client_id.as_deref(), Some("app"));
        assert!(b.tls.is_none() && b.username.is_none());
        let Some(BrokerDef::Kafka(b)) = s.brokers.get("cloud") else {
            panic!("{:?}", s.brokers);
        };
        assert_eq!(b.sasl_mechanism, KafkaSasl::ScramSha512);
        assert_eq!(b.password_env.as_deref(), Some("KAFKA_PW"));
        assert!(b.tls.is_some());
        let p = problems(
            "brokers:\n  a: { kafka: \"nohost\" }\n  b: { kafka: \"x:1\", keep_alive_secs: 5 }\n  c: { kafka: \"x:1\", username: u, sasl_mechanism: GSSAPI }\n  d: { mqtt: \"tcp://x\", sasl_mechanism: PLAIN }\n",
        );
        assert!(
            p.len() == 4
                && p[0].contains("sluice.yaml:2:")
                && p[1].contains("sluice.yaml:3:")
                && p[2].contains("sluice.yaml:4:")
                && p[2].contains("SASL")
                && p[3].contains("sluice.yaml:5:"),
            "{p:?}"
        );
    }

    #[test]
    fn cache_maps_load_and_a_persistent_map_needs_a_file_name() {
        let s = parse(
            "sluice.yaml",
            "cache:\n  RATES: { persistent: true, ttl_secs: 60 }\n  'a b': { ttl_secs: 5 }\n",
        )
        .expect("valid");
        assert_eq!(
            s.cache["RATES"],
            sluice_cache::MapSettings {
                persistent: true,
                ttl: Some(std::time::Duration::from_secs(60)),
            }
        );
        assert!(!s.cache["a b"].persistent);
        let p = problems("cache:\n  '../x': { persistent: true }\n");
        assert!(
            p.len() == 1 && p[0].contains("sluice.yaml:2:") && p[0].contains("file name"),
            "{p:?}"
        );
        let p = problems("cache:\n  X: { ttl: 5 }\n");
        assert!(p.len() == 1 && p[0].contains("ttl"), "{p:?}");
    }

    #[test]
    fn postgres_datasources_load_and_bad_entries_fail_with_their_line() {
        use sluice_node_api::DatasourceDef;
        let s = parse(
            "sluice.yaml",
            "datasources:\n  A: { postgres: 'postgresql://app@db:5432/orders', password_env: PG_A }\n  B: { postgres: 'host=db dbname=orders' }\n  C: { sqlite: c.sqlite }\n",
        )
        .expect("valid");
        assert_eq!(
            s.datasources["A"],
            DatasourceDef::Postgres {
                conninfo: "postgresql://app@db:5432/orders".into(),
                password_env: Some("PG_A".into()),
            }
        );
        assert!(matches!(
            &s.datasources["B"],
            DatasourceDef::Postgres {
                password_env: None,
                ..
            }
        ));
        assert!(matches!(&s.datasources["C"], DatasourceDef::Sqlite { .. }));
        let p = problems("datasources:\n  A:\n    postgres: 'dbname=x'\n");
        assert!(
            p.len() == 1 && p[0].contains("sluice.yaml:3:") && p[0].contains("no host"),
            "{p:?}"
        );
        let p = problems("datasources:\n  A: { postgres: 'host=db', sqlite: a.sqlite }\n");
        assert!(p.len() == 1 && p[0].contains("not both"), "{p:?}");
        let p = problems("datasources:\n  A: { sqlite: a.sqlite, password_env: X }\n");
        assert!(
            p.len() == 1 && p[0].contains("belongs to `postgres`"),
            "{p:?}"
        );
        let p = problems("datasources:\n  A: { postgres: 'postgresql://[::1' }\n");
        assert!(p.len() == 1 && p[0].contains("sluice.yaml:2:"), "{p:?}");
    }
}

#[cfg(test)]
mod admin_tests {
    use super::{Role, parse};

    const HASH: &str = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";

    #[test]
    fn admin_users_and_tokens_are_read_with_their_roles_when_valid() {
        let s = parse(
            "sluice.yaml",
            &format!(
                "admin:\n  users:\n    alice: {{ password_sha256: {HASH}, role: admin }}\n  tokens:\n    - {{ sha256: {}, role: viewer }}\n",
                HASH.to_uppercase()
            ),
        )
        .expect("valid");
        let a = s.admin.expect("admin");
        assert_eq!(a.users[0].0, "alice");
        assert_eq!(a.users[0].1.role, Role::Admin);
        assert_eq!(a.tokens[0].sha256, HASH);
        assert_eq!(a.tokens[0].role, Role::Viewer);
        assert!(
            parse("sluice.yaml", "http: {}\n")
                .expect("valid")
                .admin
                .is_none()
        );
    }

    #[test]
    fn admin_settings_fail_with_their_line_when_a_hash_or_role_is_wrong() {
        let p = parse(
            "sluice.yaml",
            "admin:\n  users:\n    bob: { password_sha256: secret, role: admin }\n",
        )
        .expect_err("plain password");
        assert!(p[0].to_string().contains("sluice.yaml:3:"), "{}", p[0]);
        assert!(p[0].to_string().contains("64 hex digits"), "{}", p[0]);
        let p = parse(
            "sluice.yaml",
            &format!("admin:\n  tokens:\n    - {{ sha256: {HASH}, role: root }}\n"),
        )
        .expect_err("bad role");
        assert!(p[0].to_string().contains("sluice.yaml:3:"), "{}", p[0]);
        assert!(p[0].to_string().contains("unknown role `root`"), "{}", p[0]);
        assert!(Role::Viewer < Role::Operator && Role::Operator < Role::Admin);
    }
}

#[cfg(test)]
mod doc_tests {
    use super::KEYS;

    #[test]
    fn configuration_md_shows_every_sluice_yaml_key() {
        let doc = include_str!("../../../docs/configuration.md");
        let yaml = &doc[doc.find("## sluice.yaml").expect("a sluice.yaml section")..];
        for (section, keys) in KEYS {
            for key in *keys {
                assert!(
                    yaml.contains(&format!("{key}:")),
                    "docs/configuration.md does not show `{key}` of `{section}`"
                );
            }
        }
    }
}
