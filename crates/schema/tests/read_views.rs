//! PostgreSQL views in SQL documents: pg_dump's text read as written, comments, and what the
//! model does not hold refused by name at its line and column.

use ptah_schema::read::{ReadError, sql};
use ptah_schema::{Dialect, QualifiedName, Schema};

const PG: Dialect = Dialect::Postgres;

const DUMPED: &str = "SET client_min_messages = warning;
CREATE SCHEMA billing;
CREATE TABLE billing.ledger_entry (
    account character varying(32) NOT NULL,
    debit numeric(16,2) DEFAULT 0 NOT NULL
);

--
-- Name: ledger_balance; Type: MATERIALIZED VIEW; Schema: billing; Owner: app
--

CREATE MATERIALIZED VIEW billing.ledger_balance AS
 SELECT ledger_entry.account,
    sum(ledger_entry.debit) AS balance
   FROM billing.ledger_entry
  GROUP BY ledger_entry.account
  WITH NO DATA;

ALTER TABLE billing.ledger_balance OWNER TO app;
COMMENT ON MATERIALIZED VIEW billing.ledger_balance IS 'Refreshed nightly';

CREATE VIEW billing.big AS
 SELECT ledger_balance.account
   FROM billing.ledger_balance
  WHERE (ledger_balance.balance > (100)::numeric);
COMMENT ON VIEW billing.big IS 'it''s big';
";

fn read(text: &str) -> Result<Schema, ReadError> {
    sql::parse(PG, "dump.sql", text)
}

#[test]
fn a_dumped_materialized_view_and_a_view_over_it_read_as_written() {
    let schema = read(DUMPED).expect("reads");
    let balance = &schema.views[&QualifiedName::new("billing", "ledger_balance")];
    assert!(balance.materialized);
    assert_eq!(
        balance.definition,
        "SELECT ledger_entry.account,\n    sum(ledger_entry.debit) AS balance\n   FROM billing.ledger_entry\n  GROUP BY ledger_entry.account",
        "WITH NO DATA is not part of the query"
    );
    assert_eq!(balance.comment.as_deref(), Some("Refreshed nightly"));
    let big = &schema.views[&QualifiedName::new("billing", "big")];
    assert!(!big.materialized);
    assert!(big.definition.ends_with("(100)::numeric)"), "{}", big.definition);
    assert_eq!(big.comment.as_deref(), Some("it's big"));
}

#[test]
fn or_replace_replaces_and_a_second_view_of_a_name_is_refused() {
    let base = "CREATE TABLE t (a int);\nCREATE VIEW v AS SELECT a FROM t;\n";
    let replaced = read(&format!(
        "{base}CREATE OR REPLACE VIEW v AS SELECT a + 1 AS b FROM t;\n"
    ))
    .expect("reads");
    assert_eq!(
        replaced.views[&QualifiedName::new("public", "v")].definition,
        "SELECT a + 1 AS b FROM t"
    );
    let twice = read(&format!("{base}CREATE VIEW v AS SELECT a FROM t;\n")).expect_err("refused");
    assert!(matches!(twice, ReadError::Duplicate { .. }), "{twice}");
    let over_table = read("CREATE TABLE t (a int);\nCREATE VIEW t AS SELECT 1 AS a;\n").expect_err("refused");
    assert!(matches!(over_table, ReadError::Duplicate { .. }), "{over_table}");
}

#[test]
fn what_a_view_model_does_not_hold_is_refused_by_name_where_it_stands() {
    let cases: &[(&str, &str)] = &[
        (
            "CREATE VIEW v WITH (security_barrier) AS SELECT a FROM t",
            "security_barrier",
        ),
        (
            "CREATE VIEW v AS SELECT a FROM t WITH CASCADED CHECK OPTION",
            "CHECK OPTION",
        ),
        ("CREATE TEMP VIEW v AS SELECT a FROM t", "TEMPORARY"),
        ("CREATE RECURSIVE VIEW v (a) AS SELECT 1", "RECURSIVE"),
        ("CREATE VIEW v (x) AS SELECT a FROM t", "column list"),
        (
            "CREATE MATERIALIZED VIEW v AS SELECT a FROM t;\nCREATE INDEX i ON v (a)",
            "is a view",
        ),
    ];
    for (statement, named) in cases {
        let text = format!("CREATE TABLE t (a int);\n{statement};\n");
        let err = read(&text).expect_err(statement);
        assert!(matches!(err, ReadError::Unsupported { .. }), "{statement}: {err}");
        assert!(err.to_string().contains(named), "{statement}: {err}");
        let at = err.location().expect("located");
        assert!(at.line >= 2 && at.column == 1, "{statement}: {at:?}");
    }
}
