//! Reading the environment contract: typed inputs, or a typed refusal before any child starts.

use std::{collections::BTreeMap, time::Duration};

use jiff::Timestamp;
use ptah_dataplane::{Operation, OperationId, PROTOCOL_VERSION, TargetIdentity, env, scope};
use ptah_fingerprint::Fingerprint;

use crate::{error::RunnerError, redact::Redactor, secret_debug::Vars};

/// The grace period of non-mutating operations when the manager sets none.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(30);
/// The longest grace period accepted.
pub const MAX_GRACE_SECONDS: u64 = 3600;

/// A snapshot of the runner's environment.
#[derive(Clone, Default)]
pub struct Env(pub BTreeMap<String, String>);

/// Names every variable; shows only the values the contract marks as no credential.
impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Env").field(&Vars(self.0.iter())).finish()
    }
}

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

/// The planning scope of a Plan: `spec.policy.exclude` and `spec.policy.protectedTables`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanScope {
    /// Object patterns left out of the plan (`--exclude`).
    pub exclude: Vec<String>,
    /// Tables no plan may touch (`--protected-table`).
    pub protected_tables: Vec<String>,
}

/// Reads `PTAH_EXCLUDE` and `PTAH_PROTECTED_TABLES` (JSON arrays, [`ptah_dataplane::scope`]);
/// absent means empty.
pub fn plan_scope(env: &Env) -> Result<PlanScope, RunnerError> {
    let read = |name: &'static str, parse: fn(&str) -> Result<Vec<String>, scope::ScopeError>| {
        env.get(name)
            .map_or(Ok(Vec::new()), parse)
            .map_err(|e| RunnerError::input(name, e.to_string()))
    };
    Ok(PlanScope {
        exclude: read(env::EXCLUDE, scope::parse_exclude)?,
        protected_tables: read(env::PROTECTED_TABLES, scope::parse_protected_tables)?,
    })
}

/// The approved sequence of a migration Apply, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovedSequence {
    /// Its canonical text, the one handed to `ptah migrations up --expect-sequence`.
    pub text: String,
    /// Its digest, equal to `PTAH_EXPECTED_MIGRATION_SEQUENCE_DIGEST`.
    pub digest: Fingerprint,
}

/// Reads `PTAH_EXPECTED_MIGRATION_SEQUENCE` (only the JSON array form,
/// [`ptah_dataplane::parse_expected_sequence`]) and refuses it unless its digest is
/// `PTAH_EXPECTED_MIGRATION_SEQUENCE_DIGEST`.
pub fn approved_sequence(env: &Env) -> Result<ApprovedSequence, RunnerError> {
    let expected = fingerprint(env, env::EXPECTED_MIGRATION_SEQUENCE_DIGEST)?;
    let text = env.require(env::EXPECTED_MIGRATION_SEQUENCE)?;
    let steps = ptah_dataplane::parse_expected_sequence(text)
        .map_err(|e| RunnerError::input(env::EXPECTED_MIGRATION_SEQUENCE, e.to_string()))?;
    let (text, digest) = ptah_dataplane::expected_sequence(&steps)
        .map_err(|e| RunnerError::input(env::EXPECTED_MIGRATION_SEQUENCE, e.to_string()))?;
    if digest != expected {
        return Err(RunnerError::SequenceMismatch {
            expected: expected.to_string(),
            actual: digest.to_string(),
        });
    }
    Ok(ApprovedSequence { text, digest })
}

/// The database side of the inputs: the target identity checked against the expected one.
#[derive(Debug, Clone, Copy)]
pub struct DatabaseInputs {
    /// The identity of the Pod's own database URL.
    pub target_identity: Fingerprint,
    /// The coordination digest to echo.
    pub coordination_digest: Fingerprint,
}

fn identity_required(op: Operation) -> bool {
    env::lookup(env::EXPECTED_TARGET_IDENTITY_DIGEST).is_some_and(|v| v.is_required_by(op))
}

fn fingerprint(env: &Env, name: &'static str) -> Result<Fingerprint, RunnerError> {
    env.require(name)?
        .parse()
        .map_err(|_| RunnerError::input(name, "is not sha256:<64 lowercase hex>"))
}

