//! Migration operations refused before their main container started: by the fetch container or
//! for a Secret that does not exist. Each reaches status with its typed reason at once; a refused
//! artifact is read at most once per digest; an Apply refused this way applied nothing.

use ptah_api::{
    conditions::ConditionType,
    migration::{MigrationOperationType as Op, MigrationPhase, RunOutcome},
};

use super::world::World;
use crate::{
    conditions::get,
    migration::Action,
    operation::{Finished, InitFailure, JobState, ResultRead, Stuck},
};

fn line(code: &str) -> String {
    serde_json::json!({ "code": code, "message": "unsafe path \"../../etc/x\": parent directory segment '..'" })
        .to_string()
        + "\n"
}

/// Ends the claim's Job as its fetch container refusing it with `code`.
fn refuse(w: &mut World, code: &str) {
    if let JobState::Present {
        finished, ttl_set, ..
    } = &mut w.job
    {
        *finished = Some(Finished::Failed);
        *ttl_set = true;
    }
    w.result = ResultRead::InitFailed(InitFailure {
        container: "fetch-migrations".into(),
        exit_code: 1,
        message: Some(line(code)),
    });
}

/// The claim's Pod waits for the Secret `db`, which does not exist.
fn secret_missing(w: &mut World) {
    if let JobState::Present { stuck, .. } = &mut w.job {
        *stuck = Some(Stuck {
            pod: "ptah-m-history-shop-x".into(),
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

fn jobs(w: &World, op: Op) -> usize {
    w.created.iter().filter(|(_, o)| *o == op).count()
}

/// Steps until the world waits or dispatches a History or an Apply, completing each Resolve and
/// Verify with the digest `byte` repeated.
fn rest(w: &mut World, byte: char) -> Action {
    let hex = byte.to_string().repeat(64);
    for _ in 0..40 {
        if let Some(c) = &w.status.active_operation
            && c.job_uid.is_some()
            && matches!(&w.job, JobState::Present { finished: None, .. })
        {
            if matches!(c.operation_type, Op::History | Op::Apply) {
                return Action::Wait {
                    after: std::time::Duration::ZERO,
                    renew: None,
                };
            }
            let mut p = w.success();
            if let Some(a) = p.artifact.as_mut() {
                a.resolved_digest = format!("sha256:{hex}").parse().expect("digest");
                a.resolved_reference = format!("oci://registry.test/shop/migrations@sha256:{hex}");
            }
            w.finish(p);
        }
        let a = w.step();
        if matches!(a, Action::Wait { .. }) {
            return a;
        }
    }
    panic!("never rested: {:#?}", w.status);
}

/// A fresh migration whose first History reading was refused by its fetch container.
fn history_refused(code: &str) -> World {
    let mut w = World::new();
    rest(&mut w, '1');
    assert_eq!(w.claim().operation_type, Op::History);
    refuse(&mut w, code);
    w
}

/// Moves the clock past the next cycle.
fn next_cycle(w: &mut World) {
    let due = w
        .status
        .next_reconciliation_time
        .as_ref()
        .expect("a next cycle")
        .0;
    w.now = crate::operation::time::after(due, std::time::Duration::from_secs(1));
}

#[test]
fn a_history_fetch_refusal_reaches_the_conditions_with_its_code() {
    let mut w = history_refused("unsafe_path");
    let a = w.step();
    let Action::WriteStatus {
        event: Some(event), ..
    } = &a
    else {
        panic!("one write with its Event: {a:?}")
    };
    assert_eq!(event.reason, "ArtifactRefused");
    assert_eq!(w.status.phase, Some(MigrationPhase::Blocked));
    let (reason, message) = ready(&w);
    assert_eq!(reason, "ArtifactRefused");
    assert!(
        message.contains("fetch-migrations refused the artifact: unsafe_path"),
        "{message}"
    );
    let blocked = get(&w.status.conditions, ConditionType::Blocked).expect("Blocked");
    assert_eq!(
        (blocked.status.as_str(), blocked.reason.as_str()),
        ("True", "ArtifactRefused")
    );
}

#[test]
fn an_artifact_refusal_reads_at_most_once_per_digest() {
    let mut w = history_refused("size_mismatch");
    rest(&mut w, '1');
    for cycle in 1..=4 {
        next_cycle(&mut w);
        rest(&mut w, '1');
        assert_eq!(w.status.phase, Some(MigrationPhase::Blocked), "cycle {cycle}");
        assert_eq!(ready(&w).0, "ArtifactRefused", "cycle {cycle}");
    }
    assert_eq!(jobs(&w, Op::History), 1, "one History for the refused digest");
    assert_eq!(jobs(&w, Op::Resolve), 5, "one Resolve per interval, no faster");
    next_cycle(&mut w);
    rest(&mut w, '2');
    assert_eq!(jobs(&w, Op::History), 2, "a new digest is read");
}

#[test]
fn a_missing_secret_settles_a_reading_at_once_and_deletes_its_job() {
    let mut w = World::new();
    rest(&mut w, '1');
    let job = w.claim().job_name.clone();
    secret_missing(&mut w);
    let a = w.step();
    let Action::SettleAndDeleteJob { job: deleted, .. } = &a else {
        panic!("settled and deleted: {a:?}")
    };
    assert_eq!(deleted, &job);
    assert_eq!(ready(&w).0, "SecretNotFound");
    assert!(
        ready(&w).1.contains("Secret \"db\" does not exist"),
        "{:?}",
        ready(&w)
    );
    let Action::Wait { after, .. } = rest(&mut w, '1') else {
        panic!("waits")
    };
    assert!(after.as_secs() > 500, "until the next cycle, not {after:?}");
    next_cycle(&mut w);
    rest(&mut w, '1');
    assert_eq!(jobs(&w, Op::History), 2, "the next cycle reads again");
}

/// To a dispatched and adopted Apply.
fn applying() -> World {
    let mut w = World::new();
    w.drive_to_approval();
    w.approve("alice");
    w.run_until_dispatched(Op::Apply);
    w.step(); // adopt
    w
}

#[test]
fn an_apply_refused_by_its_fetch_applied_nothing() {
    let mut w = applying();
    refuse(&mut w, "invalid_manifest");
    w.step();
    assert_eq!(
        w.status.unresolved_run, None,
        "nothing ran: not an unresolved run"
    );
    let run = w.status.last_run.as_ref().expect("the run is recorded");
    assert_eq!(run.outcome, RunOutcome::Failed);
    assert!(
        run.message
            .as_deref()
            .is_some_and(|m| m.starts_with("the Apply never started"))
    );
    assert_eq!(ready(&w).0, "ArtifactRefused");
    assert!(w.status.pending_lock_release.is_some(), "its Lease is released");
}

#[test]
fn an_apply_waiting_for_a_secret_keeps_its_claim_until_its_dispatch_window_closed() {
    let mut w = applying();
    let closes = w
        .claim()
        .dispatch_not_after
        .clone()
        .expect("a dispatch deadline")
        .0;
    secret_missing(&mut w);
    assert!(matches!(w.step(), Action::WriteStatus { .. }), "said at once");
    let progressing = get(&w.status.conditions, ConditionType::Progressing).expect("Progressing");
    assert_eq!(progressing.reason, "SecretNotFound");
    let Action::Wait { renew, .. } = w.step() else {
        panic!("the Apply keeps its claim")
    };
    assert!(renew.is_some(), "and renews its Lease");
    w.now = crate::operation::time::after(closes, std::time::Duration::from_secs(31));
    assert!(matches!(w.step(), Action::SettleAndDeleteJob { .. }));
    assert_eq!(w.status.unresolved_run, None);
    assert_eq!(
        w.status.last_run.as_ref().map(|r| r.outcome),
        Some(RunOutcome::Failed)
    );
}
