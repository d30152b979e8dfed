//! Leader election for the manager through one Lease in the coordination namespace.
//!
//! The elector runs the same compare-and-swap protocol as realm Leases, so a foreign leader
//! expires only on this process's monotonic clock. It publishes "is leader" on a watch channel;
//! the manager gates its writers on it. It steps down when it could not renew within the Lease
//! duration, and frees the Lease on graceful shutdown so a successor need not wait for expiry.

use std::{sync::Arc, time::Duration};

use kube::Client;
use ptah_api::shared::Epoch;
use tokio::sync::watch;

use crate::{Acquired, Clock, LockError, Released, SystemClock, lease::LeaseStore};

/// The value of [`crate::COORDINATION_LABEL`] on the leader-election Lease.
pub const LEADER_COORDINATION_VALUE: &str = "manager-leader";

/// Elects one manager replica through a Lease; see the module documentation.
pub struct LeaderElector {
    store: LeaseStore,
    lease_name: String,
    identity: String,
    lease_duration: Duration,
    renew_period: Duration,
    leader: watch::Sender<bool>,
}

impl LeaderElector {
    /// An elector for Lease `lease_name` in `namespace`, holding it as `identity` (unique per replica).
    ///
    /// `lease_duration` must be whole seconds in [5 s, 24 h 1 min]; `renew_period` should be well
    /// below it (a third is usual). While leading, renewals are never spaced wider than half the duration.
    pub fn new(
        client: Client,
        namespace: impl Into<String>,
        lease_name: impl Into<String>,
        identity: impl Into<String>,
        lease_duration: Duration,
        renew_period: Duration,
    ) -> Self {
        LeaderElector {
            store: LeaseStore::new(
                client,
                namespace.into(),
                LEADER_COORDINATION_VALUE,
                Arc::new(SystemClock),
            ),
            lease_name: lease_name.into(),
            identity: identity.into(),
            lease_duration,
            renew_period,
            leader: watch::Sender::new(false),
        }
    }

    /// Times foreign expiry on `clock` instead of the system clock (for tests).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.store.set_clock(clock);
        self
    }

    /// A receiver of "this replica is the leader"; starts false.
    pub fn is_leader(&self) -> watch::Receiver<bool> {
        self.leader.subscribe()
    }

    /// Campaigns and renews until `shutdown` turns true (or its sender is dropped), then steps
    /// down and releases the Lease if held. Only an invalid duration ends it early.
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) -> Result<(), LockError> {
        let seconds = i64::try_from(self.lease_duration.as_secs()).map_err(|_| LockError::InvalidDuration)?;
        if self.lease_duration.subsec_nanos() != 0 {
            return Err(LockError::InvalidDuration);
        }
        crate::lease::check_duration(seconds)?;
        let mut held: Option<(Epoch, std::time::Instant)> = None;
        while !*shutdown.borrow() {
            let wait = self.round(seconds, &mut held).await;
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                changed = shutdown.changed() => if changed.is_err() { break },
            }
        }
        self.step_down(held.map(|(epoch, _)| epoch)).await;
        Ok(())
    }

    /// One acquire-or-renew attempt; returns how long to wait before the next.
    async fn round(&self, seconds: i64, held: &mut Option<(Epoch, std::time::Instant)>) -> Duration {
        let started = self.store.now();
        let expected = held.as_ref().map(|(epoch, _)| epoch.clone());
        // A leader must give up by the end of its Lease even if the API server never answers.
        let budget = held.as_ref().map_or(self.lease_duration, |(_, renewed)| {
            self.lease_duration
                .saturating_sub(started.saturating_duration_since(*renewed))
        });
        let attempt = tokio::time::timeout(
            budget,
            self.store
                .acquire(&self.lease_name, &self.identity, seconds, expected.as_ref()),
        )
        .await;
        let leading_period = self.renew_period.min(self.lease_duration / 2);
        match attempt {
            Ok(Ok(Acquired::Held { epoch, fresh })) => {
                if fresh {
                    tracing::info!(lease = %self.lease_name, identity = %self.identity, "became leader");
                }
                *held = Some((epoch, started));
                self.leader.send_if_modified(|l| !std::mem::replace(l, true));
                leading_period
            }
            Ok(Ok(Acquired::Busy { holder, retry_after })) => {
                self.lose(held, &holder);
                // Look again by the time the holder could expire, so the local clock sees it.
                self.renew_period.min(retry_after)
            }
            Ok(Ok(Acquired::ContinuityLost { .. })) => {
                self.lose(held, "another holder");
                // Campaign again at once, now without an expectation.
                Duration::ZERO
            }
            Ok(Err(err)) => {
                tracing::warn!(lease = %self.lease_name, error = %err, "leader Lease round failed");
                self.expire_if_overdue(held);
                leading_period
            }
            Err(_) => {
                tracing::warn!(lease = %self.lease_name, "leader Lease renewal did not finish within the Lease duration");
                self.expire_if_overdue(held);
                leading_period
            }
        }
    }

    fn lose(&self, held: &mut Option<(Epoch, std::time::Instant)>, to: &str) {
        if held.take().is_some() {
            tracing::warn!(lease = %self.lease_name, holder = %to, "lost leadership");
        }
        self.leader.send_if_modified(|l| std::mem::replace(l, false));
    }

    fn expire_if_overdue(&self, held: &mut Option<(Epoch, std::time::Instant)>) {
        let overdue = held.as_ref().is_some_and(|(_, renewed)| {
            self.store.now().saturating_duration_since(*renewed) >= self.lease_duration
        });
        if overdue {
            held.take();
            tracing::warn!(lease = %self.lease_name, "stepping down: no renewal within the Lease duration");
            self.leader.send_if_modified(|l| std::mem::replace(l, false));
        }
    }

    async fn step_down(&self, epoch: Option<Epoch>) {
        // Stop acting as leader before the Lease is freed, so two leaders never overlap.
        self.leader.send_if_modified(|l| std::mem::replace(l, false));
        let Some(epoch) = epoch else { return };
        match self.store.release(&self.lease_name, &self.identity, &epoch).await {
            Ok(Released::Released) => tracing::info!(lease = %self.lease_name, "released leadership"),
            Ok(Released::AlreadyReleased) => {}
            Err(err) => {
                tracing::warn!(lease = %self.lease_name, error = %err, "could not release the leader Lease")
            }
        }
    }
}
