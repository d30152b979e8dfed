//! The CustomResourceDefinitions of every kind, post-processed and stamped for the chart.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use serde_json::Value;

use crate::{
    PtahMigration, PtahMigrationApproval, PtahMigrationPlan, PtahMigrationRunAcknowledgment, PtahRealm,
    PtahResultRecord, PtahSchema, PtahSchemaApproval, PtahSchemaPlan, PtahSchemaPlanChunk,
};

/// Annotation carrying the CRD schema version (a positive decimal rollback fence).
pub const CRD_SCHEMA_VERSION_ANNOTATION: &str = "operator.ptah.run/crd-schema-version";
/// Annotation carrying `sha256:<hex>` of the canonical JSON of the CRD's `spec`.
pub const CRD_SCHEMA_DIGEST_ANNOTATION: &str = "operator.ptah.run/crd-schema-digest";
/// The CRD schema version this build writes. Raise it with every change to any CRD: the
/// `ptah-crd-manager` hook refuses two digests under one version, and refuses to lower it.
///
/// History: 1, the first release; 2, the `Realm` column (`-o wide`) of PtahSchema and PtahMigration;
/// 3, `status.refusal` of PtahSchema and PtahMigration (an operation refused before it started);
/// 4, `PtahResultRecord` and the claims' `generation` and `resultEnrolmentDigest` (durable result
/// delivery); 5, each planned migration's `lint` (issue 37); 6, `policy.apply: BySeverity` and the
/// plan's recorded severity; 7, the plan's `rehearsal`; 8, the drift categories `tables_renamed`
/// and `columns_renamed` (declared renames).
pub const CRD_SCHEMA_VERSION: &str = "8";

/// Why the CRDs could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum CrdError {
    /// A generated CRD did not round-trip through JSON while post-processing its schema.
    #[error("cannot post-process the schema of {crd}: {source}")]
    Schema {
        /// The CRD's name.
        crd: String,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// The CRD spec could not be digested.
    #[error("cannot digest the spec of {crd}: {source}")]
    Digest {
        /// The CRD's name.
        crd: String,
        /// The fingerprint error.
        source: ptah_fingerprint::Error,
    },
}

/// Every CRD of the API group, in a fixed order, with descriptions removed and each stamped with
/// the schema-version and schema-digest annotations.
pub fn crds() -> Result<Vec<CustomResourceDefinition>, CrdError> {
    [
        PtahSchema::crd(),
        PtahSchemaPlan::crd(),
        PtahSchemaPlanChunk::crd(),
        PtahSchemaApproval::crd(),
        PtahMigration::crd(),
        PtahMigrationPlan::crd(),
        PtahMigrationApproval::crd(),
        PtahMigrationRunAcknowledgment::crd(),
        PtahRealm::crd(),
        PtahResultRecord::crd(),
    ]
    .into_iter()
    .map(finish)
    .collect()
}

fn finish(crd: CustomResourceDefinition) -> Result<CustomResourceDefinition, CrdError> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    let mut crd = strip_descriptions(crd).map_err(|source| CrdError::Schema {
        crd: name.clone(),
        source,
    })?;
    let digest = ptah_fingerprint::Fingerprint::of(&crd.spec)
        .map_err(|source| CrdError::Digest { crd: name, source })?;
    let annotations = crd.metadata.annotations.get_or_insert_with(Default::default);
    annotations.insert(
        CRD_SCHEMA_VERSION_ANNOTATION.to_owned(),
        CRD_SCHEMA_VERSION.to_owned(),
    );
    annotations.insert(CRD_SCHEMA_DIGEST_ANNOTATION.to_owned(), digest.to_string());
    Ok(crd)
}

/// Removes every schema `description`, as the reference CRDs ship them (`maxDescLen=0`): the Rust
/// doc comments are for developers, and k8s-openapi's embedded descriptions would dominate the
/// CRD size. Property *names* called `description` are kept.
fn strip_descriptions(crd: CustomResourceDefinition) -> serde_json::Result<CustomResourceDefinition> {
    let mut value = serde_json::to_value(crd)?;
    if let Some(versions) = value.pointer_mut("/spec/versions").and_then(Value::as_array_mut) {
        for version in versions {
            if let Some(schema) = version.pointer_mut("/schema/openAPIV3Schema") {
                strip_schema_descriptions(schema);
            }
        }
    }
    serde_json::from_value(value)
}

fn strip_schema_descriptions(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    object.remove("description");
    for (key, child) in object.iter_mut() {
        match key.as_str() {
            "properties" | "patternProperties" | "definitions" => {
                if let Some(map) = child.as_object_mut() {
                    map.values_mut().for_each(strip_schema_descriptions);
                }
            }
            "items" | "additionalProperties" | "not" => strip_schema_descriptions(child),
            "allOf" | "anyOf" | "oneOf" => {
                if let Some(list) = child.as_array_mut() {
                    list.iter_mut().for_each(strip_schema_descriptions);
                }
            }
            _ => {}
        }
    }
}
