//! The gate (not a Job): is the current plan still current, is a run unresolved, may the plan
//! be applied, and which exact approval authorizes it. `Always` and `BySeverity` go by the
//! migration linter's verdicts in the plan ([`needs`]); the operator reads no migration SQL of
//! its own.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ptah_api::{
    PtahMigrationPlanSpec,
    conditions::{ConditionType, Reason},
    migration::{MigrationOperationStatus, MigrationOperationType as Op, MigrationPhase, ResolvedRun},
    migrationplan::LintSeverity,
    shared::{ApplyPolicy, ImmutableObjectReference},
};

use super::{
    action::{Action, Event},
    observed::{ApprovalView, Observed, PlanState, PolicyRead},
    plan::policy_fingerprint,
    record::{cond, edit, phase, write_or_wait},
    start,
};
use crate::conditions::Status;

/// Why the recorded plan can no longer authorize anything, if it cannot.
pub fn stale_reason(o: &Observed<'_>) -> Option<String> {
    let recorded = o.status.plan.as_ref()?;
    let p: &PtahMigrationPlanSpec = match o.plan {
        PlanState::Present(p) => p,
        PlanState::None => return Some(format!("plan {} is missing", recorded.name)),
        PlanState::Broken(why) => return Some(why.clone()),
    };
    let b = &p.binding;
    if p.migration_ref.uid != o.meta.uid {
        return Some("the plan names another migration".into());
    }
    if b.execution_binding_id != o.binding.epoch {
        return Some("the execution binding changed".into());
    }
    if o.status.artifact.as_ref().and_then(|a| a.digest.as_ref()) != Some(&b.artifact_digest) {
        return Some("the artifact digest changed".into());
    }
    if o.realm.digest() != Some(&b.coordination_digest) {
        return Some("the realm changed".into());
    }
    let history = o.status.history.as_ref();
    if history.map(|h| &h.target_identity_digest) != Some(&b.target_identity_digest) {
        return Some("the database identity changed".into());
    }
    if history.map(|h| &h.fingerprint) != Some(&p.history_fingerprint) {
        return Some("the migration history changed since the plan was made".into());
    }
    match o.policy {
        PolicyRead::Ok { uid, digest }
            if *uid == b.verification_policy_uid && *digest == b.verification_policy_digest => {}
        _ => return Some("the verification policy changed".into()),
    }
    if policy_fingerprint(o) != b.policy_fingerprint {
        return Some("spec.policy changed".into());
    }
    None
}

/// The earliest live approval naming exactly this migration, plan, fingerprint and history.
pub fn matching<'a>(o: &'a Observed<'_>) -> Option<&'a ApprovalView> {
    let (recorded, PlanState::Present(p)) = (o.status.plan.as_ref()?, o.plan) else {
        return None;
    };
    o.approvals
        .iter()
        .filter(|a| {
            a.migration_uid == o.meta.uid
                && a.plan == *recorded
                && a.plan_fingerprint.as_str() == p.fingerprint
                && a.history_fingerprint
                    .as_ref()
                    .is_none_or(|h| *h == p.history_fingerprint)
                && !a.stale
        })
        .min_by_key(|a| (a.consumed, a.created, a.object.name.clone()))
}

/// What the current plan needs before an Apply, by the policy and the linter's verdicts.
#[derive(Debug, PartialEq, Eq)]
enum Needs {
    /// Nothing: it applies on its own.
    Nothing,
    /// An exact approval; `why` names the migrations that need it when the policy alone does not.
    Approval { reason: Reason, why: Option<String> },
    /// `spec.policy.allowDestructive` before anything (under `BySeverity`).
    AllowDestructive(String),
}

/// The versions whose lint verdict `pick` selects, each with its codes (or "not linted").
fn named(p: &PtahMigrationPlanSpec, pick: impl Fn(Option<LintSeverity>) -> bool) -> Option<String> {
    let named: Vec<String> = p
        .migrations
        .iter()
        .filter(|m| pick(m.lint.as_ref().map(|l| l.severity)))
        .map(|m| match &m.lint {
            None => format!("{} (not linted)", m.version),
            Some(l) => format!("{} ({})", m.version, l.codes.join(", ")),
        })
        .collect();
    (!named.is_empty()).then(|| named.join(", "))
}

