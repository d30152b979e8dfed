//! The receiver's decisions, pure: is an enrolment or a delivery admitted, given what an
//! uncached read of the claim, its Job and its Pod found, and what is stored already?
//!
//! The shell reads, calls one of these, and performs what it says; it judges nothing itself.

use std::net::IpAddr;

use ptah_dataplane::OperationId;
use ptah_fingerprint::{Digest, Sha256};
use ptah_resultdelivery::{ClaimRef, ObjectRef, ResourceRef, ResultBinding, ResultBody};

use crate::EnrolmentToken;

/// The resource's active claim, as an uncached read found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveClaim {
    /// The resource, at the generation the claim was made for.
    pub resource: ResourceRef,
    /// The claim.
    pub claim: ClaimRef,
    /// The Job the claim names.
    pub job_name: String,
    /// Whether the claim's dispatch was persisted (its Job may exist).
    pub dispatched: bool,
    /// The sha256 of the claim's enrolment token; absent when the claim's Job does not deliver
    /// durably.
    pub enrolment_digest: Option<Sha256>,
    /// When the operation's time is up (its execution deadline plus the grace): the client
    /// certificate expires then.
    pub not_after: jiff::Timestamp,
}

/// A Job, as an uncached read found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveJob {
    /// Its name and UID.
    pub id: ObjectRef,
}

/// A Pod, as an uncached read found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LivePod {
    /// Its name and UID.
    pub id: ObjectRef,
    /// The UID of the Job that controls it.
    pub controller_uid: Option<String>,
    /// Where it is in its life.
    pub phase: PodPhase,
    /// `status.podIP`.
    pub pod_ip: Option<IpAddr>,
}

/// Where a Pod is in its life, as far as enrolment cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodPhase {
    /// Pending: the kubelet has not reported its containers running yet. A runner that enrols
    /// from it is ahead of the kubelet's status update, which comes within seconds.
    Starting,
    /// Running, and not being deleted.
    Running,
    /// Succeeded, Failed or Unknown, or being deleted: nothing of it may enrol any more.
    Ended,
}

impl PodPhase {
    /// The phase of a Pod whose `status.phase` is `phase`, being deleted or not.
    pub fn of(phase: Option<&str>, deleting: bool) -> PodPhase {
        match phase {
            _ if deleting => PodPhase::Ended,
            None | Some("Pending") => PodPhase::Starting,
            Some("Running") => PodPhase::Running,
            Some(_) => PodPhase::Ended,
        }
    }
}

/// What the uncached reads found for the operation a request names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Live {
    /// The resource's active claim, when it has one.
    pub claim: Option<LiveClaim>,
    /// The claim's Job, when it exists.
    pub job: Option<LiveJob>,
    /// The Pod the request names, when it exists.
    pub pod: Option<LivePod>,
}

/// An enrolment: who the runner says it is, and the token its projection gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnrolmentRequest {
    /// The claim's operation id.
    pub operation_id: OperationId,
    /// The runner's Pod, from the downward API.
    pub pod: ObjectRef,
    /// The token.
    pub token: EnrolmentToken,
    /// The connection's source address.
    pub source: IpAddr,
}

/// What is stored for an operation already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// Nothing.
    Nothing,
    /// An `intent` of a body with this digest, not yet `complete` (a delivery cut short).
    Partial(Digest),
    /// A `complete` body with this digest.
    Complete(Digest),
}

/// What the receiver does with an admitted delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryDecision {
    /// Store the body (finishing a cut-short delivery of the same bytes), then answer 201.
    Store,
    /// The same bytes are stored already: answer 200 and write nothing.
    AlreadyStored,
}

/// Why a request was refused. The text names the mismatch, never a token or a body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The resource has no active claim with the request's operation id.
    #[error("no active claim has this operation id")]
    NoSuchClaim,
    /// The claim exists but its dispatch was not persisted.
    #[error("the claim's dispatch is not persisted")]
    NotDispatched,
    /// The claim's Job does not deliver durably.
    #[error("the claim's Job does not deliver results durably")]
    NotEnrolable,
    /// The token is not the claim's.
    #[error("the enrolment token is not the claim's")]
    WrongToken,
    /// The claim's Job does not exist.
    #[error("the claim's Job {0} does not exist")]
    NoJob(String),
    /// The Pod does not exist, or has another UID.
    #[error("Pod {0} does not exist with the UID given")]
    NoPod(String),
    /// The Pod is not controlled by the claim's Job.
    #[error("Pod {0} is not controlled by the claim's Job")]
    PodNotOfJob(String),
    /// The Pod has ended (or is being deleted).
    #[error("Pod {0} is not running")]
    PodNotRunning(String),
    /// The kubelet has not reported the Pod running, or its address, yet: a retry in a moment
    /// may be admitted.
    #[error("Pod {0} is not reported running with an address yet")]
    PodStarting(String),
    /// The connection does not come from the Pod's address.
    #[error("the connection does not come from Pod {0}'s address")]
    SourceAddress(String),
    /// The operation has enrolled already (the one-time `credential` record exists).
    #[error("this operation has enrolled already")]
    AlreadyEnrolled,
    /// The body's binding is not the client certificate's.
    #[error("the body's binding is not the client certificate's")]
    OtherBinding,
    /// The certificate's binding no longer matches the live claim, Job or Pod.
    #[error("the client certificate's {0} no longer matches the live one")]
    Stale(&'static str),
    /// Other bytes are stored (or being stored) for this operation.
    #[error("a different result is stored for this operation")]
    Conflict,
}

