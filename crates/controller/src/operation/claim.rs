//! The claim: what both families persist in `status.activeOperation` before a Job exists, and
//! the pieces of the protocol that do not depend on the model (ids, deadlines, staged releases).

use jiff::Timestamp;
use ptah_api::{
    migration::{MigrationOperationStatus, MigrationOperationType},
    schema::{SchemaOperationStatus, SchemaOperationType},
    shared::{Epoch, PendingLockRelease, PodAdmissionSnapshot, Sha256Digest},
};
use ptah_dataplane::Operation;
use ptah_fingerprint::Fingerprint;
use serde::Serialize;

use super::time::after;

/// Grace added to a Job's deadline for the Lease, so the runner stops Ptah well before it lapses.
pub const LEASE_GRACE_SECONDS: i64 = 60;
/// Termination grace of operation Pods.
pub const TERMINATION_GRACE_SECONDS: i64 = 30;
/// Seconds Kubernetes's deadline of an Apply Job leaves after the runner's grace, for clock skew
/// between the manager's and the node's clocks.
pub const JOB_DEADLINE_MARGIN_SECONDS: i64 = 10;

// Kubernetes may stop an Apply Pod only once the Lease it runs under has lapsed or been renewed:
// the Lease covers the runner's grace and the margin past its execution deadline.
const _: () = assert!(LEASE_GRACE_SECONDS >= TERMINATION_GRACE_SECONDS + JOB_DEADLINE_MARGIN_SECONDS);
/// How long after dispatch an Apply Pod may still start its child.
pub const DISPATCH_WINDOW_SECONDS: i64 = 300;

/// The Lease a claim holds (or will hold).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseHold {
    /// The realm.
    pub digest: Sha256Digest,
    /// The duration recorded in the claim.
    pub duration_seconds: i64,
    /// The epoch, once acquired.
    pub epoch: Option<Epoch>,
}

/// What the mechanism reads from a family's claim.
pub trait Claim {
    /// The data-plane operation the claim runs.
    fn operation(&self) -> Operation;
    /// The operation id.
    fn id(&self) -> &Sha256Digest;
    /// The deterministic Job name.
    fn job_name(&self) -> &str;
    /// The Job's UID once recorded.
    fn job_uid(&self) -> Option<&str>;
    /// `dispatchStarted` is persisted.
    fn dispatched(&self) -> bool;
    /// The Lease continuity was lost after dispatch.
    fn continuity_lost(&self) -> bool;
    /// The realm the result must echo.
    fn coordination_digest(&self) -> Option<&Sha256Digest>;
    /// The database the result must report, when known.
    fn target_identity_digest(&self) -> Option<&Sha256Digest>;
    /// The execution binding the claim was made under.
    fn execution_binding_id(&self) -> &Epoch;
    /// The realm Lease the claim holds, if it locks.
    fn lease(&self) -> Option<LeaseHold>;
    /// Records the epoch the realm Lease was granted under.
    fn record_lease_epoch(&mut self, epoch: Epoch);
    /// Records the admission snapshot of the Job about to be created.
    fn record_admission_snapshot(&mut self, snapshot: PodAdmissionSnapshot);
    /// The sha256 of the enrolment token its Job delivers its result with, if it delivers durably.
    fn result_enrolment_digest(&self) -> Option<&Sha256Digest>;
    /// Records the enrolment token's digest drawn at dispatch.
    fn record_result_enrolment(&mut self, digest: Sha256Digest);
    /// The resource generation the claim was made for.
    fn generation(&self) -> Option<i64>;
}

macro_rules! claim_fields {
    () => {
        fn id(&self) -> &Sha256Digest {
            &self.id
        }
        fn job_name(&self) -> &str {
            &self.job_name
        }
        fn job_uid(&self) -> Option<&str> {
            self.job_uid.as_deref()
        }
        fn dispatched(&self) -> bool {
            self.dispatch_started == Some(true)
        }
        fn continuity_lost(&self) -> bool {
            self.lease_continuity_lost == Some(true)
        }
        fn coordination_digest(&self) -> Option<&Sha256Digest> {
            self.coordination_digest.as_ref()
        }
        fn target_identity_digest(&self) -> Option<&Sha256Digest> {
            self.target_identity_digest.as_ref()
        }
        fn execution_binding_id(&self) -> &Epoch {
            &self.execution_binding_id
        }
        fn lease(&self) -> Option<LeaseHold> {
            Some(LeaseHold {
                digest: self.coordination_digest.clone()?,
                duration_seconds: self.lease_duration_seconds?,
                epoch: self.lease_epoch.clone(),
            })
        }
        fn record_lease_epoch(&mut self, epoch: Epoch) {
            self.lease_epoch = Some(epoch);
        }
        fn record_admission_snapshot(&mut self, snapshot: PodAdmissionSnapshot) {
            self.admission_snapshot = Some(snapshot);
        }
        fn result_enrolment_digest(&self) -> Option<&Sha256Digest> {
            self.result_enrolment_digest.as_ref()
        }
        fn record_result_enrolment(&mut self, digest: Sha256Digest) {
            self.result_enrolment_digest = Some(digest);
        }
        fn generation(&self) -> Option<i64> {
            self.generation
        }
    };
}

impl Claim for SchemaOperationStatus {
    fn operation(&self) -> Operation {
        schema_operation(self.operation_type)
    }
    claim_fields!();
}

impl Claim for MigrationOperationStatus {
    fn operation(&self) -> Operation {
        migration_operation(self.operation_type)
    }
    claim_fields!();
}

