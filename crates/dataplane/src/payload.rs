//! The result payload: the one JSON line inside a frame. Field names are camelCase; absent
//! optional fields are left out; unknown fields are refused.

use std::fmt;

use ptah_fingerprint::{Digest, Fingerprint};
use serde::{Deserialize, Serialize};

use crate::{Operation, SequenceStep};

/// How many versions each version list of a History reading keeps (the rest are left out).
pub const MAX_REPORTED_VERSIONS: usize = 64;

/// The longest `blockedReason`, in bytes.
pub const MAX_BLOCKED_REASON_BYTES: usize = 1024;

/// The operation id of a claim: 1–256 bytes, no control characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct OperationId(String);

/// The longest operation id, in bytes.
pub const MAX_OPERATION_ID_BYTES: usize = 256;

impl OperationId {
    /// Validates an operation id.
    pub fn new(text: impl Into<String>) -> Result<Self, String> {
        let text = text.into();
        if text.is_empty() || text.len() > MAX_OPERATION_ID_BYTES {
            return Err(format!("operation id must be 1..={MAX_OPERATION_ID_BYTES} bytes"));
        }
        if text.chars().any(char::is_control) {
            return Err("operation id contains a control character".to_owned());
        }
        Ok(OperationId(text))
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for OperationId {
    type Error = String;
    fn try_from(value: String) -> Result<Self, String> {
        OperationId::new(value)
    }
}

impl From<OperationId> for String {
    fn from(id: OperationId) -> String {
        id.0
    }
}

impl fmt::Display for OperationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The typed reason a result is not a success.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The manager speaks another protocol version; the child never started.
    RunnerProtocolMismatch,
    /// A variable of the environment contract is missing or malformed; the child never started.
    InvalidInput,
    /// The database URL does not hash to the expected target identity; the child never started.
    TargetIdentityMismatch,
    /// The dispatch deadline passed before the child could start.
    DispatchDeadlineExpired,
    /// The execution deadline passed before or while the child ran.
    ExecutionDeadlineExpired,
    /// The runner received SIGTERM and stopped the child.
    Terminated,
    /// The plan file does not have the approved content digest; the child never started.
    PlanContentMismatch,
    /// The child could not be started.
    ChildSpawnFailed,
    /// The child ran and reported a failure (see `childCode`).
    ChildFailed,
    /// The child's report is missing, not JSON, or not the expected shape.
    InvalidChildOutput,
    /// The plan is larger than the plan bound.
    PlanTooLarge,
    /// The plan contains a credential the runner knows; it is not reported.
    SecretInOutput,
    /// The two runs of `ptah schema plan` under the same inputs produced different plans (bytes
    /// or report); neither is reported, because only a reproducible plan may be approved.
    NondeterministicPlan,
    /// `ptah schema apply --dry-run` of the plan bytes failed (its code in `childCode`) or its
    /// report disagrees with the plan; the plan is not reported.
    PlanDryRunFailed,
    /// Migration Apply: the approved sequence does not have the approved digest (the child never
    /// started), or the run reports another sequence fingerprint than the approved one.
    MigrationSequenceMismatch,
    /// Migration History: more migrations are pending than a plan holds
    /// ([`crate::sequence::MAX_SEQUENCE_STEPS`]); the reading is reported without its sequence.
    MigrationSequenceTooLong,
    /// The registry Secret grants its credentials to another registry, or names none; nothing was
    /// sent and the child never started.
    RegistryAuthorityMismatch,
    /// Plain HTTP was asked for and the registry Secret does not allow it (`allowPlainHTTP`).
    PlainHttpNotGranted,
    /// The CA bundle is not the one the registry Secret grants (`caSHA256`).
    CaNotGranted,
    /// A runner failure not covered above.
    Internal,
}

impl ErrorCode {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::RunnerProtocolMismatch => "runner_protocol_mismatch",
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::TargetIdentityMismatch => "target_identity_mismatch",
            ErrorCode::DispatchDeadlineExpired => "dispatch_deadline_expired",
            ErrorCode::ExecutionDeadlineExpired => "execution_deadline_expired",
            ErrorCode::Terminated => "terminated",
            ErrorCode::PlanContentMismatch => "plan_content_mismatch",
            ErrorCode::ChildSpawnFailed => "child_spawn_failed",
            ErrorCode::ChildFailed => "child_failed",
            ErrorCode::InvalidChildOutput => "invalid_child_output",
            ErrorCode::PlanTooLarge => "plan_too_large",
            ErrorCode::SecretInOutput => "secret_in_output",
            ErrorCode::NondeterministicPlan => "nondeterministic_plan",
            ErrorCode::PlanDryRunFailed => "plan_dry_run_failed",
            ErrorCode::MigrationSequenceMismatch => "migration_sequence_mismatch",
            ErrorCode::MigrationSequenceTooLong => "migration_sequence_too_long",
            ErrorCode::RegistryAuthorityMismatch => "registry_authority_mismatch",
            ErrorCode::PlainHttpNotGranted => "plain_http_not_granted",
            ErrorCode::CaNotGranted => "ca_not_granted",
            ErrorCode::Internal => "internal",
        }
    }
}

