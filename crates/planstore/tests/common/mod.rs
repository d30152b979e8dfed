//! Fixtures of the T3 tests: a fresh namespace holding a PtahSchema to own plans, and plan specs.

#![allow(dead_code)]

use std::time::Instant;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, PostParams};
use kube::{Api, Client};
use ptah_api::{PtahSchema, PtahSchemaPlanSpec};
use ptah_apitests::client::{admin_client, install_crds, namespace};
use ptah_planstore::PlanStore;
use serde_json::json;

/// A namespace with one PtahSchema, and a store over the admin client.
pub struct Fixture {
    pub client: Client,
    pub ns: String,
    pub schema: PtahSchema,
    pub store: PlanStore,
}

impl Fixture {
    /// Installs the CRDs, creates a namespace and a PtahSchema `orders` in it.
    pub async fn new(prefix: &str) -> Self {
        let client = admin_client().await;
        install_crds(&client).await;
        let ns = namespace(&client, prefix).await;
        let schema: PtahSchema = serde_json::from_value(json!({
            "apiVersion": "operator.ptah.run/v1alpha1",
            "kind": "PtahSchema",
            "metadata": {"name": "orders", "namespace": ns},
            "spec": {
                "target": {
                    "engine": "PostgreSQL",
                    "coordinationKey": "orders-primary",
                    "urlFrom": {"name": "orders-db", "key": "url"}
                },
                "desired": {
                    "ociRef": "oci://registry.example.com/shop/orders-schema:v42",
                    "verificationPolicyFrom": {"name": "orders-verification-policy", "key": "policy.yaml"}
                }
            }
        }))
        .expect("a PtahSchema");
        let api: Api<PtahSchema> = Api::namespaced(client.clone(), &ns);
        let schema = api
            .create(&PostParams::default(), &schema)
            .await
            .expect("create PtahSchema");
        let store = PlanStore::new(client.clone());
        Fixture {
            client,
            ns,
            schema,
            store,
        }
    }

    /// Deletes the namespace (best effort: a failed test leaves it for inspection anyway).
    pub async fn cleanup(self) {
        let api: Api<Namespace> = Api::all(self.client);
        let _ = api.delete(&self.ns, &DeleteParams::default()).await;
    }
}

fn digest(c: char) -> String {
    format!("sha256:{}", c.to_string().repeat(64))
}

/// A plan spec with every binding filled; the derived fields are placeholders publish overwrites.
pub fn spec(statements: i32) -> PtahSchemaPlanSpec {
    serde_json::from_value(json!({
        "contractVersion": 3,
        "schemaRef": {"name": "placeholder", "uid": "placeholder"},
        "fingerprint": digest('0'),
        "contentDigest": digest('0'),
        "size": 1,
        "actualStateFingerprint": digest('c'),
        "desiredStateFingerprint": digest('d'),
        "artifactDigest": digest('a'),
        "coordinationDigest": digest('b'),
        "targetIdentityDigest": digest('3'),
        "policyFingerprint": digest('4'),
        "verificationPolicyUID": "0b7e4c7e-2f5b-4a4e-9a53-7f3f6f1f2a10",
        "verificationPolicyDigest": digest('e'),
        "executionBindingID": "v1-0123456789abcdef0123456789abcdef",
        "controllerImage": "registry.local/ptah-operator:0.1.0",
        "controllerRevision": "0.1.0+abc1234",
        "controllerStateVersion": 1,
        "ptahVersion": "1.4.2",
        "executorImage": format!("registry.local/ptah@{}", digest('f')),
        "runnerImage": format!("registry.local/ptah-runner@{}", digest('5')),
        "runnerProtocolVersion": 5,
        "dialect": "postgresql",
        "destructive": false,
        "privilegeChanges": ["Grant"],
        "statementCount": statements,
        "chunks": [{"name": "placeholder", "key": "chunk", "index": 0, "digest": digest('0'), "size": 1}]
    }))
    .expect("a plan spec")
}

/// A plan document of exactly `size` bytes with multi-byte characters, so chunk boundaries fall
/// inside them.
pub fn document(size: usize, seed: u8) -> Vec<u8> {
    let line = format!("-- plan {seed}\nALTER TABLE orders ADD COLUMN note_é_{seed} text; -- ünïcödé\n");
    line.bytes().cycle().take(size).collect()
}

/// Milliseconds since `start`, for the measurements the tests print.
pub fn ms(start: Instant) -> u128 {
    start.elapsed().as_millis()
}
