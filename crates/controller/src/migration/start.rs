//! Starting an operation: the claim is recorded before anything external exists. A leaf that
//! both the cycle and the approval gate call.

use ptah_api::{
    conditions::{ConditionType, Reason},
    migration::{MigrationOperationType as Op, MigrationPhase},
    shared::ImmutableObjectReference,
};

use super::{
    action::Action,
    claim,
    observed::Observed,
    record::{busy_phase, cond, edit},
};
use crate::{conditions::Status, operation::time::POLL};

/// Records a new claim of `op` (for an Apply, spending `approval` when one is needed).
pub fn new_claim(o: &Observed<'_>, op: Op, approval: Option<ImmutableObjectReference>) -> Action {
    let Some(sources) = claim::sources(o, op) else {
        return Action::Wait {
            after: POLL,
            renew: None,
        };
    };
    let mut c = claim::new_claim(o, &sources, 1);
    c.approval_ref = approval;
    let mut s = edit(o);
    let verifying = op == Op::History && o.status.phase == Some(MigrationPhase::VerifyingHistory);
    let (phase, reason) = match op {
        Op::Resolve => (MigrationPhase::Resolving, Reason::Refreshing),
        Op::Verify => (MigrationPhase::Verifying, Reason::OperationInProgress),
        Op::History if verifying => (MigrationPhase::VerifyingHistory, Reason::OperationInProgress),
        Op::History => (MigrationPhase::Reading, Reason::OperationInProgress),
        Op::Apply => (MigrationPhase::Applying, Reason::ApplyPending),
    };
    if op == Op::Resolve {
        s.observed_generation = Some(o.meta.generation);
    }
    s.execution_binding = Some(o.binding.status());
    s.phase = Some(busy_phase(o, phase));
    let waits = if op == Op::Apply {
        "; it waits for the realm Lease"
    } else {
        ""
    };
    cond(
        o,
        &mut s,
        ConditionType::Progressing,
        Status::True,
        reason,
        format!("{op:?} claimed as Job {}{waits}", c.job_name),
    );
    s.active_operation = Some(c);
    Action::WriteStatus {
        status: Box::new(s),
        event: None,
    }
}
