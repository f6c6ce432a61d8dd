//! FileInput's retry of a record whose flow failed (the product's Retry properties): with
//! `failure` the record goes to the failure path at once; with `short_retry` it is propagated
//! again up to `retry_threshold` times, `short_retry_interval_ms` apart, before that; with
//! `short_and_long_retry` the short retries are followed by retries every
//! `long_retry_interval_ms` for as long as the flow fails (or until it stops).

use std::time::Duration;

use sluice_node_api::{properties, property_enum};

property_enum! {
    /// What FileInput does when a record's flow fails.
    pub enum RetryMechanism {
        /// No retry: the failure path at once.
        Failure = "failure",
        /// Up to `retry_threshold` retries, then the failure path.
        ShortRetry = "short_retry",
        /// `retry_threshold` short retries, then long retries until the record succeeds.
        ShortAndLongRetry = "short_and_long_retry",
    }
}

properties! {
    /// How FileInput retries a record whose flow failed.
    pub struct RetryProps {
        /// `failure` (no retry), `short_retry` or `short_and_long_retry`.
        retry_mechanism: RetryMechanism = "failure",
        /// How many times a failed record is propagated again before the failure path
        /// (`short_retry`) or the long retries (`short_and_long_retry`).
        retry_threshold: u32 = "0",
        /// The wait before each short retry.
        short_retry_interval_ms: u64 = "0",
        /// The wait before each long retry.
        long_retry_interval_ms: u64 = "300000",
    }
}

/// The retry properties, read.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    mechanism: RetryMechanism,
    threshold: u32,
    short: Duration,
    long: Duration,
}

impl RetryPolicy {
    pub fn from_props(p: &RetryProps) -> RetryPolicy {
        RetryPolicy {
            mechanism: p.retry_mechanism,
            threshold: p.retry_threshold,
            short: Duration::from_millis(p.short_retry_interval_ms),
            long: Duration::from_millis(p.long_retry_interval_ms),
        }
    }

    /// The wait before propagating a record again after its `failures`-th failure (from 1);
    /// `None`: no more retries, the failure path.
    pub fn delay(&self, failures: u32) -> Option<Duration> {
        match self.mechanism {
            RetryMechanism::Failure => None,
            _ if failures <= self.threshold => Some(self.short),
            RetryMechanism::ShortRetry => None,
            RetryMechanism::ShortAndLongRetry => Some(self.long),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(mechanism: RetryMechanism) -> RetryPolicy {
        RetryPolicy {
            mechanism,
            threshold: 2,
            short: Duration::from_millis(10),
            long: Duration::from_millis(500),
        }
    }

    #[test]
    fn failure_mechanism_never_retries_whatever_the_threshold() {
        assert_eq!(policy(RetryMechanism::Failure).delay(1), None);
    }

    #[test]
    fn short_retry_retries_threshold_times_then_gives_up() {
        let p = policy(RetryMechanism::ShortRetry);
        let short = Some(Duration::from_millis(10));
        assert_eq!([p.delay(1), p.delay(2), p.delay(3)], [short, short, None]);
    }

    #[test]
    fn short_and_long_retry_goes_on_at_the_long_interval_after_the_threshold() {
        let p = policy(RetryMechanism::ShortAndLongRetry);
        let long = Some(Duration::from_millis(500));
        assert_eq!(p.delay(2), Some(Duration::from_millis(10)));
        assert_eq!([p.delay(3), p.delay(100)], [long, long]);
    }
}
