//! Functions, procedures and triggers on a real PostgreSQL 15: created with SQL as pg_dump writes
//! it, inspected, compared with the same SQL read as a document (an empty plan), and carried to an
//! empty database by a plan (an empty re-plan).

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{ApplyOptions, Dialect, InspectScope, apply, comparable, inspect, verify};
use ptah_schema::{PlanOptions, QualifiedName, RoutineKind, Schema, Volatility};

const PG: Dialect = Dialect::Postgres;

/// In pg_dump's words (its `--schema-only` output for these objects, ownership lines aside).
const DUMP: &str = r#"
CREATE SCHEMA app;
CREATE TABLE app.users (
    id integer NOT NULL,
    email text,
    updated_at timestamp with time zone
);
CREATE TABLE public.audit (
    id bigint NOT NULL,
    what text NOT NULL
);
CREATE FUNCTION app.touch() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END;
$$;
COMMENT ON FUNCTION app.touch() IS 'sets updated_at';
CREATE FUNCTION app.add(a integer, b integer DEFAULT 2, OUT s integer, INOUT c text DEFAULT 'x'::text) RETURNS record
    LANGUAGE sql IMMUTABLE STRICT
    AS $$SELECT a + b, c$$;
CREATE FUNCTION app.add(a text) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT a || 'it''s' $$;
CREATE FUNCTION app.active_users(since timestamp with time zone) RETURNS SETOF app.users
    LANGUAGE sql STABLE
    AS $$SELECT * FROM app.users WHERE updated_at > since$$;
CREATE FUNCTION public.pairs(n integer) RETURNS TABLE(x integer, y text)
    LANGUAGE sql
    AS $$ SELECT n, 'y' $$;
CREATE PROCEDURE public.purge(IN days integer DEFAULT 30)
    LANGUAGE plpgsql
    AS $$ BEGIN DELETE FROM public.audit WHERE id < days; END $$;
COMMENT ON PROCEDURE public.purge(IN days integer) IS 'old rows';
CREATE TRIGGER users_touch BEFORE UPDATE ON app.users FOR EACH ROW EXECUTE FUNCTION app.touch();
CREATE TRIGGER users_email AFTER INSERT OR UPDATE OF email ON app.users FOR EACH ROW WHEN ((new.email IS NOT NULL)) EXECUTE FUNCTION app.touch();
"#;

/// Runs a script in one batch (the support's splitter does not know dollar quotes spanning lines).
async fn load(db: &Fresh, sql: &str) {
    let mut session = db.session().await;
    session.batch(sql).await.expect("load");
    session.close().await.expect("close");
}

fn scope() -> InspectScope {
    InspectScope {
        namespaces: Some(["app".to_owned(), "public".to_owned()].into()),
        ..InspectScope::default()
    }
}

fn plan(desired: &Schema, actual: &Schema) -> ptah_schema::Plan {
    ptah_schema::plan(desired, actual, PG, &PlanOptions::default()).expect("plan")
}

fn sqls(p: &ptah_schema::Plan) -> Vec<&str> {
    p.statements.iter().map(|s| s.sql.as_str()).collect()
}

#[tokio::test]
async fn routines_and_triggers_inspect_as_pg_dump_prints_them() {
    let db = Fresh::new(PG, "routines_pg").await;
    load(&db, DUMP).await;
    let mut session = db.session().await;
    let live = inspect(&mut session, &scope()).await.expect("inspect");
    session.close().await.expect("close");

    assert_eq!(live.routines.len(), 6, "{:#?}", live.routines.keys());
    assert_eq!(live.triggers.len(), 2);
    let add =
        &live.routines[&QualifiedName::new("app", "add(a integer, b integer, OUT s integer, INOUT c text)")];
    assert_eq!(
        add.arguments,
        "a integer, b integer DEFAULT 2, OUT s integer, INOUT c text DEFAULT 'x'::text"
    );
    assert_eq!((add.volatility, add.strict), (Volatility::Immutable, true));
    let active = &live.routines[&QualifiedName::new("app", "active_users(since timestamp with time zone)")];
    assert_eq!(
        active.returns.as_deref(),
        Some("SETOF app.users"),
        "qualified as pg_dump prints it, whatever search_path the inspection uses"
    );
    let purge = &live.routines[&QualifiedName::new("public", "purge(IN days integer)")];
    assert_eq!(
        (purge.kind, purge.returns.as_deref()),
        (RoutineKind::Procedure, None)
    );
    assert_eq!(purge.comment.as_deref(), Some("old rows"));
    let touch = &live.triggers[&QualifiedName::new("app", "users.users_touch")];
    assert_eq!(
        touch.definition,
        "CREATE TRIGGER users_touch BEFORE UPDATE ON app.users FOR EACH ROW EXECUTE FUNCTION app.touch()"
    );

    let read = ptah_schema::read::sql::parse(PG, "dump.sql", DUMP).expect("reads");
    assert_eq!(read.routines, live.routines);
    assert_eq!(read.triggers, live.triggers);
    let p = plan(&read, &live);
    assert!(p.is_empty(), "{:#?}", sqls(&p));
    db.drop().await;
}

