//! Domains on a real PostgreSQL 15: a hand-written document plans empty against the database it
//! built, columns of domain types round-trip through inspect and apply, and a changed domain is
//! altered in place.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{ApplyOptions, Dialect, InspectScope, apply, inspect, verify};
use ptah_schema::{PlanOptions, QualifiedName, Schema, Severity, read};

const PG: Dialect = Dialect::Postgres;

const DOCUMENT: &str = "
CREATE SCHEMA shop;
CREATE TYPE shop.mood AS ENUM ('ok', 'meh');
CREATE DOMAIN shop.amount AS numeric(12,2) DEFAULT 0 NOT NULL CHECK (VALUE >= 0);
CREATE DOMAIN shop.code AS varchar(8) COLLATE \"C\" CONSTRAINT code_shape CHECK (VALUE ~ '^[A-Z]+$') CHECK (length(VALUE) > 1);
CREATE DOMAIN shop.feeling shop.mood;
COMMENT ON DOMAIN shop.amount IS 'money, never negative';
CREATE TABLE shop.item (id bigint PRIMARY KEY, price shop.amount, code shop.code, how shop.feeling);
";

fn document(text: &str) -> Schema {
    read::sql::parse(PG, "domains.sql", text).expect("the document reads")
}

async fn plan(db: &Fresh, want: &Schema) -> ptah_schema::Plan {
    let mut session = db.session().await;
    let live = inspect(&mut session, &InspectScope::of(want))
        .await
        .expect("inspect");
    session.close().await.expect("close");
    ptah_schema::plan(want, &live, PG, &PlanOptions::default()).expect("plan")
}

async fn converge(db: &Fresh, want: &Schema) -> ptah_schema::Plan {
    let planned = plan(db, want).await;
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

#[tokio::test]
async fn hand_written_domains_read_back_equal_from_the_catalog() {
    let db = Fresh::new(PG, "domains_pg_read").await;
    db.run(DOCUMENT).await;
    let want = document(DOCUMENT);
    let amount = &want.domains[&QualifiedName::new("shop", "amount")];
    assert!(amount.not_null);
    assert!(amount.checks.contains_key("amount_check"), "{amount:?}");
    let planned = plan(&db, &want).await;
    assert!(planned.is_empty(), "{:#?}", planned.statements);
    db.drop().await;
}

#[tokio::test]
async fn domains_and_their_columns_apply_to_an_empty_database_and_change_in_place() {
    let source = Fresh::new(PG, "domains_pg_source").await;
    source.run(DOCUMENT).await;
    let mut session = source.session().await;
    let scope = InspectScope {
        namespaces: Some(["shop".to_owned()].into()),
        ..InspectScope::default()
    };
    let inspected = inspect(&mut session, &scope).await.expect("inspect");
    session.close().await.expect("close");
    let hcl = ptah_schema::write::hcl::to_hcl(PG, &inspected);
    let want = read::hcl::parse(PG, "inspected.hcl", &hcl).expect("the written HCL reads");
    assert_eq!(want.domains, inspected.domains, "{hcl}");

    let target = Fresh::new(PG, "domains_pg_target").await;
    let created = converge(&target, &want).await;
    let position = |start: &str| {
        created
            .statements
            .iter()
            .position(|s| s.sql.starts_with(start))
            .unwrap_or_else(|| panic!("{start}: {:#?}", created.statements))
    };
    assert!(position("CREATE TYPE") < position("CREATE DOMAIN \"shop\".\"feeling\""));
    assert!(position("CREATE DOMAIN \"shop\".\"amount\"") < position("CREATE TABLE"));

    let changed = document(
        &DOCUMENT
            .replace(
                "DEFAULT 0 NOT NULL CHECK (VALUE >= 0)",
                "DEFAULT 1 CHECK (VALUE >= 1)",
            )
            .replace(" CHECK (length(VALUE) > 1)", ""),
    );
    let altered = converge(&target, &changed).await;
    let sql: Vec<(&str, Severity)> = altered
        .statements
        .iter()
        .map(|s| (s.sql.as_str(), s.severity))
        .collect();
    assert!(sql.iter().all(|(s, _)| s.starts_with("ALTER DOMAIN")), "{sql:#?}");
    assert!(
        sql.contains(&(
            "ALTER DOMAIN \"shop\".\"code\" DROP CONSTRAINT \"code_check\"",
            Severity::Destructive
        )),
        "{sql:#?}"
    );
    assert!(
        sql.iter()
            .any(|(s, sev)| s.ends_with("DROP NOT NULL") && *sev == Severity::Destructive),
        "{sql:#?}"
    );
    assert!(plan(&target, &changed).await.is_empty());

    let mut gone = changed.clone();
    gone.tables.clear();
    gone.domains.remove(&QualifiedName::new("shop", "code"));
    let dropped = plan(&target, &gone).await;
    let domain_drop = dropped
        .statements
        .iter()
        .find(|s| s.sql == "DROP DOMAIN \"shop\".\"code\"")
        .expect("the domain is dropped");
    assert_eq!(domain_drop.severity, Severity::Destructive);
    assert_eq!(
        dropped.statements.last().map(|s| s.sql.as_str()),
        Some("DROP DOMAIN \"shop\".\"code\""),
        "after the table that uses it"
    );
    target.drop().await;
    source.drop().await;
}
