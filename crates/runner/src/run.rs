//! One operation from start to result: refusals before the child, the child, the mapping.

use std::path::{Path, PathBuf};

use ptah_dataplane::{Operation, ResultPayload, env};
use tokio::signal::unix::{SignalKind, signal};

use crate::{
    command, error::RunnerError, grant, inputs, inputs::Env, launcher::Launcher, plan, planning,
    redact::Redactor, report,
};

/// How the runner was started.
#[derive(Debug, Clone)]
pub struct Config {
    /// The operation.
    pub operation: Operation,
    /// The `ptah` executable.
    pub ptah_binary: PathBuf,
    /// A directory for the runner's files (the plan output); a fresh subdirectory is made in it.
    pub work_dir: PathBuf,
    /// The largest plan accepted.
    pub max_plan_bytes: usize,
}

/// The result of one run: the payload and the child's redacted diagnostics (if they may be shown).
pub struct Outcome {
    /// The payload for the frame.
    pub payload: ResultPayload,
    /// The child's stderr tail, redacted; `None` for Apply, whose output never leaves the runner.
    pub diagnostics: Option<Vec<u8>>,
    /// The redactor, for anything else written.
    pub redactor: Redactor,
}

/// Shows the payload, the size of the diagnostics and the redactor, which hides its secrets.
impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outcome")
            .field("payload", &self.payload)
            .field("diagnostic_bytes", &self.diagnostics.as_ref().map(Vec::len))
            .field("redactor", &self.redactor)
            .finish()
    }
}

/// Runs one operation; every refusal and failure ends up in the payload.
pub async fn run(config: &Config, env: &Env) -> Outcome {
    let redactor = env.redactor();
    let op = config.operation;
    let mut payload = ResultPayload::new(op, None);
    if let Err(err) = inputs::check_protocol(env) {
        // The frame of a mismatch carries only the operation, the error and our version.
        payload.error = Some(report::failure(err.code(), None, &err.to_string(), &redactor));
        return Outcome {
            payload,
            diagnostics: None,
            redactor,
        };
    }
    let diagnostics = match run_checked(config, env, &redactor, &mut payload).await {
        Ok(diagnostics) => diagnostics,
        Err(err) => {
            payload.error = Some(report::failure(err.code(), None, &err.to_string(), &redactor));
            None
        }
    };
    Outcome {
        payload,
        diagnostics,
        redactor,
    }
}

async fn run_checked(
    config: &Config,
    env: &Env,
    redactor: &Redactor,
    payload: &mut ResultPayload,
) -> Result<Option<Vec<u8>>, RunnerError> {
    let op = config.operation;
    // Registered first, so a SIGTERM during the checks is not lost.
    let mut sigterm = signal(SignalKind::terminate())
        .map_err(|e| RunnerError::Internal(format!("cannot watch SIGTERM: {e}")))?;
    payload.operation_id = Some(inputs::operation_id(env)?);
    for var in env::required_by(op) {
        if env.get(var.name).is_none() {
            return Err(RunnerError::input(var.name, "is not set"));
        }
    }
    let deadlines = inputs::Deadlines::read(env, op)?;
    if op.uses_database() {
        let db = inputs::database(env, op).inspect_err(|e| {
            if let RunnerError::TargetIdentityMismatch { actual, .. } = e {
                // The manager sees which target this Pod would have reached.
                payload.target_identity_digest = actual.parse().ok();
            }
        })?;
        payload.target_identity_digest = Some(db.target_identity);
        payload.coordination_digest = Some(db.coordination_digest);
    }
    if op == Operation::Plan {
        // A malformed scope is refused here, with the other inputs, before any child.
        inputs::plan_scope(env)?;
    }
    let approved = Approved {
        plan: if op == Operation::Apply {
            Some(plan::read_approved(env, config.max_plan_bytes)?)
        } else {
            None
        },
        sequence: if op == Operation::MigrationApply {
            Some(inputs::approved_sequence(env)?)
        } else {
            None
        },
    };
    deadlines.check_now()?;
    let work = make_work_dir(&config.work_dir)?;
    let mut launcher = Launcher::new(&config.ptah_binary, &deadlines, &mut sigterm);
    let result = in_work_dir(config, env, &work, approved, &mut launcher, redactor, payload).await;
    let _ = std::fs::remove_dir_all(&work);
    result
}

