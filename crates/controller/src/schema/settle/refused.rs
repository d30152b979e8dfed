//! An operation refused before its main container started (`operation::prestart`): by its fetch
//! init container, or for a Secret that does not exist. The main container is the only one that
//! may hold the database URL and it never ran, so an Apply refused this way owes no proof: it did
//! not start.

use ptah_api::{
    conditions::ConditionType,
    schema::{SchemaOperationStatus, SchemaOperationType as Op, SchemaPhase},
};

use super::failed::{failed, is_proof_step};
use crate::{
    conditions::Status,
    operation::prestart::PreStart,
    schema::{
        action::Action,
        observed::Observed,
        record::{cond, phase},
    },
};

/// Settles claim `c` refused as `r`; with `delete`, its Job is deleted after the write (its Pod
/// still waits and must not start later). A refusal that holds is recorded in `status.refusal`
/// (Blocked); a failure is retried after `failureRetryInterval`, as is any step of a proof owed.
pub fn refused(o: &Observed<'_>, c: &SchemaOperationStatus, r: &PreStart, delete: bool) -> Action {
    let apply = c.operation_type == Op::Apply;
    let prefix = if apply { "the Apply never started: " } else { "" };
    let message = format!("{prefix}{}", r.message);
    let mut action = failed(o, c, r.reason, &message);
    if let Action::WriteStatus { status, event } = &mut action {
        if apply {
            // The approval was spent on this dispatch; the next cycle plans again.
            status.plan = None;
            cond(
                o,
                status,
                ConditionType::Applying,
                Status::False,
                r.reason,
                message.clone(),
            );
        }
        // The generation the cycle's inputs came from: the Resolve's claim recorded it.
        let generation = o.status.observed_generation.unwrap_or(o.meta.generation);
        let digest = c.source.as_ref().map(|s| &s.digest);
        let record = (!is_proof_step(o, c))
            .then(|| r.record(digest, generation, &o.binding.epoch, o.now))
            .flatten();
        if let Some(record) = record {
            status.refusal = Some(record);
            phase(o, status, SchemaPhase::Blocked, false, r.reason, message.clone());
        }
        *event = Some(r.event(prefix));
    }
    match (action, c.job_uid.clone()) {
        (Action::WriteStatus { status, event }, Some(uid)) if delete => Action::SettleAndDeleteJob {
            status,
            event,
            job: c.job_name.clone(),
            uid,
        },
        (action, _) => action,
    }
}
