//! T3: the real kube-apiserver calls the admission webhooks over TLS for the migration family —
//! PtahMigrationApproval, PtahMigrationRunAcknowledgment and the spec writer of PtahMigration.
//!
//! The migration reconciler is not running: each test writes the status it would record (as
//! admin, through the status subresource) and checks what admission makes of it.

mod common;

use std::time::Instant;

use common::migration::{
    acknowledgment_of, approval_of, create, create_migration, history, migration_object, publish_plan,
    set_status, unresolved, waiting,
};
use common::{Fixture, Server, digest};
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use ptah_admission::AdmissionConfig;
use ptah_admission::approval_common::binding_copies;
use ptah_api::{PtahMigration, PtahMigrationApproval, PtahMigrationRunAcknowledgment};
use serde_json::json;

fn forged_identity() -> serde_json::Value {
    json!({"username": "system:admin", "uid": "forged", "groups": ["system:masters"]})
}

#[tokio::test]
async fn a_migration_approval_carries_the_requesters_identity_and_the_plans_bindings() {
    let f = Fixture::new("adm-m-stamp").await;
    let server = Server::start(f.admin.clone(), f.dir.path(), AdmissionConfig::default()).await;
    f.register(server.port).await;
    let activation = f.wait_active().await;
    let m = create_migration(&f.admin, &f.ns, &migration_object("orders")).await;
    let plan = publish_plan(&f.admin, &m, &history(), '1').await;
    set_status(&f.admin, &f.ns, "orders", waiting(&plan, &history())).await;

    // The unprivileged user forges every stamped field and supplies no copy of any binding.
    let forged = approval_of(
        &plan,
        json!({"approver": forged_identity(), "mutationRequestUID": "forged", "approvedAt": "2000-01-01T00:00:00Z"}),
    );
    let started = Instant::now();
    let created = create(&f.user, &f.ns, &forged).await.expect("approval admitted");
    let round_trip = started.elapsed();
    let approver = created.spec.approver.clone().expect("stamped approver");
    assert_eq!(approver.username, f.user_name);
    assert_ne!(approver.uid.as_deref(), Some("forged"));
    assert!(
        approver.groups.contains(&"system:authenticated".to_owned()),
        "{approver:?}"
    );
    assert!(!approver.groups.contains(&"system:masters".to_owned()));
    let request_uid = created
        .spec
        .mutation_request_uid
        .clone()
        .expect("stamped request UID");
    assert_ne!(request_uid, "forged");
    let approved_at = created.spec.approved_at.clone().expect("stamped time");
    assert!(approved_at.0 > jiff::Timestamp::from_second(1_700_000_000).expect("time"));
    // Hydrated from the plan: the history reading and every binding copy.
    assert_eq!(
        created.spec.history_fingerprint,
        Some(plan.spec.history_fingerprint.clone())
    );
    assert_eq!(created.spec.bindings, binding_copies(&plan.spec.binding));
    println!(
        "webhook active after {activation:?}; migration approval through both webhooks took {round_trip:?}"
    );

    // Metadata may change; the spec may not.
    let api: Api<PtahMigrationApproval> = Api::namespaced(f.admin.clone(), &f.ns);
    let name = created.name_any();
    api.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"reviewed": "yes"}}})),
    )
    .await
    .expect("a label-only update passes");
    let err = api
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"mutationRequestUID": "other"}})),
        )
        .await
        .expect_err("a spec update is refused");
    assert!(err.to_string().contains("immutable"), "{err}");

    server.stop().await;
    f.cleanup().await;
}

