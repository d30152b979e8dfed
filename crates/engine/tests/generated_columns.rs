//! Generated columns on a real PostgreSQL 15 and MariaDB 10.11: a hand-written document plans
//! empty against the database it built (the server's added casts are learned, not drift), the
//! catalog reads them back as generated (never as plain columns), changes the server can make in
//! place converge, and changes it cannot are refused before any SQL.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{ApplyOptions, Dialect, InspectScope, apply, comparable, inspect, verify};
use ptah_schema::{Generated, PlanError, PlanOptions, QualifiedName, Schema, Severity, read};

fn document(dialect: Dialect, text: &str) -> Schema {
    read::sql::parse(dialect, "generated.sql", text).expect("the document reads")
}

/// The plan from the live database to `want`, as `ptah schema plan` computes it.
async fn plan(db: &Fresh, dialect: Dialect, want: &Schema) -> Result<ptah_schema::Plan, PlanError> {
    let mut session = db.session().await;
    let live = inspect(&mut session, &InspectScope::of(want))
        .await
        .expect("inspect");
    let want = comparable(&mut session, want, &live).await.expect("comparable");
    session.close().await.expect("close");
    ptah_schema::plan(&want, &live, dialect, &PlanOptions::default())
}

async fn converge(db: &Fresh, dialect: Dialect, want: &Schema) -> ptah_schema::Plan {
    let planned = plan(db, dialect, want).await.expect("plan");
    let mut session = db.session().await;
    let scope = InspectScope::of(want);
    let opts = ApplyOptions {
        scope: scope.clone(),
        ..ApplyOptions::default()
    };
    apply(&mut session, &planned, &opts).await.expect("apply");
    verify(&mut session, want, &scope, &PlanOptions::default())
        .await
        .expect("converged");
    session.close().await.expect("close");
    planned
}

fn generated<'a>(schema: &'a Schema, table: &QualifiedName, column: &str) -> Option<&'a Generated> {
    schema.tables[table].column(column)?.generated.as_ref()
}

const PG_DOCUMENT: &str = "
CREATE TABLE line (
    id integer PRIMARY KEY,
    qty integer NOT NULL,
    price numeric(10,2) NOT NULL,
    total numeric GENERATED ALWAYS AS (qty * price) STORED,
    label text GENERATED ALWAYS AS (upper('x' || id)) STORED NOT NULL
);
CREATE INDEX line_total ON line (total);
";

#[tokio::test]
async fn postgres_generated_columns_apply_read_back_and_refuse_what_the_server_cannot_change() {
    let pg = Dialect::Postgres;
    let db = Fresh::new(pg, "generated_pg").await;
    let want = document(pg, PG_DOCUMENT);
    let line = QualifiedName::new("public", "line");
    let created = converge(&db, pg, &want).await;
    assert!(
        created
            .statements
            .iter()
            .any(|s| s.sql.contains("GENERATED ALWAYS AS (qty * price) STORED")),
        "{:#?}",
        created.statements
    );

    // The catalog says `(qty)::numeric * price`; the document's text is the same expression.
    let mut session = db.session().await;
    let live = inspect(&mut session, &InspectScope::of(&want))
        .await
        .expect("inspect");
    session.close().await.expect("close");
    let total = generated(&live, &line, "total").expect("read back as generated");
    assert!(total.stored);
    assert_ne!(total.expression, "qty * price", "the server adds its cast");
    assert!(
        live.tables[&line]
            .column("total")
            .is_some_and(|c| c.default.is_none())
    );
    let again = plan(&db, pg, &want).await.expect("plan");
    assert!(again.is_empty(), "{:#?}", again.statements);

    // A changed expression cannot be applied in place on PostgreSQL 15: refused, nothing runs.
    let changed = document(pg, &PG_DOCUMENT.replace("qty * price", "qty * price * 2"));
    match plan(&db, pg, &changed).await {
        Err(PlanError::GeneratedColumn { table, column, .. }) => {
            assert_eq!((table.as_str(), column.as_str()), ("public.line", "total"));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }

    // Generated → plain is DROP EXPRESSION: the values stay.
    db.run("INSERT INTO line (id, qty, price) VALUES (1, 3, 2.50)")
        .await;
    let plain = document(
        pg,
        &PG_DOCUMENT.replace(
            "total numeric GENERATED ALWAYS AS (qty * price) STORED",
            "total numeric",
        ),
    );
    let dropped = converge(&db, pg, &plain).await;
    assert_eq!(dropped.statements.len(), 1, "{:#?}", dropped.statements);
    assert!(dropped.statements[0].sql.ends_with("DROP EXPRESSION"));
    assert_eq!(dropped.statements[0].severity, Severity::Warning);
    let mut session = db.session().await;
    let live = inspect(&mut session, &InspectScope::of(&plain))
        .await
        .expect("inspect");
    session.close().await.expect("close");
    assert_eq!(generated(&live, &line, "total"), None);
    db.drop().await;
}

const MARIADB_DOCUMENT: &str = "
CREATE TABLE line (
    id int NOT NULL,
    qty int NOT NULL,
    price decimal(10,2) NOT NULL,
    total decimal(12,2) GENERATED ALWAYS AS (qty * price) STORED,
    code varchar(20) AS (concat('L', id)) VIRTUAL COMMENT 'display code',
    PRIMARY KEY (id),
    KEY line_total (total)
);
";

#[tokio::test]
async fn mysql_generated_columns_apply_read_back_and_change_in_place() {
    let my = Dialect::Mysql;
    let db = Fresh::new(my, "generated_my").await;
    let want = document(my, MARIADB_DOCUMENT);
    let line = QualifiedName::new("", "line");
    converge(&db, my, &want).await;
    let mut session = db.session().await;
    let live = inspect(&mut session, &InspectScope::of(&want))
        .await
        .expect("inspect");
    session.close().await.expect("close");
    assert_eq!(
        generated(&live, &line, "total"),
        Some(&Generated {
            expression: "qty * price".to_owned(),
            stored: true
        })
    );
    assert!(generated(&live, &line, "code").is_some_and(|g| !g.stored));

    // A new expression is one MODIFY COLUMN; the stored values are recomputed.
    db.run("INSERT INTO line (id, qty, price) VALUES (1, 3, 2.50)")
        .await;
    let doubled = document(my, &MARIADB_DOCUMENT.replace("qty * price", "qty * price * 2"));
    let modified = converge(&db, my, &doubled).await;
    assert_eq!(modified.statements.len(), 1, "{:#?}", modified.statements);
    assert!(modified.statements[0].sql.contains("MODIFY COLUMN"));

    // STORED ↔ VIRTUAL is refused: MariaDB cannot switch it in place.
    let virtual_total = document(
        my,
        &MARIADB_DOCUMENT.replace("(qty * price) STORED", "(qty * price * 2) VIRTUAL"),
    );
    assert!(matches!(
        plan(&db, my, &virtual_total).await,
        Err(PlanError::GeneratedColumn { .. })
    ));

    // A plain column made generated loses its values: destructive.
    let made = document(
        my,
        &MARIADB_DOCUMENT
            .replace("qty * price)", "qty * price * 2)")
            .replace("qty int NOT NULL", "qty int AS (id * 3) STORED"),
    );
    let planned = plan(&db, my, &made).await.expect("plan");
    assert!(
        planned
            .statements
            .iter()
            .any(|s| s.severity == Severity::Destructive),
        "{:#?}",
        planned.statements
    );
    converge(&db, my, &made).await;
    db.drop().await;
}
