//! Recording a finished migration operation: the claim is cleared and the outcome written in one
//! status write; a held Lease's release is staged in that write and performed after it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ptah_api::{
    conditions::{ConditionType, Reason},
    migration::{
        MigrationOperationStatus, MigrationOperationType as Op, MigrationPhase, RunOutcome, RunStatus,
        UnresolvedRun, UnresolvedRunOutcome,
    },
    shared::{ArtifactSourceStatus, Sha256Digest},
};
use ptah_dataplane::{MigrationOutcome, ResultPayload};

use super::{
    action::{Action, Event},
    cycle::next_cycle,
    observed::{Observed, PolicyRead},
    plan,
    record::{self, cond, edit, failed, phase},
};
use crate::{conditions::Status, operation::refusal::grant_reason};

/// The artifact type a migration artifact must carry (checked independently of the policy).
pub const MIGRATION_ARTIFACT_TYPE: &str = "application/vnd.stokaro.ptah.migrations.v1";

/// An Apply whose outcome is Partial or cannot be known: recorded, Blocked, never retried.
pub fn unresolved(
    o: &Observed<'_>,
    c: &MigrationOperationStatus,
    outcome: UnresolvedRunOutcome,
    why: &str,
) -> Action {
    let mut s = edit(o);
    record::clear_claim(&mut s, c);
    s.unresolved_run = Some(UnresolvedRun {
        outcome,
        operation_id: c.id.clone(),
        job_name: c.job_name.clone(),
        job_uid: c.job_uid.clone(),
        plan_ref: c.plan_ref.clone(),
        target_identity_digest: c.target_identity_digest.clone(),
        recorded_at: Time(o.now),
    });
    s.last_run = Some(run(
        o,
        c,
        if outcome == UnresolvedRunOutcome::Partial {
            RunOutcome::Partial
        } else {
            RunOutcome::Unknown
        },
        Vec::new(),
        why,
    ));
    s.plan = None;
    s.history = None;
    let m = format!(
        "{why}; never retried: a History reading that finds nothing pending, or a PtahMigrationRunAcknowledgment naming operation {}, resolves it",
        c.id.as_str()
    );
    phase(
        o,
        &mut s,
        MigrationPhase::Blocked,
        false,
        Reason::ApplyOutcomeUnknown,
        m.clone(),
    );
    cond(
        o,
        &mut s,
        ConditionType::Blocked,
        Status::True,
        Reason::ApplyOutcomeUnknown,
        m.clone(),
    );
    cond(
        o,
        &mut s,
        ConditionType::Progressing,
        Status::False,
        Reason::ApplyOutcomeUnknown,
        m.clone(),
    );
    Action::WriteStatus {
        status: Box::new(s),
        event: Some(Event::warning("ApplyOutcomeUnknown", m)),
    }
}

pub(super) fn run(
    o: &Observed<'_>,
    c: &MigrationOperationStatus,
    outcome: RunOutcome,
    applied: Vec<i64>,
    message: &str,
) -> RunStatus {
    RunStatus {
        outcome,
        job_name: c.job_name.clone(),
        job_uid: c.job_uid.clone(),
        started_at: Some(c.started_at.clone()),
        finished_at: Some(Time(o.now)),
        applied_versions: applied.into_iter().take(256).collect(),
        message: Some(message.chars().take(1024).collect()),
    }
}

/// A result bound to its claim: record what it says.
pub fn settle(o: &Observed<'_>, c: &MigrationOperationStatus, p: &ResultPayload) -> Action {
    match c.operation_type {
        Op::Apply => applied(o, c, p),
        // A policy refusal is the verdict to record (Blocked), not a failure to retry.
        Op::Resolve | Op::Verify if p.is_policy_refusal() => artifact(o, c, p),
        _ if p.error.is_some() => {
            let e = p
                .error
                .as_ref()
                .map(|e| format!("{}: {}", e.code.as_str(), e.message))
                .unwrap_or_default();
            if let Some(reason) = p.error.as_ref().and_then(|e| grant_reason(e.code.as_str())) {
                return failed(o, c, reason, &e).with_event(Event::warning(reason.as_str(), e));
            }
            let reason = if c.operation_type == Op::Resolve {
                Reason::ResolveFailed
            } else {
                Reason::OperationFailed
            };
            failed(o, c, reason, &e)
        }
        Op::Resolve | Op::Verify => artifact(o, c, p),
        Op::History => super::history::read(o, c, p),
    }
}

