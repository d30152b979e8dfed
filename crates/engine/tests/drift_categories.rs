//! Every drift category the executor emits converts to a status category: checked against the
//! executor's own list (`DiffCategory::ALL`) and, on real PostgreSQL 15 and MariaDB 10.11, against
//! what `ptah schema drift` computes after out-of-band changes to a declared schema (rows, indexes,
//! constraints, enums, comments, namespaces, tables, columns, extensions, domains, sequences, views,
//! functions, triggers, row-level security, policies, grants, partitions and partition keys; on
//! MariaDB views and triggers). The findings carry categories, counts and
//! severities only: no row value and no object name reaches the status.

mod inspect_support;

use std::collections::{BTreeMap, BTreeSet};

use inspect_support::Fresh;
use ptah_api::schema::{DriftCategory, DriftFinding, DriftSeverity};
use ptah_engine::{Dialect, InspectScope, RowSelection, Session, inspect, mysql_flavor};
use ptah_schema::diff::DiffCategory;
use ptah_schema::{PlanOptions, QualifiedName, Schema};
use serde_json::Value;

#[test]
fn every_category_of_the_executor_vocabulary_converts_to_a_distinct_status_category() {
    let mut seen = BTreeMap::new();
    for c in DiffCategory::ALL {
        let wire = serde_json::to_value(c).expect("serializes");
        assert_eq!(wire, Value::String(c.as_str().to_owned()), "JSON name of {c:?}");
        let converted = DriftCategory::from_executor(c.as_str())
            .unwrap_or_else(|| panic!("executor category {c} has no status category"));
        if let Some(other) = seen.insert(converted, c) {
            panic!("{c} and {other} both become {converted}: the status list is keyed by category");
        }
    }
    assert_eq!(seen.len(), DiffCategory::ALL.len());
    let distinct: BTreeSet<&str> = DiffCategory::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(distinct.len(), DiffCategory::ALL.len(), "ALL has no duplicate");
}

/// What `ptah schema drift --json` puts under `findings`, converted the way the status needs.
struct Observed {
    /// The executor's findings as JSON (what the runner forwards).
    findings: Value,
    /// The raw diff as JSON (stays in the Pod).
    diff: String,
}

/// The declared schema: the whole database as set up, plus the reference rows of `rows_table`.
async fn declare(session: &mut Session, rows_table: QualifiedName) -> Schema {
    // `tr_new` and its column `c_new` were called `tr_old` and `c_old` before (the out-of-band
    // changes rename them back).
    let renamed = QualifiedName::new(rows_table.schema.clone(), "tr_new");
    let scope = InspectScope {
        namespaces: None,
        rows: BTreeMap::from([(
            rows_table,
            RowSelection {
                key: vec!["id".into()],
                columns: vec!["name".into(), "qty".into()],
            },
        )]),
    };
    let mut declared = inspect(session, &scope).await.expect("inspect declared");
    declared.renames.tables.push(ptah_schema::TableRename {
        table: renamed.clone(),
        from: "tr_old".into(),
    });
    declared.renames.columns.push(ptah_schema::ColumnRename {
        table: renamed,
        column: "c_new".into(),
        from: "c_old".into(),
    });
    assert!(
        declared
            .tables
            .values()
            .any(|t| t.rows.as_ref().is_some_and(|r| r.rows.len() == 2)),
        "the declared schema holds two reference rows"
    );
    declared
}

/// Drift of the live database against `declared`, computed the way `ptah schema drift` does.
async fn drift(session: &mut Session, declared: &Schema, dialect: Dialect) -> Observed {
    let options = PlanOptions {
        mysql_flavor: mysql_flavor(session).await.expect("flavor").unwrap_or_default(),
        ..PlanOptions::default()
    };
    let live = inspect(session, &InspectScope::of(declared))
        .await
        .expect("inspect live");
    let found = ptah_schema::drift(declared, &live, dialect, &options);
    Observed {
        findings: serde_json::to_value(&found.findings).expect("findings serialize"),
        diff: serde_json::to_string(&found.diff).expect("diff serializes"),
    }
}

