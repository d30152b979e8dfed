//! The invariants every payload satisfies; the parser refuses a payload that breaks one.

use crate::{
    MAX_BLOCKED_REASON_BYTES, MAX_DRIFT_FINDINGS, MAX_ERROR_MESSAGE_BYTES, MAX_PLAN_BYTES,
    MAX_REPORTED_VERSIONS, MigrationHistoryResult, Operation, ResultPayload, payload::PlanOutcome, sequence,
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
    /// A History reading whose pending sequence and its fingerprint, blocked flag or counts
    /// disagree.
    #[error("the migration history's pending sequence disagrees with {0}")]
    SequenceMismatch(&'static str),
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
        if let Some(h) = &self.migration_history {
            validate_history(h)?;
        }
        if let Some(r) = &self.rehearsal {
            let ok = r.statement_millis.len() <= crate::MAX_REHEARSAL_TIMINGS
                && r.reason
                    .as_deref()
                    .is_none_or(|t| is_short_text(t, MAX_ERROR_MESSAGE_BYTES));
            if !ok {
                return Err(V::OutOfBounds("rehearsal"));
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
        // A Plan reads the drift first, so one Job both observes and plans.
        let drift_ok = self.drift.is_none() || matches!(op, Operation::Observe | Operation::Plan);
        if !(drift_ok
            && own(self.plan.is_some(), Operation::Plan)
            && (self.rehearsal.is_none() || self.plan.is_some())
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

/// The bounds of a History reading, and the agreement of its pending sequence with the rest.
fn validate_history(h: &MigrationHistoryResult) -> Result<(), InvariantViolation> {
    use InvariantViolation as V;
    let lists = [&h.modified_versions, &h.out_of_order_versions, &h.ahead_versions];
    if lists.iter().any(|l| l.len() > MAX_REPORTED_VERSIONS) {
        return Err(V::OutOfBounds("migrationHistory versions"));
    }
    if let Some(reason) = &h.blocked_reason {
        if !is_short_text(reason, MAX_BLOCKED_REASON_BYTES) {
            return Err(V::OutOfBounds("migrationHistory.blockedReason"));
        }
        if !h.blocked {
            return Err(V::SequenceMismatch("blocked"));
        }
    }
    if let Some(lint) = &h.pending_lint {
        validate_lint(lint)?;
    }
    if let Some(steps) = &h.pending_sequence {
        let (_, digest) = sequence::expected_sequence(steps)
            .map_err(|_| V::OutOfBounds("migrationHistory.pendingSequence"))?;
        if h.pending_sequence_fingerprint != Some(digest) {
            return Err(V::SequenceMismatch("pendingSequenceFingerprint"));
        }
        if h.blocked {
            return Err(V::SequenceMismatch("blocked"));
        }
        if steps.len() as u64 > h.pending_count {
            return Err(V::SequenceMismatch("pendingCount"));
        }
    }
    Ok(())
}

/// A lint code: two or three capital letters and three digits (`PG101`, `SQL001`).
fn is_lint_code(code: &str) -> bool {
    let letters = code.bytes().take_while(u8::is_ascii_uppercase).count();
    (2..=3).contains(&letters)
        && code.len() == letters + 3
        && code.bytes().skip(letters).all(|b| b.is_ascii_digit())
}

/// The bounds of a History reading's lint, and its worst severity agreeing with its findings.
fn validate_lint(lint: &crate::PendingLint) -> Result<(), InvariantViolation> {
    use InvariantViolation as V;
    if lint.findings.len() > crate::MAX_LINT_FINDINGS {
        return Err(V::OutOfBounds("migrationHistory.pendingLint.findings"));
    }
    if lint
        .findings
        .iter()
        .any(|f| !is_lint_code(&f.code) || f.version < 0)
    {
        return Err(V::OutOfBounds("migrationHistory.pendingLint.findings"));
    }
    let highest = lint.findings.iter().map(|f| f.severity).max();
    let agrees = if lint.truncated {
        lint.worst >= highest
    } else {
        lint.worst == highest
    };
    if !agrees || (!lint.judged && (lint.worst.is_some() || !lint.findings.is_empty())) {
        return Err(V::SequenceMismatch("pendingLint.worst"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ptah_fingerprint::Fingerprint;

    use super::*;
    use crate::{OperationId, SequenceStep};

    fn step(version: i64) -> SequenceStep {
        SequenceStep {
            version,
            checksum: format!("{version:064x}"),
            transaction: "file".to_owned(),
            description: Some(format!("create things {version}")),
        }
    }

    fn fp(n: u32) -> Fingerprint {
        Fingerprint::of(&n).expect("fingerprint")
    }

    fn history(steps: Option<Vec<SequenceStep>>) -> ResultPayload {
        let mut p = ResultPayload::new(
            Operation::MigrationHistory,
            Some(OperationId::new("op").expect("id")),
        );
        p.child_exit_code = 0;
        p.coordination_digest = Some(fp(1));
        p.target_identity_digest = Some(fp(2));
        p.migration_history = Some(MigrationHistoryResult {
            current_version: Some(1),
            applied_count: 1,
            pending_count: 2,
            dirty: false,
            blocked: steps.is_none(),
            history_fingerprint: fp(3),
            pending_sequence_fingerprint: steps
                .as_deref()
                .map(|s| sequence::expected_sequence(s).map_or(fp(0), |(_, d)| d)),
            pending_sequence: steps,
            modified_versions: Vec::new(),
            out_of_order_versions: Vec::new(),
            ahead_versions: Vec::new(),
            blocked_reason: None,
            pending_lint: None,
        });
        p
    }

    #[test]
    fn a_history_readings_lint_is_bounded_and_its_worst_agrees() {
        use crate::{LintFinding, LintSeverity, PendingLint};
        let finding = |code: &str, severity| LintFinding {
            version: 2,
            code: code.to_owned(),
            severity,
        };
        let mut p = history(Some(vec![step(2), step(3)]));
        edit(&mut p).pending_lint = Some(PendingLint {
            worst: Some(LintSeverity::Warning),
            findings: vec![
                finding("PG101", LintSeverity::Warning),
                finding("SQL001", LintSeverity::Notice),
            ],
            truncated: false,
            judged: true,
        });
        assert_eq!(p.validate(), Ok(()));
        let mut wrong = p.clone();
        edit(&mut wrong).pending_lint.as_mut().expect("lint").worst = Some(LintSeverity::Error);
        assert!(wrong.validate().is_err(), "a worst no finding has");
        let mut odd = p.clone();
        edit(&mut odd).pending_lint.as_mut().expect("lint").findings[0].code = "DROP TABLE x".to_owned();
        assert!(odd.validate().is_err(), "a code that is no code");
        let mut many = p.clone();
        edit(&mut many).pending_lint.as_mut().expect("lint").findings =
            vec![finding("PG101", LintSeverity::Warning); crate::MAX_LINT_FINDINGS + 1];
        assert!(many.validate().is_err());
        let mut unjudged = p;
        edit(&mut unjudged).pending_lint.as_mut().expect("lint").judged = false;
        assert!(unjudged.validate().is_err(), "nothing judged, nothing found");
    }

    fn edit(p: &mut ResultPayload) -> &mut MigrationHistoryResult {
        p.migration_history.as_mut().expect("history")
    }

    #[test]
    fn a_history_reading_is_consistent_with_its_sequence() {
        let good = history(Some(vec![step(2), step(3)]));
        assert_eq!(good.validate(), Ok(()));
        let mut blocked = history(None);
        edit(&mut blocked).blocked_reason = Some("version 3 is below the current version 4".to_owned());
        edit(&mut blocked).out_of_order_versions = vec![3];
        assert_eq!(blocked.validate(), Ok(()));

        let mut p = good.clone();
        edit(&mut p).pending_sequence_fingerprint = Some(fp(9));
        assert_eq!(
            p.validate(),
            Err(InvariantViolation::SequenceMismatch("pendingSequenceFingerprint"))
        );
        let mut p = good.clone();
        edit(&mut p).pending_sequence_fingerprint = None;
        assert!(matches!(
            p.validate(),
            Err(InvariantViolation::SequenceMismatch(_))
        ));
        let mut p = good.clone();
        edit(&mut p).blocked = true;
        assert_eq!(p.validate(), Err(InvariantViolation::SequenceMismatch("blocked")));
        let mut p = good.clone();
        edit(&mut p).pending_count = 1;
        assert_eq!(
            p.validate(),
            Err(InvariantViolation::SequenceMismatch("pendingCount"))
        );
        let mut p = good.clone();
        edit(&mut p).blocked_reason = Some("x".to_owned());
        assert_eq!(p.validate(), Err(InvariantViolation::SequenceMismatch("blocked")));
    }

    #[test]
    fn a_history_reading_is_bounded() {
        let mut p = history(Some(vec![step(3), step(2)]));
        assert!(matches!(p.validate(), Err(InvariantViolation::OutOfBounds(_))));
        p = history(None);
        edit(&mut p).ahead_versions = (1..=65).collect();
        assert!(matches!(p.validate(), Err(InvariantViolation::OutOfBounds(_))));
        edit(&mut p).ahead_versions = (1..=64).collect();
        assert_eq!(p.validate(), Ok(()));
        edit(&mut p).blocked_reason = Some("r".repeat(MAX_BLOCKED_REASON_BYTES + 1));
        assert!(matches!(p.validate(), Err(InvariantViolation::OutOfBounds(_))));
        edit(&mut p).blocked_reason = Some("two\nlines".to_owned());
        assert!(matches!(p.validate(), Err(InvariantViolation::OutOfBounds(_))));
    }

    #[test]
    fn new_history_fields_are_optional_on_the_wire_and_unknown_ones_are_refused() {
        let p = history(Some(Vec::new()));
        let json = serde_json::to_value(&p).expect("json");
        let h = &json["migrationHistory"];
        assert_eq!(h["pendingSequence"], serde_json::json!([]));
        assert!(h.get("modifiedVersions").is_none() && h.get("blockedReason").is_none());
        let old = serde_json::json!({
            "appliedCount": 0, "pendingCount": 0, "dirty": false, "blocked": false,
            "historyFingerprint": fp(3),
        });
        let read: MigrationHistoryResult = serde_json::from_value(old.clone()).expect("old shape");
        assert_eq!(read.pending_sequence, None);
        let mut extra = old;
        extra["pendingSteps"] = serde_json::json!([]);
        let err = serde_json::from_value::<MigrationHistoryResult>(extra).expect_err("unknown field");
        assert!(
            err.to_string().starts_with("unknown field `pendingSteps`"),
            "{err}"
        );
        let two = history(Some(vec![step(2), step(3)]));
        let text = serde_json::to_string(&two).expect("json");
        assert!(text.contains(r#""pendingSequence":[{"version":2,"#), "{text}");
        assert_eq!(serde_json::from_str::<ResultPayload>(&text).expect("back"), two);
    }
}
