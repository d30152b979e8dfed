//! Operations refused before their main container started: by the fetch container (the artifact
//! itself, a registry grant, the registry out of reach) or for a Secret that does not exist. Each
//! reaches status with its typed reason at once, and none makes the resource run Jobs in a loop.

use ptah_api::{
    conditions::ConditionType,
    schema::{SchemaOperationType as Op, SchemaPhase},
};

use super::world::{World, t};
use crate::{
    conditions::get,
    operation::{InitFailure, Stuck},
    schema::{Action, Finished, JobState, ResultRead},
};

/// What `ptah` writes to its termination log.
fn line(code: &str, message: &str) -> String {
    serde_json::json!({ "code": code, "message": message }).to_string() + "\n"
}

/// Ends the claim's Job as its fetch container refusing it with `code`.
fn refuse(w: &mut World, code: &str) {
    w.end(Finished::Failed);
    w.result = ResultRead::InitFailed(InitFailure {
        container: "fetch-schema".into(),
        exit_code: 1,
        message: Some(line(
            code,
            "the descriptor declares 10 bytes but 52428803 arrived",
        )),
    });
}

/// The claim's Pod waits for the Secret `db`, which does not exist.
fn secret_missing(w: &mut World) {
    if let JobState::Present { stuck, .. } = &mut w.job {
        *stuck = Some(Stuck {
            pod: "ptah-plan-orders-1-x".into(),
            container: "ptah".into(),
            reason: "CreateContainerConfigError".into(),
            message: "secret \"db\" not found".into(),
        });
    }
}

fn ready(w: &World) -> (String, String) {
    let c = get(&w.status.conditions, ConditionType::Ready).expect("Ready");
    (c.reason.clone(), c.message.clone())
}

fn jobs(w: &World, op: &str) -> usize {
    let prefix = format!("ptah-{op}-");
    w.created.iter().filter(|n| n.starts_with(&prefix)).count()
}

/// Steps until the world waits, completing each Resolve it claims with `digest_byte` repeated.
fn rest(w: &mut World, digest_byte: char) -> Action {
    for _ in 0..30 {
        if let Some(c) = &w.status.active_operation
            && c.operation_type == Op::Resolve
            && c.dispatch_started == Some(true)
            && matches!(&w.job, JobState::Present { finished: None, .. })
        {
            let hex = digest_byte.to_string().repeat(64);
            let mut p = w.success();
            if let Some(a) = p.artifact.as_mut() {
                a.resolved_digest = format!("sha256:{hex}").parse().expect("digest");
                a.resolved_reference = format!("oci://registry.test/shop/orders@sha256:{hex}");
            }
            w.finish(p);
        }
        // A Plan dispatched again is the caller's to look at.
        if let Some(c) = &w.status.active_operation
            && c.operation_type == Op::Plan
            && c.dispatch_started == Some(true)
            && matches!(&w.job, JobState::Present { finished: None, .. })
        {
            return Action::Wait {
                after: std::time::Duration::ZERO,
                renew: None,
            };
        }
        let a = w.step();
        if matches!(a, Action::Wait { .. }) {
            return a;
        }
    }
    panic!("never rested: {:#?}", w.status);
}

/// A fresh world whose first Plan was refused by its fetch container with `code`.
fn refused_plan(code: &str) -> World {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    w.run_until_dispatched(Op::Plan);
    refuse(&mut w, code);
    w
}

#[test]
fn a_fetch_refusal_reaches_the_condition_with_its_code_and_an_event() {
    let mut w = refused_plan("size_mismatch");
    let a = w.step();
    let Action::WriteStatus {
        event: Some(event), ..
    } = &a
    else {
        panic!("one write with its Event: {a:?}")
    };
    assert_eq!(event.reason, "ArtifactRefused");
    assert!(event.note.contains("size_mismatch"), "{}", event.note);
    assert!(w.status.active_operation.is_none(), "the claim is settled");
    assert_eq!(w.status.phase, Some(SchemaPhase::Blocked));
    let (reason, message) = ready(&w);
    assert_eq!(reason, "ArtifactRefused");
    assert!(
        message.contains("fetch-schema refused the artifact: size_mismatch: the descriptor declares"),
        "{message}"
    );
    let stalled = get(&w.status.conditions, ConditionType::Stalled).expect("Stalled");
    assert_eq!(
        (stalled.status.as_str(), stalled.reason.as_str()),
        ("True", "ArtifactRefused")
    );
    let r = w.status.refusal.as_ref().expect("the refusal is recorded");
    assert!(r.terminal);
    assert_eq!(r.code.as_deref(), Some("size_mismatch"));
    assert_eq!(
        r.digest.as_ref(),
        w.status.source.as_ref().and_then(|s| s.digest.as_ref()),
        "for the digest the Plan fetched"
    );
}