/// Converts every finding as the controller must; panics on any category or severity left over.
fn convert(findings: &Value) -> BTreeMap<String, DriftFinding> {
    let mut out = BTreeMap::new();
    for f in findings.as_array().expect("findings are a list") {
        let category = f["category"].as_str().expect("category");
        let severity = f["severity"].as_str().expect("severity");
        let count = f["count"].as_u64().expect("count");
        let finding = DriftFinding {
            category: DriftCategory::from_executor(category)
                .unwrap_or_else(|| panic!("executor category {category:?} does not convert")),
            count: i32::try_from(count).expect("small count"),
            severity: DriftSeverity::from_executor(severity)
                .unwrap_or_else(|| panic!("executor severity {severity:?} does not convert")),
        };
        assert!(
            out.insert(category.to_owned(), finding).is_none(),
            "{category} reported twice"
        );
    }
    out
}

/// Asserts that nothing but categories, counts and severities leaves the executor's findings.
fn assert_no_values_or_names(
    observed: &Observed,
    converted: &BTreeMap<String, DriftFinding>,
    secrets: &[&str],
) {
    let status = serde_json::to_string(&converted.values().collect::<Vec<_>>()).expect("status JSON");
    let executor = observed.findings.to_string();
    for f in observed.findings.as_array().expect("list") {
        let keys: BTreeSet<&str> = f
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, BTreeSet::from(["category", "count", "severity"]), "{f}");
    }
    for secret in secrets {
        assert!(
            !executor.contains(secret),
            "{secret} in executor findings {executor}"
        );
        assert!(!status.contains(secret), "{secret} in status findings {status}");
    }
    // The raw diff does carry desired values (an update's and an insert's; a delete only its key):
    // the findings are the only part that may leave the Pod.
    assert!(observed.diff.contains("alpha-secret"), "{}", observed.diff);
    assert!(observed.diff.contains("beta-secret"), "{}", observed.diff);
}

fn categories(converted: &BTreeMap<String, DriftFinding>) -> BTreeSet<&str> {
    converted.keys().map(String::as_str).collect()
}

const PG_DECLARED: &str = "
CREATE SCHEMA extra;
CREATE EXTENSION pgcrypto;
CREATE TYPE state AS ENUM ('draft', 'paid');
CREATE TYPE mood AS ENUM ('calm', 'tense');
CREATE TABLE gone (id int PRIMARY KEY);
CREATE TABLE tr_new (id int, c_new int);
CREATE TABLE items (
    id int PRIMARY KEY,
    name text,
    qty int NOT NULL DEFAULT 0,
    note text,
    state state NOT NULL DEFAULT 'draft',
    CONSTRAINT items_qty_nonneg CHECK (qty >= 0),
    CONSTRAINT items_qty_small CHECK (qty < 1000000),
    CONSTRAINT items_name_len CHECK (length(name) < 100)
);
CREATE INDEX items_name_idx ON items (name);
CREATE INDEX items_state_idx ON items (state);
COMMENT ON TABLE items IS 'declared';
INSERT INTO items (id, name, qty) VALUES (1, 'alpha-secret', 1), (2, 'beta-secret', 2);
CREATE DOMAIN positive AS int CHECK (VALUE > 0);
CREATE DOMAIN lost_domain AS text;
CREATE SEQUENCE kept_seq;
CREATE SEQUENCE lost_seq;
CREATE VIEW item_names AS SELECT id, name FROM items;
CREATE VIEW lost_view AS SELECT 1 AS one;
CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE FUNCTION changed() RETURNS int LANGUAGE sql AS 'SELECT 1';
CREATE FUNCTION gone_fn() RETURNS int LANGUAGE sql AS 'SELECT 1';
CREATE TRIGGER items_changed AFTER UPDATE ON items FOR EACH ROW EXECUTE FUNCTION touch();
CREATE TRIGGER items_gone AFTER INSERT ON items FOR EACH ROW EXECUTE FUNCTION touch();
CREATE TABLE guarded (id int PRIMARY KEY, owner text);
ALTER TABLE guarded ENABLE ROW LEVEL SECURITY;
ALTER TABLE guarded FORCE ROW LEVEL SECURITY;
CREATE POLICY lost_policy ON guarded USING (owner = CURRENT_USER);
CREATE POLICY changed_policy ON guarded FOR SELECT USING (true);
GRANT SELECT ON guarded TO PUBLIC;
CREATE TABLE ev (id int NOT NULL, at int NOT NULL) PARTITION BY RANGE (at);
CREATE TABLE ev_a PARTITION OF ev FOR VALUES FROM (0) TO (10);
CREATE TABLE ev_b PARTITION OF ev FOR VALUES FROM (10) TO (20);
CREATE TABLE ev_c (id int NOT NULL, at int NOT NULL);
CREATE TABLE keyed (id int NOT NULL, k int NOT NULL) PARTITION BY LIST (k);
";

