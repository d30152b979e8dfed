//! Clock arithmetic of the decisions, total over the bounded durations the CRDs allow.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

/// How long a pass waits when it only watches something progress.
pub const POLL: Duration = Duration::from_secs(5);

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
