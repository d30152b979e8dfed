//! T1: the migration operations through `ptah-runner` with the real `ptah` binary on the real
//! PostgreSQL and MariaDB. History reports the executor's own pending selection (versions,
//! checksums, transaction modes, descriptions); an Apply handed that selection as its expected
//! sequence runs it and reports the approved sequence fingerprint; an Apply whose sequence does
//! not have its digest is refused before `ptah` starts, leaving the revision table as it was.

mod support;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::Command,
};

use ptah_dataplane::{
    ErrorCode, MigrationHistoryResult, MigrationOutcome, SequenceStep, env, expected_sequence,
};
use ptah_fingerprint::Digest;
use ptah_testservices::TestServices;
use serde_json::Value;
use support::{db_env, deadlines, fresh_database, password_forms, ptah, run_runner, scratch};

const V1: i64 = 1_785_000_001;
const V2: i64 = 1_785_000_002;
const V3: i64 = 1_785_000_003;
const V4: i64 = 1_785_000_004;

/// Writes `<version>_<description>.up.sql` (and an empty down file); returns the up file's path.
fn migration(dir: &Path, version: i64, description: &str, up: &str) -> PathBuf {
    let up_file = dir.join(format!("{version:010}_{description}.up.sql"));
    std::fs::write(&up_file, up).expect("up");
    std::fs::write(
        dir.join(format!("{version:010}_{description}.down.sql")),
        "-- none\n",
    )
    .expect("down");
    up_file
}

/// Runs `ptah migrations <args> --format json` directly (not through the runner) and returns its
/// JSON document.
fn ptah_json(url: &str, dir: &Path, args: &[&str]) -> Value {
    let out = Command::new(ptah())
        .arg("migrations")
        .args(args)
        .args(["--format", "json"])
        .env_clear()
        .env("PTAH_DB_URL", url)
        .env("PTAH_MIGRATIONS_DIR", dir)
        .env("PTAH_LOG", "warn")
        .output()
        .expect("run ptah");
    assert!(
        out.status.success(),
        "ptah migrations {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON report")
}

/// The revision rows `(version, state, checksum)`, read with the test's own driver.
async fn revision_rows(url: &str, postgres: bool) -> Vec<(i64, String, String)> {
    let sql = "SELECT version, state, checksum FROM schema_migrations ORDER BY version";
    if postgres {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .expect("connect");
        tokio::spawn(conn);
        let rows = client.query(sql, &[]).await.expect("query");
        rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect()
    } else {
        use mysql_async::prelude::Queryable;
        let mut conn = mysql_async::Conn::from_url(url).await.expect("connect");
        let rows: Vec<(i64, String, String)> = conn.query(sql).await.expect("query");
        conn.disconnect().await.expect("disconnect");
        rows
    }
}

fn history(env: &BTreeMap<String, String>, work: &Path, secrets: &[String]) -> MigrationHistoryResult {
    let run = run_runner("migration-history", env, &ptah(), work);
    run.assert_no_secret(secrets);
    let p = &run.frame().payload;
    assert!(p.error.is_none(), "{p:?}");
    assert_eq!((p.child_exit_code, p.mutation_started), (0, None));
    p.migration_history.clone().expect("history section")
}

/// `env` for a migration Apply of `json` whose digest is claimed to be `digest`.
fn apply_env(base: &BTreeMap<String, String>, json: &str, digest: &str) -> BTreeMap<String, String> {
    let mut env = base.clone();
    env.insert(env::EXPECTED_MIGRATION_SEQUENCE.into(), json.to_owned());
    env.insert(env::EXPECTED_MIGRATION_SEQUENCE_DIGEST.into(), digest.to_owned());
    env.insert(env::MIGRATION_LOCK_TIMEOUT.into(), "30s".into());
    deadlines(&mut env, 120, 30);
    env
}

