//! A persistent map's file: `DATA_DIR/cache/NAME.map`, one entry a line after a version line:
//!
//! ```text
//! sluice-cache 1
//! KEY-HEX EXPIRES-MS-OR-DASH TYPE VALUE-HEX
//! ```
//!
//! Key and value are hexadecimal (the value's UTF-8 text form, or a BLOB's bytes), so that no
//! key or value can break a line. The file is written whole to a temporary file and renamed
//! over the old one, so a crash while writing leaves the previous version.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use sluice_esql_scalar::{BitString, DataType, Value, cast};

use crate::{CacheError, CacheMap, Entry};

const HEADER: &str = "sluice-cache 1";

pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

pub(crate) fn file_name(name: &str) -> String {
    format!("{name}.map")
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|p| u8::from_str_radix(p, 16).ok()))
        .collect()
}

/// The type word and the bytes a value is written as.
fn encode(value: &Value) -> Option<(&'static str, Vec<u8>)> {
    let text = |v: &Value| {
        let s = cast::to_character(v).ok()?;
        // Datetime values print as literals (`DATE '2026-01-31'`): keep the quoted part.
        let inner = match (s.find('\''), s.rfind('\'')) {
            (Some(a), Some(b)) if b > a => s[a + 1..b].to_string(),
            _ => s,
        };
        Some(inner.into_bytes())
    };
    Some(match value {
        Value::Boolean(b) => ("BOOLEAN", if *b { b"1".to_vec() } else { b"0".to_vec() }),
        Value::Integer(i) => ("INTEGER", i.to_string().into_bytes()),
        Value::Float(f) => ("FLOAT", f.to_bits().to_string().into_bytes()),
        Value::Character(s) => ("CHARACTER", s.as_str().as_bytes().to_vec()),
        Value::Blob(b) => ("BLOB", b.to_vec()),
        Value::Bit(b) => ("BIT", b.digits().into_bytes()),
        Value::Decimal(_) => ("DECIMAL", text(value)?),
        Value::Date(_) => ("DATE", text(value)?),
        Value::Time(_) => ("TIME", text(value)?),
        Value::GmtTime(_) => ("GMTTIME", text(value)?),
        Value::Timestamp(_) => ("TIMESTAMP", text(value)?),
        Value::GmtTimestamp(_) => ("GMTTIMESTAMP", text(value)?),
        Value::Null | Value::Interval(_) => return None,
    })
}

fn decode(ty: &str, bytes: Vec<u8>) -> Option<Value> {
    let text = || String::from_utf8(bytes.clone()).ok();
    let via = |t: DataType| cast(&Value::from_string(text()?), t).ok();
    match ty {
        "BOOLEAN" => Some(Value::Boolean(bytes == b"1")),
        "INTEGER" => text()?.parse().ok().map(Value::Integer),
        "FLOAT" => text()?
            .parse()
            .ok()
            .map(|b| Value::Float(f64::from_bits(b))),
        "CHARACTER" => text().map(Value::from_string),
        "BLOB" => Some(Value::from_bytes(bytes)),
        "BIT" => BitString::parse(&text()?).map(Value::Bit),
        "DECIMAL" => via(DataType::Decimal(None)),
        "DATE" => via(DataType::Date),
        "TIME" => via(DataType::Time),
        "GMTTIME" => via(DataType::GmtTime),
        "TIMESTAMP" => via(DataType::Timestamp),
        "GMTTIMESTAMP" => via(DataType::GmtTimestamp),
        _ => None,
    }
}

pub(crate) fn save(map: &CacheMap, path: &Path, now: i64) -> Result<(), CacheError> {
    let mut out = String::from(HEADER);
    out.push('\n');
    for (key, e) in map.snapshot(now) {
        // Values the cache refuses cannot be in it; skipping keeps the file readable anyway.
        let Some((ty, bytes)) = encode(&e.value) else {
            continue;
        };
        let expires = e
            .expires_ms
            .map_or_else(|| "-".to_string(), |x| x.to_string());
        let _ = writeln!(
            out,
            "{} {expires} {ty} {}",
            hex(key.as_bytes()),
            hex(&bytes)
        );
    }
    let io = |source| CacheError::Io {
        path: path.to_path_buf(),
        source,
    };
    let tmp = path.with_extension("map.tmp");
    let mut f = std::fs::File::create(&tmp).map_err(io)?;
    f.write_all(out.as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(io)
}

pub(crate) fn load(map: &CacheMap, path: &Path, now: i64) -> Result<(), CacheError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(CacheError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let corrupt = |line: usize, why: &str| CacheError::Corrupt {
        path: path.to_path_buf(),
        line,
        why: why.to_string(),
    };
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, HEADER)) => {}
        _ => return Err(corrupt(1, "not a global cache file (or a newer version)")),
    }
    for (i, line) in lines {
        let n = i + 1;
        let mut parts = line.split(' ');
        let (Some(k), Some(x), Some(ty), Some(v), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(corrupt(n, "expected KEY EXPIRES TYPE VALUE"));
        };
        let key = unhex(k)
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| corrupt(n, "the key is not hexadecimal UTF-8"))?;
        let expires_ms = match x {
            "-" => None,
            x => Some(
                x.parse::<i64>()
                    .map_err(|_| corrupt(n, "the expiry is not a number"))?,
            ),
        };
        let bytes = unhex(v).ok_or_else(|| corrupt(n, "the value is not hexadecimal"))?;
        let value = decode(ty, bytes).ok_or_else(|| corrupt(n, &format!("not a {ty} value")))?;
        let e = Entry { value, expires_ms };
        if e.live(now) {
            map.shard(&key).write().insert(key, e);
        }
    }
    Ok(())
}
