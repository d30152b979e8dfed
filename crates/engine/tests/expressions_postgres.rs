//! Hand-written expressions on a real PostgreSQL 15: CHECK bodies (table and domain), column
//! defaults, index expressions and predicates and trigger statements that the server stores in
//! its own form plan empty against the database they built; the server is asked once per text,
//! and a database that already holds the declared texts is never asked.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{ApplyOptions, Dialect, InspectScope, apply, comparable, inspect, verify};
use ptah_schema::{PlanOptions, Schema, read};

fn document(text: &str) -> Schema {
    read::sql::parse(Dialect::Postgres, "expressions.sql", text).expect("the document reads")
}

/// The plan from the live database to `want`, as `ptah schema plan` computes it.
async fn plan(db: &Fresh, want: &Schema) -> ptah_schema::Plan {
    let mut session = db.session().await;
    let live = inspect(&mut session, &InspectScope::of(want))
        .await
        .expect("inspect");
    let want = comparable(&mut session, want, &live).await.expect("comparable");
    session.close().await.expect("close");
    ptah_schema::plan(&want, &live, Dialect::Postgres, &PlanOptions::default()).expect("plan")
}

async fn converge(db: &Fresh, want: &Schema) {
    let planned = plan(db, want).await;
    let mut session = db.session().await;
    let scope = InspectScope::of(want);
    let opts = ApplyOptions {
        scope: scope.clone(),
        ..ApplyOptions::default()
    };
    apply(&mut session, &planned, &opts).await.expect("apply");
    session.close().await.expect("close");
    let again = plan(db, want).await;
    assert!(
        again.statements.is_empty(),
        "not converged: {:#?}",
        again.statements.iter().map(|s| &s.sql).collect::<Vec<_>>()
    );
    let mut session = db.session().await;
    verify(&mut session, want, &scope, &PlanOptions::default())
        .await
        .expect("converged");
    session.close().await.expect("close");
}

const DOCUMENT: &str = "
CREATE DOMAIN code AS text CHECK (VALUE IN ('p', 'q'));
CREATE TABLE orders (
    id bigint PRIMARY KEY,
    status text NOT NULL CHECK (status IN ('a', 'b')),
    kind text CHECK (kind <> ALL (ARRAY['x', 'y'])),
    flags bit varying(8) DEFAULT x'1F',
    cost money DEFAULT money '1.50',
    tags integer[] DEFAULT ARRAY[]::int[],
    created timestamp DEFAULT (now() AT TIME ZONE 'utc'),
    email text,
    c code
);
CREATE INDEX orders_active ON orders (id) WHERE status IN ('a', 'b');
CREATE INDEX orders_email ON orders (lower(email)) WHERE id > -1;
CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
CREATE TRIGGER orders_touch BEFORE UPDATE ON orders FOR EACH ROW WHEN (NEW.status IN ('a', 'b')) EXECUTE FUNCTION touch();
CREATE TRIGGER orders_plain BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION touch();
";

#[tokio::test]
async fn hand_written_expressions_converge_and_unchanged_texts_are_not_probed() {
    let db = Fresh::new(Dialect::Postgres, "expressions_pg").await;
    let want = document(DOCUMENT);
    converge(&db, &want).await;

    // The live schema declared as it is read: nothing differs by text, so nothing is borrowed
    // from the server (the comparable schema is the desired one, untouched).
    let mut session = db.session().await;
    let live = inspect(&mut session, &InspectScope::of(&want))
        .await
        .expect("inspect");
    let same = comparable(&mut session, &live, &live).await.expect("comparable");
    assert!(matches!(same, std::borrow::Cow::Borrowed(_)));
    session.close().await.expect("close");

    // A real change is still a change.
    let changed = document(&DOCUMENT.replace("CHECK (status IN ('a', 'b'))", "CHECK (status IN ('a', 'c'))"));
    let planned = plan(&db, &changed).await;
    assert!(
        planned
            .statements
            .iter()
            .any(|s| s.sql.contains("orders_status_check")),
        "{:#?}",
        planned.statements
    );
    db.drop().await;
}
