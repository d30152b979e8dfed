//! The mutation check: each policy weakened in turn (the validations a case names dropped, a
//! binding dropped, a match widened), and the case that rule decides must flip; a validation no
//! case decides alone fails the test too.

use k8s_openapi::api::{batch::v1::Job, core::v1::Pod};
use ptah_apitests::admissionpolicy::{Verdict, Weakening, eventually, policy, set, weakened};
use serde_json::{Value, json};

use crate::{
    Fixture, create_job, create_pod, foreign_pod, ordinary_job,
    policies::cases::{Case, Policy},
};

/// Weakens each policy in turn and requires the case it decides to flip.
pub async fn mutation_check(f: &Fixture, docs: &[Value], cases: &[Case], rogue: &Pod) {
    let mut survivors = Vec::new();
    for case in cases {
        let mut weak = docs.to_vec();
        for (p, rule) in &case.rules {
            weak = weakened(
                &weak,
                &f.policy_name(*p),
                &Weakening::DropValidation((*rule).to_owned()),
            );
        }
        let bad = f.bad_job(case);
        set(&f.admin, docs, &weak).await;
        if !eventually(|| async { create_job(&f.manager, &bad).await == Verdict::Admitted }).await {
            survivors.push(format!("{}: dropping {:?}", case.what, case.rules));
        }
        restore(f, docs, &bad).await;
    }
    for p in [Policy::Jobs, Policy::SchemaSecrets, Policy::MigrationSecrets] {
        let name = f.policy_name(p);
        for validation in policy(docs, &name)["spec"]["validations"]
            .as_array()
            .expect("validations")
        {
            let message = validation["message"].as_str().unwrap_or_default();
            // Each rule needs a case that it alone refuses, or dropping it could go unnoticed.
            let alone = cases
                .iter()
                .any(|c| c.rules.len() == 1 && c.rules[0].0 == p && message.contains(c.rules[0].1));
            if !alone {
                survivors.push(format!("{name}: no case decided by {message:?} alone"));
            }
        }
    }

    // Each policy without its binding, and matching more than the manager.
    for p in [Policy::Jobs, Policy::SchemaSecrets, Policy::MigrationSecrets] {
        let case = cases
            .iter()
            .find(|c| c.rules == vec![(p, c.rules[0].1)])
            .expect("a case per policy");
        let bad = f.bad_job(case);
        let name = f.policy_name(p);
        set(&f.admin, docs, &weakened(docs, &name, &Weakening::DropBinding)).await;
        if !eventually(|| async { create_job(&f.manager, &bad).await == Verdict::Admitted }).await {
            survivors.push(format!("{name} without its binding"));
        }
        restore(f, docs, &bad).await;
        set(&f.admin, docs, &without_manager_condition(docs, &name)).await;
        if !eventually(|| async { create_job(&f.admin, &bad).await != Verdict::Admitted }).await {
            survivors.push(format!("{name} matching every requester"));
        }
        restore(f, docs, &bad).await;
    }

    // A Job of a PtahSchema in a namespace holding none has no spec to match.
    let ordinary = ordinary_job(&f.empty_ns);
    let schema_policy = f.policy_name(Policy::SchemaSecrets);
    set(
        &f.admin,
        docs,
        &denying_missing_params(docs, &schema_policy, &f.empty_ns),
    )
    .await;
    if !eventually(|| async { create_job(&f.admin, &ordinary).await != Verdict::Admitted }).await {
        survivors.push(format!(
            "{schema_policy} refusing Jobs where no PtahSchema lives went unnoticed"
        ));
    }
    set(&f.admin, docs, docs).await;
    assert!(eventually(|| async { create_job(&f.admin, &ordinary).await == Verdict::Admitted }).await);

    let pods = f.pods_policy();
    set(&f.admin, docs, &weakened(docs, &pods, &Weakening::DropBinding)).await;
    if !eventually(|| async { create_pod(&f.admin, &f.ns, rogue).await == Verdict::Admitted }).await {
        survivors.push("the Pod policy without its binding".to_owned());
    }
    set(&f.admin, docs, docs).await;
    assert!(eventually(|| async { create_pod(&f.admin, &f.ns, rogue).await != Verdict::Admitted }).await);

    let foreign = foreign_pod(&f.ns);
    set(
        &f.admin,
        docs,
        &weakened(docs, &pods, &Weakening::DropObjectSelector),
    )
    .await;
    if !eventually(|| async { create_pod(&f.admin, &f.ns, &foreign).await != Verdict::Admitted }).await {
        survivors.push("the Pod policy matching every Pod".to_owned());
    }
    set(&f.admin, docs, docs).await;
    assert!(eventually(|| async { create_pod(&f.admin, &f.ns, &foreign).await == Verdict::Admitted }).await);

    assert!(
        survivors.is_empty(),
        "weakened policies no test noticed: {survivors:#?}"
    );
}

/// `docs` with the policy `name` matching every requester, not the manager alone. Only that
/// condition goes: the job-secrets policies keep matching Jobs of their owner kind, so the window
/// does not refuse every Job of the cluster.
fn without_manager_condition(docs: &[Value], name: &str) -> Vec<Value> {
    let mut out = docs.to_vec();
    let doc = out
        .iter_mut()
        .find(|d| d["kind"] == "ValidatingAdmissionPolicy" && d["metadata"]["name"] == name)
        .expect("the policy");
    let conditions = doc["spec"]["matchConditions"]
        .as_array_mut()
        .expect("match conditions");
    let before = conditions.len();
    conditions.retain(|c| c["name"] != "created-by-the-manager");
    assert_eq!(before - conditions.len(), 1, "{name} matches the manager by name");
    if conditions.is_empty() {
        doc["spec"]
            .as_object_mut()
            .and_then(|s| s.remove("matchConditions"));
    }
    out
}

/// `docs` with the binding of `name` refusing a Job when no param exists, for every Job of `ns`
/// (that namespace alone: the window must not refuse the Jobs of other tests' namespaces).
fn denying_missing_params(docs: &[Value], name: &str, ns: &str) -> Vec<Value> {
    let mut out = docs.to_vec();
    let binding = out
        .iter_mut()
        .find(|d| d["kind"] == "ValidatingAdmissionPolicyBinding" && d["metadata"]["name"] == name)
        .expect("the binding");
    assert_eq!(binding["spec"]["paramRef"]["parameterNotFoundAction"], "Allow");
    binding["spec"]["paramRef"]["parameterNotFoundAction"] = json!("Deny");
    binding["spec"]["matchResources"] = json!({
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
    });
    out
}

/// Puts the policies back and waits until `bad` is refused again.
async fn restore(f: &Fixture, docs: &[Value], bad: &Job) {
    set(&f.admin, docs, docs).await;
    assert!(
        eventually(|| async { create_job(&f.manager, bad).await != Verdict::Admitted }).await,
        "the restored policies never took effect"
    );
}
