//! The Job a migration claim builds: the same function serves the create and the read-back
//! comparison, so a Job is only ever adopted if it equals what the claim would create now.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use ptah_api::{
    PtahMigrationPlanSpec, PtahMigrationSpec,
    migration::{MigrationOperationStatus, MigrationOperationType as Op},
};
use ptah_workload::{DatabaseAccess, Deadlines, ExpectedSequence, Fetch, JobIntent, OperationInputs};

use super::{observed::Meta, plan};
use crate::operation::{
    Binding,
    claim::{TERMINATION_GRACE_SECONDS, apply_job_deadline, migration_operation},
    source::{access, pinned},
};

/// Why a claim cannot become a Job.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the {operation:?} claim lacks {missing}")]
pub struct IncompleteClaim {
    /// The operation.
    pub operation: Op,
    /// What is missing.
    pub missing: &'static str,
}

/// The owner reference every migration operation Job carries.
pub fn owner(meta: &Meta) -> OwnerReference {
    crate::operation::job::owner(meta, "PtahMigration")
}

/// Builds the intent of the claim's Job (`plan` is required for an Apply).
pub fn intent(
    meta: &Meta,
    spec: &PtahMigrationSpec,
    binding: &Binding,
    c: &MigrationOperationStatus,
    plan_spec: Option<&PtahMigrationPlanSpec>,
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
            connect_timeout: Some(spec.execution.connect_timeout.as_str().to_owned()),
            lock_timeout: (op == Op::Apply).then(|| spec.policy.lock_timeout.as_str().to_owned()),
            exclude: Vec::new(),
            protected_tables: Vec::new(),
        })
    };
    let inputs = match op {
        Op::Resolve => OperationInputs::Resolve {
            // The spec's reference: the claim's source is already the pinned form.
            requested_reference: spec.artifact.oci_ref.clone(),
            access: access(source),
            // A migration claim does not record its policy, so its Resolve cannot tell a claim
            // made under one from an earlier manager's: Verify stays a Job of its own.
            policy: None,
        },
        Op::Verify => OperationInputs::Verify {
            resolved_reference: pinned(source),
            requested_reference: source.resolved_reference.clone(),
            access: access(source),
            policy: spec.artifact.verification_policy_from.clone(),
        },
        Op::History => OperationInputs::MigrationHistory {
            db: db()?,
            fetch: fetch(),
        },
        Op::Apply => {
            let p = plan_spec.ok_or(missing("its plan"))?;
            let (json, digest) = ptah_dataplane::expected_sequence(&plan::steps(p))
                .map_err(|_| missing("a valid sequence"))?;
            OperationInputs::MigrationApply {
                db: db()?,
                fetch: fetch(),
                sequence: ExpectedSequence {
                    json,
                    digest: digest.to_string(),
                },
            }
        }
    };
    let active = match (&c.execution_not_after, op) {
        (Some(end), Op::Apply) => apply_job_deadline(c.started_at.0, end.0, TERMINATION_GRACE_SECONDS),
        _ => spec.execution.active_deadline_seconds,
    };
    Ok(JobIntent {
        namespace: meta.namespace.clone(),
        owner: owner(meta),
        resource_name: meta.name.clone(),
        operation: migration_operation(op),
        operation_id: c.id.as_str().to_owned(),
        input_fingerprint: c.input_fingerprint.as_str().to_owned(),
        job_name: c.job_name.clone(),
        identity: crate::operation::job::identity(binding, &c.execution_binding_id),
        images: crate::operation::job::images(binding),
        execution: spec.execution.clone(),
        deadlines: Deadlines {
            active_deadline_seconds: active,
            termination_grace_period_seconds: TERMINATION_GRACE_SECONDS,
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
