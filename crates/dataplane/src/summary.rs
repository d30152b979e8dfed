//! The termination summary: one line of at most 2 KiB the runner writes to the termination log,
//! for the manager to use when the log holds no frame (migration Apply only).

use ptah_fingerprint::{Digest, Fingerprint};
use serde::{Deserialize, Serialize};

use crate::{ErrorCode, MigrationOutcome, Operation, OperationId, ResultPayload};

/// The summary line's first word.
pub const SUMMARY_TAG: &str = "PTAH_RUNNER_SUMMARY_V1";
/// The longest summary line.
pub const MAX_SUMMARY_BYTES: usize = 2048;

/// The migration part of a summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MigrationSummary {
    /// How the run ended.
    pub outcome: MigrationOutcome,
    /// How many migrations it applied.
    pub applied_count: u64,
    /// The first version applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_applied: Option<i64>,
    /// The last version applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied: Option<i64>,
}

/// A summary of one result frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Summary {
    /// The runner's protocol version.
    pub protocol_version: u32,
    /// The operation.
    pub operation: Operation,
    /// The operation id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<OperationId>,
    /// The sha256 of the frame's payload line.
    pub frame_digest: Digest,
    /// Whether a mutation started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutation_started: Option<bool>,
    /// Whether the outcome is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncertain: Option<bool>,
    /// The error code, if the operation failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    /// The coordination digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination_digest: Option<Fingerprint>,
    /// The target identity digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_identity_digest: Option<Fingerprint>,
    /// Migration Apply: what the run did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration: Option<MigrationSummary>,
}

/// A summary that cannot be written or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SummaryError {
    /// Longer than [`MAX_SUMMARY_BYTES`].
    #[error("the summary is longer than {MAX_SUMMARY_BYTES} bytes")]
    TooLong,
    /// Not a summary line.
    #[error("not a summary line")]
    Malformed,
}

impl Summary {
    /// The summary of a payload whose line has `frame_digest`.
    pub fn of(payload: &ResultPayload, frame_digest: Digest) -> Self {
        Summary {
            protocol_version: payload.protocol_version,
            operation: payload.operation,
            operation_id: payload.operation_id.clone(),
            frame_digest,
            mutation_started: payload.mutation_started,
            uncertain: payload.uncertain,
            error_code: payload.error.as_ref().map(|e| e.code),
            coordination_digest: payload.coordination_digest,
            target_identity_digest: payload.target_identity_digest,
            migration: payload.migration_run.as_ref().map(|r| MigrationSummary {
                outcome: r.outcome,
                applied_count: r.applied_count,
                first_applied: r.first_applied,
                last_applied: r.last_applied,
            }),
        }
    }

    /// The line, `PTAH_RUNNER_SUMMARY_V1 <json>`, without newline.
    pub fn to_line(&self) -> Result<String, SummaryError> {
        let json = serde_json::to_string(self).map_err(|_| SummaryError::Malformed)?;
        let line = format!("{SUMMARY_TAG} {json}");
        if line.len() > MAX_SUMMARY_BYTES {
            return Err(SummaryError::TooLong);
        }
        Ok(line)
    }

    /// Reads a termination message.
    pub fn parse(text: &str) -> Result<Self, SummaryError> {
        if text.len() > MAX_SUMMARY_BYTES + 1 {
            return Err(SummaryError::TooLong);
        }
        let line = text.strip_suffix('\n').unwrap_or(text);
        let json = line
            .strip_prefix(SUMMARY_TAG)
            .and_then(|rest| rest.strip_prefix(' '))
            .ok_or(SummaryError::Malformed)?;
        serde_json::from_str(json).map_err(|_| SummaryError::Malformed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_summary_fits_in_two_kib() {
        let id = OperationId::new("x".repeat(crate::MAX_OPERATION_ID_BYTES)).expect("id");
        let fp = Fingerprint::of(&1).expect("fp");
        let summary = Summary {
            protocol_version: u32::MAX,
            operation: Operation::MigrationApply,
            operation_id: Some(id),
            frame_digest: Digest::of(b""),
            mutation_started: Some(true),
            uncertain: Some(true),
            error_code: Some(ErrorCode::RunnerProtocolMismatch),
            coordination_digest: Some(fp),
            target_identity_digest: Some(fp),
            migration: Some(MigrationSummary {
                outcome: MigrationOutcome::Partial,
                applied_count: u64::MAX,
                first_applied: Some(i64::MIN),
                last_applied: Some(i64::MIN),
            }),
        };
        let line = summary.to_line().expect("fits");
        assert!(line.len() <= MAX_SUMMARY_BYTES);
        assert_eq!(Summary::parse(&line), Ok(summary));
        assert_eq!(
            Summary::parse("PTAH_RUNNER_SUMMARY_V1 {}"),
            Err(SummaryError::Malformed)
        );
    }
}
