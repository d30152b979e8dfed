//! Shape of the generated CRDs: names, scope, short names, printer columns, subresources,
//! list types and the stamped annotations.

#![allow(clippy::unwrap_used)]

mod common;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use ptah_api::{CRD_SCHEMA_DIGEST_ANNOTATION, CRD_SCHEMA_VERSION_ANNOTATION};
use serde_json::Value;

struct Expected {
    kind: &'static str,
    plural: &'static str,
    short: &'static str,
    namespaced: bool,
    status: bool,
    columns: &'static [&'static str],
}

const EXPECTED: &[Expected] = &[
    Expected {
        kind: "PtahSchema",
        plural: "ptahschemas",
        short: "ptahs",
        namespaced: true,
        status: true,
        columns: &[
            "Phase", "Digest", "Realm", "Drift", "Approval", "In Sync", "Ready", "Age",
        ],
    },
    Expected {
        kind: "PtahSchemaPlan",
        plural: "ptahschemaplans",
        short: "ptahplan",
        namespaced: true,
        status: true,
        columns: &[
            "Schema",
            "Fingerprint",
            "Statements",
            "Destructive",
            "Severity",
            "Privileges",
            "Age",
        ],
    },
    Expected {
        kind: "PtahSchemaPlanChunk",
        plural: "ptahschemaplanchunks",
        short: "ptahchunk",
        namespaced: true,
        status: false,
        columns: &[],
    },
    Expected {
        kind: "PtahSchemaApproval",
        plural: "ptahschemaapprovals",
        short: "ptahapprove",
        namespaced: true,
        status: true,
        columns: &["Schema", "Plan", "Approver", "Accepted", "Stale", "Age"],
    },
    Expected {
        kind: "PtahMigration",
        plural: "ptahmigrations",
        short: "ptahm",
        namespaced: true,
        status: true,
        columns: &["Phase", "Current", "Pending", "Outcome", "Digest", "Realm", "Age"],
    },
    Expected {
        kind: "PtahMigrationPlan",
        plural: "ptahmigrationplans",
        short: "ptahmplan",
        namespaced: true,
        status: true,
        columns: &["Migration", "From", "Steps", "Current", "Age"],
    },
    Expected {
        kind: "PtahMigrationApproval",
        plural: "ptahmigrationapprovals",
        short: "ptahmapprove",
        namespaced: true,
        status: true,
        columns: &["Migration", "Plan", "Approver", "Accepted", "Stale", "Age"],
    },
    Expected {
        kind: "PtahMigrationRunAcknowledgment",
        plural: "ptahmigrationrunacknowledgments",
        short: "ptahmack",
        namespaced: true,
        status: true,
        columns: &[
            "Migration",
            "Acknowledged By",
            "Consumed",
            "Stale",
            "Operation",
            "Age",
        ],
    },
    Expected {
        kind: "PtahRealm",
        plural: "ptahrealms",
        short: "ptahr",
        namespaced: false,
        status: false,
        columns: &["Engine", "Sharing", "Namespaces", "Age"],
    },
    Expected {
        kind: "PtahResultRecord",
        plural: "ptahresultrecords",
        short: "ptahresult",
        namespaced: true,
        status: false,
        columns: &[],
    },
];

fn crds() -> Vec<CustomResourceDefinition> {
    ptah_api::crds().unwrap()
}

fn schema(crd: &CustomResourceDefinition) -> Value {
    serde_json::to_value(
        crd.spec.versions[0]
            .schema
            .as_ref()
            .unwrap()
            .open_api_v3_schema
            .as_ref()
            .unwrap(),
    )
    .unwrap()
}

#[test]
fn names_scope_short_names_columns_and_status() {
    let crds = crds();
    assert_eq!(crds.len(), EXPECTED.len());
    for (crd, want) in crds.iter().zip(EXPECTED) {
        assert_eq!(crd.spec.names.kind, want.kind);
        assert_eq!(crd.spec.group, "operator.ptah.run");
        assert_eq!(
            crd.metadata.name.as_deref(),
            Some(format!("{}.operator.ptah.run", want.plural).as_str())
        );
        assert_eq!(
            crd.spec.scope,
            if want.namespaced { "Namespaced" } else { "Cluster" },
            "{}",
            want.kind
        );
        assert_eq!(
            crd.spec.names.short_names.as_deref(),
            Some(&[want.short.to_owned()][..]),
            "{}",
            want.kind
        );
        assert_eq!(crd.spec.versions.len(), 1);
        let version = &crd.spec.versions[0];
        assert_eq!(version.name, "v1alpha1");
        assert!(version.served && version.storage);
        let has_status = version
            .subresources
            .as_ref()
            .and_then(|s| s.status.as_ref())
            .is_some();
        assert_eq!(has_status, want.status, "{} status subresource", want.kind);
        assert_eq!(
            schema(crd)["properties"].get("status").is_some(),
            want.status,
            "{} status schema",
            want.kind
        );
        let columns: Vec<&str> = version
            .additional_printer_columns
            .iter()
            .flatten()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(columns, want.columns, "{} columns", want.kind);
    }
}

