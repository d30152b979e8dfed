//! The Plan operation through the `ptah-runner` binary: its scope (`PTAH_EXCLUDE`,
//! `PTAH_PROTECTED_TABLES`) with the real `ptah` on the real PostgreSQL, and the two-run and
//! dry-run agreement with a scripted stand-in for `ptah` that can be made to disagree.

mod support;

use std::{collections::BTreeMap, os::unix::fs::PermissionsExt, path::Path};

use ptah_dataplane::{ErrorCode, PlanOutcome};
use ptah_fingerprint::Digest;
use ptah_testservices::TestServices;
use support::{db_env, fresh_database, password_forms, ptah, run_runner, scratch};

const PG_SCHEMA: &str = "CREATE TABLE widgets (id integer PRIMARY KEY, name text NOT NULL);\n";

/// A database whose `widgets` lacks `name`, so a plan of `PG_SCHEMA` alters `widgets`; returns
/// the URL and the Plan environment.
async fn altering_plan(work: &Path) -> (String, BTreeMap<String, String>) {
    let services = TestServices::require();
    let url = fresh_database(&services.postgres, true).await;
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    client
        .batch_execute("CREATE TABLE widgets (id integer PRIMARY KEY)")
        .await
        .expect("create");
    let schema = work.join("schema.sql");
    std::fs::write(&schema, PG_SCHEMA).expect("schema");
    let mut env = db_env(&url);
    env.insert("PTAH_SCHEMA_FROM".into(), schema.display().to_string());
    (url, env)
}

/// A plan that touches a protected table is refused by `ptah`; the frame says `child_failed`
/// with `childCode` `protected_table` and carries no plan. Without the protection the same inputs
/// plan the change.
#[tokio::test]
async fn a_plan_touching_a_protected_table_is_child_failed_protected_table() {
    let work = scratch();
    let (url, env) = altering_plan(work.path()).await;
    let bin = ptah();
    let mut protected = env.clone();
    protected.insert(
        "PTAH_PROTECTED_TABLES".into(),
        r#"["audit_log","public.widgets"]"#.into(),
    );
    let run = run_runner("plan", &protected, &bin, work.path());
    run.assert_no_secret(&password_forms(&url));
    let p = &run.frame().payload;
    let err = p.error.as_ref().expect("refused");
    assert_eq!(err.code, ErrorCode::ChildFailed, "{err:?}");
    assert_eq!(err.child_code.as_deref(), Some("protected_table"), "{err:?}");
    assert_eq!(p.child_exit_code, 2);
    assert!(p.plan.is_none() && p.stdout.is_none(), "no plan leaves the Pod");

    let run = run_runner("plan", &env, &bin, work.path());
    let p = &run.frame().payload;
    assert!(p.error.is_none(), "{:?}", p.error);
    assert_eq!(
        p.plan.as_ref().map(|plan| plan.plan_outcome),
        Some(PlanOutcome::Changes)
    );
}

