//! `ptah schema inspect|plan|drift` list the objects the model does not hold (here a PostgreSQL
//! range type and moving aggregate, a MariaDB sequence and sub-partitioned table) instead of leaving them
//! out without a word, and the inspected text, with those notices as comments, reads back as a
//! document whose plan is empty (on MariaDB with a view, a trigger, an event and a procedure, which
//! are modelled there).

mod schema_support;

use ptah_engine::Dialect;
use ptah_testservices::unique_name;
use schema_support::{Fresh, ptah};

async fn check(dialect: Dialect) {
    let db = Fresh::new(dialect, "unmodelled_cli").await;
    let (setup, view, routine): (&[&str], _, _) = match dialect {
        Dialect::Postgres => (
            &[
                "CREATE TABLE items (id bigint PRIMARY KEY, name text)",
                "CREATE TYPE span AS RANGE (subtype = int4)",
                "CREATE AGGREGATE total(int) (SFUNC = int4pl, STYPE = int, MSFUNC = int4pl, MINVFUNC = int4mi, MSTYPE = int)",
            ],
            "range type public.span",
            "aggregate public.total(integer)",
        ),
        Dialect::Mysql => (
            &[
                "CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, name text)",
                "CREATE VIEW named AS SELECT id FROM items WHERE name IS NOT NULL",
                "CREATE TRIGGER items_name BEFORE INSERT ON items FOR EACH ROW SET NEW.name = TRIM(NEW.name)",
                "CREATE EVENT nightly ON SCHEDULE EVERY 1 DAY DISABLE DO SELECT 1",
                "CREATE PROCEDURE noop() SELECT 1",
                "CREATE SEQUENCE invoice_no",
                "CREATE TABLE logs (id int, at date) PARTITION BY RANGE (YEAR(at)) \
                 SUBPARTITION BY HASH (id) SUBPARTITIONS 2 \
                 (PARTITION p2024 VALUES LESS THAN (2025), PARTITION pmax VALUES LESS THAN MAXVALUE)",
            ],
            "sequence invoice_no",
            "sub-partitioning (SUBPARTITION BY) logs",
        ),
    };
    db.run(&setup.join(";\n")).await.expect("setup");
    let dir = std::env::temp_dir().join(unique_name("ptah-unmodelled"));
    std::fs::create_dir_all(&dir).expect("mkdir");

    let json = ptah(
        &db.url_text,
        &db.password,
        &dir,
        &["schema", "inspect", "--format", "json"],
    );
    assert_eq!(json.code, 0, "{}{}", json.stdout, json.stderr);
    assert_eq!(json.json["unmodelled"]["total"], 2);
    let listed: Vec<String> = json.json["unmodelled"]["items"]
        .as_array()
        .expect("an unmodelled list")
        .iter()
        .map(|u| {
            format!(
                "{} {}",
                u["kind"].as_str().unwrap_or(""),
                u["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    let mut expected = [routine, view];
    expected.sort();
    assert_eq!(listed, expected, "{}", json.stdout);

    let text = ptah(&db.url_text, &db.password, &dir, &["schema", "inspect"]);
    assert!(
        text.stdout.contains(&format!("# not managed by ptah: {view}\n")),
        "{}",
        text.stdout
    );
    std::fs::write(dir.join("schema.hcl"), &text.stdout).expect("write");
    let plan = ptah(
        &db.url_text,
        &db.password,
        &dir,
        &[
            "schema",
            "plan",
            "--from",
            "schema.hcl",
            "--output",
            "p.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        plan.code, 0,
        "the inspected text reads back with no change\n{}{}",
        plan.stdout, plan.stderr
    );
    assert_eq!(plan.json["statements"], 0);
    assert_eq!(
        plan.json["unmodelled"]["items"].as_array().map(Vec::len),
        Some(2),
        "{}",
        plan.stdout
    );
    let drift = ptah(
        &db.url_text,
        &db.password,
        &dir,
        &["schema", "drift", "--from", "schema.hcl", "--format", "json"],
    );
    assert_eq!(
        (drift.code, &drift.json["drift"]),
        (0, &serde_json::json!(false)),
        "{}",
        drift.stdout
    );
    assert_eq!(drift.json["unmodelled"]["total"], 2);
    let _ = std::fs::remove_dir_all(&dir);
    db.drop().await;
}

#[tokio::test]
async fn postgres_lists_what_it_does_not_manage() {
    check(Dialect::Postgres).await;
}

#[tokio::test]
async fn mariadb_lists_what_it_does_not_manage() {
    check(Dialect::Mysql).await;
}
