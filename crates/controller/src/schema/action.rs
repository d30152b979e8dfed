//! What one decision asks the shell to do: exactly one step, durable order preserved.

use std::time::Duration;

use ptah_api::{
    PtahSchemaPlanSpec, PtahSchemaStatus,
    shared::{Epoch, ImmutableObjectReference, PendingLockRelease, Sha256Digest},
};

/// A Kubernetes Event to record with an action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Warning rather than Normal.
    pub warning: bool,
    /// The stable reason (CamelCase).
    pub reason: &'static str,
    /// What happened, for a person.
    pub note: String,
}

impl Event {
    /// A Normal event.
    pub fn normal(reason: &'static str, note: impl Into<String>) -> Self {
        Event {
            warning: false,
            reason,
            note: note.into(),
        }
    }

    /// A Warning event.
    pub fn warning(reason: &'static str, note: impl Into<String>) -> Self {
        Event {
            warning: true,
            reason,
            note: note.into(),
        }
    }
}

/// A plan to publish before the status that names it is written.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanDraft {
    /// The plan object's spec; the store fills digests, size, chunks and fingerprint.
    pub spec: PtahSchemaPlanSpec,
    /// The plan document bytes.
    pub bytes: Vec<u8>,
}

/// One step.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Release a realm Lease whose release was staged in status, then clear the record.
    ReleaseLease {
        /// The staged release.
        release: PendingLockRelease,
        /// The holder identity it was held under.
        holder: String,
    },
    /// Add the finalizer (a metadata patch, before any claim).
    AddFinalizer,
    /// Remove the finalizer: nothing is in flight and no proof is owed.
    RemoveFinalizer,
    /// Write this status (server-side apply under the manager's field manager).
    WriteStatus {
        /// The whole new status.
        status: Box<PtahSchemaStatus>,
        /// An Event to record after the write.
        event: Option<Event>,
    },
    /// Acquire the realm Lease for the claim and persist its epoch in the claim.
    AcquireLease {
        /// The realm.
        digest: Sha256Digest,
        /// The holder identity.
        holder: String,
        /// The duration to hold it for.
        duration_seconds: i64,
        /// The epoch already persisted, if any.
        expected: Option<Epoch>,
        /// Whether a Job may already exist (then a lost continuity latches instead of adopting).
        dispatched: bool,
    },
    /// Persist `dispatchStarted`, then create the claim's Job exactly once, read it back, compare,
    /// and record its UID.
    Dispatch {
        /// The status with `dispatchStarted` (and deadlines) set, written before the create.
        status: Box<PtahSchemaStatus>,
        /// For an Apply: the plan to project into ConfigMaps before the Job exists.
        plan: Option<ImmutableObjectReference>,
    },
    /// A Job under the claim's name exists but its UID is not recorded: record it (it matched).
    AdoptJob {
        /// The status with `jobUID` set.
        status: Box<PtahSchemaStatus>,
    },
    /// Set the cleanup TTL on the finished Job (the only field the manager adds to its Job).
    ScheduleJobCleanup,
    /// Publish a plan (idempotent), then write the status naming it.
    PublishAndRecord {
        /// The plan.
        draft: Box<PlanDraft>,
        /// The status to write; the shell sets `status.plan.name`/`uid` from the published plan.
        status: Box<PtahSchemaStatus>,
        /// An Event to record.
        event: Option<Event>,
    },
    /// Mark approvals stale (their plan was retired) or consumed (spent on a dispatch).
    MarkApprovals {
        /// Approvals to mark consumed.
        consumed: Vec<ImmutableObjectReference>,
        /// Approvals to mark stale.
        stale: Vec<ImmutableObjectReference>,
    },
    /// Nothing to do now; look again after this long (watch events may come sooner).
    Wait {
        /// When to look again.
        after: Duration,
        /// A Lease the running claim holds and the shell renews while waiting.
        renew: Option<Renewal>,
    },
}

/// A Lease to renew while a dispatched operation runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Renewal {
    /// The realm.
    pub digest: Sha256Digest,
    /// The holder identity.
    pub holder: String,
    /// The duration recorded in the claim.
    pub duration_seconds: i64,
    /// The epoch recorded in the claim.
    pub epoch: Epoch,
}
