//! Gates: approvals, destructive and privilege-changing plans, protected tables, realms, policy.

use ptah_api::{
    conditions::ConditionType,
    schema::{SchemaOperationType as Op, SchemaPhase},
    schemaplan::PrivilegeChangeKind,
    shared::Epoch,
};
use ptah_dataplane::{ErrorCode, ResultError};
use ptah_targetlock::census::CensusVerdict;

use super::world::{World, digest, spec};
use crate::{
    conditions::get,
    schema::{Action, PlanState, PolicyRead, Realm},
};

pub(super) fn reason(w: &World, t: ConditionType) -> String {
    get(&w.status.conditions, t)
        .map(|c| c.reason.clone())
        .unwrap_or_default()
}

/// Steps until the resource waits; returns the phase.
pub(super) fn settle(w: &mut World) -> Option<SchemaPhase> {
    for _ in 0..10 {
        if let Action::Wait { .. } = w.step() {
            return w.status.phase;
        }
    }
    panic!("never came to rest: {:?}", w.status.phase)
}

#[test]
fn destructive_plan_needs_allow_and_approval() {
    let mut w = World::new();
    w.spec = spec(r#"{"apply": "Always"}"#);
    w.reach_plan("DROP TABLE t;", true);
    assert_eq!(settle(&mut w), Some(SchemaPhase::Blocked));
    assert_eq!(reason(&w, ConditionType::Ready), "DestructiveChangesDisabled");
    assert!(w.created.iter().all(|n| !n.contains("apply")));
}

#[test]
fn destructive_plan_with_allow_still_needs_an_approval_under_always() {
    let mut w = World::new();
    w.spec = spec(r#"{"apply": "Always", "allowDestructive": true}"#);
    w.reach_plan("DROP TABLE t;", true);
    assert_eq!(settle(&mut w), Some(SchemaPhase::AwaitingApproval));
    assert_eq!(
        reason(&w, ConditionType::ApprovalRequired),
        "DestructiveChangesDisabled"
    );
    w.approve("ok");
    w.run_until_dispatched(Op::Apply);
}

#[test]
fn privilege_changes_always_need_an_approval() {
    let mut w = World::new();
    w.spec = spec(r#"{"apply": "Always"}"#);
    w.reach_plan("GRANT SELECT ON t TO r;", false);
    if let Some(p) = w.status.plan.as_mut() {
        p.privilege_changes = vec![PrivilegeChangeKind::Grant];
    }
    assert_eq!(settle(&mut w), Some(SchemaPhase::AwaitingApproval));
    assert_eq!(reason(&w, ConditionType::ApprovalRequired), "PrivilegeChanges");
    let message = get(&w.status.conditions, ConditionType::ApprovalRequired)
        .map(|c| c.message.clone())
        .unwrap_or_default();
    assert!(
        message.contains("Grant") && !message.contains("SELECT"),
        "names only the kinds: {message}"
    );
}

#[test]
fn protected_table_blocks_without_a_plan() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    w.run_until_dispatched(Op::Plan);
    let mut p = w.success();
    p.child_exit_code = 2;
    p.error = Some(ResultError {
        code: ErrorCode::ChildFailed,
        child_code: Some("protected_table".into()),
        message: "public.payments".into(),
    });
    w.finish(p);
    let phase = settle(&mut w);
    assert_eq!(phase, Some(SchemaPhase::Blocked));
    assert!(w.status.plan.is_none());
    assert_eq!(reason(&w, ConditionType::PlanReady), "ProtectedTable");
    assert!(
        w.status
            .target
            .as_ref()
            .is_some_and(|t| t.last_observed_at.is_some()),
        "the drift the Plan read before its refusal is recorded"
    );
    assert!(
        get(&w.status.conditions, ConditionType::ReconciliationFailed).is_none_or(|c| c.status != "True"),
        "not a failure"
    );
    let plans = w.created.iter().filter(|n| n.contains("-plan-")).count();
    assert_eq!(settle(&mut w), Some(SchemaPhase::Blocked));
    assert_eq!(
        w.created.iter().filter(|n| n.contains("-plan-")).count(),
        plans,
        "no re-plan within the cycle"
    );
}

#[test]
fn approval_must_name_the_exact_plan_and_fingerprint() {
    let mut w = World::new();
    w.reach_plan("CREATE TABLE t (id int);", false);
    assert_eq!(settle(&mut w), Some(SchemaPhase::AwaitingApproval));
    w.approve("wrong");
    w.approvals[0].plan_fingerprint = digest("other");
    let a = w.step();
    assert!(
        matches!(a, Action::MarkApprovals { ref stale, .. } if stale.len() == 1),
        "{a:?}"
    );
    assert_eq!(settle(&mut w), Some(SchemaPhase::AwaitingApproval));
    w.approve("right");
    w.run_until_dispatched(Op::Apply);
    assert_eq!(
        w.status
            .plan
            .as_ref()
            .and_then(|p| p.approval.as_ref())
            .map(|a| a.name.as_str()),
        Some("right")
    );
}

#[test]
fn approval_from_a_retired_epoch_is_ignored() {
    let mut w = World::new();
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.approve("old");
    w.approvals[0].execution_binding_id =
        Some(Epoch::parse("v1-ffffffffffffffffffffffffffffffff").expect("epoch"));
    assert_eq!(settle(&mut w), Some(SchemaPhase::AwaitingApproval));
}

#[test]
fn consumed_approval_never_authorizes_a_second_dispatch() {
    let mut w = World::new();
    w.spec.interval = ptah_api::shared::GoDuration::parse("24h").expect("duration");
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.approve("once");
    w.run_until_dispatched(Op::Apply);
    let a = w.step();
    assert!(
        matches!(a, Action::MarkApprovals { ref consumed, .. } if consumed.len() == 1),
        "spent at dispatch: {a:?}"
    );
    assert!(w.approvals[0].consumed);
    // The Apply is lost; the proof then finds the same plan again.
    w.job = crate::schema::JobState::Absent;
    w.step();
    w.now = super::world::t(2_000);
    w.complete(Op::Plan, |w| w.plan_changes("CREATE TABLE t (id int);", false));
    assert_eq!(
        settle(&mut w),
        Some(SchemaPhase::AwaitingApproval),
        "a consumed approval does not count again"
    );
}

#[test]
fn approval_revoked_before_dispatch_stops_the_apply() {
    let mut w = World::new();
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.approve("a");
    for _ in 0..10 {
        w.step();
        if w.status
            .active_operation
            .as_ref()
            .is_some_and(|c| c.operation_type == Op::Apply)
        {
            break;
        }
    }
    w.approvals[0].stale = true;
    let a = w.step();
    assert!(
        matches!(a, Action::WriteStatus { event: Some(ref e), .. } if e.reason == "ApprovalRevoked"),
        "{a:?}"
    );
    assert!(w.status.active_operation.is_none());
    assert!(w.created.iter().all(|n| !n.contains("apply")));
}

#[test]
fn apply_never_records_plans_and_applies_none() {
    let mut w = World::new();
    w.spec = spec(r#"{"apply": "Never"}"#);
    w.reach_plan("CREATE TABLE t (id int);", false);
    assert_eq!(settle(&mut w), Some(SchemaPhase::Blocked));
    assert_eq!(reason(&w, ConditionType::Ready), "ApplyDisabled");
    assert!(w.status.plan.is_some());
}

#[test]
fn apply_always_dispatches_a_safe_plan_without_approval() {
    let mut w = World::new();
    w.spec = spec(r#"{"apply": "Always"}"#);
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.run_until_dispatched(Op::Apply);
}

#[test]
fn policy_change_retires_the_plan() {
    let mut w = World::new();
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.approve("a");
    w.policy = PolicyRead::Ok {
        uid: "policy-uid-2".into(),
        digest: digest("policy-2"),
    };
    let a = w.step();
    let Action::WriteStatus { .. } = a else {
        panic!("{a:?}")
    };
    assert!(
        w.status.active_operation.is_some_and_claim(Op::Verify),
        "re-verifies under the new policy"
    );
}

trait ClaimIs {
    fn is_some_and_claim(&self, op: Op) -> bool;
}

impl ClaimIs for Option<ptah_api::schema::SchemaOperationStatus> {
    fn is_some_and_claim(&self, op: Op) -> bool {
        self.as_ref().is_some_and(|c| c.operation_type == op)
    }
}

#[test]
fn broken_plan_storage_retires_the_plan() {
    let mut w = World::new();
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.plan = PlanState::Broken("chunk 000 digest differs".into());
    settle(&mut w);
    assert!(w.status.plan.is_none());
    assert_eq!(reason(&w, ConditionType::PlanReady), "PlanNoLongerCurrent");
}

#[test]
fn realm_conflict_blocks_every_job() {
    let mut w = World::new();
    w.realm = Realm::Claimable {
        engine: "postgresql",
        coordination_digest: digest("realm"),
        census: CensusVerdict::Conflict { others: 1 },
    };
    assert_eq!(settle(&mut w), Some(SchemaPhase::Blocked));
    assert_eq!(reason(&w, ConditionType::Ready), "RealmConflict");
    assert!(w.created.is_empty());
}

#[test]
fn realm_not_authorized_blocks_with_a_non_probing_message() {
    let mut w = World::new();
    w.realm = Realm::NotAuthorized;
    assert_eq!(settle(&mut w), Some(SchemaPhase::Blocked));
    assert_eq!(reason(&w, ConditionType::Ready), "RealmNotAuthorized");
    assert!(w.created.is_empty());
}

#[test]
fn unsupported_engine_blocks_without_a_job() {
    let mut w = World::new();
    w.realm = Realm::UnsupportedEngine;
    assert_eq!(settle(&mut w), Some(SchemaPhase::Blocked));
    assert_eq!(reason(&w, ConditionType::EngineSupported), "UnsupportedEngine");
    assert!(w.created.is_empty());
}

/// A verdict the policy refused, as the runner reports it: the artifact, and the child's
/// `verification_failed` error.
fn refused(w: &World) -> ptah_dataplane::ResultPayload {
    let mut p = w.success();
    p.child_exit_code = 1;
    if let Some(a) = p.artifact.as_mut() {
        a.verification_passed = Some(false);
        a.violated_requirements = vec!["signature".into()];
    }
    p.error = Some(ResultError {
        code: ErrorCode::ChildFailed,
        child_code: Some(ptah_dataplane::VERIFICATION_FAILED.into()),
        message: "the artifact violates the verification policy".into(),
    });
    p
}

/// After a refusal, a new policy is verified against the recorded digest without a new Resolve.
fn assert_a_new_policy_re_verifies(w: &mut World) {
    w.policy = PolicyRead::Ok {
        uid: "policy-uid-2".into(),
        digest: digest("policy-2"),
    };
    w.step();
    assert_eq!(w.claim().operation_type, Op::Verify);
}

#[test]
fn verification_refusal_blocks_until_an_input_changes() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::resolved_only);
    w.complete(Op::Verify, refused);
    assert_eq!(settle(&mut w), Some(SchemaPhase::Blocked));
    assert_eq!(reason(&w, ConditionType::ArtifactVerified), "PolicyRefused");
    let verifies = w.created.iter().filter(|n| n.contains("verify")).count();
    settle(&mut w);
    assert_eq!(
        w.created.iter().filter(|n| n.contains("verify")).count(),
        verifies
    );
    assert_a_new_policy_re_verifies(&mut w);
}

#[test]
fn a_resolve_under_the_policy_verifies_in_the_same_job() {
    let mut w = World::new();
    w.run_until_dispatched(Op::Resolve);
    assert_eq!(
        w.claim().verification_policy_uid.as_deref(),
        Some("policy-uid"),
        "the Resolve is claimed under the policy it verifies with"
    );
    w.complete(Op::Resolve, World::success);
    w.step();
    assert_eq!(w.claim().operation_type, Op::Plan);
    assert!(!w.created.iter().any(|n| n.contains("verify")), "{:?}", w.created);
    let source = w.status.source.as_ref().expect("source");
    assert_eq!(source.verified, Some(true));
    assert_eq!(source.verified_at, source.resolved_at);
    assert_eq!(source.verification_policy_uid.as_deref(), Some("policy-uid"));
    assert_eq!(reason(&w, ConditionType::ArtifactVerified), "PolicySatisfied");
    assert_eq!(reason(&w, ConditionType::ArtifactResolved), "DigestPinned");
}

#[test]
fn a_resolve_refused_by_the_policy_blocks_and_a_new_policy_only_re_verifies() {
    let mut w = World::new();
    w.complete(Op::Resolve, refused);
    assert_eq!(settle(&mut w), Some(SchemaPhase::Blocked));
    assert_eq!(reason(&w, ConditionType::ArtifactVerified), "PolicyRefused");
    assert_eq!(reason(&w, ConditionType::ArtifactResolved), "DigestPinned");
    let source = w.status.source.as_ref().expect("the digest is recorded");
    assert_eq!(source.verified, Some(false));
    assert_eq!(w.created.len(), 1, "no other Job: {:?}", w.created);
    assert_a_new_policy_re_verifies(&mut w);
}

#[test]
fn wrong_artifact_type_is_refused_independently_of_the_policy() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::resolved_only);
    w.complete(Op::Verify, |w| {
        let mut p = w.success();
        if let Some(a) = p.artifact.as_mut() {
            a.artifact_type = Some("application/vnd.stokaro.ptah.migrations.v1".into());
        }
        p
    });
    assert_eq!(settle(&mut w), Some(SchemaPhase::Blocked));
    assert_eq!(reason(&w, ConditionType::ArtifactVerified), "ArtifactUnverified");
}

