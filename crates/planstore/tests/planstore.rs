//! T3: publish, load and project schema plans against the real kube-apiserver
//! (`cargo xtask cluster up --tier api`).

mod common;

use std::time::Instant;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use ptah_api::schemaplan::ChunkData;
use ptah_api::shared::ImmutableObjectReference;
use ptah_api::{PtahSchemaPlan, PtahSchemaPlanChunk, PtahSchemaPlanChunkSpec};
use ptah_plancontract::{MAX_CHUNKS, MAX_PLAN_BYTES};
use ptah_planstore::{LABEL_PLAN, LABEL_SCHEMA, PlanStoreError};

use common::{Fixture, document, ms, spec};

fn reference(plan: &PtahSchemaPlan) -> ImmutableObjectReference {
    ImmutableObjectReference {
        name: plan.metadata.name.clone().expect("name"),
        uid: plan.metadata.uid.clone().expect("uid"),
    }
}

fn is_ready(plan: &PtahSchemaPlan) -> bool {
    let status = plan.status.as_ref().expect("status");
    status.observed_generation == plan.metadata.generation
        && status
            .conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True" && c.reason == "Published")
}

#[tokio::test]
async fn publish_then_load_round_trips_the_bytes() {
    let fx = Fixture::new("planstore-rt").await;
    let bytes = document(1_300_000, 1);
    let plan = fx
        .store
        .publish(&fx.schema, spec(7), &bytes)
        .await
        .expect("publish");

    assert!(is_ready(&plan), "{:?}", plan.status);
    let name = plan.metadata.name.clone().expect("name");
    assert_eq!(name, ptah_plancontract::plan_name(&plan.spec.fingerprint));
    assert_eq!(plan.spec.size, 1_300_000);
    assert_eq!(plan.spec.chunks.len(), 3);
    assert_eq!(
        plan.spec.schema_ref.uid,
        fx.schema.metadata.uid.clone().expect("uid")
    );
    let labels = plan.metadata.labels.clone().expect("labels");
    assert_eq!(labels.get(LABEL_SCHEMA).map(String::as_str), Some("orders"));
    let owner = &plan.metadata.owner_references.clone().expect("owner")[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller, owner.block_owner_deletion),
        ("PtahSchema", Some(true), Some(true))
    );

    let chunks: Api<PtahSchemaPlanChunk> = Api::namespaced(fx.client.clone(), &fx.ns);
    for (i, published) in plan
        .status
        .as_ref()
        .expect("status")
        .published_chunks
        .iter()
        .enumerate()
    {
        let chunk = chunks.get(&published.name).await.expect("chunk");
        assert_eq!(published.name, format!("{name}-{i:03}"));
        assert_eq!(chunk.metadata.uid.as_deref(), Some(published.uid.as_str()));
        let labels = chunk.metadata.labels.expect("labels");
        assert_eq!(labels.get(LABEL_PLAN), Some(&name));
        assert_eq!(labels.get(LABEL_SCHEMA).map(String::as_str), Some("orders"));
        let owner = &chunk.metadata.owner_references.expect("owner")[0];
        assert_eq!(owner.uid, plan.metadata.uid.clone().expect("uid"));
        assert_eq!(owner.block_owner_deletion, Some(true));
    }

    let loaded = fx.store.load(&fx.ns, &reference(&plan)).await.expect("load");
    assert!(loaded.bytes == bytes, "the loaded document differs");
    assert_eq!(loaded.plan.metadata.uid, plan.metadata.uid);
    fx.cleanup().await;
}

#[tokio::test]
async fn an_exactly_eight_mib_plan_is_sixteen_chunks_and_loads_back_identical() {
    let fx = Fixture::new("planstore-8mib").await;
    let bytes = document(MAX_PLAN_BYTES, 2);

    let start = Instant::now();
    let plan = fx
        .store
        .publish(&fx.schema, spec(100_000), &bytes)
        .await
        .expect("publish 8 MiB");
    let publish_ms = ms(start);
    assert_eq!(plan.spec.chunks.len(), MAX_CHUNKS);
    assert_eq!(
        plan.status.as_ref().expect("status").published_chunks.len(),
        MAX_CHUNKS
    );

    let start = Instant::now();
    let loaded = fx
        .store
        .load(&fx.ns, &reference(&plan))
        .await
        .expect("load 8 MiB");
    let load_ms = ms(start);
    assert!(loaded.bytes == bytes, "the loaded document differs");
    eprintln!("8 MiB plan: publish {publish_ms} ms, load {load_ms} ms");
    fx.cleanup().await;
}

