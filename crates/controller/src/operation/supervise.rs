//! Supervising a claim: what its Job and its one Pod's result say, before any model reads it.
//!
//! The mechanism never decides what a lost Job means: for an Apply that is an uncertain outcome
//! (never replayed), for a read-only operation a fresh claim. It only classifies.

use ptah_api::conditions::Reason;
use ptah_dataplane::ResultPayload;

use super::{
    bind,
    claim::Claim,
    observed::{Binding, Finished, JobState, ResultRead, Stuck},
    prestart::{self, PreStart},
};

/// Where a claim stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Supervision<'a> {
    /// `dispatchStarted` is not persisted: no Job may exist yet.
    BeforeDispatch,
    /// The dispatched Job is missing, replaced, or differs from the claim's intent.
    JobLost(&'static str),
    /// The Job under the claim's name matches and its UID is to be recorded.
    Adopt(&'a str),
    /// The Job runs; its Pod cannot start for this reason, if visible.
    Running(Option<&'a Stuck>),
    /// The Job's Pod waits for a Secret (or key) that does not exist: its main container has not
    /// started. Until the Job ends it may still start, should the Secret appear.
    SecretMissing(PreStart),
    /// The Job's one Pod was stopped by an init container before its main container started.
    Refused(PreStart),
    /// The Job finished after the realm Lease changed hands: its result is never believed.
    ContinuityLost,
    /// The Job finished; its cleanup TTL must be scheduled before the result is recorded.
    ScheduleCleanup,
    /// The Job finished; its result cannot be read right now.
    AwaitResult,
    /// The Job finished and nothing can be attributed to the claim.
    Unattributable(String),
    /// The result fails its binding to the claim.
    Unbound(Reason, String),
    /// The result is bound to the claim.
    Bound(&'a ResultPayload),
}

/// Classifies the claim `c` from its Job and result.
pub fn supervise<'a>(
    c: &impl Claim,
    binding: &Binding,
    job: &'a JobState,
    result: &'a ResultRead,
) -> Supervision<'a> {
    if !c.dispatched() {
        return Supervision::BeforeDispatch;
    }
    let JobState::Present {
        uid,
        matches_intent,
        finished,
        ttl_set,
        stuck,
    } = job
    else {
        return Supervision::JobLost("the operation Job is missing after its dispatch was committed");
    };
    if c.job_uid().is_some_and(|r| r != uid) {
        return Supervision::JobLost("the Job under the claimed name was replaced");
    }
    if !matches_intent {
        return Supervision::JobLost("the Job under the claimed name differs from the one the claim built");
    }
    if c.job_uid().is_none() {
        return Supervision::Adopt(uid);
    }
    if finished.is_none() {
        return match stuck.as_ref().and_then(prestart::from_stuck) {
            Some(missing) => Supervision::SecretMissing(missing),
            None => Supervision::Running(stuck.as_ref()),
        };
    }
    if c.continuity_lost() {
        return Supervision::ContinuityLost;
    }
    if !ttl_set {
        return Supervision::ScheduleCleanup;
    }
    let settled = *finished != Some(Finished::Exited);
    match result {
        ResultRead::NotRead | ResultRead::Unavailable(_) => Supervision::AwaitResult,
        // Read before the Pod is terminal, a missing frame or Pod count is only early.
        ResultRead::PodCount(_) | ResultRead::NoFrame(_) if !settled => Supervision::AwaitResult,
        ResultRead::PodCount(n) => Supervision::Unattributable(format!(
            "{n} Pods ran for one operation; nothing can be attributed"
        )),
        ResultRead::NoFrame(why) => Supervision::Unattributable(format!("no valid result frame: {why}")),
        ResultRead::InitFailed(failure) => Supervision::Refused(prestart::from_init(failure)),
        ResultRead::Frame(payload) => match bind::bind(binding, c, payload) {
            Ok(()) => Supervision::Bound(payload),
            Err((reason, why)) => Supervision::Unbound(reason, why),
        },
    }
}