/// The data-plane operation of a schema claim.
pub fn schema_operation(op: SchemaOperationType) -> Operation {
    match op {
        SchemaOperationType::Resolve => Operation::Resolve,
        SchemaOperationType::Verify => Operation::Verify,
        SchemaOperationType::Observe => Operation::Observe,
        SchemaOperationType::Plan => Operation::Plan,
        SchemaOperationType::Apply => Operation::Apply,
    }
}

/// The data-plane operation of a migration claim.
pub fn migration_operation(op: MigrationOperationType) -> Operation {
    match op {
        MigrationOperationType::Resolve => Operation::Resolve,
        MigrationOperationType::Verify => Operation::Verify,
        MigrationOperationType::History => Operation::MigrationHistory,
        MigrationOperationType::Apply => Operation::MigrationApply,
    }
}

/// The holder identity of `operation_id` on behalf of resource `uid` (owner-neutral across kinds).
pub fn holder(uid: &str, operation_id: &Sha256Digest) -> String {
    ptah_targetlock::holder_identity(uid, operation_id.as_str())
}

/// The release of the claim's Lease under `holder_op`, when it holds one: staged in the status
/// write that retires the claim and performed only after that write is durable.
pub fn staged_release(claim: &impl Claim, holder_op: &Sha256Digest) -> Option<PendingLockRelease> {
    let lease = claim.lease()?;
    Some(PendingLockRelease {
        coordination_digest: lease.digest,
        operation_id: holder_op.clone(),
        lease_duration_seconds: lease.duration_seconds,
        lease_epoch: lease.epoch?,
    })
}

/// sha256 of the canonical JSON of a value built from strings only (cannot fail to serialize).
pub fn digest_of<T: Serialize>(value: &T) -> Sha256Digest {
    match Fingerprint::of(value) {
        Ok(f) => f.into(),
        // Serializing plain strings, booleans and integers cannot fail; fall back to hashing the
        // JSON text so the function stays total.
        Err(_) => {
            ptah_fingerprint::Digest::of(serde_json::to_string(value).unwrap_or_default().as_bytes()).into()
        }
    }
}

/// The operation id: binds the resource, the operation, its inputs, the attempt, the epoch and
/// the moment of the claim. The moment makes every claim's id (and so its Job name) unique: a
/// later cycle with identical inputs must never adopt an earlier cycle's finished Job and its
/// old result. The id is persisted with the claim and never re-derived.
pub fn operation_id(
    uid: &str,
    op: Operation,
    input: &Sha256Digest,
    attempt: i32,
    epoch: &str,
    claimed_at: Timestamp,
) -> Sha256Digest {
    #[derive(Serialize)]
    struct Id<'a> {
        uid: &'a str,
        operation: &'static str,
        input_fingerprint: &'a str,
        attempt: i32,
        execution_binding_id: &'a str,
        claimed_at_ns: String,
    }
    digest_of(&Id {
        uid,
        operation: op.as_str(),
        input_fingerprint: input.as_str(),
        attempt,
        execution_binding_id: epoch,
        claimed_at_ns: claimed_at.as_nanosecond().to_string(),
    })
}

/// The Lease duration of a claim whose Job may run `active_deadline_seconds`.
pub fn lease_duration(active_deadline_seconds: i64) -> i64 {
    (active_deadline_seconds + LEASE_GRACE_SECONDS).clamp(5, 86_460)
}

/// `activeDeadlineSeconds` of an Apply Job claimed at `started_at` and due to end by
/// `execution_not_after`. The runner enforces `execution_not_after` itself and then takes up to
/// `grace_seconds` to stop `ptah` and report; Kubernetes counts its deadline from the Job's start,
/// seconds after the claim, so a deadline cut to the window alone would remove the Pod while the
/// runner reports. Kubernetes's deadline is the backstop for a runner that hangs.
pub fn apply_job_deadline(started_at: Timestamp, execution_not_after: Timestamp, grace_seconds: i64) -> i64 {
    let window = execution_not_after
        .as_second()
        .saturating_sub(started_at.as_second())
        .max(1);
    window
        .saturating_add(grace_seconds.max(0))
        .saturating_add(JOB_DEADLINE_MARGIN_SECONDS)
}

/// Deadlines written with `dispatchStarted`: the Pod must start its child before the first and
/// finish before the second.
pub fn deadlines(now: Timestamp, active_deadline_seconds: i64) -> (Timestamp, Timestamp) {
    // Whole seconds: the API server stores `Time` at second precision, and the Job read back
    // must equal the one built before the write.
    let now = Timestamp::from_second(now.as_second()).unwrap_or(now);
    let window = DISPATCH_WINDOW_SECONDS.min(active_deadline_seconds).max(0) as u64;
    let total = active_deadline_seconds.max(0) as u64;
    (
        after(now, std::time::Duration::from_secs(window)),
        after(now, std::time::Duration::from_secs(total)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_stops_an_apply_job_only_after_the_runner_has_reported() {
        let claimed = Timestamp::from_second(1_800_000_000).expect("a timestamp");
        let (_, end) = deadlines(claimed, 45);
        let job = apply_job_deadline(claimed, end, TERMINATION_GRACE_SECONDS);
        // Kubernetes counts from the Job's start, never before the claim: its deadline comes at
        // least the grace and the margin after the runner's.
        assert_eq!(job, 45 + TERMINATION_GRACE_SECONDS + JOB_DEADLINE_MARGIN_SECONDS);
        assert!(job <= lease_duration(45), "the Lease outlives it");
        let late = apply_job_deadline(claimed, claimed, TERMINATION_GRACE_SECONDS);
        assert_eq!(late, 1 + TERMINATION_GRACE_SECONDS + JOB_DEADLINE_MARGIN_SECONDS);
    }
}
