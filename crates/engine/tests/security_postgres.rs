//! Row-level security, policies and table grants on a real PostgreSQL 15: a hand-written
//! document applies to an empty database and plans empty against it, the catalog reads back what
//! the document declares, and a changed policy and grants converge.

mod inspect_support;

use inspect_support::{Fresh, admin};
use ptah_engine::{ApplyOptions, Dialect, InspectScope, apply, inspect, verify};
use ptah_schema::{PlanOptions, QualifiedName, Schema, Severity, read};

const PG: Dialect = Dialect::Postgres;

/// The roles the documents grant to; roles are cluster-wide and out of the model's scope, so
/// the test makes them (every test that needs them may run at once: a duplicate is fine).
const ROLES: &str = "DO $$ BEGIN
  CREATE ROLE ptah_reader NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
DO $$ BEGIN
  CREATE ROLE ptah_writer NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$";

const DOCUMENT: &str = "
CREATE SCHEMA app;
CREATE TABLE app.doc (id bigint PRIMARY KEY, owner text NOT NULL, tenant integer, body text);
ALTER TABLE app.doc ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.doc FORCE ROW LEVEL SECURITY;
CREATE POLICY own ON app.doc FOR SELECT TO ptah_reader, ptah_writer USING (owner = CURRENT_USER);
CREATE POLICY tenant_only ON app.doc AS RESTRICTIVE
  USING (tenant = current_setting('app.tenant')::integer) WITH CHECK (tenant = current_setting('app.tenant')::integer);
CREATE POLICY ins ON app.doc FOR INSERT TO ptah_writer
  WITH CHECK (owner = CURRENT_USER AND body IS NOT NULL AND id IN (SELECT d.id FROM app.doc d));
GRANT SELECT ON app.doc TO ptah_reader;
GRANT SELECT, INSERT, UPDATE ON app.doc TO ptah_writer WITH GRANT OPTION;
GRANT DELETE ON app.doc TO ptah_writer;
GRANT SELECT ON app.doc TO PUBLIC;
";

async fn roles() {
    let mut session = admin(PG).await;
    session.batch(ROLES).await.expect("roles");
    session.close().await.expect("close");
}

fn document(text: &str) -> Schema {
    read::sql::parse(PG, "security.sql", text).expect("the document reads")
}

fn scope() -> InspectScope {
    InspectScope {
        namespaces: Some(["app".to_owned()].into()),
        ..InspectScope::default()
    }
}

async fn live(db: &Fresh) -> Schema {
    let mut session = db.session().await;
    let live = inspect(&mut session, &scope()).await.expect("inspect");
    session.close().await.expect("close");
    live
}

async fn converge(db: &Fresh, want: &Schema) -> ptah_schema::Plan {
    let planned = ptah_schema::plan(want, &live(db).await, PG, &PlanOptions::default()).expect("plan");
    let mut session = db.session().await;
    let opts = ApplyOptions {
        scope: scope(),
        ..ApplyOptions::default()
    };
    apply(&mut session, &planned, &opts).await.expect("apply");
    verify(&mut session, want, &scope(), &PlanOptions::default())
        .await
        .expect("converged");
    session.close().await.expect("close");
    planned
}

#[tokio::test]
async fn a_hand_written_document_reads_back_equal_from_the_catalog() {
    roles().await;
    let db = Fresh::new(PG, "security_pg_read").await;
    db.run(DOCUMENT).await;
    let want = document(DOCUMENT);
    let live = live(&db).await;
    let doc = QualifiedName::new("app", "doc");
    assert_eq!(live.tables[&doc].security, want.tables[&doc].security);
    let planned = ptah_schema::plan(&want, &live, PG, &PlanOptions::default()).expect("plan");
    assert!(planned.is_empty(), "{:#?}", planned.statements);
    db.drop().await;
}