/// An Apply that must be refused before `ptah` starts: the typed code, no child, no mutation,
/// and the revision table exactly as it was.
async fn assert_refused(
    what: &str,
    env: &BTreeMap<String, String>,
    work: &Path,
    (url, postgres): (&str, bool),
    secrets: &[String],
) {
    let before = revision_rows(url, postgres).await;
    let run = run_runner("migration-apply", env, &ptah(), work);
    run.assert_no_secret(secrets);
    let p = &run.frame().payload;
    let err = p
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: not refused: {p:?}"));
    assert_eq!(err.code, ErrorCode::MigrationSequenceMismatch, "{what}: {err:?}");
    assert_eq!(p.child_exit_code, -1, "{what}: the child started");
    assert_eq!(
        (p.mutation_started, p.migration_run.as_ref()),
        (None, None),
        "{what}"
    );
    assert_eq!(
        revision_rows(url, postgres).await,
        before,
        "{what}: the revision table changed"
    );
}

async fn history_then_apply(postgres: bool) {
    let services = TestServices::require();
    let server = if postgres {
        &services.postgres
    } else {
        &services.mysql
    };
    let url = fresh_database(server, postgres).await;
    let secrets = password_forms(&url);
    let work = scratch();
    let dir = work.path().join("migrations");
    std::fs::create_dir(&dir).expect("dir");
    migration(&dir, V1, "create_one", "CREATE TABLE m_one (id int);\n");
    let two = migration(&dir, V2, "create_two", "CREATE TABLE m_two (id int);\n");
    let three = migration(
        &dir,
        V3,
        "create_three",
        "-- +ptah no_transaction\nCREATE TABLE m_three (id int);\n",
    );
    // One of the three applied, by the executor itself.
    let first = ptah_json(&url, &dir, &["up", "--limit", "1"]);
    assert_eq!(first["applied_versions"], serde_json::json!([V1]), "{first}");

    let mut base = db_env(&url);
    base.insert(env::MIGRATIONS_DIR.into(), dir.display().to_string());
    base.insert(env::CONNECT_TIMEOUT.into(), "10s".into());

    let read = history(&base, work.path(), &secrets);
    // The executor lints the pending migrations; the reading carries what it judged.
    assert!(
        read.pending_lint.as_ref().is_some_and(|l| l.judged),
        "{:?}",
        read.pending_lint
    );
    let steps = read.pending_sequence.clone().expect("nothing blocks up");
    let got: Vec<(i64, &str, &str, Option<&str>)> = steps
        .iter()
        .map(|s| {
            (
                s.version,
                s.checksum.as_str(),
                s.transaction.as_str(),
                s.description.as_deref(),
            )
        })
        .collect();
    let sum = |path: &Path| Digest::of(&std::fs::read(path).expect("read")).hex();
    let (sum2, sum3) = (sum(&two), sum(&three));
    assert_eq!(
        got,
        [
            (V2, sum2.as_str(), "file", Some("create_two")),
            (V3, sum3.as_str(), "none", Some("create_three")),
        ],
        "exactly the two pending versions"
    );
    // The executor's own reading agrees step for step, and with the fingerprint it reports.
    let status = ptah_json(&url, &dir, &["status"]);
    let executor: Vec<(i64, String, String)> = status["pending_sequence"]
        .as_array()
        .expect("pending_sequence")
        .iter()
        .map(|e| {
            (
                e["version"].as_i64().expect("version"),
                e["checksum"].as_str().expect("checksum").to_owned(),
                e["transaction"].as_str().expect("transaction").to_owned(),
            )
        })
        .collect();
    let ours: Vec<(i64, String, String)> = steps
        .iter()
        .map(|s| (s.version, s.checksum.clone(), s.transaction.clone()))
        .collect();
    assert_eq!(ours, executor);
    let (json, digest) = expected_sequence(&steps).expect("approvable");
    assert_eq!(read.pending_sequence_fingerprint, Some(digest));
    assert_eq!(
        status["pending_sequence_fingerprint"].as_str(),
        Some(digest.to_string().as_str()),
        "the digest is the executor's fingerprint"
    );
    assert_eq!(
        (read.current_version, read.applied_count, read.pending_count),
        (Some(V1), 1, 2)
    );
    assert!(!read.blocked && read.blocked_reason.is_none() && !read.dirty);
    assert!(read.modified_versions.is_empty() && read.out_of_order_versions.is_empty());
    assert!(read.ahead_versions.is_empty());

    // Tampered: the digest of another sequence, or another sequence under the approved digest.
    let only_two = expected_sequence(&steps[..1]).expect("valid").1.to_string();
    let mut changed = steps.clone();
    changed[1].transaction = "file".to_owned();
    let (changed_json, _) = expected_sequence(&changed).expect("valid");
    let target = (url.as_str(), postgres);
    for (what, env) in [
        ("another digest", apply_env(&base, &json, &only_two)),
        (
            "another sequence",
            apply_env(&base, &changed_json, &digest.to_string()),
        ),
    ] {
        assert_refused(what, &env, work.path(), target, &secrets).await;
    }
    assert_eq!(
        history(&base, work.path(), &secrets).history_fingerprint,
        read.history_fingerprint,
        "refusals left the history as it was"
    );

    let run = run_runner(
        "migration-apply",
        &apply_env(&base, &json, &digest.to_string()),
        &ptah(),
        work.path(),
    );
    run.assert_no_secret(&secrets);
    let p = &run.frame().payload;
    assert!(p.error.is_none(), "{p:?}");
    let migrated = p.migration_run.as_ref().expect("run section");
    assert_eq!(migrated.outcome, MigrationOutcome::Applied);
    assert_eq!(
        (
            migrated.applied_count,
            migrated.first_applied,
            migrated.last_applied
        ),
        (2, Some(V2), Some(V3))
    );
    assert_eq!(
        migrated.sequence_fingerprint, digest,
        "the run reports the approved sequence"
    );
    assert_eq!((p.mutation_started, p.uncertain), (Some(true), Some(false)));
    let rows = revision_rows(&url, postgres).await;
    assert_eq!(
        rows.iter().map(|r| (r.0, r.1.as_str())).collect::<Vec<_>>(),
        [(V1, "applied"), (V2, "applied"), (V3, "applied")]
    );
    let after = history(&base, work.path(), &secrets);
    assert_eq!(after.pending_sequence, Some(Vec::<SequenceStep>::new()));
    assert_eq!(after.history_fingerprint, migrated.history_fingerprint);

    // A second Apply, now with a fourth file pending, under a tampered digest: refused.
    migration(&dir, V4, "create_four", "CREATE TABLE m_four (id int);\n");
    let pending = history(&base, work.path(), &secrets)
        .pending_sequence
        .expect("pending");
    assert_eq!(pending.iter().map(|s| s.version).collect::<Vec<_>>(), [V4]);
    let (four, _) = expected_sequence(&pending).expect("valid");
    let tampered = apply_env(&base, &four, &digest.to_string());
    assert_refused("a stale digest", &tampered, work.path(), target, &secrets).await;
}

