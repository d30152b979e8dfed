//! What an intent must hold before it becomes a Job: the refusals the runner would make, made
//! before the Job exists.

use ptah_dataplane::{Operation, env, scope};

use crate::{
    JobIntent, OperationInputs, WorkloadError,
    intent::{DatabaseAccess, ExpectedSequence},
    names,
};

/// The longest termination grace period the runner accepts (`ptah_runner::inputs`).
pub const MAX_TERMINATION_GRACE_SECONDS: i64 = 3600;

fn require_sha256(field: &'static str, text: &str) -> Result<(), WorkloadError> {
    text.parse::<ptah_fingerprint::Sha256>()
        .map(drop)
        .map_err(|_| WorkloadError::InvalidDigest { field })
}

fn require_text(field: &'static str, text: &str) -> Result<(), WorkloadError> {
    if text.trim().is_empty() {
        return Err(WorkloadError::Empty { field });
    }
    Ok(())
}

/// `oci://…@sha256:<64 lowercase hex>`: what a fetch or a Verify may pull.
fn require_pinned(field: &'static str, reference: &str) -> Result<(), WorkloadError> {
    let pinned = reference.starts_with("oci://")
        && reference
            .rsplit_once('@')
            .is_some_and(|(_, digest)| digest.parse::<ptah_fingerprint::Sha256>().is_ok());
    if !pinned {
        return Err(WorkloadError::UnpinnedReference { field });
    }
    Ok(())
}

pub(crate) fn check(intent: &JobIntent) -> Result<(), WorkloadError> {
    let inputs = intent.inputs.operation();
    if inputs != intent.operation {
        return Err(WorkloadError::InputsMismatch {
            operation: intent.operation,
            inputs,
        });
    }
    require_text("namespace", &intent.namespace)?;
    require_text("resource_name", &intent.resource_name)?;
    require_text("images.executor", &intent.images.executor)?;
    require_text("images.runner", &intent.images.runner)?;
    require_sha256("operation_id", &intent.operation_id)?;
    require_sha256("input_fingerprint", &intent.input_fingerprint)?;
    if !names::is_dns_label(&intent.job_name) {
        return Err(WorkloadError::InvalidJobName(intent.job_name.clone()));
    }
    let d = &intent.deadlines;
    if d.active_deadline_seconds <= 0 {
        return Err(WorkloadError::InvalidDeadline(
            "activeDeadlineSeconds must be positive",
        ));
    }
    if !(1..=MAX_TERMINATION_GRACE_SECONDS).contains(&d.termination_grace_period_seconds) {
        return Err(WorkloadError::InvalidDeadline(
            "terminationGracePeriodSeconds must be in 1..=3600",
        ));
    }
    if intent.operation.is_mutating() {
        let dispatch = d
            .dispatch_not_after
            .ok_or(WorkloadError::MissingDeadline(env::DISPATCH_NOT_AFTER))?;
        let execution = d
            .execution_not_after
            .ok_or(WorkloadError::MissingDeadline(env::EXECUTION_NOT_AFTER))?;
        if dispatch > execution {
            return Err(WorkloadError::InvalidDeadline(
                "the dispatch deadline is later than the execution deadline",
            ));
        }
    }
    if let Some(delivery) = &intent.result_delivery {
        require_text("result_delivery.endpoint", &delivery.endpoint)?;
        require_text("result_delivery.server_name", &delivery.server_name)?;
        if !names::is_dns_label(&delivery.config_map) {
            return Err(WorkloadError::InvalidJobName(delivery.config_map.clone()));
        }
    }
    match &intent.inputs {
        OperationInputs::Resolve {
            requested_reference, ..
        } => require_text("requested_reference", requested_reference),
        OperationInputs::Verify {
            resolved_reference, ..
        } => require_pinned("resolved_reference", resolved_reference),
        OperationInputs::Observe { db, fetch } => {
            check_db(intent.operation, db)?;
            require_pinned("fetch.resolved_reference", &fetch.resolved_reference)
        }
        OperationInputs::Plan { db, fetch, .. } => {
            check_db(intent.operation, db)?;
            let invalid = |field| move |reason| WorkloadError::InvalidScope { field, reason };
            scope::check_exclude(&db.exclude).map_err(invalid("db.exclude"))?;
            scope::check_protected_tables(&db.protected_tables).map_err(invalid("db.protected_tables"))?;
            require_pinned("fetch.resolved_reference", &fetch.resolved_reference)
        }
        OperationInputs::Apply { db, fetch, plan } => {
            check_db(intent.operation, db)?;
            require_pinned("fetch.resolved_reference", &fetch.resolved_reference)?;
            require_sha256("plan.content_digest", &plan.content_digest)?;
            let max = env::MAX_PLAN_CHUNKS;
            if plan.chunk_config_maps.is_empty() || plan.chunk_config_maps.len() > max {
                return Err(WorkloadError::PlanChunks {
                    got: plan.chunk_config_maps.len(),
                    max,
                });
            }
            Ok(())
        }
        OperationInputs::MigrationHistory { db, fetch } => {
            check_db(intent.operation, db)?;
            require_pinned("fetch.resolved_reference", &fetch.resolved_reference)
        }
        OperationInputs::MigrationApply { db, fetch, sequence } => {
            check_db(intent.operation, db)?;
            require_pinned("fetch.resolved_reference", &fetch.resolved_reference)?;
            check_sequence(sequence)
        }
    }
}

/// The runner refuses a sequence whose digest differs; refusing it here keeps such a Job from
/// ever being created.
fn check_sequence(sequence: &ExpectedSequence) -> Result<(), WorkloadError> {
    require_sha256("sequence.digest", &sequence.digest)?;
    let digest = ptah_dataplane::sequence_digest(&sequence.json).map_err(WorkloadError::InvalidSequence)?;
    if digest.to_string() != sequence.digest {
        return Err(WorkloadError::SequenceDigestMismatch);
    }
    Ok(())
}

fn check_db(op: Operation, db: &DatabaseAccess) -> Result<(), WorkloadError> {
    require_text("db.engine", &db.engine)?;
    require_sha256("db.coordination_digest", &db.coordination_digest)?;
    match &db.expected_target_identity {
        Some(identity) => require_sha256("db.expected_target_identity", identity),
        // The contract binds mutating work to a known target; read-only work may discover it.
        None if env::lookup(env::EXPECTED_TARGET_IDENTITY_DIGEST).is_some_and(|v| v.is_required_by(op)) => {
            Err(WorkloadError::MissingTargetIdentity(op))
        }
        None => Ok(()),
    }
}
