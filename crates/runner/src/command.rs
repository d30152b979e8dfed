//! The child's command line and environment for each operation. Never a shell: `ptah` is
//! executed directly; values go after `=` (`--plan=<file>`) or after `--`, so no input can
//! become an option.

use std::path::{Path, PathBuf};

use ptah_dataplane::{Operation, env};

use crate::{
    error::RunnerError,
    inputs::{self, Env},
    secret_debug::Vars,
};

/// The argument vector (without the program) and the environment of the child.
#[derive(Clone, PartialEq, Eq)]
pub struct ChildCommand {
    /// Arguments after the program.
    pub args: Vec<String>,
    /// The only variables the child gets.
    pub env: Vec<(String, String)>,
}

/// Shows the arguments and the variables' names; credential values are hidden.
impl std::fmt::Debug for ChildCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildCommand")
            .field("args", &self.args)
            .field("env", &Vars(self.env.iter().map(|(k, v)| (k, v))))
            .finish()
    }
}

fn flag(env: &Env, name: &'static str, option: &str, args: &mut Vec<String>) {
    if let Some(v) = env.get(name) {
        args.push(format!("{option}={v}"));
    }
}

fn boolean(env: &Env, name: &'static str) -> Result<bool, RunnerError> {
    match env.get(name) {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(_) => Err(RunnerError::input(name, "must be true or false")),
    }
}

fn required(env: &Env, name: &'static str) -> Result<String, RunnerError> {
    env.get(name)
        .map(str::to_owned)
        .ok_or_else(|| RunnerError::input(name, "is not set"))
}

/// The runner's own files the child is pointed at.
#[derive(Debug, Clone)]
pub struct Files<'a> {
    /// Where a Plan writes its plan file.
    pub plan_output: &'a Path,
    /// The checked copy of the approved plan an Apply applies.
    pub approved_plan: Option<PathBuf>,
    /// The checked copy of the approved sequence a migration Apply expects.
    pub approved_sequence: Option<PathBuf>,
}

/// Builds the child command of `op`.
pub fn build(op: Operation, env: &Env, files: &Files<'_>) -> Result<ChildCommand, RunnerError> {
    let mut args: Vec<String> = Vec::new();
    let json = || ["--format".to_owned(), "json".to_owned()];
    match op {
        Operation::Resolve => {
            return oci(
                env,
                Operation::Resolve,
                required(env, env::REQUESTED_REFERENCE)?,
                None,
            );
        }
        Operation::Verify => {
            let authored = env.get(env::AUTHORED_REFERENCE).map(str::to_owned);
            return oci(
                env,
                Operation::Verify,
                required(env, env::REQUESTED_REFERENCE)?,
                authored,
            );
        }
        Operation::Observe | Operation::Plan | Operation::Apply => {
            required(env, env::SCHEMA_FROM)?;
            args.extend(["schema".into(), op_word(op).into()]);
            args.extend(json());
            flag(env, env::CONNECT_TIMEOUT, "--connect-timeout", &mut args);
            if op == Operation::Plan {
                args.push(format!("--output={}", files.plan_output.display()));
                let scope = inputs::plan_scope(env)?;
                args.extend(scope.exclude.iter().map(|e| format!("--exclude={e}")));
                let protected = scope.protected_tables.iter();
                args.extend(protected.map(|t| format!("--protected-table={t}")));
            }
            if op == Operation::Apply {
                // Never PTAH_PLAN_FILE itself: that may be a chunk directory, and its content
                // could change after the runner checked it.
                let approved = files
                    .approved_plan
                    .as_ref()
                    .ok_or_else(|| RunnerError::Internal("the approved plan was not checked".into()))?;
                args.push(format!("--plan={}", approved.display()));
                // `policy.lockTimeout` bounds both waits: a statement's for a table lock and the
                // Apply's for the shared advisory lock (`--lock-wait`, 60 s by default otherwise,
                // which outlived short execution deadlines and ended as an uncertain deadline
                // instead of a typed lock_busy).
                flag(env, env::LOCK_TIMEOUT, "--lock-timeout", &mut args);
                flag(env, env::LOCK_TIMEOUT, "--lock-wait", &mut args);
                if boolean(env, env::ALLOW_DESTRUCTIVE)? {
                    args.push("--allow-destructive".into());
                }
                if boolean(env, env::ALLOW_TABLE_COPY)? {
                    args.push("--allow-table-copy".into());
                }
            }
        }
        Operation::MigrationHistory | Operation::MigrationApply => {
            required(env, env::MIGRATIONS_DIR)?;
            args.extend(["migrations".into(), op_word(op).into()]);
            args.extend(json());
            flag(env, env::CONNECT_TIMEOUT, "--connect-timeout", &mut args);
            if op == Operation::MigrationApply {
                // Never the variable itself: the runner's checked copy, whose digest it verified.
                let sequence = files
                    .approved_sequence
                    .as_ref()
                    .ok_or_else(|| RunnerError::Internal("the approved sequence was not checked".into()))?;
                args.push(format!("--expect-sequence=@{}", sequence.display()));
                flag(env, env::MIGRATION_LOCK_TIMEOUT, "--lock-timeout", &mut args);
            }
        }
    }
    Ok(ChildCommand {
        args,
        env: child_env(env, op),
    })
}

