//! Views and materialized views on a real PostgreSQL 15: read with every name qualified, a
//! hand-written definition equal to the catalog's once the server has printed it, a column
//! retyped under a view, and the round trip inspect → apply elsewhere → empty plan.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{ApplyOptions, Dialect, Error, InspectScope, apply, comparable, inspect, verify};
use ptah_schema::{PlanOptions, QualifiedName, Schema, read};

const PG: Dialect = Dialect::Postgres;

const HAND_WRITTEN: &str = "
CREATE SCHEMA app;
CREATE TABLE app.users (id bigint PRIMARY KEY, email varchar(100) NOT NULL, active boolean NOT NULL DEFAULT true);
CREATE VIEW app.active_users AS SELECT id, email FROM app.users WHERE active;
CREATE VIEW app.active_count AS SELECT count(*) AS n FROM app.active_users;
CREATE MATERIALIZED VIEW app.domains AS SELECT split_part(email, '@', 2) AS domain, count(*) AS n FROM app.users GROUP BY 1;
COMMENT ON VIEW app.active_users IS 'who can sign in';
COMMENT ON MATERIALIZED VIEW app.domains IS 'refreshed nightly';
";

fn desired(text: &str) -> Schema {
    read::sql::parse(PG, "views.sql", text).expect("the document reads")
}

fn scope() -> InspectScope {
    InspectScope {
        namespaces: Some(["app".to_owned()].into()),
        ..InspectScope::default()
    }
}

async fn plan_against(db: &Fresh, want: &Schema) -> ptah_schema::Plan {
    let mut session = db.session().await;
    let live = inspect(&mut session, &InspectScope::of(want))
        .await
        .expect("inspect");
    let seen = comparable(&mut session, want, &live).await.expect("comparable");
    let planned = ptah_schema::plan(&seen, &live, PG, &PlanOptions::default()).expect("plan");
    session.close().await.expect("close");
    planned
}

async fn apply_plan(db: &Fresh, want: &Schema) -> usize {
    let planned = plan_against(db, want).await;
    let mut session = db.session().await;
    let opts = ApplyOptions {
        scope: InspectScope::of(want),
        ..ApplyOptions::default()
    };
    let report = apply(&mut session, &planned, &opts).await.expect("apply");
    verify(
        &mut session,
        want,
        &InspectScope::of(want),
        &PlanOptions::default(),
    )
    .await
    .expect("converged");
    session.close().await.expect("close");
    report.applied
}

#[tokio::test]
async fn views_are_read_qualified_and_a_hand_written_document_plans_empty_against_them() {
    let db = Fresh::new(PG, "views_pg_read").await;
    db.run(HAND_WRITTEN).await;
    let mut session = db.session().await;
    let live = inspect(&mut session, &scope()).await.expect("inspect");
    session.close().await.expect("close");
    assert_eq!(live.views.len(), 3);
    let active = &live.views[&QualifiedName::new("app", "active_users")];
    assert!(!active.materialized);
    assert!(
        active.definition.contains("FROM app.users"),
        "{}",
        active.definition
    );
    assert_eq!(active.comment.as_deref(), Some("who can sign in"));
    let domains = &live.views[&QualifiedName::new("app", "domains")];
    assert!(domains.materialized);
    assert_eq!(domains.comment.as_deref(), Some("refreshed nightly"));

    let want = desired(HAND_WRITTEN);
    assert_ne!(
        want.views, live.views,
        "the hand-written text is not the catalog's"
    );
    let planned = plan_against(&db, &want).await;
    assert!(planned.is_empty(), "{:#?}", planned.statements);

    let changed = desired(&HAND_WRITTEN.replace("WHERE active;", "WHERE NOT active;"));
    let planned = plan_against(&db, &changed).await;
    let sql: Vec<&str> = planned.statements.iter().map(|s| s.sql.as_str()).collect();
    assert!(
        sql.iter()
            .any(|s| s.starts_with("DROP VIEW \"app\".\"active_users\"")),
        "{sql:#?}"
    );
    assert!(
        sql.iter()
            .any(|s| s.starts_with("DROP VIEW \"app\".\"active_count\"")),
        "a view over it goes too: {sql:#?}"
    );
    db.drop().await;
}

#[tokio::test]
async fn a_column_retyped_under_views_applies_and_converges() {
    let db = Fresh::new(PG, "views_pg_retype").await;
    let want = desired(HAND_WRITTEN);
    assert!(apply_plan(&db, &want).await > 0);
    let wider = desired(&HAND_WRITTEN.replace("varchar(100)", "varchar(300)"));
    let planned = plan_against(&db, &wider).await;
    assert!(
        planned
            .statements
            .iter()
            .any(|s| s.sql.starts_with("DROP MATERIALIZED VIEW")),
        "{:#?}",
        planned.statements
    );
    assert!(apply_plan(&db, &wider).await > 0);
    assert!(plan_against(&db, &wider).await.is_empty());
    db.drop().await;
}

#[tokio::test]
async fn inspected_views_apply_to_an_empty_database_and_plan_empty_there() {
    let source = Fresh::new(PG, "views_pg_source").await;
    source.run(HAND_WRITTEN).await;
    let mut session = source.session().await;
    let inspected = inspect(&mut session, &scope()).await.expect("inspect");
    session.close().await.expect("close");
    let hcl = ptah_schema::write::hcl::to_hcl(PG, &inspected);
    let want = read::hcl::parse(PG, "inspected.hcl", &hcl).expect("the written HCL reads");
    assert_eq!(want.views, inspected.views);

    let target = Fresh::new(PG, "views_pg_target").await;
    assert!(apply_plan(&target, &want).await > 0);
    let mut session = target.session().await;
    let again = inspect(&mut session, &scope()).await.expect("inspect target");
    session.close().await.expect("close");
    assert_eq!(
        again.views, inspected.views,
        "the catalog prints what it was given"
    );
    target.drop().await;
    source.drop().await;
}

#[tokio::test]
async fn a_view_with_options_is_refused_by_name() {
    let db = Fresh::new(PG, "views_pg_options").await;
    db.run("CREATE TABLE t (a int); CREATE VIEW guarded WITH (security_barrier) AS SELECT a FROM t")
        .await;
    let mut session = db.session().await;
    let err = inspect(&mut session, &InspectScope::all())
        .await
        .expect_err("refused");
    assert!(matches!(err, Error::Unsupported { .. }), "{err:?}");
    assert!(err.to_string().contains("public.guarded"), "{err}");
    assert!(err.to_string().contains("security_barrier"), "{err}");
    session.close().await.expect("close");
    db.drop().await;
}