/// Why the operation did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResultError {
    /// The runner's typed code.
    pub code: ErrorCode,
    /// The child's own error code (`[a-z0-9_]`, ≤ 64), when the child reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_code: Option<String>,
    /// A redacted, bounded message for people.
    pub message: String,
}

/// Whether the child's output was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Truncation {
    /// Stdout exceeded its bound.
    pub stdout: bool,
    /// Stdout bytes dropped.
    pub stdout_bytes_dropped: u64,
    /// Stderr exceeded its bound.
    pub stderr: bool,
    /// Stderr bytes dropped.
    pub stderr_bytes_dropped: u64,
}

/// One drift category: an aggregate, never an object name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DriftFinding {
    /// The category (`tables_added`, …; `[a-z0-9_]`, ≤ 64).
    pub category: String,
    /// How many objects differ.
    pub count: u64,
    /// `safe`, `warning` or `destructive`.
    pub severity: String,
}

/// What Observe found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DriftResult {
    /// Whether the live schema differs from the desired one.
    pub drift: bool,
    /// The highest severity among the findings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest_severity: Option<String>,
    /// The number of categories found (before truncation).
    pub finding_count: u64,
    /// The categories, at most [`crate::MAX_DRIFT_FINDINGS`].
    pub findings: Vec<DriftFinding>,
    /// Whether categories were left out.
    pub findings_truncated: bool,
    /// The live schema's fingerprint within the managed scope.
    pub live_fingerprint: Fingerprint,
    /// The desired schema's fingerprint within the managed scope.
    pub desired_fingerprint: Fingerprint,
}

/// Whether a plan changes anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlanOutcome {
    /// The plan has statements.
    Changes,
    /// The plan is empty.
    NoChanges,
}

/// What Plan produced (the plan bytes themselves travel in `stdout`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlanResult {
    /// The sha256 of the plan bytes.
    pub plan_content_digest: Digest,
    /// Whether it changes anything.
    pub plan_outcome: PlanOutcome,
    /// How many statements it has.
    pub statement_count: u64,
    /// Whether any statement is destructive.
    pub destructive: bool,
    /// The live schema it starts from.
    pub from_fingerprint: Fingerprint,
    /// The desired schema it leads to.
    pub to_fingerprint: Fingerprint,
}

/// What Resolve or Verify found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactResult {
    /// The manifest digest.
    pub resolved_digest: Digest,
    /// The reference pinned to that digest.
    pub resolved_reference: String,
    /// The artifact type, if the manifest has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    /// Verify: whether every requirement of the policy was satisfied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_passed: Option<bool>,
    /// Verify: the requirements satisfied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub satisfied_requirements: Vec<String>,
    /// Verify: the requirements violated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violated_requirements: Vec<String>,
}

/// What migration History read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MigrationHistoryResult {
    /// The highest applied version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_version: Option<i64>,
    /// How many migrations are applied.
    pub applied_count: u64,
    /// How many are pending.
    pub pending_count: u64,
    /// Whether a previous run left a row unfinished.
    pub dirty: bool,
    /// Whether `up` would refuse.
    pub blocked: bool,
    /// The fingerprint of the revision rows.
    pub history_fingerprint: Fingerprint,
    /// The fingerprint of what a default `up` would run; equal to the digest
    /// [`crate::expected_sequence`] computes for [`Self::pending_sequence`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_sequence_fingerprint: Option<Fingerprint>,
    /// Exactly what a default `up` would run, in order: the executor's own selection (never
    /// derived from counts), at most [`crate::sequence::MAX_SEQUENCE_STEPS`] steps. `None` when
    /// `up` would refuse (see [`Self::blocked_reason`]); empty when nothing is pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_sequence: Option<Vec<SequenceStep>>,
    /// Applied versions whose file changed since; at most [`MAX_REPORTED_VERSIONS`] are kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modified_versions: Vec<i64>,
    /// Pending versions below the current version; at most [`MAX_REPORTED_VERSIONS`] are kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub out_of_order_versions: Vec<i64>,
    /// Applied versions the directory has no file for (the database is ahead); at most
    /// [`MAX_REPORTED_VERSIONS`] are kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ahead_versions: Vec<i64>,
    /// Why `up` would refuse, redacted, without control characters, at most
    /// [`MAX_BLOCKED_REASON_BYTES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_reason: Option<String>,
    /// What the migration linter found in the pending migrations (`ptah migrations status`'s
    /// `lint`): codes and severities, no SQL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_lint: Option<PendingLint>,
}

