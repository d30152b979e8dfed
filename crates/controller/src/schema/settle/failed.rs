//! A read-only operation that failed: recorded, retried after `failureRetryInterval`.

use ptah_api::{
    conditions::{ConditionType, Reason},
    schema::{SchemaOperationStatus, SchemaOperationType as Op, SchemaPhase},
};

use crate::conditions::Status;
use crate::schema::{
    action::{Action, Event},
    claim::holder_op,
    observed::Observed,
    record::{self, cond, edit, phase},
};

/// A read-only operation failed: retried after `failureRetryInterval`.
pub fn failed(o: &Observed<'_>, c: &SchemaOperationStatus, reason: Reason, why: &str) -> Action {
    let mut s = edit(o);
    if is_proof_step(o, c) {
        // The proof keeps its Lease and is retried; nothing is released.
        s.active_operation = None;
    } else {
        record::clear_claim(&mut s, c, Some(&holder_op(o, c)));
    }
    s.last_attempt_time = Some(record::now(o));
    phase(o, &mut s, SchemaPhase::Failed, false, reason, why);
    cond(
        o,
        &mut s,
        ConditionType::ReconciliationFailed,
        Status::True,
        reason,
        why,
    );
    cond(o, &mut s, ConditionType::Progressing, Status::False, reason, why);
    match c.operation_type {
        Op::Resolve => cond(
            o,
            &mut s,
            ConditionType::ArtifactResolved,
            Status::Unknown,
            Reason::RefreshFailed,
            why,
        ),
        Op::Observe | Op::Plan => cond(
            o,
            &mut s,
            ConditionType::DatabaseReachable,
            Status::Unknown,
            reason,
            why,
        ),
        _ => {}
    }
    Action::WriteStatus {
        status: Box::new(s),
        event: Some(Event::warning(
            "OperationFailed",
            format!("{:?}: {why}", c.operation_type),
        )),
    }
}

/// Whether the claim is a step of the proof an Apply owes.
pub fn is_proof_step(o: &Observed<'_>, c: &SchemaOperationStatus) -> bool {
    o.status.pending_observation.is_some() && c.operation_type != Op::Apply
}