/// Reads the database inputs of database operation `op` and checks the target identity.
///
/// The expected identity is optional for read-only operations: the manager never reads the
/// database Secret, so its first Observe runs unbound and reports the identity it found, and
/// every later operation is bound to that. A mutating operation without it is refused; when it is
/// set, whatever the operation, it must match.
pub fn database(env: &Env, op: Operation) -> Result<DatabaseInputs, RunnerError> {
    let expected = match env.get(env::EXPECTED_TARGET_IDENTITY_DIGEST) {
        Some(_) => Some(fingerprint(env, env::EXPECTED_TARGET_IDENTITY_DIGEST)?),
        None if identity_required(op) => {
            return Err(RunnerError::input(
                env::EXPECTED_TARGET_IDENTITY_DIGEST,
                format!("is required for {op}"),
            ));
        }
        None => None,
    };
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
    if let Some(expected) = expected
        && actual != expected
    {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env(pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect())
    }

    fn invalid<T: std::fmt::Debug>(r: Result<T, RunnerError>, want_name: &str, want_reason: &str) {
        assert!(
            matches!(&r, Err(RunnerError::InvalidInput { name, reason })
                if *name == want_name && reason == want_reason),
            "{r:?}"
        );
    }

    #[test]
    fn mutating_operations_need_ordered_deadlines_and_a_grace_period() {
        let full = [
            (env::DISPATCH_NOT_AFTER, "2030-01-01T00:00:00Z"),
            (env::EXECUTION_NOT_AFTER, "2030-01-01T00:10:00+00:00"),
            (env::TERMINATION_GRACE_PERIOD_SECONDS, "30"),
        ];
        let d = Deadlines::read(&env(&full), Operation::Apply).expect("valid");
        assert_eq!(d.grace, Duration::from_secs(30));
        assert!(d.check_now().is_ok());
        for missing in 0..3 {
            let mut partial = full.to_vec();
            partial.remove(missing);
            invalid(
                Deadlines::read(&env(&partial), Operation::MigrationApply),
                full[missing].0,
                "is required for a mutating operation",
            );
            assert!(Deadlines::read(&env(&partial), Operation::Observe).is_ok());
        }
        let mut reversed = full.to_vec();
        reversed[0].1 = "2030-01-01T00:20:00Z";
        invalid(
            Deadlines::read(&env(&reversed), Operation::Apply),
            env::DISPATCH_NOT_AFTER,
            "is later than the execution deadline",
        );
        for bad in ["0", "-1", "3601", "1.5", "ten"] {
            let mut g = full.to_vec();
            g[2].1 = bad;
            invalid(
                Deadlines::read(&env(&g), Operation::Apply),
                env::TERMINATION_GRACE_PERIOD_SECONDS,
                &format!("must be whole seconds in 1..={MAX_GRACE_SECONDS}"),
            );
        }
        let mut stale = full.to_vec();
        stale[0].1 = "2020-01-01T00:00:00Z";
        let d = Deadlines::read(&env(&stale), Operation::Apply).expect("ordered");
        assert!(matches!(d.check_now(), Err(RunnerError::DispatchDeadline(_))));
        let mut bad = full.to_vec();
        bad[1].1 = "tomorrow";
        invalid(
            Deadlines::read(&env(&bad), Operation::Apply),
            env::EXECUTION_NOT_AFTER,
            "is not an RFC 3339 timestamp",
        );
    }

    #[test]
    fn the_protocol_version_must_match_exactly() {
        assert!(check_protocol(&env(&[(env::PROTOCOL_VERSION, "1")])).is_ok());
        for v in ["2", "01x", "v1"] {
            let err = check_protocol(&env(&[(env::PROTOCOL_VERSION, v)])).expect_err(v);
            assert_eq!(err.code(), ptah_dataplane::ErrorCode::RunnerProtocolMismatch);
        }
        let err = check_protocol(&env(&[])).expect_err("missing");
        assert_eq!(err.code(), ptah_dataplane::ErrorCode::InvalidInput);
    }

    #[test]
    fn every_credential_present_is_redacted_whatever_the_operation() {
        let e = env(&[
            (env::DB_URL, "postgres://u:db-secret@h/d"),
            (env::DEV_URL, "postgres://u:dev-secret@h/dev"),
            (env::REGISTRY_PASSWORD, "reg-secret"),
            (env::REGISTRY_TOKEN, "tok-secret"),
        ]);
        let out = e
            .redactor()
            .redact_str("db-secret dev-secret reg-secret tok-secret");
        assert_eq!(out, "[REDACTED] [REDACTED] [REDACTED] [REDACTED]");
    }

    #[test]
    fn the_plan_scope_is_two_json_arrays_and_bad_entries_are_refused_by_name() {
        let e = env(&[
            (env::EXCLUDE, r#"["audit_*","public.tmp_?"]"#),
            (env::PROTECTED_TABLES, r#"["users","billing.invoices"]"#),
        ]);
        let scope = plan_scope(&e).expect("valid");
        assert_eq!(scope.exclude, ["audit_*", "public.tmp_?"]);
        assert_eq!(scope.protected_tables, ["users", "billing.invoices"]);
        assert_eq!(plan_scope(&env(&[])).expect("absent"), PlanScope::default());
        for (name, bad) in [
            (env::EXCLUDE, "audit_*"),
            (env::EXCLUDE, r#"["a,b"]"#),
            (env::EXCLUDE, "[\"a\\u0000\"]"),
            (env::PROTECTED_TABLES, r#"["a.b.c"]"#),
            (env::PROTECTED_TABLES, r#"["users; DROP"]"#),
        ] {
            match plan_scope(&env(&[(name, bad)])) {
                Err(RunnerError::InvalidInput { name: got, .. }) => assert_eq!(got, name, "{bad}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_approved_sequence_must_have_its_digest() {
        let text = r#"[{"version":2,"checksum":"ab","transaction":"file"}]"#;
        let digest = ptah_dataplane::sequence_digest(text).expect("valid").to_string();
        let with = |seq: &str, d: &str| {
            env(&[
                (env::EXPECTED_MIGRATION_SEQUENCE, seq),
                (env::EXPECTED_MIGRATION_SEQUENCE_DIGEST, d),
            ])
        };
        let ok = approved_sequence(&with(
            "[ {\"transaction\": \"file\", \"checksum\": \"ab\", \"version\": 2} ]",
            &digest,
        ))
        .expect("same sequence, other spelling");
        assert_eq!(ok.text, r#"[{"checksum":"ab","transaction":"file","version":2}]"#);
        assert_eq!(ok.digest.to_string(), digest);
        let tampered = r#"[{"version":2,"checksum":"ac","transaction":"file"}]"#;
        let err = approved_sequence(&with(tampered, &digest)).expect_err("tampered");
        assert_eq!(err.code(), ptah_dataplane::ErrorCode::MigrationSequenceMismatch);
        for (seq, d, name) in [
            ("@/etc/passwd", digest.as_str(), env::EXPECTED_MIGRATION_SEQUENCE),
            (
                r#"{"pending_sequence":[]}"#,
                digest.as_str(),
                env::EXPECTED_MIGRATION_SEQUENCE,
            ),
            (text, "sha256:zz", env::EXPECTED_MIGRATION_SEQUENCE_DIGEST),
            (text, "", env::EXPECTED_MIGRATION_SEQUENCE_DIGEST),
            ("", digest.as_str(), env::EXPECTED_MIGRATION_SEQUENCE),
        ] {
            match approved_sequence(&with(seq, d)) {
                Err(RunnerError::InvalidInput { name: got, .. }) => assert_eq!(got, name, "{seq} {d}"),
                other => panic!("{seq} {d}: {other:?}"),
            }
        }
    }

    fn db(url: &str, expected: Option<&str>) -> Env {
        let mut pairs = vec![
            (env::DB_URL, url),
            (
                env::COORDINATION_DIGEST,
                "sha256:0707070707070707070707070707070707070707070707070707070707070707",
            ),
            (env::EXPECTED_DATABASE_ENGINE, "postgresql"),
        ];
        if let Some(e) = expected {
            pairs.push((env::EXPECTED_TARGET_IDENTITY_DIGEST, e));
        }
        env(&pairs)
    }

    #[test]
    fn read_only_operations_without_an_expected_identity_report_the_one_they_found() {
        let url = "postgres://app:secret@db.example:5432/shop";
        let actual = TargetIdentity::from_url(url)
            .expect("identity")
            .digest()
            .expect("digest");
        for op in [Operation::Observe, Operation::Plan, Operation::MigrationHistory] {
            let found = database(&db(url, None), op).expect("accepted unbound");
            assert_eq!(found.target_identity, actual, "{op}");
        }
        for op in [Operation::Apply, Operation::MigrationApply] {
            match database(&db(url, None), op) {
                Err(RunnerError::InvalidInput { name, .. }) => {
                    assert_eq!(name, env::EXPECTED_TARGET_IDENTITY_DIGEST, "{op}");
                }
                other => panic!("{op}: {other:?}"),
            }
        }
        let right = actual.to_string();
        let wrong = TargetIdentity::from_url("postgres://app:secret@db.example:5432/other")
            .expect("identity")
            .digest()
            .expect("digest")
            .to_string();
        for op in Operation::all().into_iter().filter(|op| op.uses_database()) {
            assert!(database(&db(url, Some(&right)), op).is_ok(), "{op}");
            let err = database(&db(url, Some(&wrong)), op).expect_err("mismatch");
            assert_eq!(
                err.code(),
                ptah_dataplane::ErrorCode::TargetIdentityMismatch,
                "{op}"
            );
            let err = database(&db(url, Some("sha256:zz")), op).expect_err("malformed");
            assert_eq!(err.code(), ptah_dataplane::ErrorCode::InvalidInput, "{op}");
        }
    }
}