const PG_OUT_OF_BAND: &str = "
CREATE OR REPLACE FUNCTION changed() RETURNS int LANGUAGE sql AS 'SELECT 2';
DROP FUNCTION gone_fn();
CREATE FUNCTION stray_fn() RETURNS int LANGUAGE sql AS 'SELECT 3';
DROP TRIGGER items_gone ON items;
DROP TRIGGER items_changed ON items;
CREATE TRIGGER items_changed AFTER UPDATE OR INSERT ON items FOR EACH ROW EXECUTE FUNCTION touch();
CREATE TRIGGER stray_trigger AFTER DELETE ON items FOR EACH ROW EXECUTE FUNCTION touch();
DROP SCHEMA extra;
DROP EXTENSION pgcrypto;
ALTER TYPE state ADD VALUE 'void';
DROP TYPE mood;
CREATE TYPE stray_mood AS ENUM ('x');
DROP TABLE gone;
ALTER TABLE tr_new RENAME TO tr_old;
ALTER TABLE tr_old RENAME COLUMN c_new TO c_old;
CREATE TABLE stray (id int);
COMMENT ON TABLE items IS 'changed out of band';
ALTER TABLE items ADD COLUMN extra int;
ALTER TABLE items DROP COLUMN note;
ALTER TABLE items ALTER COLUMN qty TYPE bigint;
DROP INDEX items_name_idx;
CREATE INDEX items_extra_idx ON items (extra);
DROP INDEX items_state_idx;
CREATE INDEX items_state_idx ON items (state, id);
ALTER TABLE items DROP CONSTRAINT items_qty_small;
ALTER TABLE items ADD CONSTRAINT items_extra_pos CHECK (extra > 0);
ALTER TABLE items DROP CONSTRAINT items_name_len;
ALTER TABLE items ADD CONSTRAINT items_name_len CHECK (length(name) < 50);
UPDATE items SET name = 'changed-secret' WHERE id = 1;
DELETE FROM items WHERE id = 2;
INSERT INTO items (id, name, qty) VALUES (3, 'stray-secret', 3);
ALTER DOMAIN positive SET DEFAULT 1;
DROP DOMAIN lost_domain;
CREATE DOMAIN stray_domain AS int;
ALTER SEQUENCE kept_seq INCREMENT BY 2;
DROP SEQUENCE lost_seq;
CREATE SEQUENCE stray_seq;
CREATE OR REPLACE VIEW item_names AS SELECT id, name, qty FROM items;
DROP VIEW lost_view;
CREATE VIEW stray_view AS SELECT 2 AS two;
ALTER TABLE guarded DISABLE ROW LEVEL SECURITY;
ALTER TABLE guarded NO FORCE ROW LEVEL SECURITY;
ALTER TABLE items ENABLE ROW LEVEL SECURITY;
ALTER TABLE items FORCE ROW LEVEL SECURITY;
DROP POLICY lost_policy ON guarded;
ALTER POLICY changed_policy ON guarded USING (false);
CREATE POLICY stray_policy ON items USING (true);
REVOKE SELECT ON guarded FROM PUBLIC;
GRANT INSERT ON items TO PUBLIC;
ALTER TABLE ev DETACH PARTITION ev_a;
ALTER TABLE ev ATTACH PARTITION ev_a FOR VALUES FROM (0) TO (5);
ALTER TABLE ev DETACH PARTITION ev_b;
ALTER TABLE ev ATTACH PARTITION ev_c FOR VALUES FROM (20) TO (30);
DROP TABLE keyed;
CREATE TABLE keyed (id int NOT NULL, k int NOT NULL) PARTITION BY HASH (k);
";