#[tokio::test]
async fn migration_approval_refusals_name_their_reason() {
    let f = Fixture::new("adm-m-refuse").await;
    let server = Server::start(f.admin.clone(), f.dir.path(), AdmissionConfig::default()).await;
    f.register(server.port).await;
    f.wait_active().await;
    let m = create_migration(&f.admin, &f.ns, &migration_object("orders")).await;
    let plan = publish_plan(&f.admin, &m, &history(), '1').await;
    set_status(&f.admin, &f.ns, "orders", waiting(&plan, &history())).await;
    let refused = |what: &'static str| move |r: Result<PtahMigrationApproval, String>| r.expect_err(what);

    // The approval names a history reading the plan was not derived from.
    let err = refused("stale history")(
        create(
            &f.user,
            &f.ns,
            &approval_of(&plan, json!({"historyFingerprint": digest('8')})),
        )
        .await,
    );
    assert!(
        err.contains("stale history fingerprint: the approval names"),
        "{err}"
    );

    // Wrong plan: another UID, another fingerprint.
    let mut wrong_uid = approval_of(&plan, json!({}));
    wrong_uid.spec.plan_ref.uid = "5f0c1d8e-0000-4000-8000-000000000000".into();
    let err = refused("wrong plan UID")(create(&f.user, &f.ns, &wrong_uid).await);
    assert!(err.contains("planRef does not match the live plan"), "{err}");
    let wrong_fp = approval_of(&plan, json!({"planFingerprint": digest('9')}));
    let err = refused("wrong fingerprint")(create(&f.user, &f.ns, &wrong_fp).await);
    assert!(err.contains("fingerprint does not match"), "{err}");

    // A copied binding that differs from the plan.
    let copied = approval_of(&plan, json!({"ptahVersion": "0.0.1"}));
    let err = refused("wrong binding")(create(&f.user, &f.ns, &copied).await);
    assert!(
        err.contains("bindings do not match the plan: ptahVersion"),
        "{err}"
    );

    // The migration read its history again and it changed: the plan is of an older reading.
    set_status(&f.admin, &f.ns, "orders", waiting(&plan, &digest('8'))).await;
    let err = refused("history moved")(create(&f.user, &f.ns, &approval_of(&plan, json!({}))).await);
    assert!(
        err.contains("stale history fingerprint: migration orders last read history"),
        "{err}"
    );

    // Not waiting: same plan and history, but the migration is InSync.
    let mut in_sync = waiting(&plan, &history());
    in_sync["phase"] = json!("InSync");
    set_status(&f.admin, &f.ns, "orders", in_sync).await;
    let err = refused("not waiting")(create(&f.user, &f.ns, &approval_of(&plan, json!({}))).await);
    assert!(
        err.contains("migration is not waiting for a decision (phase InSync)"),
        "{err}"
    );

    // Stale: the migration moved on to another plan.
    let newer = publish_plan(&f.admin, &m, &history(), '2').await;
    set_status(&f.admin, &f.ns, "orders", waiting(&newer, &history())).await;
    let err = refused("stale plan")(create(&f.user, &f.ns, &approval_of(&plan, json!({}))).await);
    assert!(
        err.contains("plan is stale: migration orders's current plan is"),
        "{err}"
    );

    // And the current plan, waiting, is admitted — naming its history reading explicitly too.
    let ok = create(
        &f.user,
        &f.ns,
        &approval_of(&newer, json!({"historyFingerprint": history()})),
    )
    .await
    .expect("the current plan is approvable");
    assert_eq!(ok.spec.plan_ref.name, newer.name_any());

    server.stop().await;
    f.cleanup().await;
}

#[tokio::test]
async fn an_acknowledgment_names_exactly_the_unresolved_run() {
    let f = Fixture::new("adm-m-ack").await;
    let server = Server::start(f.admin.clone(), f.dir.path(), AdmissionConfig::default()).await;
    f.register(server.port).await;
    f.wait_active().await;
    let m = create_migration(&f.admin, &f.ns, &migration_object("orders")).await;
    let plan = publish_plan(&f.admin, &m, &history(), '1').await;
    set_status(&f.admin, &f.ns, "orders", unresolved(&plan, '6')).await;

    let err = create(&f.user, &f.ns, &acknowledgment_of(&m, '5', json!({})))
        .await
        .expect_err("another operation");
    assert!(err.contains("acknowledgment for another operation"), "{err}");

    let forged = acknowledgment_of(
        &m,
        '6',
        json!({"acknowledgedBy": forged_identity(), "mutationRequestUID": "forged"}),
    );
    let started = Instant::now();
    let ack = create(&f.user, &f.ns, &forged)
        .await
        .expect("acknowledgment admitted");
    println!(
        "acknowledgment through both webhooks took {:?}",
        started.elapsed()
    );
    let by = ack.spec.acknowledged_by.clone().expect("stamped");
    assert_eq!(by.username, f.user_name);
    assert!(!by.groups.contains(&"system:masters".to_owned()), "{by:?}");
    assert!(ack.spec.acknowledged_at.is_some());
    assert_ne!(ack.spec.mutation_request_uid.as_deref(), Some("forged"));

    let api: Api<PtahMigrationRunAcknowledgment> = Api::namespaced(f.admin.clone(), &f.ns);
    let err = api
        .patch(
            &ack.name_any(),
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"mutationRequestUID": "other"}})),
        )
        .await
        .expect_err("a spec update is refused");
    assert!(err.to_string().contains("immutable"), "{err}");

    // Resolved (a reading found nothing pending): nothing is left to acknowledge.
    set_status(
        &f.admin,
        &f.ns,
        "orders",
        json!({"phase": "InSync", "unresolvedRun": null}),
    )
    .await;
    let err = create(&f.user, &f.ns, &acknowledgment_of(&m, '6', json!({})))
        .await
        .expect_err("nothing unresolved");
    assert!(err.contains("no unresolved run"), "{err}");

    server.stop().await;
    f.cleanup().await;
}

