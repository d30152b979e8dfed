//! The label and annotation keys of operation Jobs, and the envelope built from an intent.

use std::collections::BTreeMap;

use ptah_dataplane::Operation;

use crate::{JobIntent, OperationInputs, WorkloadError, names::short_hash};

/// `app.kubernetes.io/managed-by`: value [`MANAGED_BY_VALUE`] on every operation Job and Pod.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// The value of [`MANAGED_BY_LABEL`].
pub const MANAGED_BY_VALUE: &str = "ptah-operator";
/// `app.kubernetes.io/component`: [`SCHEMA_COMPONENT`] or [`MIGRATION_COMPONENT`].
pub const COMPONENT_LABEL: &str = "app.kubernetes.io/component";
/// The component of a PtahSchema operation.
pub const SCHEMA_COMPONENT: &str = "schema-operation";
/// The component of a PtahMigration operation.
pub const MIGRATION_COMPONENT: &str = "migration-operation";
/// The owning PtahSchema's name.
pub const SCHEMA_LABEL: &str = "operator.ptah.run/schema";
/// The owning PtahMigration's name.
pub const MIGRATION_LABEL: &str = "operator.ptah.run/migration";
/// The operation (`resolve`, `verify`, `observe`, `plan`, `apply`, …).
pub const OPERATION_LABEL: &str = "operator.ptah.run/operation";
/// The first 16 hex digits of the operation id.
pub const OPERATION_ID_LABEL: &str = "operator.ptah.run/operation-id";

/// The manager's image.
pub const CONTROLLER_IMAGE_ANNOTATION: &str = "operator.ptah.run/controller-image";
/// The manager's revision.
pub const CONTROLLER_REVISION_ANNOTATION: &str = "operator.ptah.run/controller-revision";
/// The manager-state contract version.
pub const CONTROLLER_STATE_VERSION_ANNOTATION: &str = "operator.ptah.run/controller-state-version";
/// The execution binding id.
pub const EXECUTION_BINDING_ID_ANNOTATION: &str = "operator.ptah.run/execution-binding-id";
/// The claim's input fingerprint.
pub const INPUT_FINGERPRINT_ANNOTATION: &str = "operator.ptah.run/input-fingerprint";
/// The full operation id.
pub const OPERATION_ID_ANNOTATION: &str = "operator.ptah.run/operation-id";
/// The executor's version.
pub const PTAH_VERSION_ANNOTATION: &str = "operator.ptah.run/ptah-version";
/// The approved plan's content digest (Apply only).
pub const PLAN_CONTENT_DIGEST_ANNOTATION: &str = "operator.ptah.run/plan-content-digest";
/// On a Job whose runner delivers its result durably: `durable`. The manager then reads its
/// result from `PtahResultRecord`s only, never from the Pod log.
pub const RESULT_DELIVERY_ANNOTATION: &str = "operator.ptah.run/result-delivery";
/// The value of [`RESULT_DELIVERY_ANNOTATION`].
pub const RESULT_DELIVERY_DURABLE: &str = "durable";
/// Tells the cluster autoscaler not to evict a mutating Pod mid-change.
pub const SAFE_TO_EVICT_ANNOTATION: &str = "cluster-autoscaler.kubernetes.io/safe-to-evict";

/// How long a finished Job is kept once its result is read; the manager patches
/// `ttlSecondsAfterFinished` to this after reading, never at creation (an early TTL could delete
/// the Pod before its result is read).
pub const RESULT_TTL_SECONDS: i32 = 300;

/// Domains whose keys (and their subdomains' keys) a user may not set on operation Pods.
const RESERVED_DOMAINS: [&str; 3] = ["ptah.run", "kubernetes.io", "k8s.io"];
/// Bare keys the Job controller sets on Pods.
const RESERVED_BARE_KEYS: [&str; 2] = ["controller-uid", "job-name"];

/// True when `key` is reserved: the same rule as the CRD's CEL validation, so an object that
/// slipped past it (an older CRD) is still refused here.
pub fn is_reserved_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    match key.split_once('/') {
        Some((prefix, _)) => RESERVED_DOMAINS
            .iter()
            .any(|d| prefix == *d || prefix.ends_with(&format!(".{d}"))),
        None => RESERVED_BARE_KEYS.contains(&key.as_str()),
    }
}