/// Under `OnApproval` (and `Never`) every plan needs an approval. Under `Always` one whose
/// migrations the linter judged, none destructive, needs none. Under `BySeverity` a plan of
/// safe migrations (notices at most) needs none, a warning or an unjudged migration needs an
/// approval, and a destructive one needs `allowDestructive` and an approval.
fn needs(o: &Observed<'_>) -> Needs {
    let policy = o.spec.policy.apply;
    let (ApplyPolicy::Always | ApplyPolicy::BySeverity, PlanState::Present(p)) = (policy, o.plan) else {
        return Needs::Approval {
            reason: Reason::AwaitingApproval,
            why: None,
        };
    };
    let destructive = |l: Option<LintSeverity>| l.is_some_and(|l| l >= LintSeverity::Error);
    if policy == ApplyPolicy::Always {
        return match named(p, |l| l.is_none() || destructive(l)) {
            None => Needs::Nothing,
            Some(versions) => Needs::Approval {
                reason: Reason::AwaitingApproval,
                why: Some(format!("migrations {versions} need an approval under Always")),
            },
        };
    }
    if let Some(versions) = named(p, destructive) {
        if !o.spec.policy.allow_destructive {
            return Needs::AllowDestructive(format!(
                "migrations {versions} are destructive and spec.policy.allowDestructive is false"
            ));
        }
        return Needs::Approval {
            reason: Reason::DestructiveChangesDisabled,
            why: Some(format!("migrations {versions} are destructive")),
        };
    }
    match named(p, |l| l.is_none_or(|l| l >= LintSeverity::Warning)) {
        None => Needs::Nothing,
        Some(versions) => Needs::Approval {
            reason: Reason::WarningChanges,
            why: Some(format!("migrations {versions} need an approval under BySeverity")),
        },
    }
}

/// Re-checked immediately before an Apply is dispatched.
pub fn authorized(o: &Observed<'_>, c: &MigrationOperationStatus) -> Result<(), String> {
    if let Some(run) = &o.status.unresolved_run {
        return Err(format!("run {} is unresolved", run.operation_id.as_str()));
    }
    let recorded = o.status.plan.as_ref().ok_or("there is no current plan")?;
    if let Some(why) = stale_reason(o) {
        return Err(format!("the plan is no longer current: {why}"));
    }
    if c.plan_ref.as_ref() != Some(recorded) {
        return Err("the claim names another plan than the current one".into());
    }
    if o.spec.policy.apply == ApplyPolicy::Never {
        return Err("spec.policy.apply is Never".into());
    }
    match needs(o) {
        Needs::Nothing => Ok(()),
        Needs::AllowDestructive(why) => Err(why),
        Needs::Approval { .. } => {
            let claimed = c
                .approval_ref
                .as_ref()
                .ok_or("the Apply claim names no approval")?;
            match matching(o) {
                Some(a) if a.object.uid == claimed.uid => Ok(()),
                _ => Err(format!(
                    "approval {} no longer authorizes this plan",
                    claimed.name
                )),
            }
        }
    }
}

/// Approvals and acknowledgments to mark, and an acknowledgment that resolves the run.
pub fn decisions(o: &Observed<'_>) -> Option<Action> {
    let current = o.status.plan.as_ref();
    let stale: Vec<ImmutableObjectReference> = o
        .approvals
        .iter()
        .filter(|a| !a.consumed && !a.stale && (Some(&a.plan) != current || a.migration_uid != o.meta.uid))
        .map(|a| a.object.clone())
        .collect();
    if !stale.is_empty() {
        return Some(Action::MarkApprovals {
            consumed: Vec::new(),
            stale,
        });
    }
    let unresolved = o.status.unresolved_run.as_ref();
    let names_run = |id: &ptah_api::shared::Sha256Digest| unresolved.is_some_and(|r| r.operation_id == *id);
    let stale_acks: Vec<ImmutableObjectReference> = o
        .acknowledgments
        .iter()
        .filter(|a| !a.consumed && !a.stale && (!names_run(&a.operation_id) || a.migration_uid != o.meta.uid))
        .map(|a| a.object.clone())
        .collect();
    if !stale_acks.is_empty() {
        return Some(Action::MarkAcknowledgments {
            consumed: Vec::new(),
            stale: stale_acks,
        });
    }
    let run = unresolved?;
    let ack = o
        .acknowledgments
        .iter()
        .filter(|a| a.migration_uid == o.meta.uid && a.operation_id == run.operation_id && !a.stale)
        .min_by_key(|a| (a.created, a.object.name.clone()))?;
    // Consumed first, then the run resolved: after a crash between the two, the consumed
    // acknowledgment still names the one run it resolves.
    if !ack.consumed {
        return Some(Action::MarkAcknowledgments {
            consumed: vec![ack.object.clone()],
            stale: Vec::new(),
        });
    }
    let mut s = edit(o);
    s.unresolved_run = None;
    s.resolved_run = Some(ResolvedRun {
        operation_id: run.operation_id.clone(),
        acknowledgment_ref: Some(ack.object.clone()),
        acknowledged_by: ack.acknowledged_by.clone(),
        resolved_at: Time(o.now),
    });
    // A fresh History reading decides what comes next.
    s.history = None;
    s.plan = None;
    let who = ack
        .acknowledged_by
        .as_ref()
        .map_or("someone", |a| a.username.as_str());
    cond(
        o,
        &mut s,
        ConditionType::Blocked,
        Status::False,
        Reason::RunAcknowledged,
        format!("acknowledged by {who}"),
    );
    Some(Action::WriteStatus {
        status: Box::new(s),
        event: Some(Event::normal(
            "RunAcknowledged",
            format!(
                "unresolved run {} acknowledged by {who}",
                run.operation_id.as_str()
            ),
        )),
    })
}

