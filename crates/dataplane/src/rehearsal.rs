//! A Plan's rehearsal on the dev database (`PTAH_DEV_URL`): the observed schema recreated there,
//! the plan run, and a fresh plan required to be empty, before anyone approves the plan.

use serde::{Deserialize, Serialize};

/// The most statement timings a rehearsal reports; a longer plan reports its first ones.
pub const MAX_REHEARSAL_TIMINGS: usize = 256;

/// How a rehearsal ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RehearsalOutcome {
    /// Every statement ran on the dev database and a fresh plan there was empty.
    Passed,
    /// A statement failed, or the plan ran and did not reach the desired schema.
    Failed,
    /// Nothing was rehearsed: the dev database could not be reached or used.
    Inconclusive,
}

/// What the rehearsal of the reported plan found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RehearsalResult {
    /// How it ended.
    pub outcome: RehearsalOutcome,
    /// The milliseconds each statement that ran took, in plan order (at most
    /// [`MAX_REHEARSAL_TIMINGS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statement_millis: Vec<u64>,
    /// The 1-based number of the statement that failed, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_statement: Option<u64>,
    /// Why it failed or was inconclusive, for people: one line, credentials removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether the dev database was put back as it was found.
    pub restored: bool,
}

impl RehearsalResult {
    /// Whether the plan may go on to approval and Apply.
    pub fn passed(&self) -> bool {
        self.outcome == RehearsalOutcome::Passed
    }
}
