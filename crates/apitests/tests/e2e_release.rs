//! T4, suite `lifecycle` (`cargo xtask e2e --suite lifecycle`): the release lifecycle on the full
//! local cluster, with the chart installed by helm and its ptah-crd-manager hooks.
//!
//! * `upgrade`: the previous release (`support/previous-release.json`, images by `cargo xtask
//!   images --rev`) runs a PtahSchema and a PtahMigration to InSync and leaves a second schema's
//!   plan awaiting approval; `helm upgrade` to HEAD upgrades the CRDs, keeps both InSync without
//!   any Apply and retires the waiting plan for a fresh one; `helm upgrade` back to the previous
//!   release is refused by that release's own preflight, with nothing changed.
//! * `ha`: two replicas; the leader is killed while a schema Apply is in flight; the other replica
//!   takes the leader Lease within the Lease duration, the approval webhook is probed every 200 ms
//!   throughout, and the Apply Job exists exactly once.
//! * `uninstall`: `helm uninstall` leaves the tables, the CRDs and every object, and no admission
//!   configuration; a reinstall adopts the resources, which converge without an Apply.

mod common;
mod lifecycle;
mod migrations;
mod release;

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::{
        admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
        core::v1::Pod,
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, PostParams},
};
use lifecycle::{
    InCluster, Probe,
    app::{App, Engine, approve, phase},
    wait_for,
};
use migrations::{Release, Spans, applies_of, manager_story, observe_spans, uninstall};
use ptah_api::{PtahMigration, PtahSchemaApproval, schema::SchemaPhase};
use ptah_apitests::{
    e2e::create,
    release::{ChartSource, helm_release, install, install_from},
};
use serde_json::json;

use release::*;