#[test]
fn digest_and_realm_columns_are_wide_only() {
    for crd in crds() {
        for column in crd.spec.versions[0].additional_printer_columns.iter().flatten() {
            let wide = matches!(column.name.as_str(), "Digest" | "Operation" | "Realm");
            assert_eq!(
                column.priority.unwrap_or(0) == 1,
                wide,
                "{} {}",
                crd.spec.names.kind,
                column.name
            );
        }
    }
}

#[test]
fn annotations_carry_version_and_a_digest_of_the_spec() {
    for crd in crds() {
        let annotations = crd.metadata.annotations.clone().unwrap();
        assert_eq!(
            annotations[CRD_SCHEMA_VERSION_ANNOTATION],
            ptah_api::CRD_SCHEMA_VERSION
        );
        let digest = &annotations[CRD_SCHEMA_DIGEST_ANNOTATION];
        let recomputed = ptah_fingerprint::Fingerprint::of(&crd.spec).unwrap().to_string();
        assert_eq!(digest, &recomputed, "{}", crd.spec.names.kind);
        assert!(digest.starts_with("sha256:") && digest.len() == 71);
    }
    let digests: std::collections::BTreeSet<_> = crds()
        .iter()
        .map(|c| c.metadata.annotations.as_ref().unwrap()[CRD_SCHEMA_DIGEST_ANNOTATION].clone())
        .collect();
    assert_eq!(digests.len(), EXPECTED.len(), "every CRD has its own digest");
}

#[test]
fn generation_is_deterministic_and_description_free() {
    let first = serde_json::to_string(&crds()).unwrap();
    assert_eq!(first, serde_json::to_string(&crds()).unwrap());
    for crd in crds() {
        let text = serde_json::to_string(&schema(&crd)).unwrap();
        assert!(
            !text.contains("\"description\":\""),
            "{} keeps a description",
            crd.spec.names.kind
        );
    }
    // A property *named* description survives.
    let plan = crds()
        .into_iter()
        .find(|c| c.spec.names.kind == "PtahMigrationPlan")
        .unwrap();
    assert!(
        schema(&plan)
            .pointer("/properties/spec/properties/migrations/items/properties/description")
            .is_some()
    );
}

#[test]
fn list_types_match_the_reference() {
    let crds = crds();
    let find = |kind: &str| schema(crds.iter().find(|c| c.spec.names.kind == kind).unwrap());
    let schema_crd = find("PtahSchema");
    let policy = &schema_crd["properties"]["spec"]["properties"]["policy"]["properties"];
    assert_eq!(policy["exclude"]["x-kubernetes-list-type"], "set");
    assert_eq!(policy["exclude"]["maxItems"], 128);
    assert_eq!(policy["protectedTables"]["x-kubernetes-list-type"], "set");
    let target = &schema_crd["properties"]["status"]["properties"]["target"]["properties"];
    assert_eq!(target["driftFindings"]["x-kubernetes-list-type"], "map");
    assert_eq!(
        target["driftFindings"]["x-kubernetes-list-map-keys"],
        serde_json::json!(["category"])
    );
    assert_eq!(target["driftFindings"]["maxItems"], 64);
    let conditions = &schema_crd["properties"]["status"]["properties"]["conditions"];
    assert_eq!(
        conditions["x-kubernetes-list-map-keys"],
        serde_json::json!(["type"])
    );
    let plan = find("PtahSchemaPlan");
    let chunks = &plan["properties"]["spec"]["properties"]["chunks"];
    assert_eq!(chunks["x-kubernetes-list-map-keys"], serde_json::json!(["index"]));
    assert_eq!(
        (chunks["minItems"].as_i64(), chunks["maxItems"].as_i64()),
        (Some(1), Some(16))
    );
    let mplan = find("PtahMigrationPlan");
    let migrations = &mplan["properties"]["spec"]["properties"]["migrations"];
    assert_eq!(
        migrations["x-kubernetes-list-map-keys"],
        serde_json::json!(["version"])
    );
    assert_eq!(migrations["maxItems"], 256);
    let realm = find("PtahRealm");
    assert_eq!(
        realm["properties"]["spec"]["properties"]["namespaces"]["x-kubernetes-list-type"],
        "set"
    );
}

