//! Starting an operation: the claim is recorded before anything external exists. A leaf that
//! both the cycle and the approval gate call.

use ptah_api::{
    conditions::{ConditionType, Reason},
    schema::{SchemaOperationType as Op, SchemaPhase},
};

use super::{
    action::Action,
    claim,
    observed::Observed,
    record::{self, cond, edit},
};
use crate::conditions::Status;

/// Records a new claim (nothing external exists yet).
pub fn new_claim(o: &Observed<'_>, op: Op, proof: bool) -> Action {
    let sources = if proof {
        claim::from_proof(o, op)
    } else {
        Some(claim::from_spec(o, op))
    };
    let Some(sources) = sources else {
        return Action::Wait {
            after: record::POLL,
            renew: None,
        };
    };
    let mut c = claim::new_claim(o, &sources, 1);
    let mut s = edit(o);
    if proof && let Some(p) = &o.status.pending_observation {
        c.lease_epoch = Some(p.lease_epoch.clone());
        c.lease_duration_seconds = Some(p.lease_duration_seconds);
    }
    let (ph, reason) = match (op, proof) {
        (_, true) => (SchemaPhase::VerifyingConvergence, Reason::VerifyingConvergence),
        (Op::Resolve, _) => (SchemaPhase::Resolving, Reason::Refreshing),
        (Op::Verify, _) => (SchemaPhase::Verifying, Reason::OperationInProgress),
        (Op::Observe, _) => (SchemaPhase::Observing, Reason::OperationInProgress),
        (Op::Plan, _) => (SchemaPhase::Planning, Reason::OperationInProgress),
        (Op::Apply, _) => (SchemaPhase::Applying, Reason::ApplyPending),
    };
    if op == Op::Resolve {
        s.observed_generation = Some(o.meta.generation);
    }
    s.execution_binding = Some(o.binding.status());
    s.phase = Some(ph);
    cond(
        o,
        &mut s,
        ConditionType::Progressing,
        Status::True,
        reason,
        format!("{op:?} claimed as Job {}", c.job_name),
    );
    if op == Op::Apply {
        cond(
            o,
            &mut s,
            ConditionType::Applying,
            Status::True,
            Reason::ApplyPending,
            "the approved plan is being applied",
        );
    }
    s.active_operation = Some(c);
    Action::WriteStatus {
        status: Box::new(s),
        event: None,
    }
}

/// Records a new Apply claim for the current plan (used by the gate).
pub fn claim_apply(o: &Observed<'_>) -> Action {
    new_claim(o, Op::Apply, false)
}
