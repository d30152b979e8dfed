//! What one decision asks the shell to do: exactly one step, durable order preserved. Generic
//! over the family's status `S` and plan draft `D`; every status a step writes is built by the
//! decision, so the shell only performs.

use std::time::Duration;

use ptah_api::shared::{ImmutableObjectReference, PendingLockRelease, Sha256Digest};

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

/// One step.
#[derive(Clone, Debug, PartialEq)]
pub enum Action<S, D> {
    /// Release a realm Lease whose release was staged in status, then write `status` (the
    /// record cleared).
    ReleaseLease {
        /// The staged release.
        release: PendingLockRelease,
        /// The holder identity it was held under.
        holder: String,
        /// The status to write once released.
        status: Box<S>,
    },
    /// Add the finalizer (a metadata patch, before any claim).
    AddFinalizer,
    /// Remove the finalizer: nothing is in flight and nothing is owed.
    RemoveFinalizer,
    /// Write this status (server-side apply under the manager's field manager).
    WriteStatus {
        /// The whole new status.
        status: Box<S>,
        /// An Event to record after the write.
        event: Option<Event>,
    },
    /// Acquire the realm Lease for the undispatched claim and record the epoch it was granted.
    /// A busy Lease is a requeue, with nothing written, after the holder's remaining time or a
    /// short poll, whichever comes first (holders release early).
    AcquireLease {
        /// The realm.
        digest: Sha256Digest,
        /// The holder identity.
        holder: String,
        /// The duration to hold it for.
        duration_seconds: i64,
    },
    /// Persist `dispatchStarted`, then create the claim's Job exactly once.
    Dispatch {
        /// The status with `dispatchStarted` (and deadlines) set, written before the create.
        status: Box<S>,
        /// For an Apply: the plan the Job executes.
        plan: Option<ImmutableObjectReference>,
    },
    /// A Job under the claim's name exists but its UID is not recorded: record it (it matched).
    AdoptJob {
        /// The status with `jobUID` set.
        status: Box<S>,
    },
    /// Set the cleanup TTL on the finished Job (the only field the manager adds to its Job).
    ScheduleJobCleanup,
    /// Write this status, which settles a claim whose Pod never started its main container, then
    /// delete that claim's Job (its Pod with it): the kubelet would start the waiting container
    /// as soon as the missing Secret appeared, long after the claim was settled.
    SettleAndDeleteJob {
        /// The status with the claim settled.
        status: Box<S>,
        /// An Event to record after the write.
        event: Option<Event>,
        /// The Job's name.
        job: String,
        /// Its UID: only that Job is deleted.
        uid: String,
    },
    /// Publish a plan (idempotent), then write the status naming it.
    PublishAndRecord {
        /// The plan.
        draft: Box<D>,
        /// The status to write; the shell records the published plan's name and UID in it.
        status: Box<S>,
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
    /// Mark run acknowledgments consumed (they resolved the run they name) or stale.
    MarkAcknowledgments {
        /// Acknowledgments to mark consumed.
        consumed: Vec<ImmutableObjectReference>,
        /// Acknowledgments to mark stale.
        stale: Vec<ImmutableObjectReference>,
    },
    /// Nothing to do now; look again after this long (watch events may come sooner).
    Wait {
        /// When to look again.
        after: Duration,
        /// A Lease the running claim holds and the shell renews while waiting.
        renew: Option<Renewal<S>>,
    },
}

impl<S, D> Action<S, D> {
    /// A stable name for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Action::ReleaseLease { .. } => "release-lease",
            Action::AddFinalizer => "add-finalizer",
            Action::RemoveFinalizer => "remove-finalizer",
            Action::WriteStatus { .. } => "write-status",
            Action::AcquireLease { .. } => "acquire-lease",
            Action::Dispatch { .. } => "dispatch",
            Action::AdoptJob { .. } => "adopt-job",
            Action::ScheduleJobCleanup => "schedule-job-cleanup",
            Action::SettleAndDeleteJob { .. } => "settle-and-delete-job",
            Action::PublishAndRecord { .. } => "publish-plan",
            Action::MarkApprovals { .. } => "mark-approvals",
            Action::MarkAcknowledgments { .. } => "mark-acknowledgments",
            Action::Wait { .. } => "wait",
        }
    }
}

impl<S, D> Action<S, D> {
    /// This step with its status write's Event replaced by `event` (a typed refusal is found by
    /// its own Event reason, not a generic one).
    pub fn with_event(mut self, new: Event) -> Self {
        if let Action::WriteStatus { event, .. } = &mut self {
            *event = Some(new);
        }
        self
    }

    /// Edits every status this step may write, so a rule that follows from the whole status (the
    /// kstatus conditions) is applied once, at the decision's exit, whatever step built it.
    pub fn edit_statuses(&mut self, mut edit: impl FnMut(&mut S)) {
        match self {
            Action::ReleaseLease { status, .. }
            | Action::WriteStatus { status, .. }
            | Action::Dispatch { status, .. }
            | Action::AdoptJob { status }
            | Action::SettleAndDeleteJob { status, .. }
            | Action::PublishAndRecord { status, .. } => edit(status),
            Action::Wait {
                renew: Some(renewal), ..
            } => edit(&mut renewal.lost),
            Action::AddFinalizer
            | Action::RemoveFinalizer
            | Action::AcquireLease { .. }
            | Action::ScheduleJobCleanup
            | Action::MarkApprovals { .. }
            | Action::MarkAcknowledgments { .. }
            | Action::Wait { renew: None, .. } => {}
        }
    }
}

/// A Lease to renew while a dispatched operation runs, and what to record if it was lost.
#[derive(Clone, Debug, PartialEq)]
pub struct Renewal<S> {
    /// The realm.
    pub digest: Sha256Digest,
    /// The holder identity.
    pub holder: String,
    /// The duration recorded in the claim.
    pub duration_seconds: i64,
    /// The epoch recorded in the claim.
    pub epoch: ptah_api::shared::Epoch,
    /// The status to write when the holding was lost (continuity latched by the decision).
    pub lost: Box<S>,
}

/// The Event reason of an operation Job the API server refused to create (RBAC, admission).
pub const JOB_CREATE_REFUSED: &str = "JobCreateRefused";

/// The Event that announces a lost Lease holding.
pub fn continuity_lost_event() -> Event {
    Event::warning(
        "LeaseContinuityLost",
        "the realm Lease changed hands while the operation ran; its result will be discarded",
    )
}
