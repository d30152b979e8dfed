//! The Lease protocol against the API server: compare-and-swap writes around the pure decision in `decide`.

use std::{
    collections::BTreeMap,
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::MicroTime,
};
use kube::{
    Api, Client,
    api::{ObjectMeta, PostParams},
};
use ptah_api::shared::Epoch;

use crate::{
    Clock, LockError,
    contract::{
        COORDINATION_LABEL, EPOCH_ANNOTATION, MANAGED_BY_LABEL, MANAGED_BY_VALUE, MAX_DURATION_SECONDS,
        MIN_DURATION_SECONDS,
    },
    decide::{Decision, LeaseView, Sightings, decide},
    new_epoch,
};

/// How many compare-and-swap rounds one call makes before reporting [`LockError::Conflict`].
pub const MAX_CAS_ATTEMPTS: usize = 5;

/// The outcome of an acquisition or renewal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Acquired {
    /// The caller holds the Lease.
    Held {
        /// The epoch of this holding; persist it and pass it back as `expected` to renew.
        epoch: Epoch,
        /// True when this call created the Lease or took it over (a new epoch).
        fresh: bool,
    },
    /// Another holder has it and it has not expired on the local clock.
    Busy {
        /// The holder identity.
        holder: String,
        /// When to try again, at the earliest.
        retry_after: Duration,
    },
    /// The expected epoch is not the current continuous one: the caller's holding ended.
    ContinuityLost {
        /// The epoch of whoever holds it now, if anyone holds it under a valid one.
        current: Option<Epoch>,
    },
}

/// The outcome of a release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Released {
    /// The caller held it under that epoch and it is now free.
    Released,
    /// The caller did not hold it under that epoch (absent, free, or someone else's): nothing done.
    AlreadyReleased,
}

/// One coordination namespace's Leases of one kind, with the local first-sighting table.
#[derive(Clone)]
pub(crate) struct LeaseStore {
    api: Api<Lease>,
    namespace: String,
    coordination: &'static str,
    sightings: Sightings,
    clock: Arc<dyn Clock>,
}

/// Checks a duration and converts it to the Lease field's type.
pub(crate) fn check_duration(seconds: i64) -> Result<i32, LockError> {
    if (MIN_DURATION_SECONDS..=MAX_DURATION_SECONDS).contains(&seconds) {
        i32::try_from(seconds).map_err(|_| LockError::InvalidDuration)
    } else {
        Err(LockError::InvalidDuration)
    }
}

/// The later of now and `previous`, so a Lease's renewTime never moves backwards.
fn monotonic_now(previous: Option<&MicroTime>) -> MicroTime {
    let now = jiff::Timestamp::now();
    MicroTime(previous.map_or(now, |p| p.0.max(now)))
}

fn is_conflict(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 409)
}

impl LeaseStore {
    /// A store for Leases labelled `coordination` in `namespace`.
    pub fn new(client: Client, namespace: String, coordination: &'static str, clock: Arc<dyn Clock>) -> Self {
        LeaseStore {
            api: Api::namespaced(client, &namespace),
            namespace,
            coordination,
            sightings: Sightings::default(),
            clock,
        }
    }

    /// The coordination namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Swaps the clock foreign expiry is measured on.
    pub fn set_clock(&mut self, clock: Arc<dyn Clock>) {
        self.clock = clock;
    }

    /// Now, on the store's clock.
    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    /// Acquires or renews Lease `name` for `holder`.
    pub async fn acquire(
        &self,
        name: &str,
        holder: &str,
        duration_seconds: i64,
        expected: Option<&Epoch>,
    ) -> Result<Acquired, LockError> {
        let duration = check_duration(duration_seconds)?;
        for _ in 0..MAX_CAS_ATTEMPTS {
            let Some(live) = self.api.get_opt(name).await? else {
                if expected.is_some() {
                    // Deleted since the caller's holding: a recreation would be a new epoch.
                    return Ok(Acquired::ContinuityLost { current: None });
                }
                if let Some(epoch) = self.create(name, holder, duration).await? {
                    return Ok(Acquired::Held { epoch, fresh: true });
                }
                continue;
            };
            let view = LeaseView::of(&live);
            let decision = decide(&view, holder, expected, |record| {
                self.sightings.observe(name, record, self.clock.now())
            });
            let outcome = match decision {
                Decision::Busy { holder, retry_after } => Acquired::Busy { holder, retry_after },
                Decision::Lost(current) => Acquired::ContinuityLost { current },
                Decision::Malformed(why) => {
                    return Err(LockError::Malformed {
                        lease: name.to_owned(),
                        why,
                    });
                }
                Decision::Renew(epoch) => match self.write(live, holder, duration, None).await? {
                    Some(()) => Acquired::Held { epoch, fresh: false },
                    None => continue,
                },
                Decision::Take => {
                    let epoch = new_epoch();
                    match self.write(live, holder, duration, Some(&epoch)).await? {
                        Some(()) => Acquired::Held { epoch, fresh: true },
                        None => continue,
                    }
                }
            };
            if matches!(outcome, Acquired::Held { .. }) {
                self.sightings.forget(name);
            }
            return Ok(outcome);
        }
        Err(LockError::Conflict)
    }

