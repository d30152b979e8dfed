//! Clock arithmetic of the decisions, total over the bounded durations the CRDs allow.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

/// How long a pass waits when it only watches something progress.
pub const POLL: Duration = Duration::from_secs(5);

/// The longest wait between passes over a running Job. Its completion wakes the resource through
/// the Job watch; the passes only look for a Pod that cannot start and renew the realm Lease.
pub const MAX_RUNNING_POLL: Duration = Duration::from_secs(60);

/// How long a pass over a Job running since `started` waits: [`POLL`] while it is young (a Pod
/// that cannot start shows within seconds), then a quarter of its age up to
/// [`MAX_RUNNING_POLL`], and never more than a quarter of the Lease it renews. A thousand
/// long-running Jobs would otherwise cost a thousand passes, each with its reads, every 5 s.
pub fn running_poll(now: Timestamp, started: Timestamp, lease_seconds: Option<i64>) -> Duration {
    let age = Duration::try_from(started.duration_until(now)).unwrap_or(Duration::ZERO);
    let renew = lease_seconds
        .and_then(|s| u64::try_from(s).ok())
        .map_or(MAX_RUNNING_POLL, |s| Duration::from_secs(s / 4));
    (age / 4).min(MAX_RUNNING_POLL).min(renew).max(POLL)
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
    fn a_running_job_is_polled_less_as_it_ages_and_within_its_lease() {
        let start: Timestamp = "2026-12-04T10:00:00Z".parse().expect("a timestamp");
        let at = |s: i64| start.checked_add(SignedDuration::from_secs(s)).expect("in range");
        assert_eq!(running_poll(at(0), start, None), POLL);
        assert_eq!(
            running_poll(at(10), start, None),
            POLL,
            "young: the Pod may not start"
        );
        assert_eq!(running_poll(at(120), start, None), Duration::from_secs(30));
        assert_eq!(running_poll(at(3600), start, None), MAX_RUNNING_POLL);
        assert_eq!(
            running_poll(at(3600), start, Some(80)),
            Duration::from_secs(20),
            "renews within its Lease"
        );
        assert_eq!(running_poll(at(3600), start, Some(4)), POLL);
        assert_eq!(
            running_poll(start, at(60), None),
            POLL,
            "a clock behind the claim"
        );
    }
}