/// An excluded table is out of the plan's scope: the same change plans to nothing, the plan
/// records the exclusion, and the dry-run of those bytes (which takes its scope from the plan)
/// agrees.
#[tokio::test]
async fn an_excluded_table_is_left_out_of_the_plan_and_the_dry_run_agrees() {
    let work = scratch();
    let (url, mut env) = altering_plan(work.path()).await;
    env.insert("PTAH_EXCLUDE".into(), r#"["widg*"]"#.into());
    let run = run_runner("plan", &env, &ptah(), work.path());
    run.assert_no_secret(&password_forms(&url));
    let p = &run.frame().payload;
    assert!(p.error.is_none(), "{:?}", p.error);
    let plan = p.plan.as_ref().expect("plan");
    assert_eq!(plan.plan_outcome, PlanOutcome::NoChanges);
    let bytes: serde_json::Value =
        serde_json::from_str(p.stdout.as_deref().expect("plan bytes")).expect("plan JSON");
    assert_eq!(bytes["exclude"], serde_json::json!(["widg*"]));
}

/// Malformed scope inputs are refused as `invalid_input` naming the variable; `ptah` never runs
/// (the stand-in binary does not exist).
#[test]
fn a_malformed_scope_is_refused_before_the_child() {
    let work = scratch();
    let never = work.path().join("no-such-ptah");
    let mut base = db_env("postgres://app:secret@db.example:5432/shop");
    base.insert("PTAH_SCHEMA_FROM".into(), "/schema".into());
    let too_many = serde_json::to_string(&vec!["t"; 129]).expect("json");
    for (name, value) in [
        ("PTAH_EXCLUDE", "audit_*"),
        ("PTAH_EXCLUDE", r#"["a,b"]"#),
        ("PTAH_EXCLUDE", too_many.as_str()),
        ("PTAH_PROTECTED_TABLES", r#"["a.b.c"]"#),
        ("PTAH_PROTECTED_TABLES", r#"[""]"#),
    ] {
        let mut env = base.clone();
        env.insert(name.into(), value.into());
        let run = run_runner("plan", &env, &never, work.path());
        let p = &run.frame().payload;
        let err = p.error.as_ref().expect("refused");
        assert_eq!(err.code, ErrorCode::InvalidInput, "{name}={value}: {err:?}");
        assert!(err.message.contains(name), "{}", err.message);
        assert_eq!(p.child_exit_code, -1, "{name}={value}");
    }
}

/// A stand-in for `ptah`, using shell builtins only (the child's environment is cleared):
/// `schema drift` reports no drift; each `schema plan` writes `$HOME/plan-N` (N counting runs) to its `--output` and prints a report of
/// one statement; `schema apply --dry-run` prints `$HOME/dry-run`. Every argument vector is
/// appended to `$HOME/args`.
const STAND_IN: &str = r#"#!/bin/sh
printf '%s\n' "$*" >> "$HOME/args"
out=""
for a in "$@"; do
  case "$a" in --output=*) out="${a#--output=}" ;; esac
done
if [ "$2" = "drift" ]; then
  printf '%s\n' '{"format_version":1,"command":"schema drift","drift":false,"highest_severity":null,"findings":[],"live_fingerprint":"sha256:1111111111111111111111111111111111111111111111111111111111111111","desired_fingerprint":"sha256:2222222222222222222222222222222222222222222222222222222222222222"}'
  exit 0
fi
if [ "$2" = "apply" ]; then
  while IFS= read -r line; do printf '%s\n' "$line"; done < "$HOME/dry-run"
  exit 0
fi
if [ -e "$HOME/ran-once" ]; then n=2; else n=1; : > "$HOME/ran-once"; fi
while IFS= read -r line; do printf '%s\n' "$line"; done < "$HOME/plan-$n" > "$out"
printf '%s\n' '{"format_version":1,"command":"schema plan","exit_code":1,"changes_pending":true,"statements":1,"destructive":false,"from_fingerprint":"sha256:1111111111111111111111111111111111111111111111111111111111111111","to_fingerprint":"sha256:2222222222222222222222222222222222222222222222222222222222222222"}'
exit 1
"#;

fn dry_run_report(total: u64) -> String {
    format!(
        r#"{{"format_version":1,"command":"schema apply","exit_code":0,"outcome":"dry_run","applied":0,"total":{total},"committed":[],"verified":false,"database_url":"postgres://app@db.example/shop","destructive":false,"from_fingerprint":"sha256:1111111111111111111111111111111111111111111111111111111111111111","to_fingerprint":"sha256:2222222222222222222222222222222222222222222222222222222222222222"}}"#
    )
}

/// Runs a Plan with the stand-in; the two runs write `first` and `second`, the dry-run reports
/// `dry_run`. Returns the run and the stand-in's argument log.
fn staged(first: &str, second: &str, dry_run: &str) -> (support::Run, String) {
    let work = scratch();
    let home = work.path().join("home");
    std::fs::create_dir(&home).expect("home");
    let bin = work.path().join("ptah");
    std::fs::write(&bin, STAND_IN).expect("stand-in");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::write(home.join("plan-1"), first).expect("plan-1");
    std::fs::write(home.join("plan-2"), second).expect("plan-2");
    // `read` drops a last line without its newline.
    std::fs::write(home.join("dry-run"), format!("{dry_run}\n")).expect("dry-run");
    let mut env = db_env("postgres://app:secret@db.example:5432/shop");
    env.insert("PTAH_SCHEMA_FROM".into(), "/schema".into());
    env.insert("HOME".into(), home.display().to_string());
    env.insert("PTAH_EXCLUDE".into(), r#"["audit_*"]"#.into());
    env.insert("PTAH_PROTECTED_TABLES".into(), r#"["users"]"#.into());
    let run = run_runner("plan", &env, &bin, work.path());
    let args = std::fs::read_to_string(home.join("args")).unwrap_or_default();
    (run, args)
}

#[test]
fn a_reproducible_plan_is_dry_run_and_reported_once() {
    let plan = "{\"statements\":[\"ALTER TABLE widgets ADD COLUMN name text\"]}\n";
    let (run, args) = staged(plan, plan, &dry_run_report(1));
    let p = &run.frame().payload;
    assert!(p.error.is_none(), "{:?}", p.error);
    assert_eq!(p.stdout.as_deref(), Some(plan));
    let result = p.plan.as_ref().expect("plan");
    assert_eq!(result.plan_content_digest, Digest::of(plan.as_bytes()));
    assert_eq!(p.child_exit_code, 1, "the plan runs' exit code");
    assert!(!p.drift.as_ref().expect("the drift read first").drift);
    let lines: Vec<&str> = args.lines().collect();
    assert_eq!(lines.len(), 4, "{args}");
    assert_eq!(
        lines[0], "schema drift --format json",
        "the raw drift read: no scope"
    );
    let lines = &lines[1..];
    for line in &lines[..2] {
        assert!(line.starts_with("schema plan --format json --output="), "{line}");
        assert!(
            line.ends_with(" --exclude=audit_* --protected-table=users"),
            "{line}"
        );
    }
    assert_ne!(lines[0], lines[1], "each run writes its own file");
    assert!(
        lines[2].starts_with("schema apply --format json --plan=") && lines[2].ends_with(" --dry-run"),
        "{}",
        lines[2]
    );
    assert!(
        !lines[2].contains("--exclude"),
        "apply takes the plan's own scope"
    );
}

#[test]
fn two_different_plans_are_nondeterministic_and_neither_is_reported() {
    let (run, args) = staged("{\"a\":1}\n", "{\"a\":2}\n", &dry_run_report(1));
    let p = &run.frame().payload;
    let err = p.error.as_ref().expect("refused");
    assert_eq!(err.code, ErrorCode::NondeterministicPlan, "{err:?}");
    assert!(
        err.message.contains(&Digest::of(b"{\"a\":1}\n").to_string())
            && err.message.contains(&Digest::of(b"{\"a\":2}\n").to_string()),
        "{}",
        err.message
    );
    assert!(p.plan.is_none() && p.stdout.is_none());
    assert_eq!(
        args.lines().count(),
        3,
        "the drift read and two plans; no dry-run of a plan that did not reproduce"
    );
}

#[test]
fn a_dry_run_that_disagrees_refuses_the_plan() {
    let plan = "{\"a\":1}\n";
    let (run, _) = staged(plan, plan, &dry_run_report(2));
    let p = &run.frame().payload;
    let err = p.error.as_ref().expect("refused");
    assert_eq!(err.code, ErrorCode::PlanDryRunFailed, "{err:?}");
    assert!(p.plan.is_none() && p.stdout.is_none());
    assert_eq!(p.child_exit_code, 0, "the dry-run's exit code");

    let stale = r#"{"format_version":1,"command":"schema apply","exit_code":1,"error":{"code":"stale_plan","message":"stale"}}"#;
    let (run, _) = staged(plan, plan, stale);
    let err = run.frame().payload.error.clone().expect("refused");
    assert_eq!(
        (err.code, err.child_code.as_deref()),
        (ErrorCode::PlanDryRunFailed, Some("stale_plan"))
    );
}