    /// Frees Lease `name` if `holder` holds it under `epoch`.
    pub async fn release(&self, name: &str, holder: &str, epoch: &Epoch) -> Result<Released, LockError> {
        for _ in 0..MAX_CAS_ATTEMPTS {
            let Some(mut live) = self.api.get_opt(name).await? else {
                return Ok(Released::AlreadyReleased);
            };
            let view = LeaseView::of(&live);
            if view.holder.as_deref() != Some(holder) || view.epoch.as_ref() != Ok(epoch) {
                return Ok(Released::AlreadyReleased);
            }
            let spec = live.spec.get_or_insert_with(LeaseSpec::default);
            spec.holder_identity = None;
            spec.renew_time = Some(monotonic_now(spec.renew_time.as_ref()));
            match self.api.replace(name, &write_params(), &live).await {
                Ok(_) => {
                    self.sightings.forget(name);
                    return Ok(Released::Released);
                }
                Err(err) if is_conflict(&err) => continue,
                Err(err) => return Err(err.into()),
            }
        }
        Err(LockError::Conflict)
    }

    fn labels(&self) -> BTreeMap<String, String> {
        [
            (MANAGED_BY_LABEL.to_owned(), MANAGED_BY_VALUE.to_owned()),
            (COORDINATION_LABEL.to_owned(), self.coordination.to_owned()),
        ]
        .into()
    }

    /// Creates the Lease; `None` when someone else created it first.
    async fn create(&self, name: &str, holder: &str, duration: i32) -> Result<Option<Epoch>, LockError> {
        let epoch = new_epoch();
        let now = MicroTime(jiff::Timestamp::now());
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(self.namespace.clone()),
                labels: Some(self.labels()),
                annotations: Some([(EPOCH_ANNOTATION.to_owned(), epoch.to_string())].into()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.to_owned()),
                lease_duration_seconds: Some(duration),
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                lease_transitions: Some(0),
                ..LeaseSpec::default()
            }),
        };
        match self.api.create(&write_params(), &lease).await {
            Ok(_) => Ok(Some(epoch)),
            Err(err) if is_conflict(&err) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// Replaces `live` (its resourceVersion is the precondition) with `holder` renewed, or
    /// written in under `new_epoch`; `None` when another writer got there first.
    async fn write(
        &self,
        mut live: Lease,
        holder: &str,
        duration: i32,
        new_epoch: Option<&Epoch>,
    ) -> Result<Option<()>, LockError> {
        let name = live.metadata.name.clone().unwrap_or_default();
        live.metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .extend(self.labels());
        let spec = live.spec.get_or_insert_with(LeaseSpec::default);
        let renew = monotonic_now(spec.renew_time.as_ref());
        if let Some(epoch) = new_epoch {
            live.metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(EPOCH_ANNOTATION.to_owned(), epoch.to_string());
            spec.acquire_time = Some(renew.clone());
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
        }
        spec.holder_identity = Some(holder.to_owned());
        spec.lease_duration_seconds = Some(duration);
        spec.renew_time = Some(renew);
        match self.api.replace(&name, &write_params(), &live).await {
            Ok(_) => Ok(Some(())),
            Err(err) if is_conflict(&err) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }
}

/// Every Lease write carries the manager's one field manager.
fn write_params() -> PostParams {
    PostParams {
        field_manager: Some(ptah_api::FIELD_MANAGER.into()),
        ..PostParams::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_whole_seconds_between_five_and_a_day_and_a_minute() {
        assert!(matches!(check_duration(4), Err(LockError::InvalidDuration)));
        assert_eq!(check_duration(5).ok(), Some(5));
        assert_eq!(check_duration(86_460).ok(), Some(86_460));
        assert!(matches!(check_duration(86_461), Err(LockError::InvalidDuration)));
        assert!(matches!(check_duration(-1), Err(LockError::InvalidDuration)));
    }

    #[test]
    fn renew_time_never_moves_backwards() {
        let future = MicroTime(jiff::Timestamp::now() + jiff::SignedDuration::from_hours(1));
        assert_eq!(monotonic_now(Some(&future)), future);
        let past = MicroTime(jiff::Timestamp::UNIX_EPOCH);
        assert!(monotonic_now(Some(&past)).0 > past.0);
    }
}
