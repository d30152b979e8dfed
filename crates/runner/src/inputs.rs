//! Reading the environment contract: typed inputs, or a typed refusal before any child starts.

use std::{collections::BTreeMap, path::PathBuf, time::Duration};

use jiff::Timestamp;
use ptah_dataplane::{Operation, OperationId, PROTOCOL_VERSION, TargetIdentity, env};
use ptah_fingerprint::{Digest, Fingerprint};

use crate::{error::RunnerError, redact::Redactor};

/// The grace period of non-mutating operations when the manager sets none.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(30);
/// The longest grace period accepted.
pub const MAX_GRACE_SECONDS: u64 = 3600;

/// A snapshot of the runner's environment.
#[derive(Debug, Clone, Default)]
pub struct Env(pub BTreeMap<String, String>);

impl Env {
    /// The process environment (variables that are not UTF-8 are left out).
    pub fn from_process() -> Self {
        Env(std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect())
    }

    /// A variable, if set and not empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str).filter(|v| !v.is_empty())
    }

    fn require(&self, name: &'static str) -> Result<&str, RunnerError> {
        self.get(name)
            .ok_or_else(|| RunnerError::input(name, "is not set"))
    }

    /// A redactor for every credential of the contract present in this environment, whatever the
    /// operation: a credential the operation should not have been given is still never printed.
    pub fn redactor(&self) -> Redactor {
        let mut r = Redactor::new();
        for var in env::VARS.iter().filter(|v| v.role == env::Role::Credential) {
            if let Some(value) = self.get(var.name) {
                if var.name == env::DB_URL || var.name == env::DEV_URL {
                    r.add_url(value);
                } else {
                    r.add_secret(value);
                }
            }
        }
        r
    }
}

/// Checks the manager's protocol version; the first check of all.
pub fn check_protocol(env: &Env) -> Result<(), RunnerError> {
    let given = env.require(env::PROTOCOL_VERSION)?;
    if given.trim() != PROTOCOL_VERSION.to_string() {
        return Err(RunnerError::ProtocolMismatch {
            expected: given.chars().take(16).collect(),
            ours: PROTOCOL_VERSION,
        });
    }
    Ok(())
}

/// Reads the operation id.
pub fn operation_id(env: &Env) -> Result<OperationId, RunnerError> {
    OperationId::new(env.require(env::OPERATION_ID)?).map_err(|r| RunnerError::input(env::OPERATION_ID, r))
}

/// The deadlines of one operation.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// The child must not start after this.
    pub dispatch_not_after: Option<Timestamp>,
    /// The child is stopped at this instant.
    pub execution_not_after: Option<Timestamp>,
    /// The Pod's termination grace period.
    pub grace: Duration,
}

impl Deadlines {
    /// Reads and orders the deadlines; mutating operations must have all three.
    pub fn read(env: &Env, op: Operation) -> Result<Self, RunnerError> {
        let stamp = |name: &'static str| -> Result<Option<Timestamp>, RunnerError> {
            match env.get(name) {
                None if op.is_mutating() => {
                    Err(RunnerError::input(name, "is required for a mutating operation"))
                }
                None => Ok(None),
                Some(v) => v
                    .parse::<Timestamp>()
                    .map(Some)
                    .map_err(|_| RunnerError::input(name, "is not an RFC 3339 timestamp")),
            }
        };
        let dispatch_not_after = stamp(env::DISPATCH_NOT_AFTER)?;
        let execution_not_after = stamp(env::EXECUTION_NOT_AFTER)?;
        if let (Some(d), Some(e)) = (dispatch_not_after, execution_not_after)
            && d > e
        {
            return Err(RunnerError::input(
                env::DISPATCH_NOT_AFTER,
                "is later than the execution deadline",
            ));
        }
        let grace = match env.get(env::TERMINATION_GRACE_PERIOD_SECONDS) {
            None if op.is_mutating() => {
                return Err(RunnerError::input(
                    env::TERMINATION_GRACE_PERIOD_SECONDS,
                    "is required for a mutating operation",
                ));
            }
            None => DEFAULT_GRACE,
            Some(v) => match v.parse::<u64>() {
                Ok(s) if (1..=MAX_GRACE_SECONDS).contains(&s) => Duration::from_secs(s),
                _ => {
                    return Err(RunnerError::input(
                        env::TERMINATION_GRACE_PERIOD_SECONDS,
                        format!("must be whole seconds in 1..={MAX_GRACE_SECONDS}"),
                    ));
                }
            },
        };
        Ok(Deadlines {
            dispatch_not_after,
            execution_not_after,
            grace,
        })
    }

    /// Refuses when a deadline has passed; called again just before the child starts.
    pub fn check_now(&self) -> Result<(), RunnerError> {
        let now = Timestamp::now();
        if let Some(d) = self.dispatch_not_after
            && now > d
        {
            return Err(RunnerError::DispatchDeadline(d.to_string()));
        }
        if let Some(e) = self.execution_not_after
            && now >= e
        {
            return Err(RunnerError::ExecutionDeadline(e.to_string()));
        }
        Ok(())
    }

    /// How long the child may still run, if there is an execution deadline.
    pub fn remaining(&self) -> Option<Duration> {
        let e = self.execution_not_after?;
        Some(Duration::try_from(e.duration_since(Timestamp::now())).unwrap_or(Duration::ZERO))
    }
}

