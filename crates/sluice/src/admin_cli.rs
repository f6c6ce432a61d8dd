//! `sluice admin`: deploy and control a running server through its admin API (the jobs of the
//! product's `mqsideploy`, `mqsistartmsgflow`, `mqsistopmsgflow` and `mqsireportflowstats`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use serde_json::Value;

#[derive(Args)]
pub struct AdminArgs {
    /// The server's admin API.
    #[arg(long, global = true, default_value = "http://127.0.0.1:7801")]
    server: String,
    /// User name (with --password), when the server requires credentials.
    #[arg(long, global = true, default_value = "")]
    user: String,
    /// The password of --user.
    #[arg(long, global = true, default_value = "")]
    password: String,
    /// Bearer token, instead of user and password (default: $SLUICE_ADMIN_TOKEN).
    #[arg(long, global = true, default_value = "")]
    token: String,
    /// JSON output instead of tables.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: AdminCommand,
}

#[derive(Subcommand)]
enum AdminCommand {
    /// Deploy a project: a tar or tar.gz archive, or a project folder (its flows/, subflows/
    /// and esql/ are sent; sluice.yaml is not).
    Deploy { archive: PathBuf },
    /// Put the version the last deploy replaced back.
    Rollback,
    /// List the deployed flows with their state.
    Flows,
    /// Start a stopped flow.
    Start { flow: String },
    /// Stop a flow after the messages it has accepted.
    Stop { flow: String },
    /// Build a flow from its files again and replace it.
    Restart { flow: String },
    /// Redeploy a flow with N instances.
    Instances { flow: String, n: usize },
    /// Statistics per flow (or of one flow): invocations, errors, average elapsed and CPU time.
    Stats { flow: Option<String> },
}

/// One HTTP/1.1 request on a new connection; the status and body of the answer. The admin
/// API answers with a length and closes the connection, so the body is all that follows the
/// head.
pub fn http(
    host: &str,
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, String)],
    body: &[u8],
) -> std::io::Result<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect((host, port))?;
    s.set_read_timeout(Some(Duration::from_secs(120)))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    let mut all = Vec::new();
    s.read_to_end(&mut all)?;
    let malformed = || std::io::Error::new(std::io::ErrorKind::InvalidData, "a malformed response");
    let end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(malformed)?;
    let status = std::str::from_utf8(&all[..end])
        .ok()
        .and_then(|h| h.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(malformed)?;
    Ok((status, all[end + 4..].to_vec()))
}

/// Host, port and path prefix of an `http://HOST[:PORT][/PREFIX]` URL.
fn parse_server(url: &str) -> Result<(String, u16, String)> {
    let Some(rest) = url.strip_prefix("http://") else {
        bail!("--server {url}: give an http:// URL, such as http://127.0.0.1:7801");
    };
    let (authority, prefix) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let port_of = |p: &str| -> Result<u16> {
        p.parse()
            .with_context(|| format!("--server {url}: `{p}` is not a port"))
    };
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let Some((h, after)) = bracketed.split_once(']') else {
            bail!("--server {url}: an IPv6 address needs its closing ]");
        };
        match after.strip_prefix(':') {
            Some(p) => (h, port_of(p)?),
            None => (h, 80),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, port_of(p)?),
            None => (authority, 80),
        }
    };
    if host.is_empty() {
        bail!("--server {url}: no host");
    }
    Ok((host.to_string(), port, prefix.to_string()))
}

struct Api {
    host: String,
    port: u16,
    prefix: String,
    auth: Option<String>,
}

impl Api {
    fn new(a: &AdminArgs) -> Result<Api> {
        use base64::Engine;
        let (host, port, prefix) = parse_server(&a.server)?;
        let token = if a.token.is_empty() {
            std::env::var("SLUICE_ADMIN_TOKEN").unwrap_or_default()
        } else {
            a.token.clone()
        };
        let auth = if !a.user.is_empty() {
            let up = format!("{}:{}", a.user, a.password);
            Some(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(up)
            ))
        } else if !token.is_empty() {
            Some(format!("Bearer {token}"))
        } else {
            None
        };
        Ok(Api {
            host,
            port,
            prefix,
            auth,
        })
    }

    /// The JSON of a 2xx answer; otherwise an error with the server's message (and its list
    /// of problems, for a deploy).
    fn call(&self, method: &str, path: &str, content_type: &str, body: &[u8]) -> Result<Value> {
        let mut headers = vec![("Content-Type", content_type.to_string())];
        if let Some(a) = &self.auth {
            headers.push(("Authorization", a.clone()));
        }
        let full = format!("{}{path}", self.prefix);
        let (status, answer) = http(&self.host, self.port, method, &full, &headers, body)
            .with_context(|| {
                format!(
                    "{method} {full} on the admin API at {}:{}",
                    self.host, self.port
                )
            })?;
        let v: Value = serde_json::from_slice(&answer)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&answer).trim().to_string()));
        if (200..300).contains(&status) {
            return Ok(v);
        }
        let msg = v["error"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string());
        bail!("the server answered {status}: {}", msg.trim_end())
    }

    fn get(&self, path: &str) -> Result<Value> {
        self.call("GET", path, "application/json", b"")
    }

    fn post(&self, path: &str) -> Result<Value> {
        self.call("POST", path, "application/json", b"")
    }
}

