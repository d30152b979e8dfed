//! `ptah-runner` end to end with the real `ptah` binary on the real PostgreSQL and MariaDB:
//! observe, plan and apply through the runner; a child killed at the execution deadline; refusals
//! before the child starts. Every run is checked for leaked credentials.

mod support;

use std::{collections::BTreeMap, path::Path, process::Command};

use ptah_dataplane::{ErrorCode, Operation, PlanOutcome};
use ptah_testservices::TestServices;
use support::{db_env, deadlines, fresh_database, password_forms, ptah, run_runner, scratch};

const PG_SCHEMA: &str = "CREATE TABLE widgets (id integer PRIMARY KEY, name text NOT NULL);\n";
const MY_SCHEMA: &str = "CREATE TABLE widgets (id int NOT NULL PRIMARY KEY, name varchar(100) NOT NULL);\n";

/// Observe (drift), Plan, Apply, Observe again (no drift), all through the runner.
async fn observe_plan_apply(postgres: bool) {
    let services = TestServices::require();
    let server = if postgres {
        &services.postgres
    } else {
        &services.mysql
    };
    let url = fresh_database(server, postgres).await;
    let secrets = password_forms(&url);
    let work = scratch();
    let schema = work.path().join("schema.sql");
    std::fs::write(&schema, if postgres { PG_SCHEMA } else { MY_SCHEMA }).expect("schema");
    let bin = ptah();
    let mut env = db_env(&url);
    env.insert("PTAH_SCHEMA_FROM".into(), schema.display().to_string());

    // The manager's first Observe is not bound to an identity: it learns it from the frame and
    // binds every later operation to it.
    let mut unbound = env.clone();
    let expected = unbound
        .remove("PTAH_EXPECTED_TARGET_IDENTITY_DIGEST")
        .expect("bound");
    let observed = run_runner("observe", &unbound, &bin, work.path());
    observed.assert_no_secret(&secrets);
    let p = &observed.frame().payload;
    assert_eq!(
        p.target_identity_digest.map(|d| d.to_string()),
        Some(expected),
        "the frame reports the identity found"
    );
    assert_eq!(p.operation, Operation::Observe);
    assert!(p.error.is_none(), "{:?}", p.error);
    assert_eq!(p.child_exit_code, 1, "drift is exit 1");
    let drift = p.drift.as_ref().expect("drift section");
    assert!(drift.drift && drift.finding_count >= 1, "{drift:?}");
    assert!(
        drift.findings.iter().any(|f| f.category == "tables_added"),
        "{drift:?}"
    );
    assert!(
        !serde_json::to_string(drift).expect("json").contains("widgets"),
        "object names leaked"
    );
    assert_eq!(p.mutation_started, None);
    assert!(observed.summary.starts_with("PTAH_RUNNER_SUMMARY_V1 "));

    let planned = run_runner("plan", &env, &bin, work.path());
    planned.assert_no_secret(&secrets);
    let p = &planned.frame().payload;
    assert!(p.error.is_none(), "{:?}", p.error);
    let plan = p.plan.as_ref().expect("plan section");
    assert_eq!(plan.plan_outcome, PlanOutcome::Changes);
    assert!(plan.statement_count >= 1);
    let plan_text = p.stdout.clone().expect("plan bytes");
    assert!(plan_text.contains("widgets"), "the plan names its table");
    // The Plan read the raw drift first, in the same Pod, as an Observe does.
    assert_eq!(p.drift, observed.frame().payload.drift, "the Plan's drift read");

    // The Apply Job mounts the plan as a projected volume of chunk ConfigMaps.
    let plan_dir = projected_plan(work.path(), plan_text.as_bytes(), 3);
    let mut apply = env.clone();
    apply.insert("PTAH_PLAN_FILE".into(), plan_dir.display().to_string());
    apply.insert(
        "PTAH_EXPECTED_PLAN_CONTENT_DIGEST".into(),
        plan.plan_content_digest.to_string(),
    );
    deadlines(&mut apply, 120, 30);
    let applied = run_runner("apply", &apply, &bin, work.path());
    applied.assert_no_secret(&secrets);
    let p = &applied.frame().payload;
    assert!(p.error.is_none(), "{:?}", p.error);
    assert_eq!((p.mutation_started, p.uncertain), (Some(true), Some(false)));
    assert_eq!(p.child_exit_code, 0);
    assert!(
        applied.output.stderr.is_empty(),
        "apply's native output must not leave the runner"
    );

    let again = run_runner("observe", &env, &bin, work.path());
    let p = &again.frame().payload;
    assert_eq!(p.child_exit_code, 0);
    assert!(!p.drift.as_ref().expect("drift").drift, "converged");

    // The proof Plan: no drift, no changes, from one Job.
    let proof = run_runner("plan", &env, &bin, work.path());
    let p = &proof.frame().payload;
    assert!(p.error.is_none(), "{:?}", p.error);
    assert!(!p.drift.as_ref().expect("the Plan's drift read").drift);
    assert_eq!(
        p.plan.as_ref().map(|plan| plan.plan_outcome),
        Some(PlanOutcome::NoChanges)
    );
}

