//! Recording a finished operation: the claim is cleared and the outcome written in one status
//! write; a Lease release is staged in that same write and performed only after it.

use ptah_api::{
    conditions::{ConditionType, Reason},
    schema::{
        CurrentPlanStatus, DriftFinding, PendingObservation, PendingObservationOutcome,
        SchemaOperationStatus, SchemaOperationType as Op, SchemaPhase, SchemaTargetStatus,
    },
    shared::{ArtifactSourceStatus, ImmutableObjectReference, PlanExecutionBinding, Sha256Digest},
};
use ptah_dataplane::{PlanOutcome, ResultPayload};

use super::{
    action::{Action, Event},
    decide::holder_op,
    observed::{Observed, Realm},
    record::{self, cond, edit, phase},
};
use crate::conditions::Status;

/// The artifact type a schema artifact must carry (checked independently of the policy).
pub const SCHEMA_ARTIFACT_TYPE: &str = "application/vnd.stokaro.ptah.schema.v1";

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

fn is_proof_step(o: &Observed<'_>, c: &SchemaOperationStatus) -> bool {
    o.status.pending_observation.is_some() && c.operation_type != Op::Apply
}

/// A dispatched Apply whose outcome cannot be known: never replayed, settled by a proof.
pub fn apply_unknown(o: &Observed<'_>, c: &SchemaOperationStatus, why: &str) -> Action {
    let grace = c.termination_grace_period_seconds.unwrap_or(30).max(0) as u64;
    // An unseen Pod may still run until its execution deadline: the proof may not overlap it.
    let observe_after = c
        .execution_not_after
        .as_ref()
        .map_or(o.now, |t| {
            record::after(t.0, std::time::Duration::from_secs(grace))
        })
        .max(o.now);
    owe_proof(
        o,
        c,
        PendingObservationOutcome::OutcomeUnknown,
        observe_after,
        why,
    )
}

fn owe_proof(
    o: &Observed<'_>,
    c: &SchemaOperationStatus,
    outcome: PendingObservationOutcome,
    observe_after: jiff::Timestamp,
    why: &str,
) -> Action {
    let mut s = edit(o);
    let plan = o.status.plan.as_ref();
    let (Some(epoch), Some(digest), Some(target), Some(source)) = (
        c.lease_epoch.clone(),
        c.coordination_digest.clone(),
        c.target.clone(),
        c.source.clone(),
    ) else {
        // A claim that reached dispatch always carries these; refuse to guess otherwise.
        return failed(
            o,
            c,
            Reason::OperationFailed,
            "the Apply claim lacks its realm, target or source",
        );
    };
    s.active_operation = None;
    s.pending_observation = Some(PendingObservation {
        outcome,
        apply_operation_id: c.id.clone(),
        apply_job_name: c.job_name.clone(),
        apply_job_uid: c.job_uid.clone(),
        admission_snapshot: c.admission_snapshot.clone(),
        apply_pod_uids: Vec::new(),
        apply_pod_count: None,
        apply_generation: Some(o.meta.generation),
        observation_completed: None,
        observe_after: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            observe_after,
        )),
        plan: plan.map_or_else(
            || ImmutableObjectReference {
                name: "unknown".into(),
                uid: "unknown".into(),
            },
            |p| ImmutableObjectReference {
                name: p.name.clone(),
                uid: p.uid.clone(),
            },
        ),
        plan_fingerprint: plan.map(|p| p.fingerprint.clone()),
        dispatched_by: Some(ptah_api::schema::DispatchedBy {
            controller_image: o.binding.controller_image.clone(),
            controller_revision: o.binding.controller_revision.clone(),
            runner_image: o.binding.runner_image.clone(),
        }),
        target,
        coordination_digest: digest,
        source,
        dev: o.spec.dev.clone(),
        plan_required: Some(true),
        exclude: o.spec.policy.exclude.clone(),
        protected_tables: o.spec.policy.protected_tables.clone(),
        drift_severity: Some(o.spec.policy.drift_severity),
        connect_timeout: Some(o.spec.execution.connect_timeout.clone()),
        lock_timeout: Some(o.spec.policy.lock_timeout.clone()),
        lease_duration_seconds: c.lease_duration_seconds.unwrap_or(960),
        lease_epoch: epoch,
    });
    s.phase = Some(SchemaPhase::VerifyingConvergence);
    let (reason, event) = match outcome {
        PendingObservationOutcome::ApplySucceeded => (
            Reason::VerifyingConvergence,
            Event::normal(
                "Applied",
                "the plan was applied; proving convergence with a fresh Observe and Plan",
            ),
        ),
        PendingObservationOutcome::OutcomeUnknown => (
            Reason::ApplyOutcomeUnknown,
            Event::warning(
                "ApplyOutcomeUnknown",
                format!("{why}; it is never replayed: a fresh Observe and Plan settle it"),
            ),
        ),
    };
    cond(o, &mut s, ConditionType::Applying, Status::False, reason, why);
    cond(o, &mut s, ConditionType::Progressing, Status::True, reason, why);
    s.plan = None;
    Action::WriteStatus {
        status: Box::new(s),
        event: Some(event),
    }
}