#[tokio::test]
async fn one_byte_over_eight_mib_is_refused_before_anything_is_written() {
    let fx = Fixture::new("planstore-big").await;
    let bytes = document(MAX_PLAN_BYTES + 1, 3);
    let err = fx
        .store
        .publish(&fx.schema, spec(1), &bytes)
        .await
        .expect_err("refused");
    assert!(
        matches!(err, PlanStoreError::TooLarge { size, max } if size == MAX_PLAN_BYTES + 1 && max == MAX_PLAN_BYTES),
        "{err}"
    );
    assert!(!err.is_transient());
    let plans: Api<PtahSchemaPlan> = Api::namespaced(fx.client.clone(), &fx.ns);
    let chunks: Api<PtahSchemaPlanChunk> = Api::namespaced(fx.client.clone(), &fx.ns);
    assert!(
        plans
            .list(&ListParams::default())
            .await
            .expect("list plans")
            .items
            .is_empty()
    );
    assert!(
        chunks
            .list(&ListParams::default())
            .await
            .expect("list chunks")
            .items
            .is_empty()
    );

    let err = fx
        .store
        .publish(&fx.schema, spec(1), &[])
        .await
        .expect_err("empty refused");
    assert!(matches!(err, PlanStoreError::Empty), "{err}");
    fx.cleanup().await;
}

#[tokio::test]
async fn republishing_the_same_plan_is_idempotent_and_resumes_a_lost_status() {
    let fx = Fixture::new("planstore-idem").await;
    let bytes = document(600_000, 4);
    let first = fx
        .store
        .publish(&fx.schema, spec(2), &bytes)
        .await
        .expect("publish");

    let again = fx
        .store
        .publish(&fx.schema, spec(2), &bytes)
        .await
        .expect("republish");
    assert_eq!(again.metadata.uid, first.metadata.uid);
    assert_eq!(again.status, first.status, "a Ready plan is not re-stamped");

    // A newer manager (other image, revision, runner) publishing the same plan finds it as is.
    let mut newer = spec(2);
    newer.binding.controller_image = "registry.local/ptah-operator:0.1.1".into();
    newer.binding.controller_revision = "0.1.1+def5678".into();
    let again = fx
        .store
        .publish(&fx.schema, newer, &bytes)
        .await
        .expect("republish by a newer manager");
    assert_eq!(again.metadata.uid, first.metadata.uid);
    assert_eq!(
        again.spec.binding.controller_image,
        first.spec.binding.controller_image
    );

    // A crash before the status write: the status is gone, the next publish completes it.
    let plans: Api<PtahSchemaPlan> = Api::namespaced(fx.client.clone(), &fx.ns);
    let name = first.metadata.name.clone().expect("name");
    let cleared = serde_json::json!({"status": null});
    plans
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&cleared))
        .await
        .expect("clear status");
    let err = fx
        .store
        .load(&fx.ns, &reference(&first))
        .await
        .expect_err("not ready");
    assert!(
        matches!(err, PlanStoreError::NotReady { .. }) && err.is_transient(),
        "{err}"
    );
    let resumed = fx
        .store
        .publish(&fx.schema, spec(2), &bytes)
        .await
        .expect("resume");
    assert_eq!(resumed.metadata.uid, first.metadata.uid);
    assert!(is_ready(&resumed));
    fx.store
        .load(&fx.ns, &reference(&resumed))
        .await
        .expect("load after resume");
    fx.cleanup().await;
}

