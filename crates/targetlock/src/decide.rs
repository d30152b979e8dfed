//! The pure part of acquisition: read a live Lease, remember when its record was first seen, and
//! decide whether to renew, take over, wait or report lost continuity.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, Instant},
};

use k8s_openapi::api::coordination::v1::Lease;
use ptah_api::shared::Epoch;

use crate::contract::{EPOCH_ANNOTATION, MAX_DURATION_SECONDS, MIN_DURATION_SECONDS};

/// What a Lease says, reduced to the fields the protocol reads.
#[derive(Debug)]
pub(crate) struct LeaseView {
    /// The holder; `None` when absent or empty (a free Lease).
    pub holder: Option<String>,
    /// The epoch annotation, parsed; the error says why it is unusable.
    pub epoch: Result<Epoch, String>,
    /// `spec.leaseDurationSeconds` when it is in the allowed range.
    pub duration: Result<Duration, String>,
    /// The record whose first local sighting starts a foreign expiry clock.
    pub record: Record,
}

/// Everything that, when changed by a writer, restarts the local expiry clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    holder: String,
    epoch: Option<String>,
    renew_time: Option<String>,
    resource_version: Option<String>,
}

impl LeaseView {
    /// Reads a live Lease.
    pub fn of(lease: &Lease) -> Self {
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let raw_epoch = lease
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(EPOCH_ANNOTATION))
            .cloned();
        let epoch = match &raw_epoch {
            None => Err(format!("annotation {EPOCH_ANNOTATION} is missing")),
            Some(text) => Epoch::parse(text).map_err(|e| format!("annotation {EPOCH_ANNOTATION}: {e}")),
        };
        let duration = match spec.lease_duration_seconds {
            None => Err("spec.leaseDurationSeconds is missing".to_owned()),
            Some(s) if (MIN_DURATION_SECONDS..=MAX_DURATION_SECONDS).contains(&i64::from(s)) => {
                Ok(Duration::from_secs(u64::from(s.unsigned_abs())))
            }
            Some(s) => Err(format!(
                "spec.leaseDurationSeconds {s} is outside [{MIN_DURATION_SECONDS}, {MAX_DURATION_SECONDS}]"
            )),
        };
        let record = Record {
            holder: holder.clone().unwrap_or_default(),
            epoch: raw_epoch,
            renew_time: spec.renew_time.map(|t| t.0.to_string()),
            resource_version: lease.metadata.resource_version.clone(),
        };
        LeaseView {
            holder,
            epoch,
            duration,
            record,
        }
    }
}

/// What to do with a live Lease.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Ours under this epoch: refresh renewTime and keep the epoch.
    Renew(Epoch),
    /// Free, expired, or ours without a usable epoch: write ourselves in under a new epoch.
    Take,
    /// A live foreign holder.
    Busy {
        /// Who holds it.
        holder: String,
        /// How long until it can expire on the local clock, at the earliest.
        retry_after: Duration,
    },
    /// The caller's expected epoch is not the current continuous one.
    Lost(Option<Epoch>),
    /// A foreign holder with unusable timing or epoch.
    Malformed(String),
}

/// Decides what to do; `foreign_elapsed` is consulted only for a foreign holder with valid timing.
pub(crate) fn decide(
    view: &LeaseView,
    holder: &str,
    expected: Option<&Epoch>,
    foreign_elapsed: impl FnOnce(&Record) -> Duration,
) -> Decision {
    let Some(current_holder) = view.holder.as_deref() else {
        // Released or never held: whoever held it before, continuity is broken.
        return match expected {
            Some(_) => Decision::Lost(None),
            None => Decision::Take,
        };
    };
    if current_holder == holder {
        return match (&view.epoch, expected) {
            (Ok(current), Some(want)) if current == want => Decision::Renew(current.clone()),
            (Ok(current), Some(_)) => Decision::Lost(Some(current.clone())),
            (Err(_), Some(_)) => Decision::Lost(None),
            // Acquiring without an expectation adopts our own holding as it is.
            (Ok(current), None) => Decision::Renew(current.clone()),
            (Err(_), None) => Decision::Take,
        };
    }
    if expected.is_some() {
        // Someone else holds it now, so the caller's holding ended, whatever the timing says.
        return Decision::Lost(view.epoch.as_ref().ok().cloned());
    }
    let duration = match (&view.duration, &view.epoch) {
        (Err(why), _) | (Ok(_), Err(why)) => return Decision::Malformed(why.clone()),
        (Ok(duration), Ok(_)) => *duration,
    };
    let elapsed = foreign_elapsed(&view.record);
    if elapsed >= duration {
        Decision::Take
    } else {
        Decision::Busy {
            holder: current_holder.to_owned(),
            retry_after: duration - elapsed,
        }
    }
}

/// First local sightings of foreign records, keyed by Lease name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sightings {
    table: Arc<Mutex<HashMap<String, (Record, Instant)>>>,
}

