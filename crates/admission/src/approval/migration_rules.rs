//! The pure rules of PtahMigrationApproval and PtahMigrationRunAcknowledgment admission, built on
//! the shared ones in [`super::common`].
//!
//! A migration approval is bound like a schema approval, plus the history reading the plan was
//! derived from: the approval's `historyFingerprint` (hydrated from the plan when omitted), the
//! plan's and the migration's last reading must be one and the same. An acknowledgment names the
//! operation ID of the migration's unresolved run, and nothing else.

use ptah_api::migration::{MigrationOperationType, MigrationPhase};
use ptah_api::shared::{Approver, Sha256Digest};
use ptah_api::{
    PtahMigration, PtahMigrationApprovalSpec, PtahMigrationPlan, PtahMigrationRunAcknowledgmentSpec,
    PtahMigrationStatus,
};
use serde_json::{Map, Value};

use super::common::{self, Stamped, Waiting};

fn plan_name(plan: &PtahMigrationPlan) -> &str {
    plan.metadata.name.as_deref().unwrap_or_default()
}

/// The plan the approval names is that object, belongs to that migration, has that fingerprint,
/// and was derived from the history reading the approval names (when it names one).
pub fn check_references(spec: &PtahMigrationApprovalSpec, plan: &PtahMigrationPlan) -> Result<(), String> {
    common::check_plan_ref(&spec.plan_ref, &plan.metadata)?;
    common::check_owner("migrationRef", &spec.migration_ref, &plan.spec.migration_ref)?;
    common::check_fingerprint(&spec.plan_fingerprint, plan_name(plan), &plan.spec.fingerprint)?;
    match spec.history_fingerprint.as_ref() {
        Some(named) if *named != plan.spec.history_fingerprint => Err(format!(
            "stale history fingerprint: the approval names {named}, plan {} was derived from {}",
            plan_name(plan),
            plan.spec.history_fingerprint
        )),
        _ => Ok(()),
    }
}

/// Every binding the client copied equals the plan's; omitted copies are not checked.
pub fn check_bindings(spec: &PtahMigrationApprovalSpec, plan: &PtahMigrationPlan) -> Result<(), String> {
    common::bindings_verdict(&common::copies_mismatch(&spec.bindings, &plan.spec.binding))
}

/// What the mutating webhook fills in when omitted: every binding copy and the history fingerprint.
pub fn derived(plan: &PtahMigrationPlan) -> Result<Map<String, Value>, String> {
    common::derived_fields(
        &plan.spec.binding,
        [(
            "historyFingerprint",
            Value::from(plan.spec.history_fingerprint.as_str()),
        )],
    )
}

/// The migration's last history reading is the one the plan (and the approval, when it names
/// one) was derived from.
pub fn check_history(
    spec: &PtahMigrationApprovalSpec,
    plan: &PtahMigrationPlan,
    migration: &PtahMigration,
) -> Result<(), String> {
    let name = &spec.migration_ref.name;
    let planned = &plan.spec.history_fingerprint;
    let read = migration
        .status
        .as_ref()
        .and_then(|s| s.history.as_ref())
        .map(|h| &h.fingerprint);
    let Some(read) = read else {
        return Err(format!(
            "stale history fingerprint: migration {name} has no history reading"
        ));
    };
    if read != planned {
        return Err(format!(
            "stale history fingerprint: migration {name} last read history {read}, plan {} was derived from {planned}",
            plan_name(plan)
        ));
    }
    match spec.history_fingerprint.as_ref() {
        Some(named) if named != read => Err(format!(
            "stale history fingerprint: the approval names {named}, migration {name} last read {read}"
        )),
        _ => Ok(()),
    }
}

/// The stamped fields are present and the identity is exactly the requester's.
pub fn check_identity(spec: &PtahMigrationApprovalSpec, requester: &Approver) -> Result<(), String> {
    let stamped = Stamped {
        identity: spec.approver.as_ref(),
        at: spec.approved_at.as_ref(),
        request_uid: spec.mutation_request_uid.as_deref(),
    };
    common::check_stamped(&stamped, &common::APPROVAL_STAMP, requester)
}

