//! The approval gate (not a Job): is the current plan still current, may it be applied, and
//! which exact approval authorizes it.

use std::time::Duration;

use ptah_api::{
    conditions::{ConditionType, Reason},
    schema::{CurrentPlanApproval, CurrentPlanStatus, SchemaPhase},
    shared::{ApplyPolicy, ImmutableObjectReference, PlanSeverity},
};

use super::{
    action::{Action, Event},
    claim::digest_of,
    observed::{ApprovalView, Observed, PlanState, PolicyRead, Realm},
    record::{cond, edit, phase, write_or_wait},
    rehearsal, start,
};
use crate::conditions::Status;

/// The fingerprint of `spec.policy`: any change of it retires a plan.
pub fn policy_fingerprint(o: &Observed<'_>) -> ptah_api::shared::Sha256Digest {
    digest_of(&o.spec.policy)
}

/// Why the recorded plan is no longer current, if it is not.
pub fn stale_reason(o: &Observed<'_>, p: &CurrentPlanStatus) -> Option<String> {
    let b = &p.binding;
    if b.execution_binding_id != o.binding.epoch {
        return Some("the execution binding changed".into());
    }
    if o.status.source.as_ref().and_then(|s| s.digest.as_ref()) != Some(&b.artifact_digest) {
        return Some("the artifact digest changed".into());
    }
    match o.realm {
        Realm::Claimable {
            coordination_digest, ..
        } if *coordination_digest == b.coordination_digest => {}
        _ => return Some("the realm changed".into()),
    }
    if o.status.target.as_ref().and_then(|t| t.identity_digest.as_ref()) != Some(&b.target_identity_digest) {
        return Some("the database identity changed".into());
    }
    match o.policy {
        PolicyRead::Ok { uid, digest }
            if *uid == b.verification_policy_uid && *digest == b.verification_policy_digest => {}
        _ => return Some("the verification policy changed".into()),
    }
    if policy_fingerprint(o) != b.policy_fingerprint {
        return Some("spec.policy changed".into());
    }
    match o.plan {
        PlanState::Intact => None,
        PlanState::None => Some("the plan object is missing".into()),
        PlanState::Broken(why) => Some(format!("the stored plan fails its checks: {why}")),
    }
}

/// Whether the plan may apply only with `allowDestructive`: a destructive one always, and under
/// `BySeverity` one that changes privileges too.
pub fn needs_allow_destructive(o: &Observed<'_>, p: &CurrentPlanStatus) -> bool {
    p.destructive || o.spec.policy.apply == ApplyPolicy::BySeverity && !p.privilege_changes.is_empty()
}

/// Whether the plan needs an approval, and why. Under `BySeverity` a plan of an earlier manager,
/// which recorded no severity, counts as a warning.
pub fn approval_reason(o: &Observed<'_>, p: &CurrentPlanStatus) -> Option<Reason> {
    if p.destructive {
        Some(Reason::DestructiveChangesDisabled)
    } else if !p.privilege_changes.is_empty() {
        Some(Reason::PrivilegeChanges)
    } else {
        match o.spec.policy.apply {
            ApplyPolicy::OnApproval => Some(Reason::AwaitingApproval),
            ApplyPolicy::BySeverity if p.severity != Some(PlanSeverity::Safe) => Some(Reason::WarningChanges),
            ApplyPolicy::Never | ApplyPolicy::Always | ApplyPolicy::BySeverity => None,
        }
    }
}

/// The earliest live approval naming exactly this schema, plan and fingerprint.
pub fn matching<'a>(o: &'a Observed<'_>, p: &CurrentPlanStatus) -> Option<&'a ApprovalView> {
    o.approvals
        .iter()
        .filter(|a| {
            a.schema_uid == o.meta.uid
                && a.plan.uid == p.uid
                && a.plan.name == p.name
                && a.plan_fingerprint == p.fingerprint
                && a.execution_binding_id
                    .as_ref()
                    .is_none_or(|e| *e == o.binding.epoch)
                && !a.consumed
                && !a.stale
        })
        .min_by_key(|a| (a.created, a.object.name.clone()))
}