/// `plan` split into `parts` chunks under `parent/plan`, laid out as kubelet's AtomicWriter writes
/// a projected volume: a timestamped payload directory, `..data` linking to it, and every chunk
/// name linking through `..data`.
fn projected_plan(parent: &Path, plan: &[u8], parts: usize) -> std::path::PathBuf {
    let dir = parent.join("plan");
    let stamp = "..2026_11_29_10_00_00.123456789";
    std::fs::create_dir_all(dir.join(stamp)).expect("payload dir");
    let size = plan.len().div_ceil(parts);
    for (i, chunk) in plan.chunks(size).enumerate() {
        let name = ptah_dataplane::env::plan_chunk_name(i);
        std::fs::write(dir.join(stamp).join(&name), chunk).expect("chunk");
        std::os::unix::fs::symlink(format!("..data/{name}"), dir.join(&name)).expect("link");
    }
    std::os::unix::fs::symlink(stamp, dir.join("..data")).expect("..data");
    dir
}

#[tokio::test]
async fn postgres_observe_plan_apply_through_the_runner() {
    observe_plan_apply(true).await;
}

#[tokio::test]
async fn mariadb_observe_plan_apply_through_the_runner() {
    observe_plan_apply(false).await;
}

/// A Plan of `PG_SCHEMA` against a database whose `widgets` lacks `name`, written to a file,
/// and an Apply environment for it; returns (url, client holding the session, apply env).
async fn blocked_apply_setup(work: &Path) -> (String, tokio_postgres::Client, BTreeMap<String, String>) {
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
    let planned = run_runner("plan", &env, &ptah(), work);
    let p = &planned.frame().payload;
    let plan_file = work.join("approved.plan.json");
    std::fs::write(&plan_file, p.stdout.clone().expect("plan")).expect("plan file");
    let digest = p.plan.as_ref().expect("plan").plan_content_digest.to_string();
    env.insert("PTAH_PLAN_FILE".into(), plan_file.display().to_string());
    env.insert("PTAH_EXPECTED_PLAN_CONTENT_DIGEST".into(), digest);
    // No statement lock timeout: the ALTER waits for the table as long as the test holds it.
    env.insert("PTAH_LOCK_TIMEOUT".into(), "0s".into());
    // Hold the table so the ALTER waits.
    client
        .batch_execute("BEGIN; LOCK TABLE widgets IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("lock");
    (url, client, env)
}

/// A schema Apply blocked on a table lock the test holds is stopped at the execution deadline:
/// SIGTERM, then SIGKILL after two thirds of the grace period; the frame says "uncertain".
#[tokio::test]
async fn an_apply_killed_at_the_deadline_is_uncertain() {
    let work = scratch();
    let (url, client, mut apply) = blocked_apply_setup(work.path()).await;
    deadlines(&mut apply, 4, 3);
    let started = std::time::Instant::now();
    let bin = ptah();
    let dir = work.path().to_owned();
    let run = tokio::task::spawn_blocking(move || run_runner("apply", &apply, &bin, &dir))
        .await
        .expect("runner");
    let took = started.elapsed();
    client.batch_execute("ROLLBACK").await.expect("unlock");
    run.assert_no_secret(&password_forms(&url));
    let p = &run.frame().payload;
    let err = p.error.as_ref().expect("an error");
    assert_eq!(err.code, ErrorCode::ExecutionDeadlineExpired, "{err:?}");
    assert_eq!((p.mutation_started, p.uncertain), (Some(true), Some(true)));
    assert!(
        p.child_exit_code > 128,
        "ended by a signal: {}",
        p.child_exit_code
    );
    assert!(
        took.as_secs_f64() < 4.0 + 3.0,
        "took {took:?}, more than deadline + grace"
    );
    assert!(run.summary.contains("\"uncertain\":true"), "{}", run.summary);
}

/// SIGTERM to the runner (the Pod is being deleted) stops a blocked Apply the same way.
#[tokio::test]
async fn sigterm_to_the_runner_stops_the_child_and_still_writes_the_frame() {
    let work = scratch();
    let (url, client, mut apply) = blocked_apply_setup(work.path()).await;
    deadlines(&mut apply, 120, 3);
    let (child, log) = support::spawn_runner("apply", &apply, &ptah(), work.path());
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).expect("pid")).expect("pid");
    let started = std::time::Instant::now();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
    let run = tokio::task::spawn_blocking(move || support::finish(child, &log))
        .await
        .expect("runner");
    let took = started.elapsed();
    client.batch_execute("ROLLBACK").await.expect("unlock");
    run.assert_no_secret(&password_forms(&url));
    let p = &run.frame().payload;
    assert_eq!(
        p.error.as_ref().map(|e| e.code),
        Some(ErrorCode::Terminated),
        "{p:?}"
    );
    assert_eq!((p.mutation_started, p.uncertain), (Some(true), Some(true)));
    assert!(
        took.as_secs_f64() < 3.0,
        "the frame came {took:?} after SIGTERM, past the grace"
    );
}

