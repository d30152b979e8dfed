//! Intents shared by the workload tests: one per operation, with every optional input set so
//! the golden files show every branch, plus the registry-access variants the routing tests walk.

#![allow(dead_code)] // each test binary uses a different part

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::{LocalObjectReference, ResourceRequirements, Toleration},
    apimachinery::pkg::{api::resource::Quantity, apis::meta::v1::OwnerReference},
};
use ptah_api::shared::{
    ConfigMapKeySelector, ExecutionSpec, PodMetadata, RegistryAuthMode, RegistryAuthSpec, SecretKeySelector,
};
use ptah_dataplane::Operation;
use ptah_dataplane::SequenceStep;
use ptah_workload::{
    DatabaseAccess, Deadlines, ExpectedSequence, Fetch, Images, JobIntent, ManagerIdentity, OperationInputs,
    PlanProjection, SourceAccess, job_name,
};

pub const OPERATION_ID: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
pub const INPUT_FINGERPRINT: &str = "sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
pub const COORDINATION: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
pub const TARGET_IDENTITY: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";
pub const PLAN_DIGEST: &str = "sha256:3333333333333333333333333333333333333333333333333333333333333333";
pub const PINNED: &str = "oci://registry.example:5000/schemas/orders@sha256:4444444444444444444444444444444444444444444444444444444444444444";
pub const MIGRATIONS_PINNED: &str = "oci://registry.example:5000/migrations/orders@sha256:7777777777777777777777777777777777777777777777777777777777777777";
pub const EXECUTOR_IMAGE: &str = "registry.example:5000/ptah/data-plane@sha256:5555555555555555555555555555555555555555555555555555555555555555";
pub const RUNNER_IMAGE: &str = "registry.example:5000/ptah/data-plane@sha256:6666666666666666666666666666666666666666666666666666666666666666";
pub const RESOURCE: &str = "orders";
pub const UID: &str = "6f1c2d4e-0000-4000-8000-000000000001";

/// The five operations of a PtahSchema.
pub const SCHEMA_OPS: [Operation; 5] = [
    Operation::Resolve,
    Operation::Verify,
    Operation::Observe,
    Operation::Plan,
    Operation::Apply,
];

/// The two Job operations of a PtahMigration besides Resolve and Verify.
pub const MIGRATION_OPS: [Operation; 2] = [Operation::MigrationHistory, Operation::MigrationApply];

/// Every operation the builder supports.
pub const ALL_OPS: [Operation; 7] = [
    Operation::Resolve,
    Operation::Verify,
    Operation::Observe,
    Operation::Plan,
    Operation::Apply,
    Operation::MigrationHistory,
    Operation::MigrationApply,
];

pub fn env_auth() -> RegistryAuthSpec {
    RegistryAuthSpec {
        name: "registry-creds".to_owned(),
        mode: RegistryAuthMode::Environment,
        username_key: "username".to_owned(),
        password_key: "password".to_owned(),
        token_key: "token".to_owned(),
        docker_config_json_key: None,
        registry_key: None,
    }
}

pub fn docker_auth() -> RegistryAuthSpec {
    RegistryAuthSpec {
        name: "registry-docker".to_owned(),
        mode: RegistryAuthMode::DockerConfigJSON,
        docker_config_json_key: Some(".dockerconfigjson".to_owned()),
        ..env_auth()
    }
}

/// Every way of reaching a registry the routing tests try.
pub fn access_variants() -> Vec<SourceAccess> {
    let ca = Some(ConfigMapKeySelector::new("registry-ca", "ca.crt"));
    vec![
        SourceAccess::default(),
        SourceAccess {
            registry_auth: Some(env_auth()),
            plain_http: false,
            ca_from: ca.clone(),
        },
        SourceAccess {
            registry_auth: Some(docker_auth()),
            plain_http: false,
            ca_from: ca,
        },
        SourceAccess {
            registry_auth: Some(env_auth()),
            plain_http: true,
            ca_from: None,
        },
        SourceAccess {
            registry_auth: Some(docker_auth()),
            plain_http: true,
            ca_from: None,
        },
    ]
}

/// The access of the golden intent of `op`: different ones per operation so every shape shows.
pub fn golden_access(op: Operation) -> SourceAccess {
    let v = access_variants();
    match op {
        Operation::Resolve | Operation::Observe => v[1].clone(),
        Operation::Verify | Operation::Plan => v[2].clone(),
        Operation::MigrationHistory => v[1].clone(),
        Operation::MigrationApply => v[4].clone(),
        _ => v[3].clone(),
    }
}

pub fn db() -> DatabaseAccess {
    DatabaseAccess {
        url_from: SecretKeySelector::new("orders-db", "url"),
        engine: "postgresql".to_owned(),
        coordination_digest: COORDINATION.to_owned(),
        expected_target_identity: Some(TARGET_IDENTITY.to_owned()),
        ca_from: None,
        connect_timeout: Some("10s".to_owned()),
        lock_timeout: Some("5s".to_owned()),
        // Set on every database intent: only the Plan Job may carry them.
        exclude: vec!["audit_*".to_owned(), "public.tmp_?".to_owned()],
        protected_tables: vec!["billing.invoices".to_owned(), "users".to_owned()],
    }
}

/// The two steps the golden migration Apply expects.
pub fn sequence_steps() -> Vec<SequenceStep> {
    vec![
        SequenceStep {
            version: 1_785_255_952,
            checksum: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".to_owned(),
            transaction: "file".to_owned(),
            description: Some("create orders".to_owned()),
        },
        SequenceStep {
            version: 1_785_255_999,
            checksum: "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752".to_owned(),
            transaction: "none".to_owned(),
            description: Some("index orders concurrently".to_owned()),
        },
    ]
}

