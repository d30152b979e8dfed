//! Recording a Plan: no changes is the proof of convergence; changes become an immutable plan
//! published before the status that names it.

use ptah_api::{
    conditions::{ConditionType, Reason},
    schema::{CurrentPlanStatus, PendingObservationOutcome, SchemaOperationStatus, SchemaPhase},
    shared::{ImmutableObjectReference, PlanExecutionBinding, Sha256Digest},
};
use ptah_dataplane::{PlanOutcome, ResultPayload};

use super::failed::{failed, is_proof_step};
use crate::conditions::Status;
use crate::schema::{
    action::{Action, Event},
    claim::holder_op,
    observed::{Observed, Realm},
    record::{self, cond, edit, phase},
};

/// Records a Plan result.
pub fn planned(o: &Observed<'_>, c: &SchemaOperationStatus, p: &ResultPayload) -> Action {
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
    // The operator's own reading may only raise what the executor reported.
    let class = match crate::schema::classify::classify_plan(text.as_bytes()) {
        Ok(class) => class,
        Err(why) => return failed(o, c, Reason::PolicyRefused, &why.to_string()),
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
        destructive: class.destructive,
        privilege_changes: class.privilege_changes.clone(),
        severity: Some(class.severity),
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
        destructive: class.destructive,
        privilege_changes: class.privilege_changes,
        severity: spec.severity,
        statement_count: spec.statement_count,
        created_at: Some(record::now(o)),
        approval: None,
        rehearsal: p.rehearsal.as_ref().map(crate::schema::rehearsal::recorded),
    });
    if proof.is_some() {
        s.pending_observation = None;
    }
    s.phase = Some(SchemaPhase::Planning);
    let m = format!(
        "{} statement(s){}",
        r.statement_count,
        if class.destructive { ", destructive" } else { "" }
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
        draft: Box::new(crate::schema::action::PlanDraft {
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
        policy_fingerprint: crate::schema::gate::policy_fingerprint(o),
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
