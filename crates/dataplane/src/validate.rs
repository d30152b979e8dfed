//! The invariants every payload satisfies; the parser refuses a payload that breaks one.

use crate::{
    MAX_DRIFT_FINDINGS, MAX_ERROR_MESSAGE_BYTES, MAX_PLAN_BYTES, Operation, ResultPayload,
    payload::PlanOutcome,
};

/// A payload that is well-formed JSON but breaks the protocol's rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvariantViolation {
    /// A success whose child exit code is not one of the operation's success codes.
    #[error("a success must have a success exit code, not {0}")]
    SuccessWithFailedExit(i32),
    /// A success with truncated stdout.
    #[error("a success must not have truncated stdout")]
    SuccessWithTruncatedStdout,
    /// A successful Apply that does not say mutation started, or is uncertain.
    #[error("a successful apply must have mutationStarted and not be uncertain")]
    ApplySuccessShape,
    /// Uncertain without mutation started.
    #[error("uncertain requires mutationStarted")]
    UncertainWithoutMutation,
    /// A read-only operation carrying mutation flags.
    #[error("a read-only operation carries no mutation flags")]
    MutationFlagsOnReadOnly,
    /// A child that never started cannot have started a mutation.
    #[error("a refused operation (childExitCode -1 without a child) cannot have started a mutation")]
    MutationWithoutChild,
    /// Stdout on an operation other than Plan, or too large.
    #[error("only plan carries stdout, at most 8 MiB")]
    UnexpectedStdout,
    /// A result section that belongs to another operation.
    #[error("the payload carries a result section of another operation")]
    ForeignSection,
    /// A successful operation missing its result section.
    #[error("a successful {0} must carry its result section")]
    MissingSection(Operation),
    /// A successful database operation without a coordination or target identity digest.
    #[error("a successful database operation needs coordinationDigest and targetIdentityDigest")]
    MissingDigest,
    /// The plan's digest or outcome does not match its bytes.
    #[error("the plan summary does not match the plan bytes")]
    PlanMismatch,
    /// A bounded field is too long or a name has characters it must not have.
    #[error("field {0} is out of bounds")]
    OutOfBounds(&'static str),
    /// childExitCode below −1.
    #[error("childExitCode {0} is not an exit code")]
    BadExitCode(i32),
}

fn is_code(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn is_short_text(s: &str, max: usize) -> bool {
    s.len() <= max && !s.chars().any(char::is_control)
}

impl ResultPayload {
    /// Checks every invariant of the protocol.
    pub fn validate(&self) -> Result<(), InvariantViolation> {
        use InvariantViolation as V;
        let op = self.operation;
        if self.child_exit_code < -1 {
            return Err(V::BadExitCode(self.child_exit_code));
        }
        self.validate_bounds()?;
        let success = self.is_success();
        if success && !op.success_exit_codes().contains(&self.child_exit_code) {
            return Err(V::SuccessWithFailedExit(self.child_exit_code));
        }
        if success && self.truncation.is_some_and(|t| t.stdout) {
            return Err(V::SuccessWithTruncatedStdout);
        }
        let started = self.mutation_started.unwrap_or(false);
        let uncertain = self.uncertain.unwrap_or(false);
        if !op.is_mutating() && (self.mutation_started.is_some() || self.uncertain.is_some()) {
            return Err(V::MutationFlagsOnReadOnly);
        }
        if uncertain && !started {
            return Err(V::UncertainWithoutMutation);
        }
        if op == Operation::Apply && success && (!started || uncertain) {
            return Err(V::ApplySuccessShape);
        }
        if op == Operation::MigrationApply && success && uncertain {
            return Err(V::ApplySuccessShape);
        }
        if started && self.child_exit_code == -1 && self.error.is_none() {
            return Err(V::MutationWithoutChild);
        }
        self.validate_sections(success)?;
        let digests = self.coordination_digest.is_some() && self.target_identity_digest.is_some();
        if success && op.uses_database() && !digests {
            return Err(V::MissingDigest);
        }
        Ok(())
    }

    fn validate_bounds(&self) -> Result<(), InvariantViolation> {
        use InvariantViolation as V;
        if let Some(e) = &self.error {
            if e.message.len() > MAX_ERROR_MESSAGE_BYTES {
                return Err(V::OutOfBounds("error.message"));
            }
            if e.child_code.as_deref().is_some_and(|c| !is_code(c)) {
                return Err(V::OutOfBounds("error.childCode"));
            }
        }
        if let Some(d) = &self.drift {
            if d.findings.len() > MAX_DRIFT_FINDINGS {
                return Err(V::OutOfBounds("drift.findings"));
            }
            let names_ok = d
                .findings
                .iter()
                .all(|f| is_code(&f.category) && is_code(&f.severity));
            if !names_ok || d.highest_severity.as_deref().is_some_and(|s| !is_code(s)) {
                return Err(V::OutOfBounds("drift.findings"));
            }
        }
        if let Some(a) = &self.artifact {
            let texts_ok = is_short_text(&a.resolved_reference, 1024)
                && a.artifact_type.as_deref().is_none_or(|t| is_short_text(t, 256))
                && a.satisfied_requirements.len() <= 64
                && a.violated_requirements.len() <= 64
                && a.satisfied_requirements
                    .iter()
                    .chain(&a.violated_requirements)
                    .all(|r| is_short_text(r, 256));
            if !texts_ok {
                return Err(V::OutOfBounds("artifact"));
            }
        }
        Ok(())
    }

    fn validate_sections(&self, success: bool) -> Result<(), InvariantViolation> {
        use InvariantViolation as V;
        let op = self.operation;
        let own = |present: bool, wanted: Operation| !present || op == wanted;
        let artifact_ok = self.artifact.is_none() || op.uses_registry();
        if !(own(self.drift.is_some(), Operation::Observe)
            && own(self.plan.is_some(), Operation::Plan)
            && own(self.migration_history.is_some(), Operation::MigrationHistory)
            && own(self.migration_run.is_some(), Operation::MigrationApply)
            && artifact_ok)
        {
            return Err(V::ForeignSection);
        }
        if let Some(stdout) = &self.stdout
            && (op != Operation::Plan || stdout.len() > MAX_PLAN_BYTES)
        {
            return Err(V::UnexpectedStdout);
        }
        if let Some(plan) = &self.plan {
            let stdout = self.stdout.as_deref().ok_or(V::PlanMismatch)?;
            if ptah_fingerprint::Digest::of(stdout.as_bytes()) != plan.plan_content_digest {
                return Err(V::PlanMismatch);
            }
            let changes = plan.plan_outcome == PlanOutcome::Changes;
            if changes != (plan.statement_count > 0) {
                return Err(V::PlanMismatch);
            }
        } else if self.stdout.is_some() {
            return Err(V::PlanMismatch);
        }
        if success {
            let present = match op {
                Operation::Resolve | Operation::Verify => self.artifact.is_some(),
                Operation::Observe => self.drift.is_some(),
                Operation::Plan => self.plan.is_some(),
                Operation::Apply => true,
                Operation::MigrationHistory => self.migration_history.is_some(),
                Operation::MigrationApply => self.migration_run.is_some(),
            };
            if !present {
                return Err(V::MissingSection(op));
            }
        }
        Ok(())
    }
}