/// The database side of the inputs: the target identity checked against the expected one.
#[derive(Debug, Clone, Copy)]
pub struct DatabaseInputs {
    /// The identity of the Pod's own database URL.
    pub target_identity: Fingerprint,
    /// The coordination digest to echo.
    pub coordination_digest: Fingerprint,
}

fn fingerprint(env: &Env, name: &'static str) -> Result<Fingerprint, RunnerError> {
    env.require(name)?
        .parse()
        .map_err(|_| RunnerError::input(name, "is not sha256:<64 lowercase hex>"))
}

/// Reads the database inputs of a database operation and checks the target identity.
pub fn database(env: &Env) -> Result<DatabaseInputs, RunnerError> {
    let expected = fingerprint(env, env::EXPECTED_TARGET_IDENTITY_DIGEST)?;
    let coordination_digest = fingerprint(env, env::COORDINATION_DIGEST)?;
    let engine = env.require(env::EXPECTED_DATABASE_ENGINE)?;
    let identity = TargetIdentity::from_url(env.require(env::DB_URL)?)
        .map_err(|e| RunnerError::input(env::DB_URL, e.to_string()))?;
    if identity.engine().as_str() != engine {
        return Err(RunnerError::input(
            env::EXPECTED_DATABASE_ENGINE,
            format!(
                "the database URL is {}, not {engine:?}",
                identity.engine().as_str()
            ),
        ));
    }
    let actual = identity
        .digest()
        .map_err(|e| RunnerError::Internal(e.to_string()))?;
    if actual != expected {
        return Err(RunnerError::TargetIdentityMismatch {
            expected: expected.to_string(),
            actual: actual.to_string(),
        });
    }
    Ok(DatabaseInputs {
        target_identity: actual,
        coordination_digest,
    })
}

/// Checks an Apply's plan file against the approved digest, reading at most `max` bytes.
pub fn check_plan_file(env: &Env, max: usize) -> Result<PathBuf, RunnerError> {
    let path = PathBuf::from(env.require(env::PLAN_FILE)?);
    let expected: Digest = env
        .require(env::EXPECTED_PLAN_CONTENT_DIGEST)?
        .parse()
        .map_err(|_| RunnerError::input(env::EXPECTED_PLAN_CONTENT_DIGEST, "is not sha256:<hex>"))?;
    let size = std::fs::metadata(&path)
        .map_err(|e| RunnerError::input(env::PLAN_FILE, format!("cannot be read: {}", e.kind())))?
        .len();
    if size > max as u64 {
        return Err(RunnerError::input(
            env::PLAN_FILE,
            format!("is larger than {max} bytes"),
        ));
    }
    let bytes = std::fs::read(&path)
        .map_err(|e| RunnerError::input(env::PLAN_FILE, format!("cannot be read: {}", e.kind())))?;
    let actual = Digest::of(&bytes);
    if actual != expected {
        return Err(RunnerError::PlanContentMismatch {
            expected: expected.to_string(),
            actual: actual.to_string(),
        });
    }
    Ok(path)
}