pub fn inputs(op: Operation, access: SourceAccess) -> OperationInputs {
    let fetch = Fetch {
        resolved_reference: PINNED.to_owned(),
        access: access.clone(),
    };
    let migrations = Fetch {
        resolved_reference: MIGRATIONS_PINNED.to_owned(),
        access: access.clone(),
    };
    match op {
        Operation::Resolve => OperationInputs::Resolve {
            requested_reference: "oci://registry.example:5000/schemas/orders:v1".to_owned(),
            access,
            policy: Some(ConfigMapKeySelector::new("orders-policy", "policy.yaml")),
        },
        Operation::Verify => OperationInputs::Verify {
            resolved_reference: PINNED.to_owned(),
            requested_reference: "oci://registry.example:5000/schemas/orders:v1".to_owned(),
            access,
            policy: ConfigMapKeySelector::new("orders-policy", "policy.yaml"),
        },
        Operation::Observe => OperationInputs::Observe { db: db(), fetch },
        Operation::Plan => OperationInputs::Plan {
            db: db(),
            dev_url_from: Some(SecretKeySelector::new("orders-dev-db", "url")),
            fetch,
        },
        Operation::MigrationHistory => OperationInputs::MigrationHistory {
            db: db(),
            fetch: migrations,
        },
        Operation::MigrationApply => OperationInputs::MigrationApply {
            db: db(),
            fetch: migrations,
            sequence: ExpectedSequence::from_steps(&sequence_steps()).expect("a valid sequence"),
        },
        Operation::Apply => OperationInputs::Apply {
            db: db(),
            fetch,
            plan: PlanProjection {
                chunk_config_maps: vec![
                    "orders-plan-abc-000".to_owned(),
                    "orders-plan-abc-001".to_owned(),
                    "orders-plan-abc-002".to_owned(),
                ],
                content_digest: PLAN_DIGEST.to_owned(),
                allow_destructive: false,
                allow_table_copy: false,
            },
        },
    }
}

pub fn execution() -> ExecutionSpec {
    let q = |s: &str| Quantity(s.to_owned());
    ExecutionSpec {
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_owned(), q("250m")),
                ("memory".to_owned(), q("256Mi")),
            ])),
            limits: Some(BTreeMap::from([("memory".to_owned(), q("512Mi"))])),
            claims: None,
        }),
        service_account_name: Some("ptah-operations".to_owned()),
        image_pull_secrets: Some(vec![LocalObjectReference {
            name: "pull-secret".to_owned(),
        }]),
        node_selector: Some(BTreeMap::from([(
            "kubernetes.io/os".to_owned(),
            "linux".to_owned(),
        )])),
        tolerations: Some(vec![Toleration {
            key: Some("dedicated".to_owned()),
            operator: Some("Equal".to_owned()),
            value: Some("databases".to_owned()),
            effect: Some("NoSchedule".to_owned()),
            toleration_seconds: None,
        }]),
        priority_class_name: Some("ptah-operations".to_owned()),
        pod_metadata: Some(PodMetadata {
            labels: BTreeMap::from([("team".to_owned(), "payments".to_owned())]),
            annotations: BTreeMap::from([("sidecar.istio.io/inject".to_owned(), "false".to_owned())]),
        }),
        ..ExecutionSpec::default()
    }
}

pub fn ts(text: &str) -> jiff::Timestamp {
    text.parse().expect("timestamp")
}

pub fn intent_with(op: Operation, access: SourceAccess) -> JobIntent {
    let mutating = op.is_mutating();
    JobIntent {
        namespace: "shop".to_owned(),
        owner: OwnerReference {
            api_version: "operator.ptah.run/v1alpha1".to_owned(),
            kind: if MIGRATION_OPS.contains(&op) {
                "PtahMigration"
            } else {
                "PtahSchema"
            }
            .to_owned(),
            name: RESOURCE.to_owned(),
            uid: UID.to_owned(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        },
        resource_name: RESOURCE.to_owned(),
        operation: op,
        operation_id: OPERATION_ID.to_owned(),
        input_fingerprint: INPUT_FINGERPRINT.to_owned(),
        job_name: job_name(RESOURCE, UID, op, OPERATION_ID, INPUT_FINGERPRINT, 0, "epoch-1"),
        identity: ManagerIdentity {
            controller_image: "registry.example:5000/ptah/manager:v0.1.0".to_owned(),
            controller_revision: "abc1234".to_owned(),
            controller_state_version: 1,
            ptah_version: "0.1.0".to_owned(),
            execution_binding_id: "binding-1".to_owned(),
        },
        images: Images {
            executor: EXECUTOR_IMAGE.to_owned(),
            runner: RUNNER_IMAGE.to_owned(),
        },
        execution: execution(),
        deadlines: Deadlines {
            active_deadline_seconds: if mutating { 600 } else { 900 },
            termination_grace_period_seconds: if mutating { 60 } else { 30 },
            dispatch_not_after: mutating.then(|| ts("2030-01-01T00:01:00Z")),
            execution_not_after: mutating.then(|| ts("2030-01-01T00:10:00Z")),
        },
        inputs: inputs(op, access),
        result_delivery: None,
    }
}

/// The golden intent of `op`.
pub fn intent(op: Operation) -> JobIntent {
    intent_with(op, golden_access(op))
}