fn artifact(o: &Observed<'_>, c: &MigrationOperationStatus, p: &ResultPayload) -> Action {
    let Some(a) = &p.artifact else {
        return failed(
            o,
            c,
            Reason::OperationFailed,
            "the result carries no artifact report",
        );
    };
    let digest: Sha256Digest = a.resolved_digest.into();
    let mut s = edit(o);
    record::clear_claim(&mut s, c);
    cond(
        o,
        &mut s,
        ConditionType::ReconciliationFailed,
        Status::False,
        Reason::Succeeded,
        "",
    );
    if c.operation_type == Op::Resolve {
        let moved = o.status.artifact.as_ref().and_then(|x| x.digest.as_ref()) != Some(&digest);
        s.artifact = Some(ArtifactSourceStatus {
            requested_reference: Some(o.spec.artifact.oci_ref.clone()),
            resolved_reference: Some(a.resolved_reference.clone()),
            digest: Some(digest.clone()),
            media_type: None,
            artifact_type: a.artifact_type.clone(),
            size: None,
            verified: Some(false),
            verification_policy_uid: None,
            verification_policy_digest: None,
            resolved_at: Some(record::now(o)),
            verified_at: None,
        });
        s.next_reconciliation_time = Some(next_cycle(o));
        s.phase = Some(record::busy_phase(o, MigrationPhase::Verifying));
        cond(
            o,
            &mut s,
            ConditionType::ArtifactResolved,
            Status::True,
            Reason::DigestPinned,
            "the reference is pinned to a digest",
        );
        let event = moved.then(|| {
            s.plan = None;
            Event::normal(
                "ArtifactResolved",
                format!("{} resolved to {}", o.spec.artifact.oci_ref, digest.as_str()),
            )
        });
        return Action::WriteStatus {
            status: Box::new(s),
            event,
        };
    }
    if o.status.artifact.as_ref().and_then(|x| x.digest.as_ref()) != Some(&digest) {
        return failed(
            o,
            c,
            Reason::OperationFailed,
            "Verify reports another digest than the one resolved",
        );
    }
    let passed = a.verification_passed == Some(true);
    let artifact_type = a
        .artifact_type
        .clone()
        .or_else(|| o.status.artifact.as_ref().and_then(|x| x.artifact_type.clone()));
    let type_ok = artifact_type.as_deref() == Some(MIGRATION_ARTIFACT_TYPE);
    if let Some(src) = s.artifact.as_mut() {
        src.verified = Some(passed && type_ok);
        src.verified_at = Some(record::now(o));
        if let PolicyRead::Ok { uid, digest } = o.policy {
            src.verification_policy_uid = Some(uid.clone());
            src.verification_policy_digest = Some(digest.clone());
        }
        src.artifact_type = artifact_type.clone();
    }
    let refusal = if !type_ok {
        Some(format!(
            "the artifact type is {:?}, not {MIGRATION_ARTIFACT_TYPE}",
            artifact_type.as_deref().unwrap_or("")
        ))
    } else if !passed {
        Some(if a.violated_requirements.is_empty() {
            "the verification policy refused the artifact".to_owned()
        } else {
            format!(
                "the verification policy refused the artifact: {}",
                a.violated_requirements.join(", ")
            )
        })
    } else {
        None
    };
    if let Some(m) = refusal {
        phase(
            o,
            &mut s,
            MigrationPhase::Blocked,
            false,
            Reason::ArtifactUnverified,
            m.clone(),
        );
        cond(
            o,
            &mut s,
            ConditionType::ArtifactVerified,
            Status::False,
            Reason::ArtifactUnverified,
            m.clone(),
        );
        return Action::WriteStatus {
            status: Box::new(s),
            event: Some(Event::warning("ArtifactVerificationRefused", m)),
        };
    }
    s.phase = Some(record::busy_phase(o, MigrationPhase::Reading));
    cond(
        o,
        &mut s,
        ConditionType::ArtifactVerified,
        Status::True,
        Reason::PolicySatisfied,
        "the artifact satisfies the verification policy",
    );
    Action::WriteStatus {
        status: Box::new(s),
        event: None,
    }
}

