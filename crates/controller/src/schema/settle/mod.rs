//! Recording a finished operation: the claim is cleared and the outcome written in one status
//! write; a Lease release is staged in that same write and performed only after it. This folder
//! owns every settlement: `failed` is its leaf, the per-operation modules build on it.

use ptah_api::{
    conditions::{ConditionType, Reason},
    schema::{
        DriftFinding, PendingObservationOutcome, PtahSchemaStatus, SchemaOperationStatus,
        SchemaOperationType as Op, SchemaPhase, SchemaTargetStatus,
    },
    shared::Sha256Digest,
};
use ptah_dataplane::{DriftResult, ResultPayload};

mod apply;
mod failed;
mod plan;
mod refused;
mod source;

pub use apply::apply_unknown;
pub use failed::failed;
pub use refused::refused;
pub use source::SCHEMA_ARTIFACT_TYPE;

use super::{
    action::{Action, Event},
    claim::holder_op,
    observed::Observed,
    record::{self, cond, edit, phase},
};
use crate::{conditions::Status, operation::refusal::grant_reason};
use failed::is_proof_step;

/// `ptah`'s code for a desired schema that declares nothing (`ptah schema drift|plan`).
const EMPTY_SCHEMA: &str = "empty_schema";

/// A result bound to its claim: record what it says.
pub fn settle(o: &Observed<'_>, c: &SchemaOperationStatus, p: &ResultPayload) -> Action {
    // A Plan reads the drift before it plans: its observation is recorded first, whatever the
    // plan's outcome, and the plan is then settled on top of it.
    if c.operation_type == Op::Plan
        && let Some(d) = &p.drift
    {
        let mut s = edit(o);
        observation(o, &mut s, c, p, d);
        let o = Observed { status: &s, ..*o };
        return settle_result(&o, c, p);
    }
    settle_result(o, c, p)
}

fn settle_result(o: &Observed<'_>, c: &SchemaOperationStatus, p: &ResultPayload) -> Action {
    // A policy refusal is the verdict to record (Blocked), not a failure to retry.
    let registry_op = matches!(c.operation_type, Op::Resolve | Op::Verify);
    if let Some(e) = p
        .error
        .as_ref()
        .filter(|_| !(registry_op && p.is_policy_refusal()))
    {
        if c.operation_type == Op::Apply {
            return apply::apply_reported_unknown(o, c, &format!("the Apply failed ({})", e.code.as_str()));
        }
        if c.operation_type == Op::Plan && e.child_code.as_deref() == Some("protected_table") {
            return protected(o, c, &e.message);
        }
        let why = format!("{}: {}", e.code.as_str(), e.message);
        if e.child_code.as_deref() == Some(EMPTY_SCHEMA) {
            // The artifact declares nothing; the same digest is refused alike on every retry.
            let reason = Reason::EmptySchema;
            return failed(o, c, reason, &why).with_event(Event::warning(reason.as_str(), why));
        }
        if let Some(reason) = grant_reason(e.code.as_str()) {
            return failed(o, c, reason, &why).with_event(Event::warning(reason.as_str(), why));
        }
        let reason = if c.operation_type == Op::Resolve {
            Reason::ResolveFailed
        } else {
            Reason::OperationFailed
        };
        return failed(o, c, reason, &why);
    }
    match c.operation_type {
        Op::Resolve | Op::Verify => source::artifact(o, c, p),
        Op::Observe => observed(o, c, p),
        Op::Plan => plan::planned(o, c, p),
        Op::Apply => {
            if p.mutation_started == Some(true) && p.uncertain != Some(true) {
                apply::owe_proof(
                    o,
                    c,
                    PendingObservationOutcome::ApplySucceeded,
                    o.now,
                    "the plan was applied",
                )
            } else {
                apply::apply_reported_unknown(o, c, "the Apply report does not prove the plan was applied")
            }
        }
    }
}