#[tokio::test]
async fn postgres_history_reports_the_pending_sequence_and_apply_runs_only_the_approved_one() {
    history_then_apply(true).await;
}

#[tokio::test]
async fn mariadb_history_reports_the_pending_sequence_and_apply_runs_only_the_approved_one() {
    history_then_apply(false).await;
}

/// A directory `up` would refuse: History reports why (redacted, bounded) and no sequence.
#[tokio::test]
async fn a_blocked_history_names_the_reason_and_offers_no_sequence() {
    let services = TestServices::require();
    let url = fresh_database(&services.postgres, true).await;
    let secrets = password_forms(&url);
    let work = scratch();
    let dir = work.path().join("migrations");
    std::fs::create_dir(&dir).expect("dir");
    migration(&dir, V1, "one", "CREATE TABLE b_one (id int);\n");
    migration(&dir, V3, "three", "CREATE TABLE b_three (id int);\n");
    ptah_json(&url, &dir, &["up"]);
    // V2 appears below the current version: out of order, so a linear `up` refuses.
    migration(&dir, V2, "two", "CREATE TABLE b_two (id int);\n");
    let mut base = db_env(&url);
    base.insert(env::MIGRATIONS_DIR.into(), dir.display().to_string());
    let read = history(&base, work.path(), &secrets);
    assert_eq!(read.pending_sequence, None);
    assert!(read.blocked);
    assert_eq!(read.out_of_order_versions, [V2]);
    let reason = read.blocked_reason.expect("a reason");
    assert!(reason.contains(&V2.to_string()), "{reason}");
    assert!(reason.len() <= ptah_dataplane::MAX_BLOCKED_REASON_BYTES);
    assert_eq!(read.pending_sequence_fingerprint, None);
}