#[tokio::test]
async fn a_replaced_chunk_fails_load_with_an_error_naming_it() {
    let fx = Fixture::new("planstore-tamper").await;
    let bytes = document(1_100_000, 5);
    let plan = fx
        .store
        .publish(&fx.schema, spec(3), &bytes)
        .await
        .expect("publish");
    let victim = plan.spec.chunks[1].name.clone();

    // Chunks are immutable (CEL), so tampering means delete + recreate: same name, new UID.
    let chunks: Api<PtahSchemaPlanChunk> = Api::namespaced(fx.client.clone(), &fx.ns);
    let original = chunks.get(&victim).await.expect("chunk");
    chunks
        .delete(&victim, &DeleteParams::default())
        .await
        .expect("delete chunk");
    let mut forged = PtahSchemaPlanChunk::new(
        &victim,
        PtahSchemaPlanChunkSpec {
            data: ChunkData(ByteString(b"DROP TABLE orders;".to_vec())),
        },
    );
    forged.metadata.labels = original.metadata.labels.clone();
    forged.metadata.owner_references = original.metadata.owner_references.clone();
    chunks
        .create(&PostParams::default(), &forged)
        .await
        .expect("recreate chunk");

    let err = fx
        .store
        .load(&fx.ns, &reference(&plan))
        .await
        .expect_err("tampered");
    match &err {
        PlanStoreError::Tampered { what } => assert!(what.contains(&victim), "{what}"),
        other => panic!("want Tampered naming {victim}, got {other}"),
    }
    assert!(!err.is_transient());

    // Even the original bytes under a new UID are refused: the published object is gone.
    chunks
        .delete(&victim, &DeleteParams::default())
        .await
        .expect("delete forged");
    let mut restored = original.clone();
    restored.metadata = kube::api::ObjectMeta {
        name: original.metadata.name.clone(),
        labels: original.metadata.labels.clone(),
        owner_references: original.metadata.owner_references.clone(),
        ..Default::default()
    };
    chunks
        .create(&PostParams::default(), &restored)
        .await
        .expect("restore bytes");
    let err = fx
        .store
        .load(&fx.ns, &reference(&plan))
        .await
        .expect_err("new UID");
    assert!(
        matches!(&err, PlanStoreError::Tampered { what } if what.contains(&victim) && what.contains("UID")),
        "{err}"
    );
    // And publish does not launder it by re-stamping the new UID.
    let err = fx
        .store
        .publish(&fx.schema, spec(3), &bytes)
        .await
        .expect_err("no re-stamp");
    assert!(matches!(err, PlanStoreError::Tampered { .. }), "{err}");
    fx.cleanup().await;
}

#[tokio::test]
async fn a_plan_with_another_uid_or_none_is_refused() {
    let fx = Fixture::new("planstore-uid").await;
    let plan = fx
        .store
        .publish(&fx.schema, spec(1), &document(10, 6))
        .await
        .expect("publish");
    let mut wrong = reference(&plan);
    wrong.uid = "00000000-0000-0000-0000-000000000000".into();
    let err = fx.store.load(&fx.ns, &wrong).await.expect_err("uid mismatch");
    assert!(
        matches!(&err, PlanStoreError::UidMismatch { actual, .. } if Some(actual) == plan.metadata.uid.as_ref()),
        "{err}"
    );
    assert!(!err.is_transient());

    let missing = ImmutableObjectReference {
        name: "ptah-plan-000000000000000000000000".into(),
        uid: wrong.uid,
    };
    let err = fx.store.load(&fx.ns, &missing).await.expect_err("not found");
    assert!(matches!(err, PlanStoreError::NotFound { .. }), "{err}");
    fx.cleanup().await;
}

#[tokio::test]
async fn project_creates_immutable_configmaps_that_concatenate_to_the_document() {
    let fx = Fixture::new("planstore-project").await;
    let bytes = document(1_600_000, 7);
    let plan = fx
        .store
        .publish(&fx.schema, spec(4), &bytes)
        .await
        .expect("publish");
    let loaded = fx.store.load(&fx.ns, &reference(&plan)).await.expect("load");

    let start = Instant::now();
    let names = fx
        .store
        .project(&loaded.plan, &loaded.bytes)
        .await
        .expect("project");
    eprintln!("project 1.6 MiB ({} ConfigMaps): {} ms", names.len(), ms(start));
    let expected: Vec<String> = plan.spec.chunks.iter().map(|c| c.name.clone()).collect();
    assert_eq!(names, expected);

    let api: Api<ConfigMap> = Api::namespaced(fx.client.clone(), &fx.ns);
    let mut joined = Vec::new();
    for name in &names {
        let cm = api.get(name).await.expect("ConfigMap");
        assert_eq!(cm.immutable, Some(true));
        assert!(cm.data.is_none());
        let labels = cm.metadata.labels.expect("labels");
        assert_eq!(labels.get(LABEL_PLAN), plan.metadata.name.as_ref());
        assert_eq!(
            cm.metadata.owner_references.expect("owner")[0].uid,
            plan.metadata.uid.clone().expect("uid")
        );
        let mut data = cm.binary_data.expect("binaryData");
        assert_eq!(data.len(), 1);
        joined.extend(data.remove("chunk").expect("key chunk").0);
    }
    assert!(joined == bytes, "the projection differs from the document");

    assert_eq!(
        fx.store
            .project(&loaded.plan, &loaded.bytes)
            .await
            .expect("project again"),
        names
    );
    let err = fx
        .store
        .project(&loaded.plan, &document(1_600_000, 8))
        .await
        .expect_err("other bytes");
    assert!(matches!(err, PlanStoreError::Conflict { .. }), "{err}");
    fx.cleanup().await;
}