/// Object names and row values of both scenarios: none may appear in a finding.
const SECRETS: &[&str] = &[
    "secret", "items", "gone", "stray", "extra", "mood", "pgcrypto", "draft", "void", "public", "guarded",
    "policy", "PUBLIC", "ev_", "keyed", "tr_", "c_old", "c_new",
];

#[tokio::test]
async fn postgres_drift_of_every_kind_converts_without_a_category_left_over() {
    let db = Fresh::new(Dialect::Postgres, "drift_pg_categories").await;
    db.run(PG_DECLARED).await;
    let mut session = db.session().await;
    let declared = declare(&mut session, QualifiedName::new("public", "items")).await;
    assert!(declared.namespaces.contains("extra"), "{:?}", declared.namespaces);
    let before = drift(&mut session, &declared, Dialect::Postgres).await;
    assert_eq!(
        before.findings,
        Value::Array(Vec::new()),
        "in sync before the changes"
    );

    db.run(PG_OUT_OF_BAND).await;
    let after = drift(&mut session, &declared, Dialect::Postgres).await;
    let converted = convert(&after.findings);
    // A table's default character set and collation are MySQL's.
    let all: BTreeSet<&str> = DiffCategory::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| *c != "table_options_modified")
        .collect();
    assert_eq!(
        categories(&converted),
        all,
        "every executor category, each triggered once: {}",
        after.findings
    );
    for (category, f) in &converted {
        assert_eq!(f.count, 1, "{category}: {}", after.findings);
    }
    assert_eq!(
        converted["rows_inserted"].category,
        DriftCategory::DataRowsInserted
    );
    assert_eq!(converted["rows_updated"].category, DriftCategory::DataRowsUpdated);
    assert_eq!(converted["rows_deleted"].category, DriftCategory::DataRowsDeleted);
    assert_eq!(converted["rows_deleted"].severity, DriftSeverity::Destructive);
    assert_eq!(
        converted["namespaces_added"].category,
        DriftCategory::NamespacesAdded
    );
    assert_no_values_or_names(&after, &converted, SECRETS);
    session.close().await.expect("close");
    db.drop().await;
}

const MY_DECLARED: &str = "
CREATE TABLE gone (id INT PRIMARY KEY);
CREATE TABLE tr_new (id INT, c_new INT);
CREATE TABLE items (
    id INT PRIMARY KEY,
    name VARCHAR(100),
    qty INT NOT NULL DEFAULT 0,
    note TEXT,
    state ENUM('draft', 'paid') NOT NULL DEFAULT 'draft',
    KEY items_name_idx (name),
    KEY items_state_idx (state),
    CONSTRAINT items_qty_nonneg CHECK (qty >= 0),
    CONSTRAINT items_qty_small CHECK (qty < 1000000),
    CONSTRAINT items_name_len CHECK (char_length(name) < 100)
) COMMENT='declared';
INSERT INTO items (id, name, qty) VALUES (1, 'alpha-secret', 1), (2, 'beta-secret', 2);
CREATE TABLE base (id INT PRIMARY KEY, n INT);
CREATE VIEW base_kept AS SELECT id FROM base;
CREATE VIEW base_gone AS SELECT n FROM base;
CREATE TRIGGER base_changed BEFORE INSERT ON base FOR EACH ROW SET NEW.n = 1;
CREATE TRIGGER base_gone_trg BEFORE UPDATE ON base FOR EACH ROW SET NEW.n = 2;
";

