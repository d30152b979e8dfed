//! Fixtures of the T3 tests: a fresh namespace holding a PtahSchema to own plans, and plan specs.

#![allow(dead_code)]

use std::time::Instant;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, PostParams};
use kube::{Api, Client};
use ptah_api::{PtahSchema, PtahSchemaPlanSpec};
use ptah_apitests::{
    client::{admin_client, install_crds, namespace},
    fixtures,
};
use ptah_planstore::PlanStore;

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
        let schema: PtahSchema =
            serde_json::from_value(fixtures::schema(&ns, "orders")).expect("a PtahSchema");
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

/// A plan spec with every binding filled; the derived fields are placeholders publish overwrites.
pub fn spec(statements: i32) -> PtahSchemaPlanSpec {
    fixtures::schema_plan_spec(statements, false)
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