#[test]
fn an_artifact_refusal_runs_at_most_one_job_per_digest() {
    let mut w = refused_plan("unsafe_path");
    rest(&mut w, '1');
    for cycle in 1..=5 {
        // Every interval the reference is resolved again, to the same digest.
        w.now = t(cycle * 601);
        rest(&mut w, '1');
        assert_eq!(w.status.phase, Some(SchemaPhase::Blocked), "cycle {cycle}");
        assert_eq!(ready(&w).0, "ArtifactRefused", "cycle {cycle}");
    }
    assert_eq!(jobs(&w, "plan"), 1, "one Plan for the refused digest");
    assert_eq!(jobs(&w, "resolve"), 6, "one Resolve per interval, no faster");
}

#[test]
fn a_new_digest_or_a_spec_change_fetches_again() {
    let mut w = refused_plan("invalid_manifest");
    rest(&mut w, '1');
    w.now = t(601);
    rest(&mut w, '2');
    assert_eq!(
        jobs(&w, "plan"),
        2,
        "the tag moved to a new digest: it is fetched"
    );

    let mut w = refused_plan("invalid_manifest");
    rest(&mut w, '1');
    w.meta.generation = 2;
    w.now = t(5);
    rest(&mut w, '1');
    assert_eq!(jobs(&w, "plan"), 2, "a spec change fetches the same digest again");
}

#[test]
fn a_successful_fetch_clears_the_refusal() {
    let mut w = refused_plan("limit_exceeded");
    rest(&mut w, '1');
    w.meta.generation = 2;
    rest(&mut w, '1');
    assert_eq!(
        w.claim().operation_type,
        Op::Plan,
        "fetched again after the spec change"
    );
    let p = w.plan_none();
    w.finish(p);
    rest(&mut w, '1');
    assert_eq!(w.status.refusal, None);
    assert_ne!(w.status.phase, Some(SchemaPhase::Blocked));
}

#[test]
fn a_grant_refusal_is_retried_each_interval_and_no_sooner() {
    for (code, reason) in [
        ("registry_authority_mismatch", "RegistryAuthorityMismatch"),
        ("plain_http_not_granted", "PlainHTTPNotGranted"),
        ("ca_not_granted", "CANotGranted"),
    ] {
        let mut w = refused_plan(code);
        w.step();
        assert_eq!(ready(&w).0, reason, "{code}");
        assert_eq!(w.status.phase, Some(SchemaPhase::Blocked), "{code}");
        let Action::Wait { after, .. } = rest(&mut w, '1') else {
            panic!("{code}: waits")
        };
        assert!(
            after.as_secs() > 500,
            "{code}: waits for the interval, not {after:?}"
        );
        assert_eq!(jobs(&w, "plan"), 1, "{code}");
        w.now = t(601);
        rest(&mut w, '1');
        assert_eq!(jobs(&w, "plan"), 2, "{code}: the next cycle tries again");
    }
}

#[test]
fn registry_access_failures_stay_retryable_after_the_failure_interval() {
    let mut w = refused_plan("connect");
    let Action::Wait { after, .. } = rest(&mut w, '1') else {
        panic!("waits")
    };
    assert_eq!(w.status.phase, Some(SchemaPhase::Failed));
    assert_eq!(w.status.refusal, None, "nothing blocks the digest");
    assert!(ready(&w).1.contains("connect"), "{:?}", ready(&w));
    assert_eq!(after.as_secs(), 30, "failureRetryInterval");
}

#[test]
fn an_unreadable_termination_message_falls_back_to_the_exit_code() {
    let mut w = refused_plan("x");
    w.result = ResultRead::InitFailed(InitFailure {
        container: "fetch-schema".into(),
        exit_code: 137,
        message: Some("\u{0}garbage{".into()),
    });
    w.step();
    assert_eq!(w.status.phase, Some(SchemaPhase::Failed));
    assert!(ready(&w).1.contains("exited with code 137"), "{:?}", ready(&w));
}

