//! The pure checks of a loaded plan, without a cluster: readiness and the manifest's own records.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use ptah_api::schemaplan::PublishedChunk;
use ptah_api::{PtahSchemaPlan, PtahSchemaPlanSpec, PtahSchemaPlanStatus};
use serde_json::json;

use super::*;
use crate::objects::Owner;
use crate::publish::{fill_spec, same_plan};

fn digest(c: char) -> String {
    format!("sha256:{}", c.to_string().repeat(64))
}

fn spec() -> PtahSchemaPlanSpec {
    serde_json::from_value(json!({
        "contractVersion": 3,
        "schemaRef": {"name": "x", "uid": "x"},
        "fingerprint": digest('0'),
        "contentDigest": digest('0'),
        "size": 1,
        "actualStateFingerprint": digest('c'),
        "desiredStateFingerprint": digest('d'),
        "artifactDigest": digest('a'),
        "coordinationDigest": digest('b'),
        "targetIdentityDigest": digest('3'),
        "policyFingerprint": digest('4'),
        "verificationPolicyUID": "vp-uid",
        "verificationPolicyDigest": digest('e'),
        "executionBindingID": "v1-0123456789abcdef0123456789abcdef",
        "controllerImage": "registry.local/ptah-operator:0.1.0",
        "controllerRevision": "0.1.0",
        "controllerStateVersion": 1,
        "ptahVersion": "1.4.2",
        "executorImage": format!("registry.local/ptah@{}", digest('f')),
        "runnerImage": format!("registry.local/ptah-runner@{}", digest('5')),
        "runnerProtocolVersion": 5,
        "dialect": "postgresql",
        "destructive": false,
        "statementCount": 1,
        "chunks": []
    }))
    .expect("a plan spec")
}

/// A published, Ready plan of `size` bytes, as publish leaves it.
fn ready_plan(size: usize) -> PtahSchemaPlan {
    let mut schema = PtahSchemaPlan::new("orders", spec());
    schema.metadata.namespace = Some("shop".into());
    schema.metadata.uid = Some("schema-uid".into());
    let schema = Owner::of(&schema).expect("owner");
    let bytes = vec![b'x'; size];
    let pieces = ptah_plancontract::split(&bytes).expect("fits");
    let mut spec = spec();
    let name = fill_spec(&mut spec, &schema, &bytes, &pieces);
    let mut plan = PtahSchemaPlan::new(&name, spec);
    plan.metadata.generation = Some(1);
    plan.status = Some(PtahSchemaPlanStatus {
        observed_generation: Some(1),
        published_chunks: plan
            .spec
            .chunks
            .iter()
            .map(|c| PublishedChunk {
                name: c.name.clone(),
                uid: format!("uid-{}", c.index),
                index: c.index,
            })
            .collect(),
        conditions: vec![Condition {
            type_: "Ready".into(),
            status: "True".into(),
            reason: "Published".into(),
            message: String::new(),
            last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
            observed_generation: Some(1),
        }],
    });
    plan
}

fn status(plan: &mut PtahSchemaPlan) -> &mut PtahSchemaPlanStatus {
    plan.status.as_mut().expect("status")
}

#[test]
fn a_published_plan_passes() {
    let plan = ready_plan(3 * contract::CHUNK_BYTES + 7);
    assert_eq!(plan.spec.chunks.len(), 4);
    ready_for(&plan).expect("ready");
    check_manifest(&plan).expect("consistent");
}

#[test]
fn readiness_needs_ready_published_for_this_generation() {
    let not_ready = |plan: &PtahSchemaPlan| matches!(ready_for(plan), Err(PlanStoreError::NotReady { .. }));
    let mut plan = ready_plan(10);
    plan.status = None;
    assert!(not_ready(&plan));

    let mut plan = ready_plan(10);
    plan.metadata.generation = Some(2);
    assert!(not_ready(&plan), "status written for generation 1");

    let mut plan = ready_plan(10);
    status(&mut plan).conditions[0].status = "False".into();
    assert!(not_ready(&plan));

    let mut plan = ready_plan(10);
    status(&mut plan).conditions[0].observed_generation = Some(0);
    assert!(not_ready(&plan), "condition of another generation");
}

/// A named edit of a published plan.
type Edit = (&'static str, fn(&mut PtahSchemaPlan));

#[test]
fn every_inconsistent_record_is_tampering() {
    let tampered =
        |plan: &PtahSchemaPlan| matches!(check_manifest(plan), Err(PlanStoreError::Tampered { .. }));
    let edits: [Edit; 9] = [
        ("a bound field", |p| p.spec.statement_count += 1),
        ("the schema UID", |p| p.spec.schema_ref.uid = "other".into()),
        ("the name", |p| {
            p.metadata.name = Some("ptah-plan-000000000000000000000000".into())
        }),
        ("the size", |p| p.spec.size += 1),
        ("a chunk size", |p| p.spec.chunks[0].size -= 1),
        ("a chunk name", |p| p.spec.chunks[1].name = "elsewhere".into()),
        ("the chunk order", |p| p.spec.chunks.swap(0, 1)),
        ("the published order", |p| status(p).published_chunks.swap(0, 1)),
        ("a lost published chunk", |p| {
            status(p).published_chunks.pop();
        }),
    ];
    for (what, edit) in edits {
        let mut plan = ready_plan(contract::CHUNK_BYTES + 1);
        edit(&mut plan);
        assert!(tampered(&plan), "changing {what} must be refused");
    }
}

#[test]
fn republishing_ignores_only_the_publisher_record() {
    let plan = ready_plan(10);
    let mut newer = plan.spec.clone();
    newer.binding.controller_image = "registry.local/ptah-operator:0.2.0".into();
    newer.binding.controller_revision = "0.2.0".into();
    assert!(same_plan(&plan.spec, &newer));
    newer.dialect = "mysql".into();
    assert!(
        !same_plan(&plan.spec, &newer),
        "the dialect is recorded, so it must match"
    );
}
