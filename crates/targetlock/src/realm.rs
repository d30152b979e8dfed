//! Realm Leases: one Lease per coordination digest in the coordination namespace.

use std::sync::Arc;

use kube::Client;
use ptah_api::shared::{Epoch, Sha256Digest};

use crate::lease::{Acquired, Released};
use crate::{Clock, LockError, SystemClock, lease::LeaseStore, lease_name};

/// The value of [`crate::COORDINATION_LABEL`] on realm Leases.
pub const COORDINATION_VALUE: &str = "database-target";

/// Acquires, renews and releases realm Leases; clones share one first-sighting table.
#[derive(Clone)]
pub struct RealmLeases {
    store: LeaseStore,
}

impl RealmLeases {
    /// Realm Leases in `namespace`, timed on the process's monotonic clock.
    pub fn new(client: Client, namespace: impl Into<String>) -> Self {
        Self::with_clock(client, namespace, Arc::new(SystemClock))
    }

    /// Realm Leases timed on `clock` (tests inject a [`crate::ManualClock`]).
    pub fn with_clock(client: Client, namespace: impl Into<String>, clock: Arc<dyn Clock>) -> Self {
        RealmLeases {
            store: LeaseStore::new(client, namespace.into(), COORDINATION_VALUE, clock),
        }
    }

    /// The coordination namespace the Leases live in.
    pub fn namespace(&self) -> &str {
        self.store.namespace()
    }

    /// Acquire or renew. `expected` = the epoch the caller persisted (None when acquiring fresh).
    ///
    /// With `expected`, only a renewal of exactly that holding succeeds; anything else is
    /// [`Acquired::ContinuityLost`]. Without it, the caller's own current holding is adopted,
    /// a free Lease is taken, and a foreign one only once its duration has elapsed on the local clock.
    pub async fn acquire(
        &self,
        digest: &Sha256Digest,
        holder: &str,
        duration_seconds: i64,
        expected: Option<&Epoch>,
    ) -> Result<Acquired, LockError> {
        self.store
            .acquire(&lease_name(digest), holder, duration_seconds, expected)
            .await
    }

    /// Release only by the exact holder under the exact epoch; otherwise report AlreadyReleased.
    ///
    /// Sets holderIdentity empty and renewTime monotonic; the Lease object itself stays.
    pub async fn release(
        &self,
        digest: &Sha256Digest,
        holder: &str,
        epoch: &Epoch,
    ) -> Result<Released, LockError> {
        self.store.release(&lease_name(digest), holder, epoch).await
    }
}