#[test]
fn a_missing_secret_settles_a_read_only_claim_at_once_and_deletes_its_job() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    let job = w.run_until_dispatched(Op::Plan);
    secret_missing(&mut w);
    let a = w.step();
    let Action::SettleAndDeleteJob {
        job: deleted,
        event: Some(event),
        ..
    } = &a
    else {
        panic!("settled and deleted: {a:?}")
    };
    assert_eq!(deleted, &job);
    assert_eq!(event.reason, "SecretNotFound");
    let (reason, message) = ready(&w);
    assert_eq!(reason, "SecretNotFound");
    assert!(message.contains("Secret \"db\" does not exist"), "{message}");
    assert!(w.status.active_operation.is_none());
    // Not again until the next cycle; then it is tried again (the Secret may exist by then).
    rest(&mut w, '1');
    assert_eq!(jobs(&w, "plan"), 1);
    w.now = t(601);
    rest(&mut w, '1');
    assert_eq!(jobs(&w, "plan"), 2);
}

/// To a dispatched Apply of a first plan.
fn applying() -> World {
    let mut w = World::new();
    w.spec = super::world::spec(r#"{"apply": "Always"}"#);
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.run_until_dispatched(Op::Apply);
    w
}

#[test]
fn an_apply_refused_by_its_fetch_never_started_and_owes_no_proof() {
    let mut w = applying();
    refuse(&mut w, "unsafe_path");
    w.step();
    assert!(
        w.status.pending_observation.is_none(),
        "nothing ran: no proof is owed"
    );
    assert!(w.status.active_operation.is_none());
    assert!(w.status.pending_lock_release.is_some(), "its Lease is released");
    assert!(w.status.plan.is_none(), "the spent plan is retired");
    assert_eq!(ready(&w).0, "ArtifactRefused");
    let applying = get(&w.status.conditions, ConditionType::Applying).expect("Applying");
    assert!(
        applying.message.starts_with("the Apply never started"),
        "{}",
        applying.message
    );
}

#[test]
fn an_apply_waiting_for_a_secret_is_settled_only_once_its_dispatch_window_closed() {
    let mut w = applying();
    let job = w.claim().job_name.clone();
    let closes = w
        .claim()
        .dispatch_not_after
        .clone()
        .expect("a dispatch deadline")
        .0;
    secret_missing(&mut w);
    let a = w.step();
    assert!(matches!(a, Action::WriteStatus { .. }), "said at once: {a:?}");
    let progressing = get(&w.status.conditions, ConditionType::Progressing).expect("Progressing");
    assert_eq!(progressing.reason, "SecretNotFound");
    let Action::Wait { renew, .. } = w.step() else {
        panic!("the Apply keeps its claim")
    };
    assert!(renew.is_some(), "and its Lease");
    assert!(w.status.active_operation.is_some());
    // Just after the window the runner might still start on a slower clock.
    w.now = crate::operation::time::after(closes, std::time::Duration::from_secs(10));
    assert!(matches!(w.step(), Action::Wait { .. }));
    w.now = crate::operation::time::after(closes, std::time::Duration::from_secs(31));
    let a = w.step();
    let Action::SettleAndDeleteJob { job: deleted, .. } = &a else {
        panic!("settled and deleted: {a:?}")
    };
    assert_eq!(deleted, &job);
    assert!(
        w.status.pending_observation.is_none(),
        "it never started: no proof"
    );
    assert_eq!(ready(&w).0, "SecretNotFound");
}

/// A step of the proof an Apply owes that fails (here its fetch: the registry is out of reach)
/// is retried after `failureRetryInterval`, never at once: each retry is a Job.
#[test]
fn a_failed_proof_step_waits_for_the_failure_interval() {
    let mut w = applying();
    let p = w.success();
    w.finish(p);
    w.run_until_dispatched(Op::Plan);
    assert!(w.status.pending_observation.is_some(), "the proof's Plan");
    refuse(&mut w, "connect");
    let Action::Wait { after, .. } = rest(&mut w, '1') else {
        panic!("waits")
    };
    assert_eq!(after.as_secs(), 30, "failureRetryInterval");
    assert_eq!(jobs(&w, "plan"), 2, "the first Plan and the proof's, no third");
    assert!(w.status.pending_observation.is_some(), "the proof is still owed");
    w.now = t(31);
    w.run_until_dispatched(Op::Plan);
    assert_eq!(jobs(&w, "plan"), 3, "retried after the interval");
}