/// What the runner checked before the child: the approved plan of an Apply, the approved
/// sequence of a migration Apply.
struct Approved {
    plan: Option<Vec<u8>>,
    sequence: Option<inputs::ApprovedSequence>,
}

/// Everything that uses the work directory; the caller removes it afterwards.
async fn in_work_dir(
    config: &Config,
    env: &Env,
    work: &Path,
    approved: Approved,
    launcher: &mut Launcher<'_>,
    redactor: &Redactor,
    payload: &mut ResultPayload,
) -> Result<Option<Vec<u8>>, RunnerError> {
    let op = config.operation;
    // Before any child: a registry request the Secret does not grant is never made.
    let granted = grant::check(op, env, work)?;
    let env = granted.as_ref().unwrap_or(env);
    if op == Operation::Plan {
        return planning::run(env, work, config.max_plan_bytes, launcher, redactor, payload).await;
    }
    let files = command::Files {
        plan_output: &work.join("plan.json"),
        approved_plan: match &approved.plan {
            Some(bytes) => Some(plan::write_copy(work, bytes)?),
            None => None,
        },
        approved_sequence: match &approved.sequence {
            Some(sequence) => Some(write_sequence(work, &sequence.text)?),
            None => None,
        },
    };
    let cmd = command::build(op, env, &files)?;
    let run = launcher.run(&cmd).await?;
    report::map(payload, &run, files.plan_output, config.max_plan_bytes, redactor);
    if op == Operation::Resolve && payload.error.is_none() && env.get(env::VERIFICATION_POLICY).is_some() {
        return verify_resolved(env, launcher, redactor, payload).await;
    }
    if let Some(sequence) = &approved.sequence {
        report::check_sequence(payload, &sequence.digest, redactor);
    }
    Ok((op != Operation::Apply).then(|| run.stderr.redacted(redactor)))
}

/// A Resolve given the policy verifies the pinned reference it resolved, in the same Pod: one
/// Job instead of a Resolve and a Verify, and the verdict names the digest that was resolved.
async fn verify_resolved(
    env: &Env,
    launcher: &mut Launcher<'_>,
    redactor: &Redactor,
    payload: &mut ResultPayload,
) -> Result<Option<Vec<u8>>, RunnerError> {
    let pinned = payload
        .artifact
        .as_ref()
        .map(|a| a.resolved_reference.clone())
        .ok_or_else(|| RunnerError::Internal("a mapped Resolve has no artifact".into()))?;
    let run = launcher.run(&command::verify_resolved(env, &pinned)?).await?;
    report::map_verdict(payload, &run, redactor);
    Ok(Some(run.stderr.redacted(redactor)))
}

/// The checked copy of the approved sequence `ptah` reads (`--expect-sequence=@<file>`).
fn write_sequence(work: &Path, text: &str) -> Result<PathBuf, RunnerError> {
    let path = work.join("expected-sequence.json");
    std::fs::write(&path, text)
        .map_err(|e| RunnerError::Internal(format!("cannot write {}: {}", path.display(), e.kind())))?;
    Ok(path)
}

fn make_work_dir(parent: &Path) -> Result<PathBuf, RunnerError> {
    let dir = parent.join(format!("ptah-runner-{}", std::process::id()));
    std::fs::create_dir(&dir)
        .map_err(|e| RunnerError::Internal(format!("cannot create {}: {}", dir.display(), e.kind())))?;
    Ok(dir)
}
