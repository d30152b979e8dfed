//! T3: the real kube-apiserver calls the admission webhooks over TLS.
//!
//! Each test runs its own server on a free loopback port and scopes its webhook configurations to
//! its own labelled namespace, so the tests run in parallel without seeing each other's requests.

mod common;

use std::time::{Duration, Instant};

use common::{Fixture, Server, approval, digest, issue, set_status, waiting_schema, write_pair};
use k8s_openapi::api::rbac::v1::RoleBinding;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use ptah_admission::AdmissionConfig;
use ptah_api::{PtahSchema, PtahSchemaApproval, PtahSchemaPlan};
use ptah_apitests::admissionpolicy::impersonating;
use serde_json::json;

async fn create(client: &Client, ns: &str, a: &PtahSchemaApproval) -> Result<PtahSchemaApproval, String> {
    Api::<PtahSchemaApproval>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), a)
        .await
        .map_err(|e| e.to_string())
}

fn approval_of(plan: &PtahSchemaPlan) -> PtahSchemaApproval {
    approval(
        &plan.name_any(),
        plan.metadata.uid.as_deref().unwrap_or_default(),
        &plan.spec.schema_ref.name,
        &plan.spec.schema_ref.uid,
        plan.spec.fingerprint.as_str(),
    )
}

#[tokio::test]
async fn approval_carries_the_requesters_identity_and_its_spec_is_immutable() {
    let f = Fixture::new("adm-stamp").await;
    let server = Server::start(f.admin.clone(), f.dir.path(), AdmissionConfig::default()).await;
    f.register(server.port).await;
    let activation = f.wait_active().await;
    let w = waiting_schema(
        &f.admin,
        &f.admin,
        &f.ns,
        "orders",
        b"ALTER TABLE t ADD COLUMN c int;\n",
        "AwaitingApproval",
    )
    .await;

    // The client forges every stamped field; admission overwrites all three.
    let mut forged = approval_of(&w.plan);
    forged.spec.approver = Some(ptah_api::shared::Approver {
        username: "system:admin".into(),
        uid: Some("forged".into()),
        groups: vec!["system:masters".into()],
    });
    forged.spec.mutation_request_uid = Some("forged".into());
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
    assert!(created.spec.approved_at.is_some());
    // The omitted copies are filled from the plan.
    assert_eq!(
        created.spec.bindings,
        ptah_admission::approval_common::binding_copies(&w.plan.spec.binding)
    );
    assert_eq!(
        created.spec.actual_state_fingerprint.as_ref(),
        Some(&w.plan.spec.actual_state_fingerprint)
    );
    println!("webhook active after {activation:?}; create through both webhooks took {round_trip:?}");

    // Metadata may change; the spec may not.
    let api: Api<PtahSchemaApproval> = Api::namespaced(f.admin.clone(), &f.ns);
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
async fn refusals_name_their_reason() {
    let f = Fixture::new("adm-refuse").await;
    let server = Server::start(f.admin.clone(), f.dir.path(), AdmissionConfig::default()).await;
    f.register(server.port).await;
    f.wait_active().await;
    let w = waiting_schema(
        &f.admin,
        &f.admin,
        &f.ns,
        "orders",
        b"ALTER TABLE t ADD COLUMN c int;\n",
        "AwaitingApproval",
    )
    .await;

    // Wrong fingerprint: refused by the mutating webhook before anything is stamped.
    let mut wrong = approval_of(&w.plan);
    wrong.spec.plan_fingerprint = ptah_api::shared::Sha256Digest::parse(&digest('9')).expect("digest");
    let err = create(&f.admin, &f.ns, &wrong)
        .await
        .expect_err("wrong fingerprint");
    assert!(err.contains("fingerprint does not match"), "{err}");

    // A client-copied binding that differs from the plan.
    let mut copied = approval_of(&w.plan);
    copied.spec.bindings.ptah_version = Some("0.0.1".into());
    let err = create(&f.admin, &f.ns, &copied).await.expect_err("wrong binding");
    assert!(
        err.contains("bindings do not match the plan: ptahVersion"),
        "{err}"
    );

    // Stale: the schema moved on to another plan.
    let newer = ptah_planstore::PlanStore::new(f.admin.clone())
        .publish(
            &w.schema,
            common::plan_spec(
                &w.plan.spec.binding.verification_policy_uid,
                w.plan.spec.binding.verification_policy_digest.as_str(),
            ),
            b"ALTER TABLE t ADD COLUMN d int;\n",
        )
        .await
        .expect("publish a newer plan");
    set_status(&f.admin, &f.ns, "orders", &newer, "AwaitingApproval").await;
    let err = create(&f.admin, &f.ns, &approval_of(&w.plan))
        .await
        .expect_err("stale plan");
    assert!(err.contains("plan is stale"), "{err}");

    // Not waiting: same plan, but the schema is InSync.
    set_status(&f.admin, &f.ns, "orders", &newer, "InSync").await;
    let err = create(&f.admin, &f.ns, &approval_of(&newer))
        .await
        .expect_err("not waiting");
    assert!(
        err.contains("schema is not waiting for an approval (phase InSync)"),
        "{err}"
    );

    // Not Ready: a plan object whose publication never completed.
    let mut spec = newer.spec.clone();
    spec.fingerprint = ptah_api::shared::Sha256Digest::parse(&digest('7')).expect("digest");
    let unready = PtahSchemaPlan::new("orders-unready", spec);
    let unready = Api::<PtahSchemaPlan>::namespaced(f.admin.clone(), &f.ns)
        .create(&PostParams::default(), &unready)
        .await
        .expect("create an unpublished plan");
    let err = create(&f.admin, &f.ns, &approval_of(&unready))
        .await
        .expect_err("not ready");
    assert!(err.contains("plan is not Ready"), "{err}");

    // And the current plan, waiting, is admitted.
    set_status(&f.admin, &f.ns, "orders", &newer, "AwaitingApproval").await;
    create(&f.admin, &f.ns, &approval_of(&newer))
        .await
        .expect("the current plan is approvable");

    server.stop().await;
    f.cleanup().await;
}

#[tokio::test]
async fn four_eyes_refuses_the_last_spec_writer() {
    let f = Fixture::new("adm-4eyes").await;
    let config = AdmissionConfig {
        require_distinct_approver: true,
        ..AdmissionConfig::default()
    };
    let server = Server::start(f.admin.clone(), f.dir.path(), config).await;
    f.register(server.port).await;
    f.wait_active().await;
    // The unprivileged user writes the spec (the spec-writer webhook records them) …
    let w = waiting_schema(
        &f.admin,
        &f.user,
        &f.ns,
        "orders",
        b"ALTER TABLE t ADD COLUMN c int;\n",
        "AwaitingApproval",
    )
    .await;
    let writer = w
        .schema
        .annotations()
        .get(ptah_admission::WRITER_USERNAME_ANNOTATION)
        .cloned();
    assert_eq!(writer.as_deref(), Some(f.user_name.as_str()));
    // … so they may not approve its plan, and someone else may.
    let err = create(&f.user, &f.ns, &approval_of(&w.plan))
        .await
        .expect_err("the writer approves");
    assert!(err.contains("four-eyes"), "{err}");
    let ok = create(&f.admin, &f.ns, &approval_of(&w.plan))
        .await
        .expect("another person approves");
    assert_ne!(ok.spec.approver.map(|a| a.username), Some(f.user_name.clone()));

    server.stop().await;
    f.cleanup().await;
}

/// D3 of issue 33: author A's plan stayed approvable by A once B (a person, or a GitOps
/// ServiceAccount re-applying the spec) changed only `interval`. Everyone who wrote the spec is
/// now refused; a third person approves.
#[tokio::test]
async fn four_eyes_refuses_everyone_who_wrote_the_spec() {
    let f = Fixture::new("adm-4eyes-all").await;
    let config = AdmissionConfig {
        require_distinct_approver: true,
        ..AdmissionConfig::default()
    };
    let server = Server::start(f.admin.clone(), f.dir.path(), config).await;
    f.register(server.port).await;
    f.wait_active().await;
    let gitops_name = format!("system:serviceaccount:{}:gitops", f.ns);
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "approver-others"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "approver"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "carol"},
                     {"kind": "ServiceAccount", "name": "gitops", "namespace": f.ns}]
    }))
    .expect("binding");
    Api::<RoleBinding>::namespaced(f.admin.clone(), &f.ns)
        .create(&PostParams::default(), &binding)
        .await
        .expect("bind carol and gitops");
    let gitops = impersonating(&gitops_name, &["system:serviceaccounts", "system:authenticated"]).await;
    let carol = impersonating("carol", &["system:authenticated"]).await;

    // A (the unprivileged user) writes the spec and the plan is computed from it …
    let w = waiting_schema(
        &f.admin,
        &f.user,
        &f.ns,
        "orders",
        b"ALTER TABLE t ADD COLUMN c int;\n",
        "AwaitingApproval",
    )
    .await;
    let schemas: Api<PtahSchema> = Api::namespaced(gitops.clone(), &f.ns);
    // … a re-apply that changes nothing records nobody …
    let same = schemas
        .patch(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"interval": w.schema.spec.interval}})),
        )
        .await
        .expect("a no-op re-apply");
    let record = |s: &PtahSchema| {
        s.annotations()
            .get(ptah_admission::SPEC_WRITERS_ANNOTATION)
            .cloned()
            .unwrap_or_default()
    };
    assert!(!record(&same).contains(&gitops_name), "{}", record(&same));
    // … then B changes only the interval: the plan stays current, and A stays a writer.
    let changed = schemas
        .patch(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"interval": "17m"}})),
        )
        .await
        .expect("B changes the interval");
    assert_eq!(
        changed
            .annotations()
            .get(ptah_admission::WRITER_USERNAME_ANNOTATION),
        Some(&gitops_name)
    );
    let recorded = record(&changed);
    assert!(
        recorded.contains(&format!("\"{}\"", f.user_name)) && recorded.contains(&gitops_name),
        "{recorded}"
    );
    for (who, client) in [("A", &f.user), ("B", &gitops)] {
        let err = create(client, &f.ns, &approval_of(&w.plan)).await.expect_err(who);
        assert!(
            err.contains("four-eyes") && err.contains("has written the schema's spec"),
            "{who}: {err}"
        );
    }
    let ok = create(&carol, &f.ns, &approval_of(&w.plan))
        .await
        .expect("a third person approves");
    assert_eq!(ok.spec.approver.map(|a| a.username).as_deref(), Some("carol"));

    server.stop().await;
    f.cleanup().await;
}