#[tokio::test(flavor = "multi_thread")]
async fn e2e_upgrade_from_the_previous_release_keeps_resources_in_sync_and_refuses_the_way_back() {
    let app = App::setup(Engine::Postgres, "e2e-upgrade").await;
    let client = app.client.clone();
    let previous = ChartSource::previous();
    let head = ChartSource::head(&app.image);
    previous_crds(&client, &previous).await;
    let release_ns = install_from(&client, &app.ns, &app.services, &previous, &[]).await;
    let _release = Release(release_ns.clone());
    let manager = InCluster {
        client: client.clone(),
        namespace: release_ns.clone(),
    };
    let seen: Spans = observe_spans(&client, &app.ns);

    // Under the previous release: orders and billing InSync, pending awaiting approval.
    let synced = converge(&app, &manager).await;
    billing(&app, &manager).await;
    pending_schema(&app).await;
    let waiting = wait_for(
        &app.schemas,
        "pending",
        "a plan awaiting approval",
        STEP,
        &manager,
        awaiting,
    )
    .await;
    let old_plan = waiting
        .status
        .as_ref()
        .and_then(|s| s.plan.clone())
        .expect("plan");
    let old_epoch = epoch(&synced).expect("a binding");
    let applies = applies_of(&seen);
    assert_eq!(
        applies.len(),
        2,
        "one Apply for orders, one for billing: {applies:?}"
    );

    // Upgrade to HEAD.
    let started = Instant::now();
    let out = ptah_apitests::release::run(&mut helm_release("upgrade", &release_ns, &app.ns, &head, &[]));
    assert!(out.contains("STATUS: deployed"), "{out}");
    report(
        "upgrade",
        &format!("helm upgrade to HEAD took {:?}", started.elapsed()),
    );
    crds_are_heads(&client)
        .await
        .unwrap_or_else(|e| panic!("the CRDs were not upgraded: {e}"));
    assert_eq!(manager_image(&client, &release_ns).await, head.manager);

    // The new manager's binding: orders proves InSync again by a fresh plan, without an Apply.
    let again = wait_for(
        &app.schemas,
        "orders",
        "InSync under the new binding",
        STEP,
        &manager,
        |s| in_sync(s) && epoch(s).is_some_and(|e| e != old_epoch),
    )
    .await;
    assert_eq!(
        again.status.as_ref().and_then(|s| s.applied.clone()),
        synced.status.as_ref().and_then(|s| s.applied.clone())
    );
    let migrations: Api<PtahMigration> = Api::namespaced(client.clone(), &app.ns);
    wait_migration(
        &migrations,
        &manager,
        "billing InSync under the new binding",
        |m| {
            migration_in_sync(m)
                && m.status
                    .as_ref()
                    .and_then(|s| s.execution_binding.as_ref())
                    .and_then(|b| b.epoch.as_ref())
                    .is_some_and(|e| e.as_str() != old_epoch)
        },
    )
    .await;
    // The waiting plan was computed under the old executor: retired, and a fresh one published.
    let binding_changed = previous.data_plane != head.data_plane;
    let fresh = wait_for(
        &app.schemas,
        "pending",
        "a fresh plan under the new binding",
        STEP,
        &manager,
        |s| awaiting(s) && epoch(s).is_some_and(|e| e != old_epoch),
    )
    .await;
    let fresh_plan = fresh.status.as_ref().and_then(|s| s.plan.clone()).expect("plan");
    if binding_changed {
        assert_ne!(
            fresh_plan.name, old_plan.name,
            "the old plan is Stale, a new one is published"
        );
        let approvals: Api<PtahSchemaApproval> = Api::namespaced(client.clone(), &app.ns);
        let stale = approvals
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({
                    "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaApproval",
                    "metadata": {"name": "approve-the-old-plan"},
                    "spec": {
                        "schemaRef": {"name": "pending", "uid": fresh.uid().expect("uid")},
                        "planRef": {"name": old_plan.name, "uid": old_plan.uid},
                        "planFingerprint": old_plan.fingerprint,
                    }
                }))
                .expect("approval"),
            )
            .await;
        // Refused by the approval webhook and for the retired plan (whether it is gone, no
        // longer Ready or no longer the schema's current plan, the refusal names it); not by the
        // CRD schema or RBAC.
        match &stale {
            Err(kube::Error::Api(status)) => assert!(
                status.message.contains("denied the request")
                    && status.message.contains(old_plan.name.as_str()),
                "an approval of the retired plan is refused by admission: {status:?}"
            ),
            other => panic!("an approval of the retired plan is refused: {other:?}"),
        }
    }
    // A registry Secret of the previous release's shape (no `registry` grant) is refused by name.
    legacy_secret_schema(&app).await;
    wait_for(
        &app.schemas,
        "legacy",
        "refused for the registry Secret's missing grant",
        STEP,
        &manager,
        refused_for_the_missing_grant,
    )
    .await;
    tokio::time::sleep(Duration::from_secs(20)).await; // two intervals
    assert_eq!(applies_of(&seen), applies, "no Apply after the upgrade");

    // Back to the previous release: its own preflight refuses, and nothing changes.
    let back = helm_release("upgrade", &release_ns, &app.ns, &previous, &[])
        .output()
        .expect("run helm");
    let said = format!(
        "{}{}{}",
        String::from_utf8_lossy(&back.stdout),
        String::from_utf8_lossy(&back.stderr),
        hook_logs(&client, &release_ns).await
    );
    report(
        "upgrade",
        &format!(
            "helm upgrade back to the previous release said:\n{}",
            String::from_utf8_lossy(&back.stderr)
        ),
    );
    assert!(!back.status.success(), "the downgrade was accepted:\n{said}");
    assert!(
        said.contains("would lower it"),
        "the refusal names the CRD downgrade:\n{said}"
    );
    crds_are_heads(&client)
        .await
        .unwrap_or_else(|e| panic!("the refused downgrade changed a CRD: {e}"));
    assert_eq!(
        manager_image(&client, &release_ns).await,
        head.manager,
        "the manager stays"
    );
    // orders cycles on (Observing, Planning …) under the manager that stayed, and stays in sync.
    wait_for(
        &app.schemas,
        "orders",
        "InSync after the refused downgrade",
        STEP,
        &manager,
        in_sync,
    )
    .await;
    assert_eq!(applies_of(&seen), applies, "no Apply after the refused downgrade");
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_ha_the_leader_dies_mid_apply_and_the_other_replica_finishes_it_once() {
    let app = App::setup(Engine::Postgres, "e2e-ha").await;
    let client = app.client.clone();
    let release_ns = install(&client, &app.ns, &app.services, &app.image, &[]).await;
    let _release = Release(release_ns.clone());
    let manager = InCluster {
        client: client.clone(),
        namespace: release_ns.clone(),
    };
    let seen = observe_spans(&client, &app.ns);
    let s = wait_for(
        &app.schemas,
        "orders",
        "a plan awaiting approval",
        STEP,
        &manager,
        awaiting,
    )
    .await;
    let stop = Arc::new(AtomicBool::new(false));
    let probes = probe_webhook(
        client.clone(),
        app.ns.clone(),
        s.uid().expect("uid"),
        stop.clone(),
    );

    approve(&client, &app.ns, &s).await;
    let deadline = Instant::now() + STEP;
    while applies_of(&seen).is_empty() {
        assert!(
            Instant::now() < deadline,
            "no Apply Job\n{}",
            manager_story(&client, &release_ns, 40).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let old = leader(&client, &release_ns).await.expect("a leader");
    let pods: Api<Pod> = Api::namespaced(client.clone(), &release_ns);
    // A crash, not a shutdown: SIGKILL through the node's containerd, so the leader cannot release
    // its Lease; then the Pod goes, so it does not come back under the same identity.
    crash(&pods, &old).await;
    let killed = Instant::now();
    pods.delete(&old, &DeleteParams::default().grace_period(0))
        .await
        .expect("delete the crashed leader's Pod");
    let handover = loop {
        match leader(&client, &release_ns).await {
            Some(now) if now != old => break killed.elapsed(),
            _ => {}
        }
        assert!(
            killed.elapsed() < Duration::from_secs(120),
            "no replica took the leader Lease"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let done = wait_for(
        &app.schemas,
        "orders",
        "InSync after the Apply",
        STEP,
        &manager,
        in_sync,
    )
    .await;
    stop.store(true, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(300)).await;

    let probes = probes.lock().expect("probes").clone();
    let answered = probes.iter().filter(|(_, p)| *p == Probe::Refused).count();
    let mut longest = Duration::ZERO;
    let mut since: Option<Instant> = None;
    for (at, probe) in &probes {
        match (probe, since) {
            (Probe::Refused, Some(start)) => {
                longest = longest.max(*at - start);
                since = None;
            }
            (Probe::Refused, None) => {}
            (_, None) => since = Some(*at),
            (_, Some(_)) => {}
        }
    }
    report(
        "ha",
        &format!(
            "leader handover {handover:?} after a SIGKILL (lease {LEADER_LEASE_SECONDS} s); webhook probes every \
             200 ms: {answered}/{} answered, longest unanswered stretch {longest:?}",
            probes.len()
        ),
    );
    assert!(
        // Expiry (at most the Lease duration after the kill) plus one retry period of the standby.
        handover <= Duration::from_secs(LEADER_LEASE_SECONDS + LEADER_LEASE_SECONDS / 3 + 1),
        "the Lease moved after {handover:?}"
    );
    assert!(
        probes.iter().all(|(_, p)| *p != Probe::Admitted),
        "a webhook admitted an unchecked approval"
    );
    // A crashed replica's address stays in the Service a moment after its Pod is gone, until
    // kube-proxy drops it. A call the API server routes there in that moment gets no answer at
    // all (the address left with the Pod's network namespace) and fails closed at the webhook's
    // `timeoutSeconds`; the matrix's 1.35 cell of 2026-12-07 saw one such call (10.1 s). Everything
    // else the live replica answers: no stretch longer than one such call.
    let webhooks: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let timeout = webhooks
        .get("ptah-operator")
        .await
        .expect("the release's webhook configuration")
        .webhooks
        .unwrap_or_default()
        .iter()
        .filter_map(|w| w.timeout_seconds)
        .max()
        .map_or(Duration::from_secs(10), |s| {
            Duration::from_secs(u64::try_from(s).unwrap_or(10))
        });
    assert!(
        answered * 100 >= probes.len() * 95 && longest < timeout + Duration::from_secs(2),
        "the live replica answered {answered} of {} probes; longest unanswered stretch {longest:?} \
         (webhook timeout {timeout:?})",
        probes.len()
    );
    assert!(
        probes.len() >= 10,
        "the probe ran throughout: {} probes",
        probes.len()
    );
    let applies = applies_of(&seen);
    assert_eq!(applies.len(), 1, "the Apply Job exists exactly once: {applies:?}");
    assert!(app.engine_has_table("items").await);
    assert!(
        done.status
            .as_ref()
            .is_some_and(|st| st.active_operation.is_none())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_uninstall_leaves_tables_crds_and_objects_and_no_webhook_and_a_reinstall_adopts_them() {
    let app = App::setup(Engine::Postgres, "e2e-uninstall").await;
    let client = app.client.clone();
    let release_ns = install(&client, &app.ns, &app.services, &app.image, &[]).await;
    let manager = InCluster {
        client: client.clone(),
        namespace: release_ns.clone(),
    };
    let seen = observe_spans(&client, &app.ns);
    let synced = converge(&app, &manager).await;
    let applies = applies_of(&seen);

    uninstall(&release_ns);
    assert!(app.engine_has_table("items").await, "the tables are untouched");
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for shipped in ptah_api::crds().expect("crds") {
        let name = shipped.metadata.name.clone().unwrap_or_default();
        assert!(crds.get_opt(&name).await.expect("get").is_some(), "{name} stays");
    }
    let kept = app.schemas.get("orders").await.expect("the PtahSchema stays");
    assert_eq!(phase(&kept), Some(SchemaPhase::InSync));
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    assert!(
        mutating.get_opt(WEBHOOKS).await.expect("get").is_none(),
        "no mutating webhook left"
    );
    assert!(
        validating.get_opt(WEBHOOKS).await.expect("get").is_none(),
        "no validating webhook left"
    );
    // An approval is no longer refused by a dead webhook (no webhook answers, none is configured).
    let approvals: Api<PtahSchemaApproval> = Api::namespaced(client.clone(), &app.ns);
    create(
        &approvals,
        json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaApproval",
            "metadata": {"name": "after-uninstall"},
            "spec": {
                "schemaRef": {"name": "orders", "uid": kept.uid().expect("uid")},
                "planRef": {"name": "ptah-plan-000000000000000000000000", "uid": "no-such-plan"},
                "planFingerprint": format!("sha256:{}", "0".repeat(64))
            }
        }),
    )
    .await;
    approvals
        .delete("after-uninstall", &DeleteParams::default())
        .await
        .expect("delete it");

    // A reinstall adopts what stayed: orders proves InSync under the new release without an Apply.
    let release_ns = install(&client, &app.ns, &app.services, &app.image, &[]).await;
    let _release = Release(release_ns.clone());
    let manager = InCluster {
        client: client.clone(),
        namespace: release_ns.clone(),
    };
    let old_epoch = epoch(&synced);
    let adopted = wait_for(
        &app.schemas,
        "orders",
        "InSync under the reinstalled release",
        STEP,
        &manager,
        |s| in_sync(s) && epoch(s) != old_epoch,
    )
    .await;
    assert_eq!(
        adopted.status.as_ref().and_then(|s| s.applied.clone()),
        synced.status.as_ref().and_then(|s| s.applied.clone()),
        "the record of the last Apply is the one from before"
    );
    tokio::time::sleep(Duration::from_secs(20)).await;
    assert_eq!(applies_of(&seen), applies, "no Apply after the reinstall");
}