/// The reading refused every Apply (dirty, modified, out of order, ahead): recorded as the
/// `Blocked` condition when it settled.
fn history_blocks(o: &Observed<'_>) -> bool {
    const HISTORY: [Reason; 4] = [
        Reason::HistoryDirty,
        Reason::HistoryModified,
        Reason::HistoryOutOfOrder,
        Reason::HistoryAhead,
    ];
    crate::conditions::get(&o.status.conditions, ConditionType::Blocked)
        .is_some_and(|c| c.status == "True" && HISTORY.iter().any(|r| r.as_str() == c.reason))
}

/// The gate over a fresh History reading.
pub fn gate(o: &Observed<'_>, idle: Duration) -> Action {
    let Some(history) = o.status.history.as_ref() else {
        return start::new_claim(o, Op::History, None);
    };
    if history_blocks(o) || history.pending_count == 0 {
        // Recorded when the reading settled; only an input change or the interval moves it.
        return Action::Wait {
            after: idle,
            renew: None,
        };
    }
    let mut s = edit(o);
    if let Some(run) = &o.status.unresolved_run {
        let m = format!(
            "run {} of Job {} ended {:?}: no Apply until a History reading of this database finds nothing pending or a PtahMigrationRunAcknowledgment names operation {}",
            run.operation_id.as_str(),
            run.job_name,
            run.outcome,
            run.operation_id.as_str()
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
            m,
        );
        return write_or_wait(o, s, None, idle);
    }
    if o.status.plan.is_none() {
        // Pending but no plan (retired): only a reading can say what to plan.
        return start::new_claim(o, Op::History, None);
    }
    if let Some(why) = stale_reason(o) {
        s.plan = None;
        s.history = None;
        cond(
            o,
            &mut s,
            ConditionType::ApprovalRequired,
            Status::False,
            Reason::PlanNoLongerCurrent,
            why.clone(),
        );
        return Action::WriteStatus {
            status: Box::new(s),
            event: Some(Event::normal("PlanRetired", why)),
        };
    }
    let name = o.status.plan.as_ref().map(|p| p.name.clone()).unwrap_or_default();
    match o.spec.policy.apply {
        ApplyPolicy::Never => {
            let m = "spec.policy.apply is Never: the plan is recorded and not applied";
            phase(
                o,
                &mut s,
                MigrationPhase::AwaitingApproval,
                false,
                Reason::ApplyDisabled,
                m,
            );
            cond(
                o,
                &mut s,
                ConditionType::Progressing,
                Status::False,
                Reason::ApplyDisabled,
                m,
            );
            write_or_wait(o, s, None, idle)
        }
        ApplyPolicy::Always | ApplyPolicy::OnApproval | ApplyPolicy::BySeverity => {
            match (needs(o), matching(o)) {
                (Needs::Nothing, _) => start::new_claim(o, Op::Apply, None),
                (Needs::AllowDestructive(m), _) => {
                    phase(
                        o,
                        &mut s,
                        MigrationPhase::Blocked,
                        false,
                        Reason::DestructiveChangesDisabled,
                        m.clone(),
                    );
                    cond(
                        o,
                        &mut s,
                        ConditionType::ApprovalRequired,
                        Status::False,
                        Reason::DestructiveChangesDisabled,
                        m.clone(),
                    );
                    let event = (o.status.phase != Some(MigrationPhase::Blocked))
                        .then(|| Event::warning("DestructiveChangesDisabled", m));
                    write_or_wait(o, s, event, idle)
                }
                (Needs::Approval { .. }, Some(a)) if !a.consumed => {
                    start::new_claim(o, Op::Apply, Some(a.object.clone()))
                }
                (Needs::Approval { reason, why }, _) => {
                    let fingerprint = match o.plan {
                        PlanState::Present(p) => p.fingerprint.clone(),
                        _ => String::new(),
                    };
                    let ask = format!(
                        "create a PtahMigrationApproval for plan {name} with fingerprint {fingerprint}"
                    );
                    let m = match why {
                        Some(why) => format!("{why}: {ask}"),
                        None => ask,
                    };
                    phase(
                        o,
                        &mut s,
                        MigrationPhase::AwaitingApproval,
                        false,
                        Reason::AwaitingApproval,
                        m.clone(),
                    );
                    cond(
                        o,
                        &mut s,
                        ConditionType::ApprovalRequired,
                        Status::True,
                        reason,
                        m.clone(),
                    );
                    cond(
                        o,
                        &mut s,
                        ConditionType::Progressing,
                        Status::False,
                        Reason::AwaitingApproval,
                        m.clone(),
                    );
                    let event = (o.status.phase != Some(MigrationPhase::AwaitingApproval))
                        .then(|| Event::normal("AwaitingApproval", m));
                    write_or_wait(o, s, event, idle)
                }
            }
        }
    }
}