/// Re-checked immediately before an Apply is dispatched: the plan is current and, when needed,
/// its recorded approval still exists unspent.
pub fn authorized(o: &Observed<'_>) -> Result<(), String> {
    let p = o.status.plan.as_ref().ok_or("there is no current plan")?;
    if let Some(why) = stale_reason(o, p) {
        return Err(format!("the plan is no longer current: {why}"));
    }
    if needs_allow_destructive(o, p) && !o.spec.policy.allow_destructive {
        return Err("destructive changes are not allowed".into());
    }
    if let Some(why) = rehearsal::blocks(o, p) {
        return Err(why);
    }
    if o.spec.policy.apply == ApplyPolicy::Never {
        return Err("spec.policy.apply is Never".into());
    }
    if approval_reason(o, p).is_some() {
        let recorded = p.approval.as_ref().ok_or("the plan has no accepted approval")?;
        if matching(o, p).is_none_or(|a| a.object.uid != recorded.uid) {
            return Err(format!(
                "approval {} no longer authorizes this plan",
                recorded.name
            ));
        }
    }
    Ok(())
}

/// The gate: retire, block, wait for an approval, record one, or claim the Apply.
pub fn gate(o: &Observed<'_>, idle: Duration) -> Action {
    let stale = stale_approvals(o);
    if !stale.is_empty() {
        return Action::MarkApprovals {
            consumed: Vec::new(),
            stale,
        };
    }
    let Some(p) = o.status.plan.as_ref() else {
        return Action::Wait {
            after: idle,
            renew: None,
        };
    };
    let mut s = edit(o);
    if let Some(why) = stale_reason(o, p) {
        s.plan = None;
        cond(
            o,
            &mut s,
            ConditionType::PlanReady,
            Status::False,
            Reason::PlanNoLongerCurrent,
            why.clone(),
        );
        cond(
            o,
            &mut s,
            ConditionType::ApprovalRequired,
            Status::False,
            Reason::PlanNoLongerCurrent,
            why.clone(),
        );
        // Re-plan now rather than at the next interval.
        s.last_successful_reconciliation = None;
        return Action::WriteStatus {
            status: Box::new(s),
            event: Some(Event::normal("PlanRetired", why)),
        };
    }
    if o.spec.policy.apply == ApplyPolicy::Never {
        phase(
            o,
            &mut s,
            SchemaPhase::Blocked,
            false,
            Reason::ApplyDisabled,
            "spec.policy.apply is Never: the plan is recorded and not applied",
        );
        return write_or_wait(o, s, None, idle);
    }
    if let Some(m) = rehearsal::blocks(o, p) {
        phase(
            o,
            &mut s,
            SchemaPhase::Blocked,
            false,
            Reason::RehearsalFailed,
            m.clone(),
        );
        cond(
            o,
            &mut s,
            ConditionType::ApprovalRequired,
            Status::False,
            Reason::RehearsalFailed,
            m.clone(),
        );
        return write_or_wait(o, s, Some(Event::warning("RehearsalFailed", m)), idle);
    }
    if needs_allow_destructive(o, p) && !o.spec.policy.allow_destructive {
        let m = if p.destructive {
            "the plan is destructive and spec.policy.allowDestructive is false"
        } else {
            "the plan changes privileges, which under BySeverity needs spec.policy.allowDestructive"
        };
        phase(
            o,
            &mut s,
            SchemaPhase::Blocked,
            false,
            Reason::DestructiveChangesDisabled,
            m,
        );
        cond(
            o,
            &mut s,
            ConditionType::ApprovalRequired,
            Status::False,
            Reason::DestructiveChangesDisabled,
            m,
        );
        return write_or_wait(o, s, Some(Event::warning("DestructiveChangesDisabled", m)), idle);
    }
    if let Some(reason) = approval_reason(o, p) {
        match (p.approval.as_ref(), matching(o, p)) {
            (Some(recorded), Some(found)) if recorded.uid == found.object.uid => {}
            (_, Some(found)) => {
                let mut plan = p.clone();
                plan.approval = Some(CurrentPlanApproval {
                    name: found.object.name.clone(),
                    uid: found.object.uid.clone(),
                    approver: found.approver.clone().unwrap_or(ptah_api::shared::Approver {
                        username: "unknown".into(),
                        uid: None,
                        groups: Vec::new(),
                    }),
                    approved_at: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                        found.approved_at.unwrap_or(o.now),
                    ),
                });
                s.plan = Some(plan);
                phase(
                    o,
                    &mut s,
                    SchemaPhase::ReadyToApply,
                    false,
                    Reason::ApprovedPlan,
                    format!("approved by {}", found.object.name),
                );
                cond(
                    o,
                    &mut s,
                    ConditionType::ApprovalRequired,
                    Status::False,
                    Reason::ApprovedPlan,
                    format!("approval {} accepted", found.object.name),
                );
                return Action::WriteStatus {
                    status: Box::new(s),
                    event: Some(Event::normal(
                        "ApprovalAccepted",
                        format!("approval {} accepted for plan {}", found.object.name, p.name),
                    )),
                };
            }
            (recorded, None) => {
                if let Some(plan) = s.plan.as_mut() {
                    plan.approval = None;
                }
                let message = match reason {
                    Reason::PrivilegeChanges => format!(
                        "the plan changes privileges ({}); create a PtahSchemaApproval for plan {}",
                        kinds(p),
                        p.name
                    ),
                    Reason::WarningChanges => format!(
                        "the plan's severity is {} and spec.policy.apply is BySeverity; create a PtahSchemaApproval for plan {} with fingerprint {}",
                        p.severity.map_or("not recorded", severity_name),
                        p.name,
                        p.fingerprint.as_str()
                    ),
                    _ => format!(
                        "create a PtahSchemaApproval for plan {} with fingerprint {}",
                        p.name,
                        p.fingerprint.as_str()
                    ),
                };
                phase(
                    o,
                    &mut s,
                    SchemaPhase::AwaitingApproval,
                    false,
                    Reason::AwaitingApproval,
                    message.clone(),
                );
                cond(
                    o,
                    &mut s,
                    ConditionType::ApprovalRequired,
                    Status::True,
                    reason,
                    message.clone(),
                );
                let event = if recorded.is_some() {
                    Some(Event::warning(
                        "ApprovalRevoked",
                        "the accepted approval no longer authorizes the plan",
                    ))
                } else if o.status.phase != Some(SchemaPhase::AwaitingApproval) {
                    Some(Event::normal("AwaitingApproval", message))
                } else {
                    None
                };
                return write_or_wait(o, s, event, idle);
            }
        }
    } else if o.status.phase != Some(SchemaPhase::ReadyToApply) {
        phase(
            o,
            &mut s,
            SchemaPhase::ReadyToApply,
            false,
            Reason::NotRequired,
            "no approval is required",
        );
        cond(
            o,
            &mut s,
            ConditionType::ApprovalRequired,
            Status::False,
            Reason::NotRequired,
            "no approval is required",
        );
        return Action::WriteStatus {
            status: Box::new(s),
            event: None,
        };
    }
    start::claim_apply(o)
}

fn severity_name(s: PlanSeverity) -> &'static str {
    match s {
        PlanSeverity::Safe => "safe",
        PlanSeverity::Warning => "warning",
        PlanSeverity::Destructive => "destructive",
    }
}

fn kinds(p: &CurrentPlanStatus) -> String {
    p.privilege_changes
        .iter()
        .map(|k| format!("{k:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Live approvals of this schema that name a plan other than the current one.
fn stale_approvals(o: &Observed<'_>) -> Vec<ImmutableObjectReference> {
    let current = o.status.plan.as_ref().map(|p| (&p.uid, &p.fingerprint));
    o.approvals
        .iter()
        .filter(|a| !a.consumed && !a.stale)
        .filter(|a| current != Some((&a.plan.uid, &a.plan_fingerprint)) || a.schema_uid != o.meta.uid)
        .map(|a| a.object.clone())
        .collect()
}