/// A result bound to its claim: record what it says.
pub fn settle(o: &Observed<'_>, c: &SchemaOperationStatus, p: &ResultPayload) -> Action {
    if let Some(e) = &p.error {
        if c.operation_type == Op::Apply {
            return apply_unknown(o, c, &format!("the Apply failed ({})", e.code.as_str()));
        }
        if c.operation_type == Op::Plan && e.child_code.as_deref() == Some("protected_table") {
            return protected(o, c, &e.message);
        }
        let reason = if c.operation_type == Op::Resolve {
            Reason::ResolveFailed
        } else {
            Reason::OperationFailed
        };
        return failed(o, c, reason, &format!("{}: {}", e.code.as_str(), e.message));
    }
    match c.operation_type {
        Op::Resolve | Op::Verify => super::settle_source::artifact(o, c, p),
        Op::Observe => observed(o, c, p),
        Op::Plan => planned(o, c, p),
        Op::Apply => {
            if p.mutation_started == Some(true) && p.uncertain != Some(true) {
                owe_proof(
                    o,
                    c,
                    PendingObservationOutcome::ApplySucceeded,
                    o.now,
                    "the plan was applied",
                )
            } else {
                apply_unknown(o, c, "the Apply report does not prove the plan was applied")
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
        if let Some(p) = s.pending_observation.as_mut() {
            p.observation_completed = Some(true);
        }
    } else {
        record::clear_claim(&mut s, c, None);
        s.phase = Some(SchemaPhase::Planning);
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
                category: serde_json::from_value(serde_json::Value::String(f.category.clone())).ok()?,
                count: i32::try_from(f.count).unwrap_or(i32::MAX).max(1),
                severity: serde_json::from_value(serde_json::Value::String(f.severity.clone())).ok()?,
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
            .and_then(|h| serde_json::from_value(serde_json::Value::String(h.clone())).ok()),
        drift_finding_count: Some(i64::try_from(d.finding_count).unwrap_or(i64::MAX)),
        drift_findings_truncated: Some(findings.len() == ptah_api::schema::MAX_DRIFT_FINDINGS),
        drift_findings: findings,
    });
    cond(
        o,
        &mut s,
        ConditionType::DatabaseReachable,
        Status::True,
        Reason::Observed,
        "the database was read",
    );
    cond(
        o,
        &mut s,
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
        &mut s,
        ConditionType::ReconciliationFailed,
        Status::False,
        Reason::Observed,
        "",
    );
    Action::WriteStatus {
        status: Box::new(s),
        event: None,
    }
}

fn planned(o: &Observed<'_>, c: &SchemaOperationStatus, p: &ResultPayload) -> Action {
    let Some(r) = &p.plan else {
        return failed(
            o,
            c,
            Reason::OperationFailed,
            "the Plan result carries no plan summary",
        );
    };
    let proof = o
        .status
        .pending_observation
        .clone()
        .filter(|_| is_proof_step(o, c));
    let mut s = edit(o);
    record::clear_claim(&mut s, c, Some(&holder_op(o, c)));
    s.last_successful_reconciliation = Some(record::now(o));
    s.last_attempt_time = Some(record::now(o));
    cond(
        o,
        &mut s,
        ConditionType::ReconciliationFailed,
        Status::False,
        Reason::Succeeded,
        "",
    );
    cond(
        o,
        &mut s,
        ConditionType::Progressing,
        Status::False,
        Reason::JobCompleted,
        "",
    );
    if r.plan_outcome == PlanOutcome::NoChanges {
        s.plan = None;
        s.pending_observation = None;
        let (reason, message) = match proof.as_ref().map(|p| p.outcome) {
            Some(PendingObservationOutcome::OutcomeUnknown) => (
                Reason::ConvergedAfterUnknownOutcome,
                "the database converged; the uncertain Apply is not attributed",
            ),
            _ => (Reason::NoChanges, "a fresh plan reports no changes"),
        };
        if let Some(pending) = proof
            .as_ref()
            .filter(|p| p.outcome == PendingObservationOutcome::ApplySucceeded)
        {
            s.applied = Some(ptah_api::schema::AppliedPlanStatus {
                plan_ref: pending.plan.clone(),
                plan_fingerprint: pending
                    .plan_fingerprint
                    .clone()
                    .unwrap_or_else(|| c.input_fingerprint.clone()),
                binding: binding(o, c, pending.coordination_digest.clone()),
                dispatched_by: pending.dispatched_by.clone(),
                completed_at: record::now(o),
            });
        }
        phase(o, &mut s, SchemaPhase::InSync, true, reason, message);
        cond(o, &mut s, ConditionType::InSync, Status::True, reason, message);
        cond(
            o,
            &mut s,
            ConditionType::PlanReady,
            Status::False,
            Reason::NoChanges,
            "nothing to apply",
        );
        cond(
            o,
            &mut s,
            ConditionType::ApprovalRequired,
            Status::False,
            Reason::NotRequired,
            "nothing to apply",
        );
        cond(o, &mut s, ConditionType::Applying, Status::False, reason, message);
        let event = (proof.is_some() || o.status.phase != Some(SchemaPhase::InSync))
            .then(|| Event::normal(reason.as_str(), message));
        return Action::WriteStatus {
            status: Box::new(s),
            event,
        };
    }
    let Some(text) = p.stdout.as_ref().filter(|t| !t.is_empty()) else {
        return failed(
            o,
            c,
            Reason::OperationFailed,
            "the Plan result reports changes but carries no plan",
        );
    };
    let content: Sha256Digest = ptah_fingerprint::Digest::of(text.as_bytes()).into();
    if content != r.plan_content_digest.into() {
        return failed(
            o,
            c,
            Reason::OperationFailed,
            "the plan bytes do not match their reported digest",
        );
    }
    let Some(digest) = c.coordination_digest.clone() else {
        return failed(o, c, Reason::OperationFailed, "the Plan claim names no realm");
    };
    let bound = binding(o, c, digest);
    let actual: Sha256Digest = r.from_fingerprint.into();
    let desired: Sha256Digest = r.to_fingerprint.into();
    let spec = ptah_api::PtahSchemaPlanSpec {
        contract_version: ptah_api::schemaplan::SCHEMA_PLAN_CONTRACT_VERSION,
        schema_ref: ImmutableObjectReference {
            name: o.meta.name.clone(),
            uid: o.meta.uid.clone(),
        },
        fingerprint: content.clone(),
        content_digest: content.clone(),
        size: i64::try_from(text.len()).unwrap_or(i64::MAX),
        actual_state_fingerprint: actual.clone(),
        desired_state_fingerprint: desired.clone(),
        binding: bound.clone(),
        dialect: match o.realm {
            Realm::Claimable { engine, .. } => (*engine).to_owned(),
            _ => o.spec.target.engine.as_str().to_owned(),
        },
        destructive: r.destructive,
        privilege_changes: Vec::new(),
        statement_count: i32::try_from(r.statement_count).unwrap_or(i32::MAX),
        chunks: Vec::new(),
    };
    let fingerprint = ptah_plancontract::fingerprint(&o.meta.uid, &spec);
    s.plan = Some(CurrentPlanStatus {
        name: ptah_plancontract::plan_name(&fingerprint),
        uid: String::new(),
        fingerprint,
        content_digest: content,
        actual_state_fingerprint: actual,
        desired_state_fingerprint: desired,
        binding: bound,
        destructive: r.destructive,
        privilege_changes: Vec::new(),
        statement_count: spec.statement_count,
        created_at: Some(record::now(o)),
        approval: None,
    });
    if proof.is_some() {
        s.pending_observation = None;
    }
    s.phase = Some(SchemaPhase::Planning);
    let m = format!(
        "{} statement(s){}",
        r.statement_count,
        if r.destructive { ", destructive" } else { "" }
    );
    cond(
        o,
        &mut s,
        ConditionType::PlanReady,
        Status::True,
        Reason::PlanReady,
        m.clone(),
    );
    cond(
        o,
        &mut s,
        ConditionType::InSync,
        Status::False,
        Reason::ScopedChanges,
        "the database differs from the desired schema",
    );
    let event = if proof.is_some() {
        Event::warning(
            "ConvergenceNotReached",
            format!("after the Apply a fresh plan still has changes: {m}"),
        )
    } else {
        Event::normal("PlanPublished", m)
    };
    Action::PublishAndRecord {
        draft: Box::new(super::action::PlanDraft {
            spec,
            bytes: text.as_bytes().to_vec(),
        }),
        status: Box::new(s),
        event: Some(event),
    }
}

fn binding(o: &Observed<'_>, c: &SchemaOperationStatus, coordination: Sha256Digest) -> PlanExecutionBinding {
    let source = o.status.source.as_ref();
    let fallback: Sha256Digest = ptah_fingerprint::Digest::of(b"").into();
    PlanExecutionBinding {
        artifact_digest: c
            .source
            .as_ref()
            .map(|s| s.digest.clone())
            .or_else(|| source.and_then(|s| s.digest.clone()))
            .unwrap_or_else(|| fallback.clone()),
        coordination_digest: coordination,
        target_identity_digest: c
            .target_identity_digest
            .clone()
            .or_else(|| o.status.target.as_ref().and_then(|t| t.identity_digest.clone()))
            .unwrap_or_else(|| fallback.clone()),
        policy_fingerprint: super::gate::policy_fingerprint(o),
        verification_policy_uid: c.verification_policy_uid.clone().unwrap_or_default(),
        verification_policy_digest: c.verification_policy_digest.clone().unwrap_or(fallback),
        execution_binding_id: o.binding.epoch.clone(),
        controller_image: o.binding.controller_image.clone(),
        controller_revision: o.binding.controller_revision.clone(),
        controller_state_version: o.binding.controller_state_version,
        ptah_version: o.binding.ptah_version.clone(),
        executor_image: o.binding.executor_image.clone(),
        runner_image: o.binding.runner_image.clone(),
        runner_protocol_version: o.binding.runner_protocol_version,
    }
}

/// The source recorded by a Resolve.
pub fn resolved_source(
    o: &Observed<'_>,
    reference: &str,
    digest: Sha256Digest,
    artifact_type: Option<String>,
) -> ArtifactSourceStatus {
    ArtifactSourceStatus {
        requested_reference: Some(o.spec.desired.oci_ref.clone()),
        resolved_reference: Some(reference.to_owned()),
        digest: Some(digest),
        media_type: None,
        artifact_type,
        size: None,
        verified: Some(false),
        verification_policy_uid: None,
        verification_policy_digest: None,
        resolved_at: Some(record::now(o)),
        verified_at: None,
    }
}
