//! Realm Leases with epochs and local-clock expiry, the realm census, and the manager's leader election.
//!
//! A realm (one physical database) is guarded by one `coordination.k8s.io/v1` Lease in the
//! coordination namespace, named after the realm's coordination digest. [`RealmLeases`] acquires,
//! renews and releases it by compare-and-swap; every new acquisition gets a fresh
//! [`Epoch`](ptah_api::shared::Epoch) so a caller can prove it held the realm continuously. A foreign holder's Lease expires only after
//! its duration has passed on *this* process's monotonic clock since the record was first seen
//! unchanged, never by another node's timestamps. [`census`] decides, without a cluster, whether a
//! claimant may use a realm at all; [`leader`] elects the manager through the same Lease machinery.

pub mod census;
mod clock;
mod contract;
mod decide;
mod error;
pub mod leader;
mod lease;
mod names;
mod realm;

pub use clock::{Clock, ManualClock, SystemClock};
pub use contract::{
    COORDINATION_LABEL, EPOCH_ANNOTATION, MANAGED_BY_LABEL, MANAGED_BY_VALUE, MAX_DURATION_SECONDS,
    MIN_DURATION_SECONDS,
};
pub use error::LockError;
pub use lease::{Acquired, MAX_CAS_ATTEMPTS, Released};
pub use names::{holder_identity, lease_name, new_epoch};
pub use realm::{COORDINATION_VALUE, RealmLeases};