impl Sightings {
    /// How long `record` has been seen unchanged; a new or changed record starts at zero.
    pub fn observe(&self, name: &str, record: &Record, now: Instant) -> Duration {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        match table.get(name) {
            Some((seen, first)) if seen == record => now.saturating_duration_since(*first),
            _ => {
                table.insert(name.to_owned(), (record.clone(), now));
                Duration::ZERO
            }
        }
    }

    /// Drops the sighting once the Lease is ours or free (nothing foreign left to time).
    pub fn forget(&self, name: &str) {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(name);
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::coordination::v1::LeaseSpec;

    use super::*;
    use crate::new_epoch;

    fn lease(holder: Option<&str>, epoch: Option<&str>, duration: Option<i32>, rv: &str) -> Lease {
        let mut lease = Lease::default();
        lease.metadata.resource_version = Some(rv.to_owned());
        if let Some(epoch) = epoch {
            lease.metadata.annotations = Some([(EPOCH_ANNOTATION.to_owned(), epoch.to_owned())].into());
        }
        lease.spec = Some(LeaseSpec {
            holder_identity: holder.map(str::to_owned),
            lease_duration_seconds: duration,
            ..LeaseSpec::default()
        });
        lease
    }

    fn never(_: &Record) -> Duration {
        panic!("the foreign clock must not be read")
    }

    #[test]
    fn free_lease_is_taken_unless_continuity_was_expected() {
        let e = new_epoch();
        for holder in [None, Some("")] {
            let view = LeaseView::of(&lease(holder, Some(e.as_str()), Some(5), "1"));
            assert_eq!(decide(&view, "me", None, never), Decision::Take);
            assert_eq!(decide(&view, "me", Some(&e), never), Decision::Lost(None));
        }
    }

    #[test]
    fn own_lease_renews_adopts_or_reports_lost_continuity() {
        let e = new_epoch();
        let other = new_epoch();
        let view = LeaseView::of(&lease(Some("me"), Some(e.as_str()), Some(5), "1"));
        assert_eq!(decide(&view, "me", Some(&e), never), Decision::Renew(e.clone()));
        assert_eq!(decide(&view, "me", None, never), Decision::Renew(e.clone()));
        assert_eq!(decide(&view, "me", Some(&other), never), Decision::Lost(Some(e)));
        let broken = LeaseView::of(&lease(Some("me"), Some("garbage"), Some(5), "1"));
        assert_eq!(decide(&broken, "me", None, never), Decision::Take);
        assert_eq!(decide(&broken, "me", Some(&other), never), Decision::Lost(None));
    }

    #[test]
    fn foreign_lease_waits_for_its_duration_on_the_local_clock() {
        let e = new_epoch();
        let view = LeaseView::of(&lease(Some("them"), Some(e.as_str()), Some(10), "1"));
        assert_eq!(
            decide(&view, "me", None, |_| Duration::from_secs(4)),
            Decision::Busy {
                holder: "them".into(),
                retry_after: Duration::from_secs(6)
            }
        );
        assert_eq!(
            decide(&view, "me", None, |_| Duration::from_secs(10)),
            Decision::Take
        );
        assert_eq!(decide(&view, "me", Some(&e), never), Decision::Lost(Some(e)));
    }

    #[test]
    fn foreign_lease_without_timing_or_epoch_fails_closed() {
        let e = new_epoch();
        for bad in [
            lease(Some("them"), Some(e.as_str()), None, "1"),
            lease(Some("them"), Some(e.as_str()), Some(0), "1"),
            lease(Some("them"), Some(e.as_str()), Some(86_461), "1"),
            lease(Some("them"), None, Some(10), "1"),
            lease(Some("them"), Some("v1-XYZ"), Some(10), "1"),
        ] {
            let view = LeaseView::of(&bad);
            assert!(
                matches!(decide(&view, "me", None, never), Decision::Malformed(_)),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn sightings_restart_when_the_record_changes() {
        let sightings = Sightings::default();
        let t0 = Instant::now();
        let a = LeaseView::of(&lease(Some("them"), Some(new_epoch().as_str()), Some(5), "1")).record;
        let b = LeaseView::of(&lease(Some("them"), Some(new_epoch().as_str()), Some(5), "2")).record;
        assert_eq!(sightings.observe("l", &a, t0), Duration::ZERO);
        let later = t0 + Duration::from_secs(3);
        assert_eq!(sightings.observe("l", &a, later), Duration::from_secs(3));
        assert_eq!(sightings.observe("l", &b, later), Duration::ZERO);
        assert_eq!(
            sightings.observe("l", &b, later + Duration::from_secs(1)),
            Duration::from_secs(1)
        );
        sightings.forget("l");
        assert_eq!(
            sightings.observe("l", &b, later + Duration::from_secs(2)),
            Duration::ZERO
        );
    }
}