#[test]
fn defaults_match_the_reference() {
    let crds = crds();
    let schema_crd = schema(crds.iter().find(|c| c.spec.names.kind == "PtahSchema").unwrap());
    let spec = &schema_crd["properties"]["spec"]["properties"];
    assert_eq!(spec["interval"]["default"], "10m");
    assert_eq!(spec["policy"]["properties"]["apply"]["default"], "OnApproval");
    assert_eq!(spec["policy"]["properties"]["lockTimeout"]["default"], "30s");
    assert_eq!(spec["policy"]["properties"]["transactionMode"]["default"], "file");
    assert_eq!(
        spec["execution"]["properties"]["activeDeadlineSeconds"]["default"],
        900
    );
    assert_eq!(
        spec["execution"]["properties"]["connectTimeout"]["default"],
        "10s"
    );
    assert_eq!(
        spec["execution"]["properties"]["failureRetryInterval"]["default"],
        "30s"
    );
    let auth = &spec["desired"]["properties"]["registryAuthFrom"]["properties"];
    assert_eq!(auth["mode"]["default"], "Environment");
    assert_eq!(auth["usernameKey"]["default"], "username");
    let migration = schema(
        crds.iter()
            .find(|c| c.spec.names.kind == "PtahMigration")
            .unwrap(),
    );
    let mpolicy = &migration["properties"]["spec"]["properties"]["policy"]["properties"];
    assert_eq!(mpolicy["lockTimeout"]["default"], "5m");
    assert!(
        mpolicy["transactionMode"].get("default").is_none(),
        "migration transactionMode has no default"
    );
}

/// The digest of every CRD's spec together, per schema version ever released. A CRD change under
/// an unchanged version fails here, before any cluster sees two schemas under one version (the
/// `ptah-crd-manager` hook would refuse the upgrade).
const RELEASED: &[(&str, &str)] = &[
    (
        "1",
        "sha256:a0fd6bbeaef80ef033322f0a6ab028d8327edaa396e6171edc79fa8ad847ea74",
    ),
    (
        "2",
        "sha256:b29853f78959eb1ac02149dc95f5e3ae0d21713aa775d6aedf576a9811503c48",
    ),
    (
        "3",
        "sha256:a7ed1a1aa59390e6659080b7053f6e4f92b6ac4c51316c8441fab18450feb287",
    ),
    (
        "4",
        "sha256:4436f2667641b0c5a255d74d0b23c6b203969a22814e3671e8813d6cdf28647d",
    ),
    (
        "5",
        "sha256:28569a721bce342f623fd4cbd6d8682051b8b79b3e7420c65cf0d1c90c7edf40",
    ),
    (
        "6",
        "sha256:638f21de28ada5116dc52b0f8b0eaf4a115aa5a94ccf453fef1348d4a7f2f9da",
    ),
    (
        "7",
        "sha256:8d4fd2f3727bc0be152d7a9de902dc6c05c6755fdc87c512636eb9d84b728eae",
    ),
    (
        "8",
        "sha256:e333c79bbc8d59068017880e2f20f072993c4b447584c92eed3256cc9bca1626",
    ),
];

#[test]
fn a_crd_change_raises_the_schema_version() {
    let digests: Vec<String> = crds()
        .iter()
        .map(|crd| crd.metadata.annotations.clone().unwrap()[CRD_SCHEMA_DIGEST_ANNOTATION].clone())
        .collect();
    let all = ptah_fingerprint::Fingerprint::of(&digests).unwrap().to_string();
    let version = ptah_api::CRD_SCHEMA_VERSION;
    let pinned = RELEASED.iter().find(|(v, _)| *v == version).map(|(_, d)| *d);
    assert_eq!(
        pinned,
        Some(all.as_str()),
        "the CRDs at crd-schema-version {version} digest to {all}: if they changed, raise \
         CRD_SCHEMA_VERSION in crates/api/src/crd.rs and add the new version with this digest to RELEASED"
    );
    let mut versions: Vec<u64> = RELEASED.iter().map(|(v, _)| v.parse().unwrap()).collect();
    versions.dedup();
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "versions only rise");
}