/// The most lint findings a History reading carries.
pub const MAX_LINT_FINDINGS: usize = 256;

/// How much a lint finding matters (`ptah-migrationlint`'s severities).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LintSeverity {
    /// Worth knowing.
    Notice,
    /// A hazard on a busy database, or a change worth a second look.
    Warning,
    /// Loses data or cannot run as written.
    Error,
}

/// One finding of a pending migration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LintFinding {
    /// The migration's version.
    pub version: i64,
    /// The rule's code (`PG101`).
    pub code: String,
    /// Its severity.
    pub severity: LintSeverity,
}

/// The lint of the pending migrations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PendingLint {
    /// The highest severity found; absent when nothing was found or nothing could be judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst: Option<LintSeverity>,
    /// The findings, at most [`MAX_LINT_FINDINGS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<LintFinding>,
    /// Whether findings were left out.
    #[serde(default)]
    pub truncated: bool,
    /// Whether the linter judged the migrations (false: a bad config or a file it could not read).
    pub judged: bool,
}

/// How a migration Apply ended, as the child reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MigrationOutcome {
    /// Nothing was pending.
    UpToDate,
    /// Every selected migration was applied.
    Applied,
    /// A migration failed; nothing of it stayed committed.
    Failed,
    /// A migration failed after some of its statements committed.
    Partial,
}

/// What a migration Apply did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MigrationRunResult {
    /// How it ended.
    pub outcome: MigrationOutcome,
    /// How many migrations this run applied.
    pub applied_count: u64,
    /// The first version applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_applied: Option<i64>,
    /// The last version applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied: Option<i64>,
    /// The highest applied version afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_version: Option<i64>,
    /// The fingerprint of the revision rows afterwards.
    pub history_fingerprint: Fingerprint,
    /// The fingerprint of the sequence that was run.
    pub sequence_fingerprint: Fingerprint,
}

/// The result of one operation, as the runner reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResultPayload {
    /// The runner's protocol version.
    pub protocol_version: u32,
    /// The operation.
    pub operation: Operation,
    /// The claim's operation id (absent only when the input was refused before it was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<OperationId>,
    /// The child's exit code; −1 when the child never started or was killed by a signal.
    pub child_exit_code: i32,
    /// Plan only: the plan bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// The coordination digest the manager handed in, echoed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination_digest: Option<Fingerprint>,
    /// The target identity the runner computed from its own database URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_identity_digest: Option<Fingerprint>,
    /// Observe: the drift aggregates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<DriftResult>,
    /// Plan: the plan summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanResult>,
    /// Plan with a dev database: the plan's rehearsal there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rehearsal: Option<crate::RehearsalResult>,
    /// Resolve and Verify: the artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<ArtifactResult>,
    /// Migration History: the history summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_history: Option<MigrationHistoryResult>,
    /// Migration Apply: the run summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration_run: Option<MigrationRunResult>,
    /// Mutating operations: whether the database may have been changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutation_started: Option<bool>,
    /// Mutating operations: whether the outcome is unknown (the child died or was killed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncertain: Option<bool>,
    /// Why it failed; absent on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ResultError>,
    /// Whether the child's output was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
}

impl ResultPayload {
    /// An empty payload for `operation`: exit −1, nothing observed, no error yet.
    pub fn new(operation: Operation, operation_id: Option<OperationId>) -> Self {
        ResultPayload {
            protocol_version: crate::PROTOCOL_VERSION,
            operation,
            operation_id,
            child_exit_code: -1,
            stdout: None,
            coordination_digest: None,
            target_identity_digest: None,
            drift: None,
            plan: None,
            rehearsal: None,
            artifact: None,
            migration_history: None,
            migration_run: None,
            mutation_started: None,
            uncertain: None,
            error: None,
            truncation: None,
        }
    }

    /// True when the payload carries no error.
    pub fn is_success(&self) -> bool {
        self.error.is_none()
    }

    /// True when the error is the verification policy's verdict on the artifact reported (a
    /// refusal to record, not a failure to retry).
    pub fn is_policy_refusal(&self) -> bool {
        self.error
            .as_ref()
            .is_some_and(|e| e.child_code.as_deref() == Some(VERIFICATION_FAILED))
            && self
                .artifact
                .as_ref()
                .is_some_and(|a| a.verification_passed == Some(false))
    }
}

/// The child code of an artifact the verification policy refused.
pub const VERIFICATION_FAILED: &str = "verification_failed";
