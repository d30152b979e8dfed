//! Sequences on a real PostgreSQL 15: standalone and owned sequences round-trip through the
//! readers, the catalog and apply; a serial column's implicit sequence stays folded into its
//! column; an owned sequence named like a serial's but with its own options is created before the
//! table (never shadowed by a `serial` spelling); and option, owner and comment changes converge.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{ApplyOptions, Dialect, InspectScope, apply, inspect, verify};
use ptah_schema::{PlanOptions, QualifiedName, Schema, SequenceType, Severity, read};

const PG: Dialect = Dialect::Postgres;

const DOCUMENT: &str = "
CREATE SCHEMA shop;
CREATE SEQUENCE shop.invoice_no AS integer START WITH 1000 INCREMENT BY 10 MAXVALUE 999990 CACHE 5 CYCLE;
COMMENT ON SEQUENCE shop.invoice_no IS 'printed on invoices';
CREATE SEQUENCE shop.countdown INCREMENT BY -1;
CREATE TABLE shop.orders (
    id bigint NOT NULL,
    number integer DEFAULT nextval('shop.invoice_no'::regclass) NOT NULL,
    line serial
);
CREATE SEQUENCE shop.orders_id_seq START WITH 5000;
ALTER SEQUENCE shop.orders_id_seq OWNED BY shop.orders.id;
ALTER TABLE ONLY shop.orders ALTER COLUMN id SET DEFAULT nextval('shop.orders_id_seq'::regclass);
";

fn document(text: &str) -> Schema {
    read::sql::parse(PG, "sequences.sql", text).expect("the document reads")
}

async fn live(db: &Fresh, want: &Schema) -> Schema {
    let mut session = db.session().await;
    let live = inspect(&mut session, &InspectScope::of(want))
        .await
        .expect("inspect");
    session.close().await.expect("close");
    live
}

async fn converge(db: &Fresh, want: &Schema) -> ptah_schema::Plan {
    let planned = ptah_schema::plan(want, &live(db, want).await, PG, &PlanOptions::default()).expect("plan");
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

async fn last_value(db: &Fresh) -> i64 {
    let mut session = db.session().await;
    let value = match &mut session {
        ptah_engine::Session::Postgres { client, .. } => client
            .query_one("SELECT last_value FROM shop.invoice_no", &[])
            .await
            .expect("read the sequence")
            .get(0),
        ptah_engine::Session::MySql(_) => unreachable!("a PostgreSQL session"),
    };
    session.close().await.expect("close");
    value
}

#[tokio::test]
async fn sequences_read_apply_and_read_back_equal_and_serials_stay_folded() {
    let want = document(DOCUMENT);
    let invoice = &want.sequences[&QualifiedName::new("shop", "invoice_no")];
    assert_eq!(
        (
            invoice.data_type,
            invoice.start,
            invoice.increment,
            invoice.min,
            invoice.max
        ),
        (SequenceType::Integer, 1000, 10, 1, 999_990)
    );
    assert!(invoice.cycle);
    let countdown = &want.sequences[&QualifiedName::new("shop", "countdown")];
    assert_eq!(
        (countdown.min, countdown.max, countdown.start),
        (i64::MIN, -1, -1)
    );
    let owned = &want.sequences[&QualifiedName::new("shop", "orders_id_seq")];
    assert_eq!(owned.owned_by.as_ref().map(|o| o.column.as_str()), Some("id"));
    assert!(
        !want
            .sequences
            .contains_key(&QualifiedName::new("shop", "orders_line_seq")),
        "the serial's sequence is part of its column"
    );

    let db = Fresh::new(PG, "sequences_pg").await;
    let created = converge(&db, &want).await;
    let position = |needle: &str| {
        created
            .statements
            .iter()
            .position(|s| s.sql.contains(needle))
            .unwrap_or_else(|| panic!("{needle} not planned: {:#?}", created.statements))
    };
    assert!(position("CREATE SEQUENCE \"shop\".\"orders_id_seq\"") < position("CREATE TABLE"));
    assert!(position("CREATE TABLE") < position("OWNED BY \"shop\".\"orders\".\"id\""));
    assert!(
        created
            .statements
            .iter()
            .any(|s| s.sql.contains("\"line\" serial")),
        "{:#?}",
        created.statements
    );
    let read_back = live(&db, &want).await;
    assert_eq!(read_back.sequences, want.sequences);

    // The catalog read back through schema.hcl is the same document.
    let hcl = ptah_schema::write::hcl::to_hcl(PG, &read_back);
    let again = read::hcl::parse(PG, "inspected.hcl", &hcl).expect("the written HCL reads");
    assert_eq!(again.sequences, read_back.sequences, "{hcl}");

    // Options, owner and comment change in place; the current value stays.
    db.run("SELECT nextval('shop.invoice_no'); SELECT nextval('shop.invoice_no')")
        .await;
    let before = last_value(&db).await;
    let changed = document(
        &DOCUMENT
            .replace(
                "INCREMENT BY 10 MAXVALUE 999990 CACHE 5 CYCLE",
                "INCREMENT BY 20 MAXVALUE 999980 CACHE 5",
            )
            .replace("'printed on invoices'", "'printed on every invoice'")
            .replace("ALTER SEQUENCE shop.orders_id_seq OWNED BY shop.orders.id;\n", "")
            .replace("CREATE SEQUENCE shop.countdown INCREMENT BY -1;\n", ""),
    );
    let altered = converge(&db, &changed).await;
    let kinds: Vec<(&str, Severity)> = altered
        .statements
        .iter()
        .map(|s| (s.sql.split(" \"").next().unwrap_or_default(), s.severity))
        .collect();
    assert_eq!(
        kinds,
        [
            ("ALTER SEQUENCE", Severity::Warning),
            ("COMMENT ON SEQUENCE", Severity::Safe),
            ("ALTER SEQUENCE", Severity::Safe),
            ("DROP SEQUENCE", Severity::Destructive),
        ],
        "{:#?}",
        altered.statements
    );
    assert!(altered.statements[2].sql.ends_with("OWNED BY NONE"));
    let after = last_value(&db).await;
    assert_eq!(after, before, "altering options keeps the current value");

    // Dropping the table drops its serial's sequence with it: only the unowned one is dropped.
    let without_orders = document(
        "CREATE SCHEMA shop;\nCREATE SEQUENCE shop.invoice_no AS integer START WITH 1000 INCREMENT BY 20 \
         MAXVALUE 999980 CACHE 5;\nCOMMENT ON SEQUENCE shop.invoice_no IS 'printed on every invoice';\n\
         CREATE TABLE shop.other (id int);\n",
    );
    let dropped = converge(&db, &without_orders).await;
    let drops: Vec<&str> = dropped
        .statements
        .iter()
        .filter(|s| s.sql.starts_with("DROP SEQUENCE"))
        .map(|s| s.sql.as_str())
        .collect();
    assert_eq!(drops, ["DROP SEQUENCE \"shop\".\"orders_id_seq\""]);
    db.drop().await;
}
