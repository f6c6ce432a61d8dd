//! `sluice.yaml`: the server settings of a project. Every setting is optional.
//!
//! ```yaml
//! http:
//!   max_request_bytes: 104857600   # larger bodies get 413
//!   request_timeout_secs: 60       # a client slower than this sending its request gets 408
//!   header_timeout_secs: 10        # ... or, while sending its headers, loses the connection
//!   reply_timeout_secs: 180        # a flow slower than this to reply gets 504
//!   tls: { cert_file: certs/server.pem, key_file: certs/server.key }
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

/// Everything sluice.yaml sets.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    pub http: HttpSettings,
    /// The `queues` section, kept for the queue manager.
    pub queues: Option<Yaml>,
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

    fn secs(&mut self, v: &Yaml) -> u64 {
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
    for (k, v) in r.entries(&doc, "sluice.yaml", &["http", "queues", "queue_manager"]) {
        match k {
            "http" => {
                for (hk, hv) in r.entries(
                    v,
                    "http",
                    &[
                        "max_request_bytes",
                        "request_timeout_secs",
                        "header_timeout_secs",
                        "reply_timeout_secs",
                        "tls",
                    ],
                ) {
                    match hk {
                        "max_request_bytes" => s.http.max_request_bytes = r.secs(hv),
                        "request_timeout_secs" => s.http.request_timeout_secs = r.secs(hv),
                        "header_timeout_secs" => s.http.header_timeout_secs = r.secs(hv),
                        "reply_timeout_secs" => s.http.reply_timeout_secs = r.secs(hv),
                        _ => {
                            let mut cert = None;
                            let mut key = None;
                            for (tk, tv) in r.entries(hv, "tls", &["cert_file", "key_file"]) {
                                let p = tv.as_str().map(PathBuf::from);
                                if tk == "cert_file" { cert = p } else { key = p }
                            }
                            match (cert, key) {
                                (Some(cert_file), Some(key_file)) => {
                                    s.http.tls = Some(TlsSettings {
                                        cert_file,
                                        key_file,
                                    })
                                }
                                _ => r.err(hv, "`tls` needs `cert_file` and `key_file`", None),
                            }
                        }
                    }
                }
            }
            "queues" | "queue_manager" => s.queues = Some(v.clone()),
            _ => {}
        }
    }
    if r.problems.is_empty() {
        Ok(s)
    } else {
        Err(r.problems)
    }
}
