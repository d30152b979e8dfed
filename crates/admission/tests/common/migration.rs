//! Migration fixtures: a PtahMigration, a published PtahMigrationPlan for it, and the status the
//! migration reconciler records while it waits for a decision (written as admin through the
//! status subresource).

use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use ptah_api::{PtahMigration, PtahMigrationApproval, PtahMigrationPlan, PtahMigrationRunAcknowledgment};
use serde_json::{Value, json};

use super::{digest, policy};

/// The history reading every fixture plan is derived from.
pub fn history() -> String {
    digest('7')
}

/// A migration named `name` reading its policy from the fixture's policy ConfigMap.
pub fn migration_object(name: &str) -> PtahMigration {
    serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigration",
        "metadata": {"name": name},
        "spec": {
            "target": {"engine": "PostgreSQL", "coordinationKey": "orders-primary", "urlFrom": {"name": "orders-db", "key": "url"}},
            "artifact": {
                "ociRef": "oci://registry.example.com/shop/orders-migrations:v7",
                "verificationPolicyFrom": {"name": "orders-verification-policy", "key": "policy.yaml"}
            }
        }
    }))
    .expect("a PtahMigration")
}

/// Creates `migration`, as `creator`.
pub async fn create_migration(creator: &Client, ns: &str, migration: &PtahMigration) -> PtahMigration {
    Api::<PtahMigration>::namespaced(creator.clone(), ns)
        .create(&PostParams::default(), migration)
        .await
        .expect("create migration")
}

/// Publishes (as admin) a plan of `migration`, bound to the live policy, derived from `history`;
/// `seed` makes distinct plans.
pub async fn publish_plan(
    admin: &Client,
    migration: &PtahMigration,
    history: &str,
    seed: char,
) -> PtahMigrationPlan {
    let ns = migration.namespace().expect("namespaced");
    let (policy_uid, policy_digest) = policy(admin, &ns).await;
    let plan: PtahMigrationPlan = serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigrationPlan",
        "metadata": {"name": format!("ptah-mplan-{}", seed.to_string().repeat(24))},
        "spec": {
            "contractVersion": 1,
            "migrationRef": {"name": migration.name_any(), "uid": migration.uid().expect("uid")},
            "fingerprint": digest(seed),
            "migrations": [{"version": 4, "checksum": "h1:c4"}, {"version": 5, "checksum": "h1:c5", "checkpoint": false}],
            "historyFingerprint": history, "currentVersion": 3,
            "artifactDigest": digest('a'), "coordinationDigest": digest('b'), "targetIdentityDigest": digest('3'),
            "policyFingerprint": digest('4'),
            "verificationPolicyUID": policy_uid, "verificationPolicyDigest": policy_digest,
            "executionBindingID": "v1-0123456789abcdef0123456789abcdef",
            "controllerImage": "registry.local/ptah-operator:0.1.0", "controllerRevision": "0.1.0",
            "controllerStateVersion": 1, "ptahVersion": "1.4.2",
            "executorImage": format!("registry.local/ptah@{}", digest('f')),
            "runnerImage": format!("registry.local/ptah-runner@{}", digest('5')),
            "runnerProtocolVersion": 5
        }
    }))
    .expect("a plan");
    Api::<PtahMigrationPlan>::namespaced(admin.clone(), &ns)
        .create(&PostParams::default(), &plan)
        .await
        .expect("create plan")
}

/// The status of a migration waiting for a decision on `plan`, its last reading `history`.
pub fn waiting(plan: &PtahMigrationPlan, history: &str) -> Value {
    json!({
        "phase": "AwaitingApproval",
        "plan": {"name": plan.name_any(), "uid": plan.uid().expect("uid")},
        "artifact": {"digest": plan.spec.binding.artifact_digest},
        "history": {
            "observedAt": "2025-01-01T00:00:00Z", "contractVersion": 1, "currentVersion": 3,
            "appliedCount": 3, "pendingCount": 2, "fingerprint": history,
            "targetIdentityDigest": plan.spec.binding.target_identity_digest
        },
        "conditions": [{"type": "ApprovalRequired", "status": "True", "reason": "AwaitingApproval",
                        "message": "the plan waits for an approval", "lastTransitionTime": "2025-01-01T00:00:00Z"}]
    })
}

/// An unresolved run of operation `digest(id)` on `plan` (status fields to merge).
pub fn unresolved(plan: &PtahMigrationPlan, id: char) -> Value {
    json!({
        "phase": "Blocked",
        "unresolvedRun": {
            "outcome": "Unknown", "operationID": digest(id), "jobName": "ptah-m-apply-orders-1",
            "planRef": {"name": plan.name_any(), "uid": plan.uid().expect("uid")},
            "targetIdentityDigest": plan.spec.binding.target_identity_digest,
            "recordedAt": "2025-01-01T00:00:00Z"
        }
    })
}

/// Merges `status` into the migration's status (as admin, through the status subresource).
pub async fn set_status(admin: &Client, ns: &str, name: &str, status: Value) {
    Api::<PtahMigration>::namespaced(admin.clone(), ns)
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": status})),
        )
        .await
        .expect("write migration status");
}

/// An approval of `plan` naming only what a person must supply (plus `extra` spec fields).
pub fn approval_of(plan: &PtahMigrationPlan, extra: Value) -> PtahMigrationApproval {
    let mut spec = json!({
        "migrationRef": plan.spec.migration_ref,
        "planRef": {"name": plan.name_any(), "uid": plan.uid().expect("uid")},
        "planFingerprint": plan.spec.fingerprint
    });
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigrationApproval",
        "metadata": {"generateName": "approve-"},
        "spec": spec
    }))
    .expect("approval")
}

/// An acknowledgment of operation `digest(id)` on `migration`.
pub fn acknowledgment_of(
    migration: &PtahMigration,
    id: char,
    extra: Value,
) -> PtahMigrationRunAcknowledgment {
    let mut spec = json!({
        "migrationRef": {"name": migration.name_any(), "uid": migration.uid().expect("uid")},
        "operationID": digest(id)
    });
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigrationRunAcknowledgment",
        "metadata": {"generateName": "ack-"},
        "spec": spec
    }))
    .expect("acknowledgment")
}

/// Creates `object` as `client`; the API server's refusal as text.
pub async fn create<K>(client: &Client, ns: &str, object: &K) -> Result<K, String>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
{
    Api::<K>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), object)
        .await
        .map_err(|e| e.to_string())
}