fn migration(dir: &Path, version: i64, up: &str) {
    std::fs::write(dir.join(format!("{version:010}_canary.up.sql")), up).expect("up");
    std::fs::write(dir.join(format!("{version:010}_canary.down.sql")), "-- none\n").expect("down");
}

fn migration_env(url: &str, dir: &Path, bin: &Path) -> BTreeMap<String, String> {
    let status = Command::new(bin)
        .args(["migrations", "status", "--format", "json"])
        .env_clear()
        .env("PTAH_DB_URL", url)
        .env("PTAH_MIGRATIONS_DIR", dir)
        .env("PTAH_LOG", "warn")
        .output()
        .expect("status");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    // The approved sequence is the executor's own pending selection, as the manager publishes it.
    let report: serde_json::Value = serde_json::from_slice(&status.stdout).expect("json");
    let steps =
        ptah_dataplane::parse_expected_sequence(&report["pending_sequence"].to_string()).expect("a sequence");
    let (json, digest) = ptah_dataplane::expected_sequence(&steps).expect("approvable");
    let mut env = db_env(url);
    env.insert("PTAH_MIGRATIONS_DIR".into(), dir.display().to_string());
    env.insert("PTAH_EXPECTED_MIGRATION_SEQUENCE".into(), json);
    env.insert(
        "PTAH_EXPECTED_MIGRATION_SEQUENCE_DIGEST".into(),
        digest.to_string(),
    );
    deadlines(&mut env, 120, 30);
    env
}

async fn table_exists(url: &str, table: &str) -> bool {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    let row = client
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])
        .await
        .expect("query");
    row.get(0)
}