/// A project folder's flows/, subflows/ and esql/ as a tar.gz.
fn tar_folder(dir: &Path) -> Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut b = tar::Builder::new(gz);
    let mut any = false;
    for part in sluice_server::archive::PARTS {
        let p = dir.join(part);
        if p.is_dir() {
            b.append_dir_all(part, &p)
                .with_context(|| format!("cannot archive {}", p.display()))?;
            any = true;
        }
    }
    if !any {
        bail!(
            "{} holds none of flows/, subflows/, esql/: it is not a project folder",
            dir.display()
        );
    }
    let gz = b.into_inner().context("cannot finish the archive")?;
    gz.finish().context("cannot finish the archive")
}

fn count(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..cols)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, w))| {
                // Names left, figures right.
                if i == 0 || i == 1 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The statistics table: flow, state, invocations, errors, avg µs, avg CPU µs.
fn stats_table(flows: &[Value]) -> String {
    let mut rows = vec![
        [
            "FLOW",
            "STATE",
            "INVOCATIONS",
            "ERRORS",
            "AVG µs",
            "AVG CPU µs",
        ]
        .map(str::to_string)
        .to_vec(),
    ];
    for f in flows {
        let s = &f["statistics"];
        rows.push(vec![
            f["name"].as_str().unwrap_or_default().to_string(),
            f["state"].as_str().unwrap_or("running").to_string(),
            count(&s["invocations"]).to_string(),
            count(&s["errors"]).to_string(),
            format!("{:.1}", s["avg_elapsed_us"].as_f64().unwrap_or(0.0)),
            format!("{:.1}", s["avg_cpu_us"].as_f64().unwrap_or(0.0)),
        ]);
    }
    table(&rows)
}

fn flows_table(flows: &[Value]) -> String {
    let mut rows = vec![
        ["FLOW", "STATE", "INSTANCES", "FILE"]
            .map(str::to_string)
            .to_vec(),
    ];
    for f in flows {
        rows.push(vec![
            f["name"].as_str().unwrap_or_default().to_string(),
            f["state"].as_str().unwrap_or("running").to_string(),
            count(&f["instances"]).to_string(),
            f["file"].as_str().unwrap_or_default().to_string(),
        ]);
    }
    table(&rows)
}

fn flow_path(flow: &str, action: &str) -> String {
    format!("/api/v1/flows/{flow}/{action}")
}

fn exec(a: &AdminArgs) -> Result<String> {
    let api = Api::new(a)?;
    let print = |v: &Value, text: String| {
        if a.json { format!("{v}\n") } else { text }
    };
    Ok(match &a.command {
        AdminCommand::Deploy { archive } => {
            let bytes = if archive.is_dir() {
                tar_folder(archive)?
            } else {
                std::fs::read(archive)
                    .with_context(|| format!("cannot read {}", archive.display()))?
            };
            let kind = if bytes.starts_with(&[0x1f, 0x8b]) {
                "application/gzip"
            } else {
                "application/x-tar"
            };
            let v = api.call("POST", "/api/v1/deploy", kind, &bytes)?;
            print(&v, format!("deployed: {} flows\n", count(&v["flows"])))
        }
        AdminCommand::Rollback => {
            let v = api.post("/api/v1/deploy/rollback")?;
            print(&v, format!("rolled back: {} flows\n", count(&v["flows"])))
        }
        AdminCommand::Flows => {
            let v = api.get("/api/v1/flows")?;
            print(&v, flows_table(v.as_array().map_or(&[], Vec::as_slice)))
        }
        AdminCommand::Start { flow }
        | AdminCommand::Stop { flow }
        | AdminCommand::Restart { flow } => {
            let action = match &a.command {
                AdminCommand::Start { .. } => "start",
                AdminCommand::Stop { .. } => "stop",
                _ => "restart",
            };
            let v = api.post(&flow_path(flow, action))?;
            let already = if v["changed"] == Value::Bool(false) {
                " (already)"
            } else {
                ""
            };
            print(
                &v,
                format!(
                    "{flow}: {}{already}\n",
                    v["state"].as_str().unwrap_or_default()
                ),
            )
        }
        AdminCommand::Instances { flow, n } => {
            let body = serde_json::json!({ "instances": n }).to_string();
            let v = api.call(
                "PUT",
                &flow_path(flow, "instances"),
                "application/json",
                body.as_bytes(),
            )?;
            print(&v, format!("{flow}: {n} instances\n"))
        }
        AdminCommand::Stats { flow } => {
            let v = match flow {
                Some(f) => Value::Array(vec![api.get(&format!("/api/v1/flows/{f}"))?]),
                None => api.get("/api/v1/flows")?,
            };
            print(&v, stats_table(v.as_array().map_or(&[], Vec::as_slice)))
        }
    })
}

pub fn run(a: AdminArgs) -> ExitCode {
    match exec(&a) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_server_reads_host_port_and_prefix_when_given() {
        assert_eq!(
            parse_server("http://127.0.0.1:7801").expect("url"),
            ("127.0.0.1".into(), 7801, String::new())
        );
        assert_eq!(
            parse_server("http://admin.example/sluice/").expect("url"),
            ("admin.example".into(), 80, "/sluice".into())
        );
        assert_eq!(
            parse_server("http://[::1]:9").expect("url"),
            ("::1".into(), 9, String::new())
        );
        assert!(parse_server("https://x:1").is_err());
        assert!(parse_server("http://x:port").is_err());
    }

    #[test]
    fn stats_table_shows_averages_per_flow_when_listed() {
        let flows = vec![serde_json::json!({
            "name": "orders", "state": "stopped",
            "statistics": {"invocations": 10, "errors": 1, "avg_elapsed_us": 12.34, "avg_cpu_us": 5.0}
        })];
        let t = stats_table(&flows);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("FLOW"), "{t}");
        let cells: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(
            cells,
            ["orders", "stopped", "10", "1", "12.3", "5.0"],
            "{t}"
        );
    }
}