#[tokio::test]
async fn inspected_routines_apply_to_an_empty_database_and_replan_empty() {
    let source = Fresh::new(PG, "routines_pg_src").await;
    load(&source, DUMP).await;
    let mut session = source.session().await;
    let desired = inspect(&mut session, &scope()).await.expect("inspect source");
    session.close().await.expect("close");

    let target = Fresh::new(PG, "routines_pg_dst").await;
    target.run("CREATE SCHEMA app").await;
    let mut session = target.session().await;
    let empty = inspect(&mut session, &scope()).await.expect("inspect target");
    let planned = plan(&desired, &empty);
    let opts = ApplyOptions {
        scope: scope(),
        ..ApplyOptions::default()
    };
    apply(&mut session, &planned, &opts)
        .await
        .unwrap_or_else(|e| panic!("apply: {e}\n{:#?}", sqls(&planned)));
    let after = inspect(&mut session, &scope()).await.expect("inspect again");
    session.close().await.expect("close");
    assert_eq!(after.routines, desired.routines);
    assert_eq!(after.triggers, desired.triggers);
    let again = plan(&desired, &after);
    assert!(again.is_empty(), "{:#?}", sqls(&again));
    target.drop().await;
    source.drop().await;
}

/// As a person writes them: short type names, unqualified names, defaults without casts.
const HAND_WRITTEN: &str = r"
CREATE TABLE users (id int PRIMARY KEY, email varchar(100));
CREATE FUNCTION lower_email(e varchar(100) DEFAULT 'x') RETURNS text LANGUAGE sql IMMUTABLE AS 'SELECT lower(e)';
CREATE FUNCTION all_users() RETURNS SETOF users LANGUAGE sql STABLE AS 'SELECT * FROM users';
CREATE FUNCTION pairs(n int) RETURNS TABLE(x int, y text) LANGUAGE sql AS $$ SELECT n, 'y' $$;
CREATE PROCEDURE purge(days int DEFAULT 30) LANGUAGE plpgsql AS $$ BEGIN DELETE FROM users WHERE id < days; END $$;
";

#[tokio::test]
async fn hand_written_signatures_compare_in_the_servers_spelling() {
    let db = Fresh::new(PG, "routines_pg_hand").await;
    load(&db, HAND_WRITTEN).await;
    let declared = ptah_schema::read::sql::parse(PG, "schema.sql", HAND_WRITTEN).expect("reads");
    let mut session = db.session().await;
    let live = inspect(&mut session, &InspectScope::of(&declared))
        .await
        .expect("inspect");
    let raw = plan(&declared, &live);
    assert!(!raw.is_empty(), "`int` is not the catalog's `integer`");

    let desired = comparable(&mut session, &declared, &live)
        .await
        .expect("canonical")
        .into_owned();
    let p = plan(&desired, &live);
    assert!(p.is_empty(), "{:#?}", sqls(&p));
    let lower = &desired.routines[&QualifiedName::new("public", "lower_email(e character varying)")];
    assert_eq!(
        lower.arguments,
        "e character varying DEFAULT 'x'::character varying"
    );
    let all = &desired.routines[&QualifiedName::new("public", "all_users()")];
    assert_eq!(all.returns.as_deref(), Some("SETOF public.users"));

    // The step leaves nothing behind, and a signature the server cannot create stays as written.
    let ghost = ptah_schema::read::sql::parse(
        PG,
        "schema.sql",
        "CREATE FUNCTION f(a ghost_type) RETURNS int LANGUAGE sql AS 'SELECT 1';",
    )
    .expect("reads");
    let seen = comparable(&mut session, &ghost, &live).await.expect("canonical");
    assert_eq!(*seen, ghost);
    let after = inspect(&mut session, &InspectScope::of(&declared))
        .await
        .expect("inspect");
    assert_eq!(after, live, "the rolled-back transaction left nothing");
    session.close().await.expect("close");

    // Apply verifies with the same step: a hand-written document converges.
    let target = Fresh::new(PG, "routines_pg_hand_dst").await;
    let mut session = target.session().await;
    let empty = inspect(&mut session, &InspectScope::of(&declared))
        .await
        .expect("inspect");
    let planned = plan(&declared, &empty);
    let opts = ApplyOptions {
        scope: InspectScope::of(&declared),
        ..ApplyOptions::default()
    };
    apply(&mut session, &planned, &opts)
        .await
        .unwrap_or_else(|e| panic!("apply: {e}\n{:#?}", sqls(&planned)));
    verify(
        &mut session,
        &declared,
        &InspectScope::of(&declared),
        &PlanOptions::default(),
    )
    .await
    .expect("converged");
    session.close().await.expect("close");
    target.drop().await;
    db.drop().await;
}

#[test]
fn a_routine_or_trigger_alone_brings_its_namespace_into_scope() {
    let read = ptah_schema::read::sql::parse(PG, "dump.sql", DUMP).expect("reads");
    let only_program = Schema {
        routines: read.routines.clone(),
        triggers: read.triggers.clone(),
        ..Schema::default()
    };
    let scope = InspectScope::of(&only_program);
    let namespaces: Vec<&str> = scope.namespaces.iter().flatten().map(String::as_str).collect();
    assert_eq!(namespaces, ["app", "public"]);
}