/// Issue 33: an approval was refused about half the time with "schema is not waiting for an
/// approval (phase Resolving)" while the interval's refresh ran.
#[tokio::test]
async fn the_current_plan_is_approvable_while_a_refresh_runs() {
    let f = Fixture::new("adm-refresh").await;
    let server = Server::start(f.admin.clone(), f.dir.path(), AdmissionConfig::default()).await;
    f.register(server.port).await;
    f.wait_active().await;
    let w = waiting_schema(
        &f.admin,
        &f.admin,
        &f.ns,
        "orders",
        b"ALTER TABLE t ADD COLUMN c int;\n",
        "AwaitingApproval",
    )
    .await;
    let claim = |op: &str, phase: &str| {
        json!({"status": {"phase": phase, "activeOperation": {
            "type": op, "id": digest('7'), "inputFingerprint": digest('8'),
            "jobName": format!("ptah-s-{}", op.to_lowercase()), "startedAt": "2025-01-01T00:00:00Z",
            "attempt": 1, "executionBindingID": "v1-0123456789abcdef0123456789abcdef"}}})
    };
    let schemas: Api<PtahSchema> = Api::namespaced(f.admin.clone(), &f.ns);
    // The interval claims a Resolve: the plan and ApprovalRequired=True stay as they were.
    schemas
        .patch_status(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(claim("Resolve", "Resolving")),
        )
        .await
        .expect("the refresh's claim");
    create(&f.user, &f.ns, &approval_of(&w.plan))
        .await
        .expect("the current plan is approvable during the refresh");
    // An Apply in flight is no refresh.
    schemas
        .patch_status(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(claim("Apply", "Applying")),
        )
        .await
        .expect("an Apply's claim");
    let err = create(&f.user, &f.ns, &approval_of(&w.plan))
        .await
        .expect_err("not during an Apply");
    assert!(
        err.contains("schema is not waiting for an approval (phase Applying)"),
        "{err}"
    );

    server.stop().await;
    f.cleanup().await;
}

