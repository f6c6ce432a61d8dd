//! The global cache's functions: `CACHE_GET(map, key)`, `CACHE_PUT(map, key, value [, ttl])`,
//! `CACHE_UPDATE(map, key, value [, ttl])`, `CACHE_REMOVE(map, key)`,
//! `CACHE_CONTAINS(map, key)`, `CACHE_CLEAR(map)` and `CACHE_SIZE(map)`. Keys are compared as
//! their CHARACTER form; a failed put or update is an exception a handler can catch.

use std::time::Duration;

use sluice_esql_scalar::{self as scalar, Value};

use super::{Exec, Frame, R, RtError};
use crate::runtime::ir::{CacheFn, Ex};

fn name_of(f: CacheFn) -> &'static str {
    match f {
        CacheFn::Get => "CACHE_GET",
        CacheFn::Put => "CACHE_PUT",
        CacheFn::Update => "CACHE_UPDATE",
        CacheFn::Remove => "CACHE_REMOVE",
        CacheFn::Contains => "CACHE_CONTAINS",
        CacheFn::Clear => "CACHE_CLEAR",
        CacheFn::Size => "CACHE_SIZE",
    }
}

fn text_arg(f: CacheFn, what: &str, v: &Value) -> R<String> {
    if v.is_null() {
        return Err(RtError::general(format!(
            "{}: the {what} is NULL",
            name_of(f)
        )));
    }
    Ok(scalar::cast::to_character(v)?)
}

fn ttl_arg(f: CacheFn, v: Option<&Value>) -> R<Option<Duration>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Integer(s)) if *s > 0 => Ok(Some(Duration::from_secs(s.unsigned_abs()))),
        Some(other) => Err(RtError::general(format!(
            "{}: the time-to-live must be a positive INTEGER of seconds, not {other}",
            name_of(f)
        ))),
    }
}

fn count(n: usize) -> Value {
    Value::Integer(i64::try_from(n).unwrap_or(i64::MAX))
}

impl Exec<'_> {
    pub(super) fn cache_fn(&mut self, frame: &mut Frame, f: CacheFn, args: &[Ex]) -> R<Value> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.scalar(frame, a)?);
        }
        let Some(cache) = self.cache else {
            return Err(RtError::general(format!(
                "{}: there is no global cache where this module runs",
                name_of(f)
            )));
        };
        let map_name = text_arg(f, "map name", vals.first().unwrap_or(&Value::Null))?;
        let map = cache.map(&map_name);
        let key = || text_arg(f, "key", vals.get(1).unwrap_or(&Value::Null));
        let failed = |e: sluice_cache::CacheError| RtError::general(e.to_string());
        Ok(match f {
            CacheFn::Get => map.get(&key()?).unwrap_or(Value::Null),
            CacheFn::Contains => Value::Boolean(map.contains(&key()?)),
            CacheFn::Remove => map.remove(&key()?).unwrap_or(Value::Null),
            CacheFn::Clear => count(map.clear()),
            CacheFn::Size => count(map.len()),
            CacheFn::Put | CacheFn::Update => {
                let k = key()?;
                let value = vals.get(2).cloned().unwrap_or(Value::Null);
                let ttl = ttl_arg(f, vals.get(3))?;
                if f == CacheFn::Put {
                    map.put(&k, value, ttl).map_err(failed)?;
                } else {
                    map.update(&k, value, ttl).map_err(failed)?;
                }
                Value::Boolean(true)
            }
        })
    }
}