/// A wrong target identity, a protocol mismatch, a passed deadline or a sequence without its
/// approved digest refuse before the child: the migration that would create `canary` never runs.
/// The same job with the right inputs runs it.
#[tokio::test]
async fn refusals_happen_before_the_child_starts() {
    let services = TestServices::require();
    let url = fresh_database(&services.postgres, true).await;
    let work = scratch();
    let dir = work.path().join("migrations");
    std::fs::create_dir(&dir).expect("dir");
    migration(&dir, 1, "CREATE TABLE canary (id int);\n");
    let bin = ptah();
    let good = migration_env(&url, &dir, &bin);
    let secrets = password_forms(&url);

    let other_db = url.replacen("/runner_", "/other_", 1);
    let mut wrong_identity = good.clone();
    let other = ptah_dataplane::TargetIdentity::from_url(&other_db).expect("identity");
    wrong_identity.insert(
        "PTAH_EXPECTED_TARGET_IDENTITY_DIGEST".into(),
        other.digest().expect("digest").to_string(),
    );
    let mut wrong_protocol = good.clone();
    wrong_protocol.insert("PTAH_RUNNER_PROTOCOL_VERSION".into(), "99".into());
    let mut expired = good.clone();
    deadlines(&mut expired, -5, 30);
    let mut no_grace = good.clone();
    no_grace.remove("PTAH_TERMINATION_GRACE_PERIOD_SECONDS");
    let mut tampered = good.clone();
    tampered.insert(
        "PTAH_EXPECTED_MIGRATION_SEQUENCE_DIGEST".into(),
        ptah_dataplane::sequence_digest("[]").expect("digest").to_string(),
    );
    let mut no_digest = good.clone();
    no_digest.remove("PTAH_EXPECTED_MIGRATION_SEQUENCE_DIGEST");

    for (what, env, code) in [
        (
            "wrong identity",
            &wrong_identity,
            ErrorCode::TargetIdentityMismatch,
        ),
        (
            "protocol mismatch",
            &wrong_protocol,
            ErrorCode::RunnerProtocolMismatch,
        ),
        ("expired deadline", &expired, ErrorCode::DispatchDeadlineExpired),
        ("no grace period", &no_grace, ErrorCode::InvalidInput),
        (
            "tampered sequence digest",
            &tampered,
            ErrorCode::MigrationSequenceMismatch,
        ),
        ("no sequence digest", &no_digest, ErrorCode::InvalidInput),
    ] {
        let run = run_runner("migration-apply", env, &bin, work.path());
        run.assert_no_secret(&secrets);
        let p = &run.frame().payload;
        assert_eq!(p.error.as_ref().map(|e| e.code), Some(code), "{what}: {p:?}");
        assert_eq!(p.child_exit_code, -1, "{what}");
        assert_eq!(p.mutation_started, None, "{what}");
        if code == ErrorCode::TargetIdentityMismatch {
            let actual = ptah_dataplane::TargetIdentity::from_url(&url).expect("identity");
            assert_eq!(
                p.target_identity_digest,
                actual.digest().ok(),
                "the frame names the Pod's target"
            );
        }
        if code == ErrorCode::RunnerProtocolMismatch {
            assert_eq!(p.operation_id, None, "a mismatch frame carries only the error");
            assert_eq!(p.protocol_version, ptah_dataplane::PROTOCOL_VERSION);
        }
        assert!(!table_exists(&url, "canary").await, "{what}: the child ran");
        assert!(
            !table_exists(&url, "schema_migrations").await,
            "{what}: the child ran"
        );
    }

    let run = run_runner("migration-apply", &good, &bin, work.path());
    run.assert_no_secret(&secrets);
    let p = &run.frame().payload;
    assert!(p.error.is_none(), "{p:?}");
    let migrated = p.migration_run.as_ref().expect("run section");
    assert_eq!((migrated.applied_count, migrated.first_applied), (1, Some(1)));
    assert_eq!((p.mutation_started, p.uncertain), (Some(true), Some(false)));
    assert!(
        table_exists(&url, "canary").await,
        "the right inputs run the migration"
    );
    assert!(run.summary.contains("\"appliedCount\":1"), "{}", run.summary);
}

/// A wrong password reaches the child (it is not part of the identity); the child's failure is
/// reported and neither the wrong nor the right password appears anywhere.
#[tokio::test]
async fn a_failing_child_is_reported_without_credentials() {
    let services = TestServices::require();
    let url = fresh_database(&services.mysql, false).await;
    let wrong = {
        let mut u = url::Url::parse(&url).expect("url");
        u.set_password(Some("n0t-the%pass\"word")).expect("password");
        u.to_string()
    };
    let work = scratch();
    let dir = work.path().join("m");
    std::fs::create_dir(&dir).expect("dir");
    let mut env = db_env(&wrong);
    env.insert("PTAH_MIGRATIONS_DIR".into(), dir.display().to_string());
    let run = run_runner("migration-history", &env, &ptah(), work.path());
    let mut secrets = password_forms(&url);
    secrets.extend(password_forms(&wrong));
    secrets.push("n0t-the%pass\"word".into());
    run.assert_no_secret(&secrets);
    let p = &run.frame().payload;
    let err = p.error.as_ref().expect("error");
    assert_eq!(err.code, ErrorCode::ChildFailed);
    assert_eq!(err.child_code.as_deref(), Some("connect"));
    assert_eq!(p.child_exit_code, 2);
}
