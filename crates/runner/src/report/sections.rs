//! Each operation's section of the payload, from its child's JSON report.

use std::{collections::BTreeMap, path::Path};

use ptah_dataplane::{
    ArtifactResult, DriftFinding, DriftResult, ErrorCode, LintFinding, LintSeverity,
    MAX_BLOCKED_REASON_BYTES, MAX_DRIFT_FINDINGS, MAX_LINT_FINDINGS, MAX_REPORTED_VERSIONS,
    MAX_SEQUENCE_STEPS, MigrationHistoryResult, MigrationOutcome, MigrationRunResult, PendingLint,
    PlanOutcome, PlanResult, ResultPayload, SequenceStep, VERIFICATION_FAILED,
    sequence::MAX_DESCRIPTION_CHARS,
};
use ptah_fingerprint::Digest;
use serde_json::Value;

use super::{
    fields::{Mapped, bounded, count, failure, parsed, text, version},
    server::server_error,
};
use crate::redact::Redactor;

/// At most this many characters of a reference, and of a requirement or type name.
pub(super) const MAX_REFERENCE_CHARS: usize = 1024;
pub(super) const MAX_NAME_CHARS: usize = 256;

pub(super) fn artifact_result(
    digest: Digest,
    reference: Option<&str>,
    artifact_type: Option<&str>,
) -> Result<ArtifactResult, &'static str> {
    Ok(ArtifactResult {
        resolved_digest: digest,
        resolved_reference: reference
            .ok_or("the report names no reference")?
            .chars()
            .take(MAX_REFERENCE_CHARS)
            .collect(),
        artifact_type: artifact_type.map(|t| t.chars().take(MAX_NAME_CHARS).collect()),
        verification_passed: None,
        satisfied_requirements: Vec::new(),
        violated_requirements: Vec::new(),
    })
}

/// `ptah oci resolve`: the digest and the reference pinned to it.
pub(super) fn resolved(p: &mut ResultPayload, r: &Value) -> Mapped {
    let digest = parsed::<Digest>(r, "digest")?;
    p.artifact = Some(artifact_result(
        digest,
        text(r, "pinned_reference"),
        text(r, "artifact_type"),
    )?);
    Ok(())
}

/// `ptah oci verify` of the pinned reference a Verify is given.
pub(super) fn verified(p: &mut ResultPayload, r: &Value, exit: i32) -> Mapped {
    let digest = parsed::<Digest>(r, "Digest")?;
    p.artifact = Some(artifact_result(
        digest,
        text(r, "Reference"),
        text(r, "artifact_type"),
    )?);
    verdict(p, r, exit)
}

/// The policy verdict of a verify report on the artifact already in `p`, whose digest it must name.
pub(super) fn verdict(p: &mut ResultPayload, r: &Value, exit: i32) -> Mapped {
    let digest = parsed::<Digest>(r, "Digest")?;
    let a = p
        .artifact
        .as_mut()
        .ok_or("no artifact was resolved before the verdict")?;
    if a.resolved_digest != digest {
        return Err("the verify report names another digest than the one resolved");
    }
    let names = |key: &str, field: Option<&str>| -> Vec<String> {
        let items = r.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
        let items = items.iter().filter_map(|i| match field {
            Some(f) => i.get(f).and_then(Value::as_str).map(str::to_owned),
            None => i.as_str().map(str::to_owned),
        });
        items
            .take(64)
            .map(|s| s.chars().take(MAX_NAME_CHARS).collect())
            .collect()
    };
    a.verification_passed = Some(exit == 0);
    a.satisfied_requirements = names("Satisfied", None);
    a.violated_requirements = names("Findings", Some("Requirement"));
    if exit == 1 {
        let message = "the artifact violates the verification policy";
        p.error = Some(failure(
            ErrorCode::ChildFailed,
            Some(VERIFICATION_FAILED),
            message,
            &Redactor::new(),
        ));
    }
    Ok(())
}

pub(super) fn drift(p: &mut ResultPayload, r: &Value) -> Mapped {
    let all = r
        .get("findings")
        .and_then(Value::as_array)
        .ok_or("the report has no findings")?;
    let mut findings = Vec::new();
    for f in all.iter().take(MAX_DRIFT_FINDINGS) {
        findings.push(DriftFinding {
            category: text(f, "category").ok_or("a finding has no category")?.to_owned(),
            count: f
                .get("count")
                .and_then(Value::as_u64)
                .ok_or("a finding has no count")?,
            severity: text(f, "severity").ok_or("a finding has no severity")?.to_owned(),
        });
    }
    p.drift = Some(DriftResult {
        drift: r
            .get("drift")
            .and_then(Value::as_bool)
            .ok_or("the report has no drift flag")?,
        highest_severity: text(r, "highest_severity").map(str::to_owned),
        finding_count: all.len() as u64,
        findings,
        findings_truncated: all.len() > MAX_DRIFT_FINDINGS,
        live_fingerprint: parsed(r, "live_fingerprint")?,
        desired_fingerprint: parsed(r, "desired_fingerprint")?,
    });
    Ok(())
}

