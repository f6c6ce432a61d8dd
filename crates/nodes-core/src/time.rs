//! Wall-clock time formatted without a date library.

use std::time::{SystemTime, UNIX_EPOCH};

use sluice_tree::text_form::civil_from_days;

/// The current UTC time as `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
pub fn now_rfc3339() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (y, m, day) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        s / 3600,
        s / 60 % 60,
        s % 60,
        d.subsec_micros()
    )
}
