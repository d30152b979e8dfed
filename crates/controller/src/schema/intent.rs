//! The Job a claim builds: the same function serves the create and the read-back comparison, so
//! a Job is only ever adopted if it equals what the claim would create now.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use ptah_api::{
    PtahSchemaSpec,
    schema::{SchemaOperationStatus, SchemaOperationType as Op},
};
use ptah_workload::{DatabaseAccess, Deadlines, Fetch, JobIntent, OperationInputs, PlanProjection};

use crate::operation::source::{access, pinned};

use super::{
    claim,
    observed::{Binding, Meta},
};

/// Why a claim cannot become a Job (a claim missing what its operation needs).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the {operation:?} claim lacks {missing}")]
pub struct IncompleteClaim {
    /// The operation.
    pub operation: Op,
    /// What is missing.
    pub missing: &'static str,
}

/// The owner reference every operation Job carries.
pub fn owner(meta: &Meta) -> OwnerReference {
    crate::operation::job::owner(meta, "PtahSchema")
}

/// The plan an Apply Job mounts: its projection ConfigMaps, in order, and its content digest.
#[derive(Clone, Copy, Debug)]
pub struct ApplyPlan<'a> {
    /// The projection ConfigMaps.
    pub chunks: &'a [String],
    /// The digest the runner checks the reassembled bytes against.
    pub content_digest: &'a ptah_api::shared::Sha256Digest,
}

/// Builds the intent of the claim's Job (`plan` is required for an Apply).
pub fn intent(
    meta: &Meta,
    spec: &PtahSchemaSpec,
    binding: &Binding,
    c: &SchemaOperationStatus,
    plan: Option<ApplyPlan<'_>>,
) -> Result<JobIntent, IncompleteClaim> {
    let op = c.operation_type;
    let missing = |what| IncompleteClaim {
        operation: op,
        missing: what,
    };
    let source = c.source.as_ref().ok_or(missing("a source"))?;
    let fetch = || Fetch {
        resolved_reference: pinned(source),
        access: access(source),
    };
    let db = || -> Result<DatabaseAccess, IncompleteClaim> {
        let target = c.target.as_ref().ok_or(missing("a target"))?;
        let family = target.engine.family().ok_or(missing("a supported engine"))?;
        Ok(DatabaseAccess {
            url_from: target.url_from.clone(),
            ca_from: target.ca_from.clone(),
            engine: family.as_str().to_owned(),
            coordination_digest: c
                .coordination_digest
                .as_ref()
                .ok_or(missing("a realm"))?
                .as_str()
                .to_owned(),
            expected_target_identity: c.target_identity_digest.as_ref().map(|d| d.as_str().to_owned()),
            connect_timeout: c
                .observation_connect_timeout
                .as_ref()
                .map(|d| d.as_str().to_owned()),
            lock_timeout: c.observation_lock_timeout.as_ref().map(|d| d.as_str().to_owned()),
            exclude: c.observation_exclude.clone(),
            protected_tables: c.observation_protected_tables.clone(),
        })
    };
    let inputs = match op {
        Op::Resolve => OperationInputs::Resolve {
            // The spec's reference: the claim's source is already the pinned form.
            requested_reference: spec.desired.oci_ref.clone(),
            access: access(source),
            // A Resolve claimed under a policy verifies what it resolves; one claimed without
            // (by an earlier manager) keeps the Job it was created with.
            policy: c
                .verification_policy_uid
                .is_some()
                .then(|| spec.desired.verification_policy_from.clone()),
        },
        Op::Verify => OperationInputs::Verify {
            resolved_reference: pinned(source),
            requested_reference: source.resolved_reference.clone(),
            access: access(source),
            policy: spec.desired.verification_policy_from.clone(),
        },
        Op::Observe => OperationInputs::Observe {
            db: db()?,
            fetch: fetch(),
        },
        Op::Plan => OperationInputs::Plan {
            db: db()?,
            dev_url_from: c.observation_dev.as_ref().map(|d| d.url_from.clone()),
            fetch: fetch(),
        },
        Op::Apply => {
            let plan = plan.ok_or(missing("its plan"))?;
            OperationInputs::Apply {
                db: db()?,
                fetch: fetch(),
                plan: PlanProjection {
                    chunk_config_maps: plan.chunks.to_vec(),
                    content_digest: plan.content_digest.as_str().to_owned(),
                    allow_destructive: spec.policy.allow_destructive,
                    allow_table_copy: spec.policy.allow_table_copy,
                },
            }
        }
    };
    let grace = c
        .termination_grace_period_seconds
        .unwrap_or(claim::TERMINATION_GRACE_SECONDS);
    let active = match (&c.execution_not_after, op) {
        (Some(end), Op::Apply) => claim::apply_job_deadline(c.started_at.0, end.0, grace),
        _ => spec.execution.active_deadline_seconds,
    };
    Ok(JobIntent {
        namespace: meta.namespace.clone(),
        owner: owner(meta),
        resource_name: meta.name.clone(),
        operation: claim::operation(op),
        operation_id: c.id.as_str().to_owned(),
        input_fingerprint: c.input_fingerprint.as_str().to_owned(),
        job_name: c.job_name.clone(),
        identity: crate::operation::job::identity(binding, &c.execution_binding_id),
        images: crate::operation::job::images(binding),
        execution: spec.execution.clone(),
        deadlines: Deadlines {
            active_deadline_seconds: active,
            termination_grace_period_seconds: grace,
            dispatch_not_after: c.dispatch_not_after.as_ref().map(|t| t.0),
            execution_not_after: c.execution_not_after.as_ref().map(|t| t.0),
        },
        inputs,
        result_delivery: crate::operation::job::result_delivery(
            binding.result_endpoint.as_ref(),
            c.result_enrolment_digest.as_ref(),
            &c.job_name,
        ),
    })
}