pub(super) fn plan(p: &mut ResultPayload, r: &Value, file: &Path, max: usize, redactor: &Redactor) -> Mapped {
    let size = std::fs::metadata(file)
        .map_err(|_| "ptah wrote no plan file")?
        .len();
    if size > max as u64 {
        let message = format!("the plan is {size} bytes, more than {max}");
        p.error = Some(failure(ErrorCode::PlanTooLarge, None, &message, redactor));
        return Ok(());
    }
    let bytes = std::fs::read(file).map_err(|_| "the plan file cannot be read")?;
    if redactor.contains_secret(&bytes) {
        let message = "the plan contains a credential; it is not reported";
        p.error = Some(failure(ErrorCode::SecretInOutput, None, message, redactor));
        return Ok(());
    }
    let plan_text = String::from_utf8(bytes).map_err(|_| "the plan file is not UTF-8")?;
    let statements = r
        .get("statements")
        .and_then(Value::as_u64)
        .ok_or("the report has no statement count")?;
    p.plan = Some(PlanResult {
        plan_content_digest: Digest::of(plan_text.as_bytes()),
        plan_outcome: if statements > 0 {
            PlanOutcome::Changes
        } else {
            PlanOutcome::NoChanges
        },
        statement_count: statements,
        destructive: r.get("destructive").and_then(Value::as_bool).unwrap_or(true),
        from_fingerprint: parsed(r, "from_fingerprint")?,
        to_fingerprint: parsed(r, "to_fingerprint")?,
    });
    p.stdout = Some(plan_text);
    Ok(())
}

pub(super) fn apply(p: &mut ResultPayload, r: &Value, redactor: &Redactor) -> Mapped {
    let outcome = text(r, "outcome").ok_or("the report has no outcome")?;
    let applied = r.get("applied").and_then(Value::as_u64).unwrap_or(0);
    // The report is complete: the child knows what it committed.
    p.uncertain = Some(false);
    p.mutation_started = Some(true);
    let failed = |code: &str, message: &str| failure(ErrorCode::ChildFailed, Some(code), message, redactor);
    match outcome {
        "applied" | "up_to_date" => {}
        "failed" => {
            let index = r.get("failed_statement_index").and_then(Value::as_u64);
            p.mutation_started = Some(applied > 0 || index.is_some());
            let mut msg = match index {
                Some(i) => format!("statement {} failed; {applied} statement(s) committed", i + 1),
                None => format!("a statement failed; {applied} statement(s) committed"),
            };
            // The server's own reason (SQLSTATE and unquoted message), or a lock timeout reads
            // like a syntax error.
            if let Some(error) = text(r, "error") {
                let (state, message) = server_error(error);
                msg.push_str(": ");
                msg.push_str(&message);
                if let Some(state) = state {
                    msg.push_str(&format!(" (SQLSTATE {state})"));
                }
            }
            p.error = Some(failed("apply_failed", &msg));
        }
        "not_converged" => {
            p.error = Some(failed(
                "not_converged",
                "the database did not converge after the apply",
            ))
        }
        _ => return Err("the report has an unknown outcome"),
    }
    Ok(())
}

/// The report's `lint` as codes and severities (no message: it may name objects); `None` when the
/// executor reported none (an older one). A finding that is not well formed is dropped.
fn pending_lint(lint: Option<&Value>) -> Option<PendingLint> {
    let lint = lint.filter(|l| l.is_object())?;
    let severity = |v: Option<&Value>| -> Option<LintSeverity> { serde_json::from_value(v?.clone()).ok() };
    let all: Vec<LintFinding> = lint
        .get("findings")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|f| {
            Some(LintFinding {
                version: version(f.get("version"))?,
                code: f.get("code")?.as_str()?.to_owned(),
                severity: severity(f.get("severity"))?,
            })
        })
        .collect();
    let judged = lint.get("error").is_none_or(Value::is_null);
    let truncated = all.len() > MAX_LINT_FINDINGS || lint.get("truncated") == Some(&Value::Bool(true));
    let findings: Vec<LintFinding> = if judged {
        all.into_iter().take(MAX_LINT_FINDINGS).collect()
    } else {
        Vec::new()
    };
    let reported = severity(lint.get("worst"));
    let highest = findings.iter().map(|f| f.severity).max();
    Some(PendingLint {
        worst: if judged { reported.max(highest) } else { None },
        findings,
        truncated,
        judged,
    })
}