/// `ptah oci verify` of `pinned`, the digest-pinned reference a Resolve given the policy has
/// just resolved: the verdict then covers exactly the digest every later operation uses, and the
/// digest-pin rule is judged on the reference the author wrote.
pub fn verify_resolved(env: &Env, pinned: &str) -> Result<ChildCommand, RunnerError> {
    let authored = required(env, env::REQUESTED_REFERENCE)?;
    oci(env, Operation::Verify, pinned.to_owned(), Some(authored))
}

/// `ptah oci resolve|verify` of `reference`, with the registry inputs of the environment;
/// `authored` is the reference as written when `reference` is its pinned form.
fn oci(
    env: &Env,
    op: Operation,
    reference: String,
    authored: Option<String>,
) -> Result<ChildCommand, RunnerError> {
    let mut args: Vec<String> = ["oci", op_word(op), "--format", "json"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    if op == Operation::Verify {
        args.push(format!("--policy={}", required(env, env::VERIFICATION_POLICY)?));
        if let Some(authored) = authored {
            args.push(format!("--requested-reference={authored}"));
        }
    }
    if boolean(env, env::PLAIN_HTTP)? {
        args.push("--plain-http".into());
    }
    args.extend(["--".into(), reference]);
    Ok(ChildCommand {
        args,
        env: child_env(env, op),
    })
}

/// The variables of the environment the child of `op` receives.
/// The dev database's URL never: only the one rehearsal run gets it
/// ([`crate::planning`]), so a plan run or a dry-run cannot touch the dev database.
fn child_env(env: &Env, op: Operation) -> Vec<(String, String)> {
    env::child_vars(op)
        .filter(|v| v.name != env::DEV_URL)
        .filter_map(|v| env.get(v.name).map(|value| (v.name.to_owned(), value.to_owned())))
        .collect()
}

/// `ptah schema apply --dry-run` of the plan file `plan` a Plan wrote: the same database and
/// desired schema as the plan runs, no dev database, and no scope flags, because `apply` takes
/// the scope recorded in the plan (and refuses a different `--exclude`).
pub fn plan_dry_run(env: &Env, plan: &Path) -> Result<ChildCommand, RunnerError> {
    required(env, env::SCHEMA_FROM)?;
    let mut args: Vec<String> = ["schema", "apply", "--format", "json"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    flag(env, env::CONNECT_TIMEOUT, "--connect-timeout", &mut args);
    args.push(format!("--plan={}", plan.display()));
    args.push("--dry-run".into());
    Ok(ChildCommand {
        args,
        env: child_env(env, Operation::Plan),
    })
}

fn op_word(op: Operation) -> &'static str {
    match op {
        Operation::Resolve => "resolve",
        Operation::Verify => "verify",
        Operation::Observe => "drift",
        Operation::Plan => "plan",
        Operation::Apply => "apply",
        Operation::MigrationHistory => "status",
        Operation::MigrationApply => "up",
    }
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

    fn internal(r: Result<ChildCommand, RunnerError>, want: &str) {
        assert!(matches!(&r, Err(RunnerError::Internal(m)) if m == want), "{r:?}");
    }

    fn invalid(r: Result<ChildCommand, RunnerError>, want_name: &str, want_reason: &str) {
        assert!(
            matches!(&r, Err(RunnerError::InvalidInput { name, reason })
                if *name == want_name && reason == want_reason),
            "{r:?}"
        );
    }

    fn files() -> Files<'static> {
        Files {
            plan_output: Path::new("/tmp/p"),
            approved_plan: None,
            approved_sequence: None,
        }
    }

    #[test]
    fn an_apply_gets_the_checked_copy_and_never_the_plan_location() {
        let e = env(&[
            (env::DB_URL, "postgres://u:p@h/d"),
            (env::SCHEMA_FROM, "/schema"),
            (env::PLAN_FILE, "/plan"),
            (env::LOCK_TIMEOUT, "7s"),
        ]);
        internal(
            build(Operation::Apply, &e, &files()),
            "the approved plan was not checked",
        );
        let checked = Files {
            approved_plan: Some(PathBuf::from("/work/ptah-runner-1/approved.plan")),
            ..files()
        };
        let cmd = build(Operation::Apply, &e, &checked).expect("command");
        assert!(
            cmd.args
                .contains(&"--plan=/work/ptah-runner-1/approved.plan".to_owned())
        );
        assert!(!cmd.env.iter().any(|(k, _)| k == env::PLAN_FILE));
        // lockTimeout bounds the statement's table-lock wait and the advisory-lock wait alike.
        for option in ["--lock-timeout=7s", "--lock-wait=7s"] {
            assert!(cmd.args.contains(&option.to_owned()), "{option}: {:?}", cmd.args);
        }
    }

    #[test]
    fn an_apply_may_copy_a_table_only_when_the_policy_says_true() {
        let checked = Files {
            approved_plan: Some(PathBuf::from("/work/approved.plan")),
            ..files()
        };
        let base = [(env::DB_URL, "mysql://u:p@h/d"), (env::SCHEMA_FROM, "/schema")];
        for (value, want) in [(None, false), (Some("false"), false), (Some("true"), true)] {
            let mut pairs = base.to_vec();
            pairs.extend(value.map(|v| (env::ALLOW_TABLE_COPY, v)));
            let cmd = build(Operation::Apply, &env(&pairs), &checked).expect("command");
            assert_eq!(
                cmd.args.contains(&"--allow-table-copy".to_owned()),
                want,
                "{value:?}"
            );
            assert!(!cmd.env.iter().any(|(k, _)| k == env::ALLOW_TABLE_COPY));
        }
        let mut pairs = base.to_vec();
        pairs.push((env::ALLOW_TABLE_COPY, "yes"));
        invalid(
            build(Operation::Apply, &env(&pairs), &checked),
            env::ALLOW_TABLE_COPY,
            "must be true or false",
        );
    }

    #[test]
    fn the_child_gets_only_its_operations_variables() {
        let e = env(&[
            (env::DB_URL, "postgres://u:p@h/d"),
            (env::MIGRATIONS_DIR, "/m"),
            (env::REGISTRY_PASSWORD, "registry-secret"),
            (env::PROTOCOL_VERSION, "1"),
            (env::EXPECTED_TARGET_IDENTITY_DIGEST, "sha256:00"),
            (env::HOME, "/work"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
        ]);
        let cmd = build(Operation::MigrationHistory, &e, &files()).expect("command");
        let names: Vec<&str> = cmd.env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, [env::DB_URL, env::MIGRATIONS_DIR, env::HOME]);
        assert_eq!(cmd.args, ["migrations", "status", "--format", "json"]);
    }

    #[test]
    fn a_migration_apply_expects_the_checked_copy_and_never_sees_the_variables() {
        let e = env(&[
            (env::DB_URL, "postgres://u:p@h/d"),
            (env::MIGRATIONS_DIR, "/source/migrations"),
            (env::EXPECTED_MIGRATION_SEQUENCE, "[]"),
            (env::EXPECTED_MIGRATION_SEQUENCE_DIGEST, "sha256:00"),
            (env::MIGRATION_LOCK_TIMEOUT, "5m"),
            (env::CONNECT_TIMEOUT, "10s"),
        ]);
        internal(
            build(Operation::MigrationApply, &e, &files()),
            "the approved sequence was not checked",
        );
        let checked = Files {
            approved_sequence: Some(PathBuf::from("/work/ptah-runner-1/sequence.json")),
            ..files()
        };
        let cmd = build(Operation::MigrationApply, &e, &checked).expect("command");
        assert_eq!(
            cmd.args,
            [
                "migrations",
                "up",
                "--format",
                "json",
                "--connect-timeout=10s",
                "--expect-sequence=@/work/ptah-runner-1/sequence.json",
                "--lock-timeout=5m"
            ]
        );
        let names: Vec<&str> = cmd.env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            [
                env::DB_URL,
                env::CONNECT_TIMEOUT,
                env::MIGRATION_LOCK_TIMEOUT,
                env::MIGRATIONS_DIR
            ]
        );
    }

    #[test]
    fn a_plan_gets_its_scope_as_flags_and_the_child_never_sees_the_variables() {
        let e = env(&[
            (env::DB_URL, "postgres://u:p@h/d"),
            (env::DEV_URL, "postgres://u:p@h/dev"),
            (env::SCHEMA_FROM, "/schema"),
            (env::EXCLUDE, r#"["--help","audit_*"]"#),
            (env::PROTECTED_TABLES, r#"["billing.invoices"]"#),
        ]);
        let cmd = build(Operation::Plan, &e, &files()).expect("command");
        assert_eq!(
            cmd.args,
            [
                "schema",
                "plan",
                "--format",
                "json",
                "--output=/tmp/p",
                "--exclude=--help",
                "--exclude=audit_*",
                "--protected-table=billing.invoices"
            ]
        );
        let names: Vec<&str> = cmd.env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, [env::DB_URL, env::SCHEMA_FROM]);

        let dry = plan_dry_run(&e, Path::new("/w/dry-run.plan")).expect("dry run");
        assert_eq!(
            dry.args,
            [
                "schema",
                "apply",
                "--format",
                "json",
                "--plan=/w/dry-run.plan",
                "--dry-run"
            ]
        );
        let names: Vec<&str> = dry.env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, [env::DB_URL, env::SCHEMA_FROM], "no dev database");

        let bad = env(&[(env::SCHEMA_FROM, "/s"), (env::EXCLUDE, r#"["a,b"]"#)]);
        invalid(
            build(Operation::Plan, &bad, &files()),
            env::EXCLUDE,
            "entry 0 has a comma",
        );
        // Observe reads raw drift: a stray scope variable changes nothing.
        let observe = build(Operation::Observe, &e, &files()).expect("observe");
        assert!(!observe.args.iter().any(|a| a.starts_with("--exclude")));
    }

    #[test]
    fn a_docker_config_reaches_registry_children_only() {
        let e = env(&[
            (env::REQUESTED_REFERENCE, "oci://r/x"),
            (env::DOCKER_CONFIG, "/credentials/registry/.docker"),
            (env::DB_URL, "postgres://u:p@h/d"),
            (env::SCHEMA_FROM, "/schema"),
        ]);
        let resolve = build(Operation::Resolve, &e, &files()).expect("resolve");
        let names: Vec<&str> = resolve.env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, [env::REQUESTED_REFERENCE, env::DOCKER_CONFIG]);
        let observe = build(Operation::Observe, &e, &files()).expect("observe");
        assert!(!observe.env.iter().any(|(k, _)| k == env::DOCKER_CONFIG));
    }

    #[test]
    fn values_cannot_become_options() {
        let e = env(&[
            (env::REQUESTED_REFERENCE, "--plain-http"),
            (env::VERIFICATION_POLICY, "--help"),
        ]);
        let cmd = build(Operation::Verify, &e, &files()).expect("command");
        assert_eq!(
            cmd.args,
            [
                "oci",
                "verify",
                "--format",
                "json",
                "--policy=--help",
                "--",
                "--plain-http"
            ]
        );
        let e = env(&[(env::PLAIN_HTTP, "yes"), (env::REQUESTED_REFERENCE, "oci://r/x")]);
        invalid(
            build(Operation::Resolve, &e, &files()),
            env::PLAIN_HTTP,
            "must be true or false",
        );
    }
}