fn applied(o: &Observed<'_>, c: &MigrationOperationStatus, p: &ResultPayload) -> Action {
    let Some(r) = &p.migration_run else {
        // Refused before the child changed anything (a sequence divergence among them).
        if p.mutation_started == Some(false) && p.uncertain != Some(true) {
            let why = p.error.as_ref().map_or("the Apply was refused".to_owned(), |e| {
                format!("{}: {}", e.code.as_str(), e.message)
            });
            let mut a = failed(
                o,
                c,
                Reason::OperationFailed,
                &format!("nothing was applied: {why}"),
            );
            if let Action::WriteStatus { status, .. } = &mut a {
                status.last_run = Some(run(o, c, RunOutcome::Failed, Vec::new(), &why));
                status.plan = None;
                status.history = None;
            }
            return a;
        }
        return unresolved(
            o,
            c,
            UnresolvedRunOutcome::Unknown,
            "the Apply report does not say what ran",
        );
    };
    let plan = o.plan_spec();
    let applied_versions: Vec<i64> = match (r.first_applied, r.last_applied, plan) {
        (Some(a), Some(b), Some(p)) => p
            .migrations
            .iter()
            .map(|m| m.version)
            .filter(|v| *v >= a && *v <= b)
            .collect(),
        _ => Vec::new(),
    };
    let expected = plan.and_then(plan::sequence_digest);
    if r.outcome != MigrationOutcome::Partial
        && expected.is_some_and(|d| r.sequence_fingerprint.to_string() != d)
    {
        return unresolved(
            o,
            c,
            UnresolvedRunOutcome::Unknown,
            "the run reports another sequence than the approved one",
        );
    }
    match r.outcome {
        MigrationOutcome::Partial => unresolved(
            o,
            c,
            UnresolvedRunOutcome::Partial,
            "a migration failed after some of its statements committed",
        ),
        MigrationOutcome::Failed => {
            let mut a = failed(
                o,
                c,
                Reason::OperationFailed,
                "a migration failed; nothing of it stayed committed",
            );
            if let Action::WriteStatus { status, .. } = &mut a {
                status.last_run = Some(run(
                    o,
                    c,
                    RunOutcome::Failed,
                    applied_versions,
                    "a migration failed; nothing of it stayed committed",
                ));
                status.plan = None;
                status.history = None;
            }
            a
        }
        MigrationOutcome::Applied | MigrationOutcome::UpToDate => {
            let outcome = if r.outcome == MigrationOutcome::Applied {
                RunOutcome::Applied
            } else {
                RunOutcome::UpToDate
            };
            let mut s = edit(o);
            record::clear_claim(&mut s, c);
            let m = format!("{} migration(s) applied; verifying the history", r.applied_count);
            s.last_run = Some(run(o, c, outcome, applied_versions, &m));
            s.phase = Some(MigrationPhase::VerifyingHistory);
            s.plan = None;
            cond(
                o,
                &mut s,
                ConditionType::Progressing,
                Status::True,
                Reason::JobCompleted,
                m.clone(),
            );
            Action::WriteStatus {
                status: Box::new(s),
                event: Some(Event::normal("Applied", m)),
            }
        }
    }
}