/// A refresh is in flight: a Resolve, Verify or history read of the cycle, never the Apply or the
/// history read that verifies one (`VerifyingHistory`).
fn refreshing(status: &PtahMigrationStatus) -> bool {
    use MigrationPhase as P;
    status
        .active_operation
        .as_ref()
        .is_some_and(|op| op.operation_type != MigrationOperationType::Apply)
        && matches!(status.phase, Some(P::Resolving | P::Verifying | P::Reading))
}

/// The migration is the referenced one and waits for a decision on exactly this plan, read from
/// exactly this history, with the artifact and database the plan was computed for.
pub fn check_migration(
    spec: &PtahMigrationApprovalSpec,
    migration: &PtahMigration,
    plan: &PtahMigrationPlan,
) -> Result<(), String> {
    let name = &spec.migration_ref.name;
    common::check_live("migration", "approval", &spec.migration_ref, &migration.metadata)?;
    let status = migration
        .status
        .as_ref()
        .ok_or_else(|| format!("migration {name} has no status yet"))?;
    let current = status
        .plan
        .as_ref()
        .ok_or_else(|| format!("plan is stale: migration {name} has no current plan"))?;
    if *current != spec.plan_ref {
        return Err(format!(
            "plan is stale: migration {name}'s current plan is {} ({}), not {}",
            current.name, current.uid, spec.plan_ref.name
        ));
    }
    let phase = status.phase.map(|p| format!("{p:?}"));
    common::check_waiting(&Waiting {
        noun: "migration",
        waits_for: "a decision",
        phase: phase.as_deref(),
        awaiting: status.phase == Some(MigrationPhase::AwaitingApproval),
        refreshing: refreshing(status),
        conditions: &status.conditions,
        in_flight: status.active_operation.as_ref().map(|op| op.job_name.as_str()),
    })?;
    if let Some(run) = status.unresolved_run.as_ref() {
        return Err(format!(
            "migration {name} has an unresolved run (operation {}); acknowledge it first",
            run.operation_id
        ));
    }
    check_history(spec, plan, migration)?;
    let b = &plan.spec.binding;
    let artifact = status.artifact.as_ref().and_then(|a| a.digest.as_ref());
    common::stale_unless(artifact, &b.artifact_digest, "the artifact digest changed")?;
    let target = status.history.as_ref().map(|h| &h.target_identity_digest);
    common::stale_unless(target, &b.target_identity_digest, "the database identity changed")
}

/// The stamped fields of an acknowledgment are present and the identity is the requester's.
pub fn check_acknowledger(
    spec: &PtahMigrationRunAcknowledgmentSpec,
    requester: &Approver,
) -> Result<(), String> {
    let stamped = Stamped {
        identity: spec.acknowledged_by.as_ref(),
        at: spec.acknowledged_at.as_ref(),
        request_uid: spec.mutation_request_uid.as_deref(),
    };
    common::check_stamped(&stamped, &common::ACKNOWLEDGMENT_STAMP, requester)
}

/// The acknowledgment names the live migration and the operation of its unresolved run.
pub fn check_acknowledgment(
    spec: &PtahMigrationRunAcknowledgmentSpec,
    migration: &PtahMigration,
) -> Result<(), String> {
    let name = &spec.migration_ref.name;
    common::check_live(
        "migration",
        "acknowledgment",
        &spec.migration_ref,
        &migration.metadata,
    )?;
    let unresolved: Option<&Sha256Digest> = migration
        .status
        .as_ref()
        .and_then(|s| s.unresolved_run.as_ref())
        .map(|r| &r.operation_id);
    match unresolved {
        None => Err(format!(
            "no unresolved run: migration {name} has nothing to acknowledge"
        )),
        Some(id) if *id != spec.operation_id => Err(format!(
            "acknowledgment for another operation: migration {name}'s unresolved run is operation {id}, the acknowledgment names {}",
            spec.operation_id
        )),
        Some(_) => Ok(()),
    }
}
