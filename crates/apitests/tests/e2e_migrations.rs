//! T4 (`e2e_migrations_<engine>_…`, phases `migrations-postgresql` and `migrations-mysql` of
//! `cargo xtask e2e --suite migrations-<engine>`): the PtahMigration lifecycle on the full local
//! cluster with the manager installed by `helm install` (the locally built images), a real
//! database, the TLS registry and approvals made with `kubectl` by an unprivileged person.
//!
//! Push a migration directory (`ptah migrations push`); a PtahMigration (OnApproval) reads the
//! history (two pending), publishes a PtahMigrationPlan; the person's approval applies them
//! (InSync at the newest version); a new artifact version with two more migrations is planned
//! and applied the same way; (MariaDB) a migration failing halfway is recorded as a Partial,
//! unresolved run that blocks every further Apply until a person repairs the database and
//! acknowledges the run; a modified already-applied file blocks with `HistoryModified`; nothing
//! any Pod, Event, status or plan said contains the database password.

mod common;
mod lifecycle;
mod migrations;

use std::time::{Duration, Instant};

use kube::ResourceExt;
use migrations::*;
use ptah_api::migration::{MigrationPhase, RunOutcome};
use ptah_apitests::ClusterFiles;
use serde_json::json;

async fn lifecycle(engine: Engine) {
    let app = Mig::setup(engine, "e2e-mig").await;
    let _release = Release(app.release_ns.clone());
    let seen = observe_spans(&app.client, &app.ns);
    let t0 = Instant::now();

    // v1: two migrations pending, planned, approved by the person, applied.
    push_migrations(&app.services, &app.repository, "v1", &v1_files());
    app.create_migration("v1", false).await;
    let (m, plan) = app.wait_plan(None, 2).await;
    assert_eq!(
        versions(&plan),
        vec![1, 2],
        "the plan lists the pending migrations"
    );
    assert!(
        !app.engine.has_table(&app.host_url, "items").await,
        "nothing is applied before the approval"
    );
    assert!(applies_of(&seen).is_empty(), "no Apply Job before the approval");
    app.approve(&m, &plan).await;
    let done = app.in_sync(2).await;
    assert_eq!(
        done.status
            .as_ref()
            .and_then(|s| s.last_run.as_ref())
            .map(|r| r.outcome),
        Some(RunOutcome::Applied)
    );
    assert!(app.engine.has_table(&app.host_url, "items").await);
    eprintln!("v1 applied after {:?}", t0.elapsed());

    // v2: two more migrations → a new plan → InSync at 4.
    push_migrations(&app.services, &app.repository, "v2", &v2_files());
    app.point_at("v2").await;
    let (m, plan2) = app.wait_plan(Some(&plan.name_any()), 2).await;
    assert_eq!(versions(&plan2), vec![3, 4]);
    app.approve(&m, &plan2).await;
    app.in_sync(4).await;
    assert!(app.engine.has_table(&app.host_url, "orders").await);
    assert_eq!(
        applies_of(&seen).len(),
        2,
        "one Apply per approved plan: {seen:?}"
    );
    eprintln!("v2 applied after {:?}", t0.elapsed());

    let mut current = 4;
    let mut files = v2_files();
    if engine == Engine::Mariadb {
        // A migration failing halfway: its first DDL commits (MariaDB DDL is not transactional).
        let mut broken = files.clone();
        broken.push((
            5,
            "half",
            "CREATE TABLE half_done (id BIGINT PRIMARY KEY);\nINSERT INTO no_such_table VALUES (1);\n".into(),
        ));
        push_migrations(&app.services, &app.repository, "v3-broken", &broken);
        app.point_at("v3-broken").await;
        let (m, plan3) = app.wait_plan(None, 1).await;
        app.approve(&m, &plan3).await;
        let blocked = app.wait_partial().await;
        let run_id = blocked
            .status
            .as_ref()
            .and_then(|s| s.unresolved_run.as_ref())
            .map(|r| r.operation_id.as_str().to_owned())
            .expect("unresolvedRun");
        assert!(
            app.engine.has_table(&app.host_url, "half_done").await,
            "the first DDL committed"
        );
        let applies = applies_of(&seen);
        tokio::time::sleep(Duration::from_secs(30)).await; // three intervals
        assert_eq!(applies_of(&seen), applies, "no Apply while the run is unresolved");
        let still = app.migrations.get(NAME).await.expect("migration");
        assert_eq!(
            still.status.as_ref().and_then(|s| s.phase),
            Some(MigrationPhase::Blocked)
        );

        // A person repairs the database by hand, fixes the migration and acknowledges the run.
        app.engine
            .exec(
                &app.host_url,
                "DROP TABLE half_done; DELETE FROM schema_migrations WHERE version = 5",
            )
            .await;
        files.push((
            5,
            "half",
            "CREATE TABLE half_done (id BIGINT PRIMARY KEY);\n".into(),
        ));
        push_migrations(&app.services, &app.repository, "v3", &files);
        app.point_at("v3").await;
        let cluster = ClusterFiles::require();
        app.kubectl_create(
            &cluster,
            &json!({
                "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigrationRunAcknowledgment",
                "metadata": {"name": "ack-half", "namespace": app.ns},
                "spec": {"migrationRef": {"name": NAME, "uid": blocked.uid().expect("uid")}, "operationID": run_id}
            }),
            "ack",
        );
        let (m, plan4) = app.wait_plan(Some(&plan3.name_any()), 1).await;
        assert_eq!(versions(&plan4), vec![5]);
        app.approve(&m, &plan4).await;
        let done = app.in_sync(5).await;
        assert!(
            done.status
                .as_ref()
                .and_then(|s| s.resolved_run.as_ref())
                .is_some(),
            "the acknowledgment is recorded as resolvedRun"
        );
        current = 5;
        eprintln!("partial run acknowledged and repaired after {:?}", t0.elapsed());
    }

    // A modified already-applied file: Blocked on HistoryModified, no Job beyond History.
    let mut modified = files.clone();
    modified[0].2 = "CREATE TABLE items (id BIGINT PRIMARY KEY, extra INT);\n".into();
    push_migrations(&app.services, &app.repository, "v-modified", &modified);
    let before = seen_of(&seen, None);
    app.point_at("v-modified").await;
    app.wait("Blocked with reason HistoryModified", |m| {
        m.status.as_ref().is_some_and(|st| {
            st.phase == Some(MigrationPhase::Blocked)
                && st.conditions.iter().any(|c| c.reason == "HistoryModified")
        })
    })
    .await;
    tokio::time::sleep(Duration::from_secs(20)).await;
    let new: Vec<String> = seen
        .lock()
        .expect("seen")
        .iter()
        .filter(|(n, _)| !before.contains(*n))
        .filter(|(_, s)| !s.0.contains("history") && !matches!(s.0.as_str(), "resolve" | "verify"))
        .map(|(n, s)| format!("{n} ({})", s.0))
        .collect();
    assert!(new.is_empty(), "Jobs beyond History while blocked: {new:?}");
    let blocked = app.migrations.get(NAME).await.expect("migration");
    assert_eq!(
        blocked
            .status
            .as_ref()
            .and_then(|s| s.history.as_ref())
            .map(|h| h.modified_versions.clone()),
        Some(vec![1])
    );
    assert_eq!(
        blocked
            .status
            .as_ref()
            .and_then(|s| s.history.as_ref())
            .and_then(|h| h.current_version),
        Some(current)
    );

    let said = app.everything_said().await;
    assert!(said.len() > 1000, "the scan read the run's output");
    assert!(
        !said.contains(&app.password),
        "the database password appeared in a log, Event, status or plan"
    );
    eprintln!("migrations lifecycle done after {:?}", t0.elapsed());
    uninstall(&app.release_ns);
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_migrations_postgresql_lifecycle() {
    lifecycle(Engine::Postgres).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_migrations_mysql_lifecycle() {
    lifecycle(Engine::Mariadb).await;
}