fn protected(o: &Observed<'_>, c: &SchemaOperationStatus, message: &str) -> Action {
    let mut s = edit(o);
    record::clear_claim(&mut s, c, Some(&holder_op(o, c)));
    let m = format!("the plan would touch a protected table: {message}");
    phase(
        o,
        &mut s,
        SchemaPhase::Blocked,
        false,
        Reason::ProtectedTable,
        m.clone(),
    );
    cond(
        o,
        &mut s,
        ConditionType::PlanReady,
        Status::False,
        Reason::ProtectedTable,
        m.clone(),
    );
    cond(
        o,
        &mut s,
        ConditionType::InSync,
        Status::False,
        Reason::ProtectedTable,
        m.clone(),
    );
    s.plan = None;
    Action::WriteStatus {
        status: Box::new(s),
        event: Some(Event::warning("ProtectedTableRefused", m)),
    }
}

fn observed(o: &Observed<'_>, c: &SchemaOperationStatus, p: &ResultPayload) -> Action {
    let Some(d) = &p.drift else {
        return failed(
            o,
            c,
            Reason::OperationFailed,
            "the Observe result carries no drift report",
        );
    };
    let mut s = edit(o);
    if is_proof_step(o, c) {
        s.active_operation = None;
    } else {
        record::clear_claim(&mut s, c, None);
        s.phase = Some(SchemaPhase::Planning);
    }
    observation(o, &mut s, c, p, d);
    Action::WriteStatus {
        status: Box::new(s),
        event: None,
    }
}

/// Records a drift read (an Observe's, or the one a Plan starts with) in `s`: the database's
/// identity and drift aggregates, and that a proof's observation is done.
fn observation(
    o: &Observed<'_>,
    s: &mut PtahSchemaStatus,
    c: &SchemaOperationStatus,
    p: &ResultPayload,
    d: &DriftResult,
) {
    if is_proof_step(o, c)
        && let Some(pending) = s.pending_observation.as_mut()
    {
        pending.observation_completed = Some(true);
    }
    let identity: Option<Sha256Digest> = p.target_identity_digest.map(Into::into);
    let previous = o.status.target.as_ref().and_then(|t| t.identity_digest.clone());
    if previous.is_some() && previous != identity {
        s.plan = None;
    }
    let findings: Vec<DriftFinding> = d
        .findings
        .iter()
        .filter_map(|f| {
            Some(DriftFinding {
                category: ptah_api::schema::DriftCategory::from_executor(&f.category)?,
                count: i32::try_from(f.count).unwrap_or(i32::MAX).max(1),
                severity: ptah_api::schema::DriftSeverity::from_executor(&f.severity)?,
            })
        })
        .take(ptah_api::schema::MAX_DRIFT_FINDINGS)
        .collect();
    s.target = Some(SchemaTargetStatus {
        engine: Some(o.spec.target.engine.clone()),
        coordination_digest: c.coordination_digest.clone(),
        identity_digest: identity,
        drift_report_digest: Some(crate::schema::claim::digest_of(d)),
        last_observed_at: Some(record::now(o)),
        highest_drift_severity: d
            .highest_severity
            .as_ref()
            .and_then(|h| ptah_api::schema::DriftSeverity::from_executor(h)),
        drift_finding_count: Some(i64::try_from(d.finding_count).unwrap_or(i64::MAX)),
        // A category this API cannot name (a runner newer than the manager) is never dropped
        // silently: the list says it is incomplete.
        drift_findings_truncated: Some(
            findings.len() == ptah_api::schema::MAX_DRIFT_FINDINGS
                || findings.len() < d.findings.len().min(ptah_api::schema::MAX_DRIFT_FINDINGS),
        ),
        drift_findings: findings,
    });
    cond(
        o,
        s,
        ConditionType::DatabaseReachable,
        Status::True,
        Reason::Observed,
        "the database was read",
    );
    cond(
        o,
        s,
        ConditionType::DriftDetected,
        Status::from_bool(d.drift),
        Reason::Observed,
        if d.drift {
            "the database differs from the desired schema"
        } else {
            "no drift"
        },
    );
    cond(
        o,
        s,
        ConditionType::ReconciliationFailed,
        Status::False,
        Reason::Observed,
        "",
    );
}
