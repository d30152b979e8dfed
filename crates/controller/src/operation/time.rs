//! Clock arithmetic of the decisions, total over the bounded durations the CRDs allow.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

/// How long a pass waits when it only watches something progress.
pub const POLL: Duration = Duration::from_secs(5);

/// The longest wait between passes over a running Job. Its Pod's end or failure to start and the
/// Job's own changes wake the resource through the watches; this pass is only a safety net.
pub const MAX_RUNNING_POLL: Duration = Duration::from_secs(300);

/// How long a pass over a running Job waits: a quarter of the Lease it renews, else
/// [`MAX_RUNNING_POLL`]. A pass that only looked would cost a thousand running Jobs a thousand
/// passes, each with its reads, every few seconds.
pub fn running_poll(lease_seconds: Option<i64>) -> Duration {
    lease_seconds
        .and_then(|s| u64::try_from(s).ok())
        .map_or(MAX_RUNNING_POLL, |s| Duration::from_secs(s / 4))
        .clamp(POLL, MAX_RUNNING_POLL)
}

/// `t + d`, saturating at `t` on overflow (never in practice: durations are bounded by the CRD).
pub fn after(t: Timestamp, d: Duration) -> Timestamp {
    SignedDuration::try_from(d)
        .ok()
        .and_then(|d| t.checked_add(d).ok())
        .unwrap_or(t)
}

/// How long until `t`, at least one second.
pub fn until(now: Timestamp, t: Timestamp) -> Duration {
    Duration::try_from(now.duration_until(t))
        .unwrap_or(Duration::ZERO)
        .max(Duration::from_secs(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_job_is_polled_only_to_renew_its_lease() {
        assert_eq!(running_poll(None), MAX_RUNNING_POLL, "the watches wake it");
        assert_eq!(
            running_poll(Some(80)),
            Duration::from_secs(20),
            "renews within its Lease"
        );
        assert_eq!(running_poll(Some(4)), POLL);
        assert_eq!(running_poll(Some(-1)), MAX_RUNNING_POLL);
        assert_eq!(running_poll(Some(100_000)), MAX_RUNNING_POLL);
    }
}
