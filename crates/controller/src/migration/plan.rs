//! The migration plan: derived from one History reading (the executor's own pending selection,
//! never a count subtraction), bound to the execution, the target and the history it was read
//! from. No SQL is stored: the Apply re-reads the files from the verified artifact.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ptah_api::{
    PtahMigrationPlanSpec,
    migration::MigrationOperationStatus,
    migrationplan::{
        LintSeverity, MIGRATION_PLAN_CONTRACT_VERSION, PlannedLint, PlannedMigration, PlannedTransactionMode,
    },
    shared::{ImmutableObjectReference, PlanExecutionBinding, Sha256Digest},
};
use std::collections::BTreeSet;

use ptah_dataplane::{PendingLint, SequenceStep};
use serde::Serialize;

use super::{action::MigrationPlanDraft, observed::Observed, observed::PolicyRead};
use crate::operation::claim::digest_of;

/// The most steps one plan holds (the CRD's bound).
pub const MAX_PLAN_STEPS: usize = 256;

/// The fingerprint of `spec.policy`: any change of it retires a plan.
pub fn policy_fingerprint(o: &Observed<'_>) -> Sha256Digest {
    digest_of(&o.spec.policy)
}

fn mode(word: &str) -> Option<PlannedTransactionMode> {
    match word {
        "file" => Some(PlannedTransactionMode::File),
        "none" => Some(PlannedTransactionMode::None),
        _ => None,
    }
}

/// The word the executor uses for a planned mode.
pub fn mode_word(m: PlannedTransactionMode) -> &'static str {
    match m {
        PlannedTransactionMode::File | PlannedTransactionMode::Default => "file",
        PlannedTransactionMode::None => "none",
    }
}

/// The sequence a plan authorizes, as the executor's `--expect-sequence` steps.
pub fn steps(p: &PtahMigrationPlanSpec) -> Vec<SequenceStep> {
    p.migrations
        .iter()
        .map(|m| SequenceStep {
            version: m.version,
            checksum: m.checksum.clone(),
            transaction: mode_word(m.transaction_mode).to_owned(),
            description: m.description.clone(),
        })
        .collect()
}

#[derive(Serialize)]
struct PlanBinding<'a> {
    contract_version: i32,
    migration_uid: &'a str,
    migrations: &'a [PlannedMigration],
    history_fingerprint: &'a str,
    current_version: i64,
    transaction_mode: Option<ptah_api::migration::MigrationTransactionMode>,
    binding: &'a PlanExecutionBinding,
}

/// The linter's verdict on `version` from a judged reading's lint; `None` when it was not judged.
fn lint_of(lint: Option<&PendingLint>, version: i64) -> Option<PlannedLint> {
    let lint = lint.filter(|l| l.judged)?;
    let mine: Vec<&ptah_dataplane::LintFinding> =
        lint.findings.iter().filter(|f| f.version == version).collect();
    let severity = match mine.iter().map(|f| f.severity).max() {
        None => LintSeverity::Safe,
        Some(ptah_dataplane::LintSeverity::Notice) => LintSeverity::Notice,
        Some(ptah_dataplane::LintSeverity::Warning) => LintSeverity::Warning,
        Some(ptah_dataplane::LintSeverity::Error) => LintSeverity::Error,
    };
    let codes: BTreeSet<String> = mine.iter().map(|f| f.code.clone()).collect();
    Some(PlannedLint {
        severity,
        codes: codes.into_iter().take(MAX_LINT_CODES).collect(),
    })
}

/// The most codes one planned migration names (the CRD's bound).
const MAX_LINT_CODES: usize = 32;

/// A History reading's pending selection, its fingerprints and its lint.
pub struct Reading<'a> {
    /// What `up` would run.
    pub pending: &'a [SequenceStep],
    /// The revision rows' fingerprint.
    pub history_fingerprint: &'a Sha256Digest,
    /// The version the database is at.
    pub current_version: i64,
    /// The database the reading came from.
    pub target_identity: &'a Sha256Digest,
    /// The linter's findings in the pending migrations.
    pub lint: Option<&'a PendingLint>,
}

/// The plan of a History reading, or why none can be made.
pub fn draft(
    o: &Observed<'_>,
    c: &MigrationOperationStatus,
    r: &Reading<'_>,
) -> Result<MigrationPlanDraft, String> {
    let Reading {
        pending,
        history_fingerprint,
        current_version,
        target_identity,
        lint,
    } = *r;
    if pending.len() > MAX_PLAN_STEPS {
        return Err(format!(
            "{} migrations are pending; one plan holds at most {MAX_PLAN_STEPS}",
            pending.len()
        ));
    }
    let mut migrations = Vec::with_capacity(pending.len());
    for step in pending {
        let transaction_mode = mode(&step.transaction)
            .ok_or_else(|| format!("version {}: unknown transaction mode", step.version))?;
        migrations.push(PlannedMigration {
            version: step.version,
            version_key: None,
            description: step.description.as_ref().map(|d| d.chars().take(128).collect()),
            checksum: step.checksum.clone(),
            checkpoint: false,
            transaction_mode,
            lint: lint_of(lint, step.version),
        });
    }
    let (Some(coordination), PolicyRead::Ok { uid, digest }) = (c.coordination_digest.clone(), o.policy)
    else {
        return Err("the reading lacks its realm or verification policy".into());
    };
    let artifact = o
        .status
        .artifact
        .as_ref()
        .and_then(|a| a.digest.clone())
        .ok_or("no resolved artifact")?;
    let b = o.binding;
    let binding = PlanExecutionBinding {
        artifact_digest: artifact,
        coordination_digest: coordination,
        target_identity_digest: target_identity.clone(),
        policy_fingerprint: policy_fingerprint(o),
        verification_policy_uid: uid.clone(),
        verification_policy_digest: digest.clone(),
        execution_binding_id: b.epoch.clone(),
        controller_image: b.controller_image.clone(),
        controller_revision: b.controller_revision.clone(),
        controller_state_version: b.controller_state_version,
        ptah_version: b.ptah_version.clone(),
        executor_image: b.executor_image.clone(),
        runner_image: b.runner_image.clone(),
        runner_protocol_version: b.runner_protocol_version,
    };
    let fingerprint = digest_of(&PlanBinding {
        contract_version: MIGRATION_PLAN_CONTRACT_VERSION,
        migration_uid: &o.meta.uid,
        migrations: &migrations,
        history_fingerprint: history_fingerprint.as_str(),
        current_version,
        transaction_mode: o.spec.policy.transaction_mode,
        binding: &binding,
    });
    let hex = fingerprint.as_str().trim_start_matches("sha256:");
    Ok(MigrationPlanDraft {
        name: format!("ptah-mplan-{}", &hex[..24.min(hex.len())]),
        spec: PtahMigrationPlanSpec {
            contract_version: MIGRATION_PLAN_CONTRACT_VERSION,
            migration_ref: ImmutableObjectReference {
                name: o.meta.name.clone(),
                uid: o.meta.uid.clone(),
            },
            fingerprint: fingerprint.as_str().to_owned(),
            migrations,
            history_fingerprint: history_fingerprint.clone(),
            current_version,
            binding,
            created_at: Some(Time(o.now)),
        },
    })
}

/// The digest of the sequence a plan authorizes, as the executor reports `sequence_fingerprint`.
pub fn sequence_digest(p: &PtahMigrationPlanSpec) -> Option<String> {
    ptah_dataplane::expected_sequence(&steps(p))
        .ok()
        .map(|(_, d)| d.to_string())
}