#[tokio::test]
async fn four_eyes_covers_migrations_but_not_acknowledgments() {
    let f = Fixture::new("adm-m-4eyes").await;
    // Created before any webhook exists: no spec writer is recorded.
    let legacy = create_migration(&f.admin, &f.ns, &migration_object("legacy")).await;
    let config = AdmissionConfig {
        require_distinct_approver: true,
        ..AdmissionConfig::default()
    };
    let server = Server::start(f.admin.clone(), f.dir.path(), config).await;
    f.register(server.port).await;
    f.wait_active().await;

    // The unprivileged user writes the spec; the spec-writer webhook records them.
    let m = create_migration(&f.user, &f.ns, &migration_object("orders")).await;
    let writer = |m: &PtahMigration| {
        m.annotations()
            .get(ptah_admission::WRITER_USERNAME_ANNOTATION)
            .cloned()
    };
    assert_eq!(writer(&m).as_deref(), Some(f.user_name.as_str()));
    let plan = publish_plan(&f.admin, &m, &history(), '1').await;
    set_status(&f.admin, &f.ns, "orders", waiting(&plan, &history())).await;

    let err = create(&f.user, &f.ns, &approval_of(&plan, json!({})))
        .await
        .expect_err("the writer approves");
    assert!(err.contains("four-eyes"), "{err}");
    let ok = create(&f.admin, &f.ns, &approval_of(&plan, json!({})))
        .await
        .expect("another person approves");
    assert_ne!(ok.spec.approver.map(|a| a.username), Some(f.user_name.clone()));

    // A label leaves the record alone; a spec change by admin adds admin to it and keeps the
    // user (D3 of issue 33: changing only `interval` used to hand the user four-eyes back).
    let migrations: Api<PtahMigration> = Api::namespaced(f.admin.clone(), &f.ns);
    let labelled = migrations
        .patch(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"team": "shop"}}})),
        )
        .await
        .expect("label");
    assert_eq!(writer(&labelled).as_deref(), Some(f.user_name.as_str()));
    let rewritten = migrations
        .patch(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"interval": "15m"}})),
        )
        .await
        .expect("spec change");
    assert_ne!(writer(&rewritten).as_deref(), Some(f.user_name.as_str()));
    let record = rewritten
        .annotations()
        .get(ptah_admission::SPEC_WRITERS_ANNOTATION)
        .cloned()
        .unwrap_or_default();
    assert!(record.contains(&format!("\"{}\"", f.user_name)), "{record}");
    for (who, client) in [("user", &f.user), ("admin", &f.admin)] {
        let err = create(client, &f.ns, &approval_of(&plan, json!({})))
            .await
            .expect_err(who);
        assert!(
            err.contains("four-eyes") && err.contains("has written"),
            "{who}: {err}"
        );
    }

    // No recorded writer: nobody can be distinct from it.
    let legacy_plan = publish_plan(&f.admin, &legacy, &history(), '2').await;
    set_status(&f.admin, &f.ns, "legacy", waiting(&legacy_plan, &history())).await;
    let err = create(&f.admin, &f.ns, &approval_of(&legacy_plan, json!({})))
        .await
        .expect_err("no recorded writer");
    assert!(err.contains("no recorded spec writer"), "{err}");

    // Acknowledging a run approves no change: the writer may acknowledge.
    set_status(&f.admin, &f.ns, "orders", unresolved(&plan, '6')).await;
    let ack = create(&f.user, &f.ns, &acknowledgment_of(&m, '6', json!({})))
        .await
        .expect("the writer acknowledges");
    assert_eq!(
        ack.spec.acknowledged_by.map(|a| a.username),
        Some(f.user_name.clone())
    );

    server.stop().await;
    f.cleanup().await;
}