impl Refusal {
    /// The HTTP status the receiver answers with.
    pub fn status(&self) -> u16 {
        match self {
            Refusal::Conflict | Refusal::AlreadyEnrolled => 409,
            // The runner's client retries a 503 until its deadline.
            Refusal::PodStarting(_) => 503,
            _ => 403,
        }
    }

    /// A stable CamelCase reason, for logs, metrics and Events.
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::NoSuchClaim => "NoSuchClaim",
            Refusal::NotDispatched => "NotDispatched",
            Refusal::NotEnrolable => "NotEnrolable",
            Refusal::WrongToken => "WrongToken",
            Refusal::NoJob(_) => "NoJob",
            Refusal::NoPod(_) => "NoPod",
            Refusal::PodNotOfJob(_) => "PodNotOfJob",
            Refusal::PodNotRunning(_) => "PodNotRunning",
            Refusal::PodStarting(_) => "PodStarting",
            Refusal::SourceAddress(_) => "SourceAddress",
            Refusal::AlreadyEnrolled => "AlreadyEnrolled",
            Refusal::OtherBinding => "OtherBinding",
            Refusal::Stale(_) => "Stale",
            Refusal::Conflict => "Conflict",
        }
    }
}

/// Admits an enrolment and returns the binding its certificate will name. The one-time check
/// (creating the `credential` record) is the shell's next step; a conflict there is
/// [`Refusal::AlreadyEnrolled`].
pub fn admit_enrolment(request: &EnrolmentRequest, live: &Live) -> Result<ResultBinding, Refusal> {
    let claim = live
        .claim
        .as_ref()
        .filter(|c| c.claim.operation_id == request.operation_id)
        .ok_or(Refusal::NoSuchClaim)?;
    if !claim.dispatched {
        return Err(Refusal::NotDispatched);
    }
    let digest = claim.enrolment_digest.as_ref().ok_or(Refusal::NotEnrolable)?;
    if !request.token.matches(digest) {
        return Err(Refusal::WrongToken);
    }
    let job = live
        .job
        .as_ref()
        .filter(|j| j.id.name == claim.job_name)
        .ok_or_else(|| Refusal::NoJob(claim.job_name.clone()))?;
    let pod_name = &request.pod.name;
    let pod = live
        .pod
        .as_ref()
        .filter(|p| p.id == request.pod)
        .ok_or_else(|| Refusal::NoPod(pod_name.clone()))?;
    if pod.controller_uid.as_deref() != Some(job.id.uid.as_str()) {
        return Err(Refusal::PodNotOfJob(pod_name.clone()));
    }
    let Some(pod_ip) = pod.pod_ip else {
        return Err(Refusal::PodStarting(pod_name.clone()));
    };
    match pod.phase {
        PodPhase::Starting => return Err(Refusal::PodStarting(pod_name.clone())),
        PodPhase::Ended => return Err(Refusal::PodNotRunning(pod_name.clone())),
        PodPhase::Running => {}
    }
    if pod_ip.to_canonical() != request.source.to_canonical() {
        return Err(Refusal::SourceAddress(pod_name.clone()));
    }
    Ok(ResultBinding {
        resource: claim.resource.clone(),
        claim: claim.claim.clone(),
        job: job.id.clone(),
        pod: pod.id.clone(),
    })
}

/// Admits a delivery of `body` (decoded and digest-checked) under the client certificate's
/// `binding`. What is stored is looked at first, so a runner whose acknowledgment was lost gets
/// its 200 even once the claim has settled on that very result.
pub fn admit_delivery(
    binding: &ResultBinding,
    body: &ResultBody,
    digest: Digest,
    stored: Stored,
    live: &Live,
) -> Result<DeliveryDecision, Refusal> {
    if &body.binding != binding {
        return Err(Refusal::OtherBinding);
    }
    match stored {
        Stored::Complete(d) if d == digest => return Ok(DeliveryDecision::AlreadyStored),
        Stored::Complete(_) => return Err(Refusal::Conflict),
        Stored::Partial(d) if d != digest => return Err(Refusal::Conflict),
        Stored::Partial(_) | Stored::Nothing => {}
    }
    let claim = live.claim.as_ref().ok_or(Refusal::Stale("claim"))?;
    if claim.resource != binding.resource
        || claim.claim != binding.claim
        || claim.job_name != binding.job.name
    {
        return Err(Refusal::Stale("claim"));
    }
    let job = live
        .job
        .as_ref()
        .filter(|j| j.id == binding.job)
        .ok_or(Refusal::Stale("Job"))?;
    live.pod
        .as_ref()
        .filter(|p| p.id == binding.pod && p.controller_uid.as_deref() == Some(job.id.uid.as_str()))
        .ok_or(Refusal::Stale("Pod"))?;
    Ok(DeliveryDecision::Store)
}
