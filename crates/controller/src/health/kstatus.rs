//! kstatus's generic rules (sigs.k8s.io/cli-utils/pkg/kstatus), which Flux and kpt apply to any
//! custom resource, checked against the statuses the decision functions write.

use serde_json::{Value, json};

use super::{Situation, cases, condition};

/// kstatus's verdict for one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    InProgress,
    Failed,
    Current,
    Terminating,
}

/// Which of kstatus's rules decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    Deletion,
    Generation,
    Reconciling,
    Stalled,
    Otherwise,
}

/// kstatus's generic properties, in its order: deletion, `observedGeneration` behind
/// `generation`, `Reconciling` True, `Stalled` True; an unknown kind with none of them is Current.
fn kstatus(object: &Value) -> (Verdict, Rule) {
    if !object["metadata"]["deletionTimestamp"].is_null() {
        return (Verdict::Terminating, Rule::Deletion);
    }
    let generation = object["metadata"]["generation"].as_i64();
    if let Some(observed) = object["status"]["observedGeneration"].as_i64()
        && Some(observed) != generation
    {
        return (Verdict::InProgress, Rule::Generation);
    }
    let is_true = |type_: &str| condition(object, type_).is_some_and(|c| c["status"] == "True");
    if is_true("Reconciling") {
        (Verdict::InProgress, Rule::Reconciling)
    } else if is_true("Stalled") {
        (Verdict::Failed, Rule::Stalled)
    } else {
        (Verdict::Current, Rule::Otherwise)
    }
}

fn expected(situation: Situation) -> (Verdict, Rule) {
    match situation {
        Situation::InProgress | Situation::AwaitingApproval | Situation::Replanning => {
            (Verdict::InProgress, Rule::Reconciling)
        }
        Situation::SpecChanged => (Verdict::InProgress, Rule::Generation),
        Situation::Blocked | Situation::Failed => (Verdict::Failed, Rule::Stalled),
        Situation::InSync | Situation::Suspended | Situation::Rechecking => {
            (Verdict::Current, Rule::Otherwise)
        }
    }
}

#[test]
fn kstatus_reads_each_situation_as_a_person_would() {
    for case in cases() {
        assert_eq!(
            kstatus(&case.object),
            expected(case.situation),
            "{} {:?}: {:#}",
            case.kind,
            case.situation,
            case.object["status"]
        );
    }
}

#[test]
fn reconciling_and_stalled_are_always_written_and_agree_with_ready() {
    for case in cases() {
        let what = format!("{} {:?}", case.kind, case.situation);
        let generation = &case.object["metadata"]["generation"];
        let reconciling =
            condition(&case.object, "Reconciling").unwrap_or_else(|| panic!("{what}: Reconciling"));
        let stalled = condition(&case.object, "Stalled").unwrap_or_else(|| panic!("{what}: Stalled"));
        // A fresh resource has no Ready until its first cycle settles.
        let ready = condition(&case.object, "Ready").cloned().unwrap_or_default();
        assert!(
            !(reconciling["status"] == "True" && stalled["status"] == "True"),
            "{what}: both abnormal-true conditions"
        );
        if stalled["status"] == "True" {
            assert_eq!(ready["status"], "False", "{what}: stalled yet not unready");
            assert_eq!(
                stalled["reason"], ready["reason"],
                "{what}: Stalled explains itself as Ready does"
            );
        }
        if ready["status"] == "True" && ready["observedGeneration"] == *generation {
            assert_eq!(
                reconciling["status"], "False",
                "{what}: ready for this generation yet reconciling"
            );
        }
        if case.situation != Situation::SpecChanged {
            // Written by this pass, so for the generation the status describes.
            assert_eq!(reconciling["observedGeneration"], *generation, "{what}");
            assert_eq!(stalled["observedGeneration"], *generation, "{what}");
        }
        for c in [reconciling, stalled] {
            let reason = c["reason"].as_str().unwrap_or_default();
            assert!(
                reason.parse::<ptah_api::conditions::Reason>().is_ok(),
                "{what}: {reason:?} is one of ours"
            );
        }
    }
}

#[test]
fn awaiting_approval_says_so_while_it_reconciles() {
    for case in cases()
        .iter()
        .filter(|c| c.situation == Situation::AwaitingApproval)
    {
        let reconciling = condition(&case.object, "Reconciling").expect("Reconciling");
        assert_eq!(reconciling["status"], "True", "{}", case.kind);
        assert_eq!(reconciling["reason"], "AwaitingApproval", "{}", case.kind);
    }
}

#[test]
fn the_rules_apply_in_kstatus_order() {
    let both = json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 2, "conditions": [
        {"type": "Stalled", "status": "True"}, {"type": "Reconciling", "status": "True"}]}});
    assert_eq!(kstatus(&both), (Verdict::InProgress, Rule::Reconciling));
    let mut behind = both.clone();
    behind["status"]["observedGeneration"] = json!(1);
    assert_eq!(kstatus(&behind), (Verdict::InProgress, Rule::Generation));
    let mut deleting = behind.clone();
    deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    assert_eq!(kstatus(&deleting), (Verdict::Terminating, Rule::Deletion));
    let no_status = json!({"metadata": {"generation": 1}});
    assert_eq!(kstatus(&no_status), (Verdict::Current, Rule::Otherwise));
}