#[tokio::test]
async fn a_stopped_webhook_fails_closed() {
    let f = Fixture::new("adm-closed").await;
    let server = Server::start(f.admin.clone(), f.dir.path(), AdmissionConfig::default()).await;
    f.register(server.port).await;
    f.wait_active().await;
    let w = waiting_schema(
        &f.admin,
        &f.admin,
        &f.ns,
        "orders",
        b"ALTER TABLE t ADD COLUMN c int;\n",
        "AwaitingApproval",
    )
    .await;
    server.stop().await;
    let err = create(&f.admin, &f.ns, &approval_of(&w.plan))
        .await
        .expect_err("no webhook, no approval");
    assert!(err.contains("failed calling webhook"), "{err}");
    let listed = Api::<PtahSchemaApproval>::namespaced(f.admin.clone(), &f.ns)
        .list(&Default::default())
        .await
        .expect("list");
    assert!(listed.items.is_empty());
    f.cleanup().await;
}

#[tokio::test]
async fn a_rotated_certificate_is_served_without_a_restart() {
    let mut f = Fixture::new("adm-rotate").await;
    let server = Server::start(f.admin.clone(), f.dir.path(), AdmissionConfig::default()).await;
    f.register(server.port).await;
    f.wait_active().await;

    // A half-written pair is not adopted: the old certificate keeps serving.
    std::fs::write(
        f.dir.path().join(ptah_admission::CERT_FILE),
        "-----BEGIN CERTIFICATE-----\nMIIB",
    )
    .expect("write");
    tokio::time::sleep(Duration::from_millis(800)).await;
    // The watcher has already looked at (and refused) these bytes; nothing new is adopted.
    assert!(
        !matches!(server.cert.reload(), Ok(true)),
        "a broken pair is never adopted"
    );
    let still = f.probe().await.expect_err("the webhook still answers");
    assert!(still.contains("plan probe does not exist"), "{still}");

    // A new CA and pair: the API server trusts only the new CA, the server adopts the new files.
    let next = issue();
    write_pair(f.dir.path(), &next);
    let started = Instant::now();
    f.rotate_ca(server.port, next.ca_pem).await;
    loop {
        match f.probe().await {
            Err(e) if e.contains("plan probe does not exist") => break,
            other => assert!(
                started.elapsed() < Duration::from_secs(60),
                "not served with the new CA after 60s: {other:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    println!(
        "calls succeeded with the rotated certificate after {:?}",
        started.elapsed()
    );
    // Long after the 250 ms poll the new pair is certainly the one served, so success now proves
    // the API server verified it against the new CA.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let again = f.probe().await.expect_err("the webhook answers");
    assert!(again.contains("plan probe does not exist"), "{again}");

    server.stop().await;
    f.cleanup().await;
}
