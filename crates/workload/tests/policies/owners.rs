//! The PtahSchemas and PtahMigrations that own the test's Jobs, one per registry access, and the
//! built Job of an operation owned by the right one: the job-secrets policies compare every
//! Secret a Job names with its owner's spec, which the API server reads itself.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use kube::{
    Api, Client, ResourceExt,
    api::{Patch, PatchParams, PostParams},
};
use ptah_api::{PtahMigration, PtahSchema, shared::RegistryAuthMode};
use ptah_dataplane::Operation;
use ptah_workload::SourceAccess;
use serde_json::{Value, json};

use crate::common::{access_variants, docker_auth, env_auth, intent_with};

/// The kinds that own operation Jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// A PtahSchema.
    Schema,
    /// A PtahMigration.
    Migration,
}

impl Family {
    /// The family whose Job `op` is when nothing says otherwise (Resolve and Verify: a schema's).
    pub fn of(op: Operation) -> Family {
        match op {
            Operation::MigrationHistory | Operation::MigrationApply => Family::Migration,
            _ => Family::Schema,
        }
    }

    fn kind(self) -> &'static str {
        match self {
            Family::Schema => "PtahSchema",
            Family::Migration => "PtahMigration",
        }
    }
}

/// How the owner's spec reaches its registry; each names another Secret, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Auth {
    /// No registryAuthFrom.
    Anonymous,
    /// registryAuthFrom in Environment mode (`registry-creds`).
    Environment,
    /// registryAuthFrom in DockerConfigJSON mode (`registry-docker`).
    DockerConfig,
}

impl Auth {
    /// The access variant of the shared intents with this auth and no transport settings.
    pub fn access(self) -> SourceAccess {
        let v = access_variants();
        match self {
            Auth::Anonymous => v[0].clone(),
            Auth::Environment => v[1].clone(),
            Auth::DockerConfig => v[2].clone(),
        }
    }

    /// The auth of an access variant.
    pub fn of(access: &SourceAccess) -> Auth {
        match access.registry_auth.as_ref().map(|a| a.mode) {
            None => Auth::Anonymous,
            Some(RegistryAuthMode::Environment) => Auth::Environment,
            Some(RegistryAuthMode::DockerConfigJSON) => Auth::DockerConfig,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Auth::Anonymous => "anon",
            Auth::Environment => "env",
            Auth::DockerConfig => "docker",
        }
    }

    fn spec(self) -> Value {
        match self {
            Auth::Anonymous => Value::Null,
            Auth::Environment => serde_json::to_value(env_auth()).expect("auth"),
            Auth::DockerConfig => serde_json::to_value(docker_auth()).expect("auth"),
        }
    }
}

/// The live owners, by family and auth: `(name, uid)`.
pub struct Owners(BTreeMap<(Family, Auth), (String, String)>);

const AUTHS: [Auth; 3] = [Auth::Anonymous, Auth::Environment, Auth::DockerConfig];

/// The spec fields both kinds share, naming what `common::intent_with` builds Jobs from.
fn shared(auth: Auth) -> (Value, Value, Value) {
    let mut source = json!({
        "ociRef": "oci://registry.example:5000/schemas/orders:v1",
        "verificationPolicyFrom": {"name": "orders-policy", "key": "policy.yaml"},
    });
    if auth != Auth::Anonymous {
        source["registryAuthFrom"] = auth.spec();
    }
    let target = json!({
        "engine": "PostgreSQL",
        "coordinationKey": "orders-primary",
        "urlFrom": {"name": "orders-db", "key": "url"},
    });
    let execution = json!({"imagePullSecrets": [{"name": "pull-secret"}]});
    (target, source, execution)
}

impl Owners {
    /// Creates a PtahSchema and a PtahMigration per auth in `ns`, as the admin.
    pub async fn create(admin: &Client, ns: &str) -> Owners {
        let mut owners = BTreeMap::new();
        let params = PostParams::default();
        for auth in AUTHS {
            let (target, source, execution) = shared(auth);
            let schema: PtahSchema = serde_json::from_value(json!({
                "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema",
                "metadata": {"name": auth.name(), "namespace": ns},
                "spec": {"target": target, "desired": source, "execution": execution,
                         "dev": {"urlFrom": {"name": "orders-dev-db", "key": "url"}}},
            }))
            .expect("schema");
            let schema = Api::<PtahSchema>::namespaced(admin.clone(), ns)
                .create(&params, &schema)
                .await
                .unwrap_or_else(|e| panic!("create PtahSchema {}: {e}", auth.name()));
            owners.insert((Family::Schema, auth), (schema.name_any(), uid(&schema.metadata)));
            let migration: PtahMigration = serde_json::from_value(json!({
                "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigration",
                "metadata": {"name": auth.name(), "namespace": ns},
                "spec": {"target": target, "artifact": source, "execution": execution},
            }))
            .expect("migration");
            let migration = Api::<PtahMigration>::namespaced(admin.clone(), ns)
                .create(&params, &migration)
                .await
                .unwrap_or_else(|e| panic!("create PtahMigration {}: {e}", auth.name()));
            owners.insert(
                (Family::Migration, auth),
                (migration.name_any(), uid(&migration.metadata)),
            );
        }
        Owners(owners)
    }

    /// The built Job of `op` with `access`, owned by the `family` object whose spec names that
    /// access, in `ns`.
    pub fn job(&self, ns: &str, family: Family, op: Operation, access: SourceAccess) -> Job {
        self.job_delivering(ns, family, op, access, None)
    }

    /// [`Owners::job`], delivering its result durably when `delivery` is given.
    pub fn job_delivering(
        &self,
        ns: &str,
        family: Family,
        op: Operation,
        access: SourceAccess,
        delivery: Option<ptah_workload::ResultDelivery>,
    ) -> Job {
        let (name, uid) = self
            .0
            .get(&(family, Auth::of(&access)))
            .cloned()
            .expect("an owner per family and auth");
        let mut intent = intent_with(op, access);
        intent.namespace = ns.to_owned();
        intent.resource_name = name.clone();
        intent.owner.kind = family.kind().to_owned();
        intent.owner.name = name;
        intent.owner.uid = uid;
        intent.result_delivery = delivery;
        ptah_workload::build(&intent).expect("build")
    }
}

fn uid(meta: &kube::api::ObjectMeta) -> String {
    meta.uid.clone().expect("a created object has a UID")
}

/// Sets the Pod Security and policy-selector labels on `ns`.
pub async fn label_namespace(admin: &Client, ns: &str, labels: Value) {
    Api::<k8s_openapi::api::core::v1::Namespace>::all(admin.clone())
        .patch(
            ns,
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": labels}})),
        )
        .await
        .unwrap_or_else(|e| panic!("label the namespace {ns}: {e}"));
}
