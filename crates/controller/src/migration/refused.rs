//! A migration operation refused before its main container started (`operation::prestart`): by
//! its fetch init container, or for a Secret that does not exist. The main container is the only
//! one that may hold the database URL and it never ran, so an Apply refused this way applied
//! nothing: a failed run, never an unresolved one.

use ptah_api::{
    conditions::ConditionType,
    migration::{MigrationOperationStatus, MigrationOperationType as Op, MigrationPhase, RunOutcome},
};

use super::{
    action::Action,
    cycle::next_cycle,
    observed::Observed,
    record::failed,
    record::{cond, phase},
    settle::run,
};
use crate::{conditions::Status, operation::prestart::PreStart};

/// Settles claim `c` refused as `r`; with `delete`, its Job is deleted after the write (its Pod
/// still waits and must not start later). A refusal that holds is recorded in `status.refusal`
/// (Blocked until the next cycle, or for good for a refused artifact); a failure is retried after
/// `failureRetryInterval`.
pub fn refused(o: &Observed<'_>, c: &MigrationOperationStatus, r: &PreStart, delete: bool) -> Action {
    let apply = c.operation_type == Op::Apply;
    let prefix = if apply { "the Apply never started: " } else { "" };
    let message = format!("{prefix}{}", r.message);
    let mut action = failed(o, c, r.reason, &message);
    if let Action::WriteStatus { status, event } = &mut action {
        if apply {
            status.last_run = Some(run(o, c, RunOutcome::Failed, Vec::new(), &message));
            status.plan = None;
            status.history = None;
        }
        // The generation the cycle's inputs came from: the Resolve's claim recorded it.
        let generation = o.status.observed_generation.unwrap_or(o.meta.generation);
        let digest = c.source.as_ref().map(|s| &s.digest);
        if let Some(record) = r.record(digest, generation, &o.binding.epoch, o.now) {
            status.refusal = Some(record);
            status.next_reconciliation_time = Some(next_cycle(o));
            phase(
                o,
                status,
                MigrationPhase::Blocked,
                false,
                r.reason,
                message.clone(),
            );
            cond(
                o,
                status,
                ConditionType::Blocked,
                Status::True,
                r.reason,
                message.clone(),
            );
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