const MY_OUT_OF_BAND: &str = "
DROP TABLE gone;
RENAME TABLE tr_new TO tr_old;
ALTER TABLE tr_old RENAME COLUMN c_new TO c_old;
CREATE TABLE stray (id INT PRIMARY KEY);
ALTER TABLE items COMMENT = 'changed out of band';
ALTER TABLE items DEFAULT COLLATE = utf8mb4_bin;
ALTER TABLE items ADD COLUMN extra INT;
ALTER TABLE items DROP COLUMN note;
ALTER TABLE items MODIFY COLUMN state ENUM('draft', 'paid', 'void') NOT NULL DEFAULT 'draft';
ALTER TABLE items DROP INDEX items_name_idx;
ALTER TABLE items ADD INDEX items_extra_idx (extra);
ALTER TABLE items DROP INDEX items_state_idx, ADD INDEX items_state_idx (state, id);
ALTER TABLE items DROP CONSTRAINT items_qty_small;
ALTER TABLE items ADD CONSTRAINT items_extra_pos CHECK (extra > 0);
ALTER TABLE items DROP CONSTRAINT items_name_len;
ALTER TABLE items ADD CONSTRAINT items_name_len CHECK (char_length(name) < 50);
UPDATE items SET name = 'changed-secret' WHERE id = 1;
DELETE FROM items WHERE id = 2;
INSERT INTO items (id, name, qty) VALUES (3, 'stray-secret', 3);
CREATE VIEW base_stray AS SELECT id, n FROM base;
DROP VIEW base_gone;
CREATE OR REPLACE VIEW base_kept AS SELECT id FROM base WHERE n > 0;
CREATE TRIGGER base_stray_trg AFTER DELETE ON base FOR EACH ROW SET @n = 1;
DROP TRIGGER base_gone_trg;
DROP TRIGGER base_changed;
CREATE TRIGGER base_changed BEFORE INSERT ON base FOR EACH ROW SET NEW.n = 3;
";

#[tokio::test]
async fn mariadb_drift_of_every_kind_converts_without_a_category_left_over() {
    let db = Fresh::new(Dialect::Mysql, "drift_my_categories").await;
    db.run(MY_DECLARED).await;
    let mut session = db.session().await;
    let declared = declare(&mut session, QualifiedName::new("", "items")).await;
    let before = drift(&mut session, &declared, Dialect::Mysql).await;
    assert_eq!(
        before.findings,
        Value::Array(Vec::new()),
        "in sync before the changes"
    );

    db.run(MY_OUT_OF_BAND).await;
    let after = drift(&mut session, &declared, Dialect::Mysql).await;
    let converted = convert(&after.findings);
    // MySQL has no namespaces, enum types, domains, extensions or row-level security, and its
    // grants and sequences are not modelled: an enum is a column type there.
    // Its routines are not modelled (listed as unmodelled instead); its views and triggers are.
    let expected: BTreeSet<&str> = DiffCategory::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| {
            !c.starts_with("namespaces_")
                && !c.starts_with("enums_")
                && !c.starts_with("extensions_")
                && !c.starts_with("domains_")
                && !c.starts_with("sequences_")
                && !c.starts_with("functions_")
                && !c.starts_with("rls_")
                && !c.starts_with("grants_")
                && !c.starts_with("partition")
        })
        .collect();
    assert_eq!(categories(&converted), expected, "{}", after.findings);
    assert_eq!(
        converted["columns_modified"].count, 1,
        "the enum column's labels: {}",
        after.findings
    );
    assert_eq!(converted["rows_updated"].category, DriftCategory::DataRowsUpdated);
    assert_no_values_or_names(&after, &converted, SECRETS);
    session.close().await.expect("close");
    db.drop().await;
}
