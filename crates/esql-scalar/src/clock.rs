//! The system clock and the local time zone, the only inputs that do not come from
//! the arguments. Values are read through `jiff`, which knows the zone rules.

use crate::datetime::{MICROS_PER_SECOND, Timestamp};

/// Microseconds since 1970-01-01 00:00:00 UTC, now.
pub fn now_utc_micros() -> i64 {
    jiff::Timestamp::now().as_microsecond()
}

/// The local zone's offset from GMT, in seconds, at the given UTC instant.
pub fn local_offset_seconds_at(utc_micros: i64) -> i64 {
    match jiff::Timestamp::from_microsecond(utc_micros) {
        Ok(ts) => i64::from(jiff::tz::TimeZone::system().to_offset(ts).seconds()),
        Err(_) => 0,
    }
}

/// Converts a local wall-clock timestamp to GMT.
pub fn local_to_gmt(local: Timestamp) -> Result<Timestamp, crate::ScalarError> {
    let guess = local.to_micros();
    let offset = local_offset_seconds_at(guess) * MICROS_PER_SECOND;
    Timestamp::from_micros(guess - offset)
}

/// Converts a GMT timestamp to local wall-clock time.
pub fn gmt_to_local(gmt: Timestamp) -> Result<Timestamp, crate::ScalarError> {
    let micros = gmt.to_micros();
    Timestamp::from_micros(micros + local_offset_seconds_at(micros) * MICROS_PER_SECOND)
}