/// The labels of the Job (and, with the user's, of its Pod template).
pub(crate) fn operator_labels(intent: &JobIntent) -> BTreeMap<String, String> {
    let migration = matches!(
        intent.operation,
        Operation::MigrationHistory | Operation::MigrationApply
    );
    let (component, owner_label) = if migration {
        (MIGRATION_COMPONENT, MIGRATION_LABEL)
    } else {
        (SCHEMA_COMPONENT, SCHEMA_LABEL)
    };
    [
        (MANAGED_BY_LABEL, MANAGED_BY_VALUE.to_owned()),
        (COMPONENT_LABEL, component.to_owned()),
        (owner_label, intent.resource_name.clone()),
        (OPERATION_LABEL, intent.operation.as_str().to_owned()),
        (OPERATION_ID_LABEL, short_hash(&intent.operation_id)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// The annotation envelope of the Job (and of its Pod template).
pub(crate) fn operator_annotations(intent: &JobIntent) -> BTreeMap<String, String> {
    let id = &intent.identity;
    let mut out: BTreeMap<String, String> = [
        (CONTROLLER_IMAGE_ANNOTATION, id.controller_image.clone()),
        (CONTROLLER_REVISION_ANNOTATION, id.controller_revision.clone()),
        (
            CONTROLLER_STATE_VERSION_ANNOTATION,
            id.controller_state_version.to_string(),
        ),
        (EXECUTION_BINDING_ID_ANNOTATION, id.execution_binding_id.clone()),
        (INPUT_FINGERPRINT_ANNOTATION, intent.input_fingerprint.clone()),
        (OPERATION_ID_ANNOTATION, intent.operation_id.clone()),
        (PTAH_VERSION_ANNOTATION, id.ptah_version.clone()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    if let OperationInputs::Apply { plan, .. } = &intent.inputs {
        out.insert(
            PLAN_CONTENT_DIGEST_ANNOTATION.to_owned(),
            plan.content_digest.clone(),
        );
    }
    if intent.result_delivery.is_some() {
        out.insert(
            RESULT_DELIVERY_ANNOTATION.to_owned(),
            RESULT_DELIVERY_DURABLE.to_owned(),
        );
    }
    out
}

/// A label or annotation map.
pub(crate) type Map = BTreeMap<String, String>;

/// The Pod template's labels and annotations: the operator's plus the user's, reserved keys refused.
pub(crate) fn pod_metadata(intent: &JobIntent) -> Result<(Map, Map), WorkloadError> {
    let mut labels = operator_labels(intent);
    let mut annotations = operator_annotations(intent);
    if intent.operation.is_mutating() {
        annotations.insert(SAFE_TO_EVICT_ANNOTATION.to_owned(), "false".to_owned());
    }
    let user = intent.execution.pod_metadata.clone().unwrap_or_default();
    for (kind, from, into) in [
        ("label", user.labels, &mut labels),
        ("annotation", user.annotations, &mut annotations),
    ] {
        for (key, value) in from {
            // Reserved keys include every key the operator sets, so a user key never overwrites one.
            if is_reserved_key(&key) || into.contains_key(&key) {
                return Err(WorkloadError::ReservedPodMetadata { kind, key });
            }
            into.insert(key, value);
        }
    }
    Ok((labels, annotations))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_keys_follow_the_crd_rule() {
        for key in [
            "operator.ptah.run/x",
            "ptah.run/x",
            "app.kubernetes.io/name",
            "kubernetes.io/x",
            "cluster-autoscaler.kubernetes.io/safe-to-evict",
            "batch.kubernetes.io/job-name",
            "node.k8s.io/x",
            "controller-uid",
            "job-name",
            "Job-Name",
        ] {
            assert!(is_reserved_key(key), "{key}");
        }
        for key in [
            "example.com/x",
            "team",
            "sidecar.istio.io/inject",
            "xptah.run/y",
            "notkubernetes.io/z",
            "job-name-x",
        ] {
            assert!(!is_reserved_key(key), "{key}");
        }
    }

    #[test]
    fn every_operator_key_is_reserved() {
        for key in [
            MANAGED_BY_LABEL,
            COMPONENT_LABEL,
            SCHEMA_LABEL,
            MIGRATION_LABEL,
            OPERATION_LABEL,
            OPERATION_ID_LABEL,
            CONTROLLER_IMAGE_ANNOTATION,
            CONTROLLER_REVISION_ANNOTATION,
            CONTROLLER_STATE_VERSION_ANNOTATION,
            EXECUTION_BINDING_ID_ANNOTATION,
            INPUT_FINGERPRINT_ANNOTATION,
            OPERATION_ID_ANNOTATION,
            PTAH_VERSION_ANNOTATION,
            PLAN_CONTENT_DIGEST_ANNOTATION,
            SAFE_TO_EVICT_ANNOTATION,
        ] {
            assert!(is_reserved_key(key), "{key}");
        }
    }
}