pub(super) fn history(p: &mut ResultPayload, r: &Value, redactor: &Redactor) -> Mapped {
    let items = |key: &str| {
        r.get(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    // `pending_migrations` has the descriptions; `pending_sequence` is what `up` would run.
    let descriptions: BTreeMap<i64, &str> = items("pending_migrations")
        .iter()
        .filter_map(|m| Some((version(m.get("version"))?, text(m, "description")?)))
        .collect();
    let sequence = match r.get("pending_sequence") {
        None | Some(Value::Null) => None,
        Some(Value::Array(entries)) => Some(sequence_steps(entries, &descriptions)?),
        Some(_) => return Err("the report's pending sequence is not a list"),
    };
    let sequence = match sequence {
        Some(steps) if steps.len() > MAX_SEQUENCE_STEPS => {
            let message = format!(
                "{} migrations are pending; a plan holds at most {MAX_SEQUENCE_STEPS}, apply them in smaller artifacts",
                steps.len()
            );
            p.error = Some(failure(
                ErrorCode::MigrationSequenceTooLong,
                None,
                &message,
                redactor,
            ));
            None
        }
        Some(steps) => {
            // The executor fingerprints its selection; a report whose steps disagree with it
            // could not be approved, so it is refused rather than half believed.
            let (_, digest) = ptah_dataplane::expected_sequence(&steps)
                .map_err(|_| "the report's pending sequence is malformed")?;
            if text(r, "pending_sequence_fingerprint") != Some(digest.to_string().as_str()) {
                return Err("the report's pending sequence does not have its fingerprint");
            }
            Some(steps)
        }
        None => None,
    };
    let versions = |key: &str, field: Option<&str>| -> Vec<i64> {
        let list = items(key).iter();
        let found = list.filter_map(|i| version(field.map_or(Some(i), |f| i.get(f))));
        found.take(MAX_REPORTED_VERSIONS).collect()
    };
    let blocked_reason = text(r, "blocked").map(|why| {
        let why: String = redactor
            .redact_str(why)
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        bounded(why, MAX_BLOCKED_REASON_BYTES)
    });
    p.migration_history = Some(MigrationHistoryResult {
        current_version: version(r.get("current_version")),
        applied_count: count(r, "applied_migrations"),
        pending_count: count(r, "pending_migrations"),
        dirty: r.get("dirty_revision").is_some_and(|d| !d.is_null()),
        blocked: r.get("blocked").is_some_and(|b| !b.is_null()),
        history_fingerprint: parsed(r, "history_fingerprint")?,
        pending_sequence_fingerprint: text(r, "pending_sequence_fingerprint").and_then(|s| s.parse().ok()),
        pending_sequence: sequence,
        modified_versions: versions("modified_migrations", Some("version")),
        out_of_order_versions: versions("out_of_order_migrations", None),
        ahead_versions: versions("ahead_migrations", Some("version")),
        blocked_reason,
        pending_lint: pending_lint(r.get("lint")),
    });
    Ok(())
}

/// The executor's pending selection, each step with its description (cut to the plan's bound,
/// control characters replaced); a malformed entry makes the whole report malformed.
pub(super) fn sequence_steps(
    entries: &[Value],
    descriptions: &BTreeMap<i64, &str>,
) -> Result<Vec<SequenceStep>, &'static str> {
    let malformed = "the report's pending sequence is malformed";
    entries
        .iter()
        .map(|e| {
            let version = version(e.get("version")).ok_or(malformed)?;
            let step = SequenceStep {
                version,
                checksum: text(e, "checksum").ok_or(malformed)?.to_owned(),
                transaction: text(e, "transaction").ok_or(malformed)?.to_owned(),
                description: descriptions.get(&version).map(|d| {
                    d.chars()
                        .map(|c| if c.is_control() { ' ' } else { c })
                        .take(MAX_DESCRIPTION_CHARS)
                        .collect()
                }),
            };
            step.check().map_err(|_| malformed)?;
            Ok(step)
        })
        .collect()
}

pub(super) fn migration_run(p: &mut ResultPayload, r: &Value) -> Mapped {
    let applied: Vec<i64> = r
        .get("applied_versions")
        .and_then(Value::as_array)
        .ok_or("the report has no applied versions")?
        .iter()
        .filter_map(|v| version(Some(v)))
        .collect();
    let outcome = match text(r, "outcome") {
        Some("UpToDate") => MigrationOutcome::UpToDate,
        Some("Applied") => MigrationOutcome::Applied,
        Some("Failed") => MigrationOutcome::Failed,
        Some("Partial") => MigrationOutcome::Partial,
        _ => return Err("the report has an unknown outcome"),
    };
    p.uncertain = Some(false);
    p.mutation_started = Some(!applied.is_empty() || outcome == MigrationOutcome::Partial);
    if matches!(outcome, MigrationOutcome::Failed | MigrationOutcome::Partial) {
        let message = format!("a migration failed after {} applied", applied.len());
        p.error = Some(failure(
            ErrorCode::ChildFailed,
            Some("migration_failed"),
            &message,
            &Redactor::new(),
        ));
    }
    p.migration_run = Some(MigrationRunResult {
        outcome,
        applied_count: applied.len() as u64,
        first_applied: applied.first().copied(),
        last_applied: applied.last().copied(),
        current_version: version(r.get("current_version")),
        history_fingerprint: parsed(r, "history_fingerprint")?,
        sequence_fingerprint: parsed(r, "sequence_fingerprint")?,
    });
    Ok(())
}