#[tokio::test]
async fn security_applies_to_an_empty_database_and_a_changed_policy_converges() {
    roles().await;
    let db = Fresh::new(PG, "security_pg_apply").await;
    let want = document(DOCUMENT);
    let created = converge(&db, &want).await;
    assert!(
        created
            .statements
            .iter()
            .any(|s| s.sql.starts_with("CREATE POLICY \"ins\"")),
        "{:#?}",
        created.statements
    );
    let doc = QualifiedName::new("app", "doc");
    assert_eq!(live(&db).await.tables[&doc].security, want.tables[&doc].security);

    // Through HCL and back: the inspected document plans nothing either.
    let hcl = ptah_schema::write::hcl::to_hcl(PG, &live(&db).await);
    let reread = read::hcl::parse(PG, "inspected.hcl", &hcl).expect("the written HCL reads");
    let again = ptah_schema::plan(&reread, &live(&db).await, PG, &PlanOptions::default()).expect("plan");
    assert!(again.is_empty(), "{hcl}\n{:#?}", again.statements);

    let changed = document(
        &DOCUMENT
            .replace("USING (owner = CURRENT_USER)", "USING (owner = SESSION_USER)")
            .replace("FOR INSERT TO ptah_writer", "FOR UPDATE TO ptah_writer")
            .replace("ALTER TABLE app.doc FORCE ROW LEVEL SECURITY;\n", "")
            .replace(
                "GRANT DELETE ON app.doc TO ptah_writer;\n",
                "GRANT TRUNCATE ON app.doc TO ptah_reader;\n",
            )
            .replace(" WITH GRANT OPTION", ""),
    );
    let altered = converge(&db, &changed).await;
    let sql: Vec<(&str, Severity)> = altered
        .statements
        .iter()
        .map(|s| (s.sql.as_str(), s.severity))
        .collect();
    for expected in [
        (
            "ALTER POLICY \"own\" ON \"app\".\"doc\" USING (owner = session_user)",
            Severity::Warning,
        ),
        ("DROP POLICY \"ins\" ON \"app\".\"doc\"", Severity::Destructive),
        (
            "ALTER TABLE \"app\".\"doc\" NO FORCE ROW LEVEL SECURITY",
            Severity::Warning,
        ),
        (
            "REVOKE DELETE ON TABLE \"app\".\"doc\" FROM \"ptah_writer\"",
            Severity::Warning,
        ),
        (
            "REVOKE GRANT OPTION FOR SELECT, INSERT, UPDATE ON TABLE \"app\".\"doc\" FROM \"ptah_writer\"",
            Severity::Warning,
        ),
        (
            "GRANT TRUNCATE ON TABLE \"app\".\"doc\" TO \"ptah_reader\"",
            Severity::Warning,
        ),
    ] {
        assert!(sql.contains(&expected), "{expected:?} in {sql:#?}");
    }
    assert!(
        sql.iter()
            .any(|(s, _)| s.starts_with("CREATE POLICY \"ins\" ON \"app\".\"doc\" FOR UPDATE")),
        "{sql:#?}"
    );
    assert_eq!(
        live(&db).await.tables[&doc].security,
        changed.tables[&doc].security
    );

    // Taking it all away disables row-level security, drops the policies and revokes the grants.
    let bare = document(
        "CREATE SCHEMA app;\nCREATE TABLE app.doc (id bigint PRIMARY KEY, owner text NOT NULL, tenant integer, body text);",
    );
    let removed = converge(&db, &bare).await;
    assert!(
        removed.statements.iter().any(
            |s| s.sql == "ALTER TABLE \"app\".\"doc\" DISABLE ROW LEVEL SECURITY"
                && s.severity == Severity::Destructive
        ),
        "{:#?}",
        removed.statements
    );
    assert!(live(&db).await.tables[&doc].security.is_empty());
    db.drop().await;
}

#[tokio::test]
async fn a_policy_written_loosely_is_compared_as_the_server_prints_it() {
    let db = Fresh::new(PG, "security_pg_loose").await;
    let loose = "
CREATE TABLE doc (id bigint PRIMARY KEY, tenant integer, parent bigint);
ALTER TABLE doc ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_only ON doc USING (tenant = current_setting('app.tenant')::int)
  WITH CHECK (parent IS NULL OR parent IN (SELECT id FROM doc));
";
    let want = document(loose);
    let public = InspectScope {
        namespaces: Some(["public".to_owned()].into()),
        ..InspectScope::default()
    };
    let mut session = db.session().await;
    let empty = inspect(&mut session, &public).await.expect("inspect");
    let planned = ptah_schema::plan(&want, &empty, PG, &PlanOptions::default()).expect("plan");
    let opts = ApplyOptions {
        scope: public.clone(),
        ..ApplyOptions::default()
    };
    apply(&mut session, &planned, &opts).await.expect("apply");
    let live = inspect(&mut session, &public).await.expect("inspect");
    let doc = QualifiedName::new("public", "doc");
    let (have, written) = (
        &live.tables[&doc].security.policies["tenant_only"],
        &want.tables[&doc].security.policies["tenant_only"],
    );
    assert_ne!(have.using, written.using, "the catalog spells it its own way");
    assert_ne!(have.check, written.check, "the catalog qualifies the table");
    let same = ptah_engine::comparable(&mut session, &want, &live)
        .await
        .expect("comparable");
    let replanned = ptah_schema::plan(&same, &live, PG, &PlanOptions::default()).expect("plan");
    assert!(replanned.is_empty(), "{:#?}", replanned.statements);
    verify(&mut session, &want, &public, &PlanOptions::default())
        .await
        .expect("the loose document verifies against what it built");

    // A real change still shows.
    let changed = document(&loose.replace("::int)", "::int + 1)"));
    let differs = ptah_engine::comparable(&mut session, &changed, &live)
        .await
        .expect("comparable");
    let plan = ptah_schema::plan(&differs, &live, PG, &PlanOptions::default()).expect("plan");
    assert_eq!(plan.statements.len(), 1, "{:#?}", plan.statements);
    assert!(plan.statements[0].sql.starts_with("ALTER POLICY \"tenant_only\""));
    session.close().await.expect("close");
    db.drop().await;
}