#[test]
fn mutable_or_missing_policy_is_a_configuration_error() {
    let mut w = World::new();
    w.policy = PolicyRead::Refused("ConfigMap policy is not immutable".into());
    assert_eq!(settle(&mut w), Some(SchemaPhase::Blocked));
    assert_eq!(reason(&w, ConditionType::Ready), "ConfigurationError");
    assert!(w.created.is_empty());
}

#[test]
fn privilege_changes_are_read_from_the_plan_sql_and_need_an_approval_under_always() {
    let mut w = World::new();
    w.spec = spec(r#"{"apply": "Always"}"#);
    w.reach_plan("GRANT SELECT ON items TO reporting", false);
    let plan = w.status.plan.clone().expect("plan");
    assert_eq!(plan.privilege_changes, vec![PrivilegeChangeKind::Grant]);
    assert_eq!(settle(&mut w), Some(SchemaPhase::AwaitingApproval));
    assert_eq!(reason(&w, ConditionType::ApprovalRequired), "PrivilegeChanges");
}

#[test]
fn the_operator_raises_destructive_when_the_executor_did_not() {
    let mut w = World::new();
    w.spec = spec(r#"{"apply": "Always"}"#);
    w.reach_plan("DROP TABLE items", false);
    assert!(
        w.status.plan.as_ref().is_some_and(|p| p.destructive),
        "classification only raises"
    );
    assert_eq!(settle(&mut w), Some(SchemaPhase::Blocked));
    assert_eq!(reason(&w, ConditionType::Ready), "DestructiveChangesDisabled");
}

#[test]
fn credential_bearing_ddl_is_refused_without_a_plan() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    w.complete(Op::Plan, |w| {
        w.plan_changes("CREATE ROLE app_admin LOGIN PASSWORD 'hunter2'", false)
    });
    assert!(w.status.plan.is_none(), "nothing is published");
    assert_eq!(w.status.phase, Some(SchemaPhase::Failed));
    assert_eq!(reason(&w, ConditionType::Ready), "PolicyRefused");
    let text = serde_json::to_string(&w.status).expect("json");
    assert!(!text.contains("hunter2"), "the refusal never quotes the SQL");
    assert!(text.contains("sets a credential"), "{text}");
}

#[test]
fn a_registry_grant_refusal_is_its_own_reason_and_event() {
    for (code, want) in [
        (ErrorCode::RegistryAuthorityMismatch, "RegistryAuthorityMismatch"),
        (ErrorCode::PlainHttpNotGranted, "PlainHTTPNotGranted"),
        (ErrorCode::CaNotGranted, "CANotGranted"),
    ] {
        let mut w = World::new();
        w.run_until_dispatched(Op::Resolve);
        let mut p = w.success();
        p.artifact = None;
        p.error = Some(ResultError {
            code,
            child_code: None,
            message: "add the key registry".into(),
        });
        w.finish(p);
        let mut a = w.step();
        if matches!(a, Action::ScheduleJobCleanup) {
            a = w.step();
        }
        let Action::WriteStatus {
            event: Some(event), ..
        } = &a
        else {
            panic!("{code:?}: {a:?}");
        };
        assert_eq!(event.reason, want, "{code:?}");
        assert_eq!(reason(&w, ConditionType::ReconciliationFailed), want, "{code:?}");
        assert!(
            get(&w.status.conditions, ConditionType::ReconciliationFailed)
                .is_some_and(|c| c.message.contains("add the key registry")),
            "{code:?}: the message names the key to add"
        );
    }
}

#[test]
fn an_empty_desired_schema_is_refused_by_name() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    w.run_until_dispatched(Op::Plan);
    let mut p = w.success();
    p.child_exit_code = 2;
    p.error = Some(ResultError {
        code: ErrorCode::ChildFailed,
        child_code: Some("empty_schema".into()),
        message: "schema.hcl declares no schema object".into(),
    });
    w.finish(p);
    let event = (0..5)
        .find_map(|_| match w.step() {
            Action::WriteStatus { event, .. } => event,
            _ => None,
        })
        .expect("a status write with its Event");
    assert_eq!(event.reason, "EmptySchema");
    assert!(event.note.contains("declares no schema object"), "{}", event.note);
    assert!(w.status.plan.is_none(), "nothing is planned");
    assert_eq!(w.status.phase, Some(SchemaPhase::Failed));
    assert_eq!(reason(&w, ConditionType::ReconciliationFailed), "EmptySchema");
}
