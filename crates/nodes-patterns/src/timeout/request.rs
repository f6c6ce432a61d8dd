//! A timeout request as TimeoutControl reads it from its message: the product's
//! `TimeoutRequest` folder. Dates and times are UTC.

use sluice_tree::{NodeId, Tree, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Set,
    Cancel,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TimeoutRequest {
    pub action: Action,
    pub identifier: String,
    /// When the first timeout is due, ms since the epoch.
    pub start_ms: i64,
    pub interval_ms: i64,
    /// How many timeouts; -1: no end.
    pub count: i64,
    pub ignore_missed: bool,
    pub allow_overwrite: bool,
}

const DAY_MS: i64 = 86_400_000;

/// A field's value as the request means it.
enum Field {
    Text(String),
    Number(i64),
    Bool(bool),
    Date(i32),
    Time(i64),
}

fn field(tree: &mut Tree, folder: NodeId, name: &str) -> Result<Option<Field>, String> {
    let Some(id) = tree.path(folder, &[name]).map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    let text = |t: &Tree| {
        t.value_bytes(id)
            .map(|b| String::from_utf8_lossy(b).trim().to_string())
    };
    Ok(match tree.value(id) {
        Value::Null => None,
        Value::Boolean(b) => Some(Field::Bool(b)),
        Value::Integer(i) => Some(Field::Number(i)),
        Value::Float(f) if f.fract() == 0.0 => Some(Field::Number(f as i64)),
        Value::Date(d) => Some(Field::Date(d)),
        Value::Time(us) | Value::GmtTime(us) => Some(Field::Time(us / 1000)),
        _ => text(tree).filter(|s| !s.is_empty()).map(Field::Text),
    })
}

fn number(f: Option<Field>, name: &str, default: i64) -> Result<i64, String> {
    match f {
        None => Ok(default),
        Some(Field::Number(n)) => Ok(n),
        Some(Field::Text(t)) => t
            .parse()
            .map_err(|_| format!("{name} '{t}' is not a whole number")),
        Some(_) => Err(format!("{name} is not a whole number")),
    }
}

fn flag(f: Option<Field>, name: &str, default: bool) -> Result<bool, String> {
    match f {
        None => Ok(default),
        Some(Field::Bool(b)) => Ok(b),
        Some(Field::Text(t)) if t.eq_ignore_ascii_case("true") => Ok(true),
        Some(Field::Text(t)) if t.eq_ignore_ascii_case("false") => Ok(false),
        Some(_) => Err(format!("{name} is neither TRUE nor FALSE")),
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn date_days(f: Option<Field>, now_ms: i64) -> Result<i64, String> {
    let today = now_ms.div_euclid(DAY_MS);
    match f {
        None => Ok(today),
        Some(Field::Date(d)) => Ok(i64::from(d)),
        Some(Field::Text(t)) if t.eq_ignore_ascii_case("TODAY") => Ok(today),
        Some(Field::Text(t)) => {
            let parts: Vec<&str> = t.split('-').collect();
            let bad = || format!("StartDate '{t}' is neither TODAY nor yyyy-mm-dd");
            let [y, m, d] = parts.as_slice() else {
                return Err(bad());
            };
            let (y, m, d): (i64, i64, i64) = (
                y.parse().map_err(|_| bad())?,
                m.parse().map_err(|_| bad())?,
                d.parse().map_err(|_| bad())?,
            );
            if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
                return Err(bad());
            }
            Ok(days_from_civil(y, m, d))
        }
        Some(_) => Err("StartDate is neither TODAY nor a date".into()),
    }
}

/// Milliseconds since midnight; None: the current time.
fn time_ms(f: Option<Field>) -> Result<Option<i64>, String> {
    match f {
        None => Ok(None),
        Some(Field::Time(ms)) => Ok(Some(ms)),
        Some(Field::Text(t)) if t.eq_ignore_ascii_case("CURRENT_TIME") => Ok(None),
        Some(Field::Text(t)) => {
            let bad = || format!("StartTime '{t}' is neither CURRENT_TIME nor hh:mm:ss");
            let parts: Vec<&str> = t.split(':').collect();
            let [h, m, s] = parts.as_slice() else {
                return Err(bad());
            };
            let h: i64 = h.parse().map_err(|_| bad())?;
            let m: i64 = m.parse().map_err(|_| bad())?;
            let s: f64 = s.parse().map_err(|_| bad())?;
            if !(0..24).contains(&h) || !(0..60).contains(&m) || !(0.0..60.0).contains(&s) {
                return Err(bad());
            }
            Ok(Some((h * 3600 + m * 60) * 1000 + (s * 1000.0) as i64))
        }
        Some(_) => Err("StartTime is neither CURRENT_TIME nor a time".into()),
    }
}

/// The request in `folder`, with `now_ms` for TODAY and CURRENT_TIME.
pub(crate) fn read(tree: &mut Tree, folder: NodeId, now_ms: i64) -> Result<TimeoutRequest, String> {
    let action = match field(tree, folder, "Action")? {
        Some(Field::Text(a)) if a.eq_ignore_ascii_case("SET") => Action::Set,
        Some(Field::Text(a)) if a.eq_ignore_ascii_case("CANCEL") => Action::Cancel,
        Some(Field::Text(a)) => return Err(format!("Action '{a}' is neither SET nor CANCEL")),
        _ => return Err("the request has no Action (SET or CANCEL)".into()),
    };
    let identifier = match field(tree, folder, "Identifier")? {
        Some(Field::Text(t)) => t,
        Some(Field::Number(n)) => n.to_string(),
        _ => return Err("the request has no Identifier".into()),
    };
    let days = date_days(field(tree, folder, "StartDate")?, now_ms)?;
    let start_ms = match time_ms(field(tree, folder, "StartTime")?)? {
        Some(t) => days * DAY_MS + t,
        None => days * DAY_MS + now_ms.rem_euclid(DAY_MS),
    };
    let interval = number(field(tree, folder, "Interval")?, "Interval", 0)?;
    let count = number(field(tree, folder, "Count")?, "Count", 1)?;
    if interval < 0 {
        return Err(format!("Interval {interval} is negative"));
    }
    if count == 0 || count < -1 {
        return Err(format!(
            "Count {count} is neither a positive number nor -1 (no end)"
        ));
    }
    if count != 1 && interval == 0 {
        return Err(format!(
            "Count {count} needs an Interval of at least one second between the timeouts"
        ));
    }
    Ok(TimeoutRequest {
        action,
        identifier,
        start_ms,
        interval_ms: interval.saturating_mul(1000),
        count,
        ignore_missed: flag(field(tree, folder, "IgnoreMissed")?, "IgnoreMissed", true)?,
        allow_overwrite: flag(
            field(tree, folder, "AllowOverwrite")?,
            "AllowOverwrite",
            true,
        )?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_tree::{Text, field_type};

    /// A TimeoutRequest folder of character fields.
    fn request(fields: &[(&str, &str)]) -> (Tree, NodeId) {
        let mut t = Tree::new("LocalEnvironment");
        let r = t.root();
        let f = t
            .create_last_child(
                r,
                field_type::NAME,
                Text::from_static("TimeoutRequest"),
                Value::Null,
            )
            .unwrap();
        for (n, v) in fields {
            let name = t.alloc_text(n.as_bytes());
            let v = Value::Character(t.alloc_text(v.as_bytes()));
            t.create_last_child(f, field_type::NAME_VALUE, name, v)
                .unwrap();
        }
        (t, f)
    }

    #[test]
    fn read_takes_the_defaults_when_only_action_and_identifier_are_set() {
        let (mut t, f) = request(&[("Action", "SET"), ("Identifier", "T1")]);
        assert_eq!(
            read(&mut t, f, 1_000_000).unwrap(),
            TimeoutRequest {
                action: Action::Set,
                identifier: "T1".into(),
                start_ms: 1_000_000,
                interval_ms: 0,
                count: 1,
                ignore_missed: true,
                allow_overwrite: true,
            }
        );
    }

    #[test]
    fn read_computes_the_start_when_date_and_time_are_given() {
        let (mut t, f) = request(&[
            ("Action", "set"),
            ("Identifier", "T"),
            ("StartDate", "2026-01-02"),
            ("StartTime", "10:00:01"),
            ("Interval", "5"),
            ("Count", "-1"),
            ("IgnoreMissed", "FALSE"),
        ]);
        let req = read(&mut t, f, 0).unwrap();
        // 2026-01-02 is day 20455 since the epoch.
        assert_eq!(req.start_ms, 20_455 * DAY_MS + 36_001_000);
        assert_eq!((req.interval_ms, req.count), (5_000, -1));
        assert!(!req.ignore_missed);
    }

    #[test]
    fn read_fails_when_count_repeats_without_an_interval() {
        let (mut t, f) = request(&[("Action", "SET"), ("Identifier", "T"), ("Count", "3")]);
        assert!(read(&mut t, f, 0).unwrap_err().contains("Interval"));
    }

    #[test]
    fn read_fails_when_the_action_is_unknown() {
        let (mut t, f) = request(&[("Action", "PAUSE"), ("Identifier", "T")]);
        assert!(read(&mut t, f, 0).unwrap_err().contains("PAUSE"));
    }
}
