//! `ptah schema …` through the built binary on real PostgreSQL and MariaDB: exit codes, versioned
//! JSON, byte-identical plans, stale-plan and protected-table refusals, the destructive gate, row
//! values kept out of drift, and bad input refused with exit 2 and no credential anywhere.

mod schema_support;

use std::path::{Path, PathBuf};

use ptah_engine::Dialect;
use ptah_testservices::unique_name;
use schema_support::{Fresh, Run, ptah};

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch() -> Scratch {
    let dir = std::env::temp_dir().join(unique_name("ptah-schema-cli"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    Scratch(dir)
}

const SECRET_VALUE: &str = "row-value-7f3a";

fn documents(dir: &Path, dialect: Dialect) {
    let (v1, v2) = match dialect {
        Dialect::Postgres => (
            "CREATE TABLE items (id bigint PRIMARY KEY, name varchar(40) NOT NULL);\n",
            "CREATE TABLE items (id bigint PRIMARY KEY, name varchar(40) NOT NULL, note text);\n",
        ),
        Dialect::Mysql => (
            "CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, name varchar(40) NOT NULL);\n",
            "CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, name varchar(40) NOT NULL, note text);\n",
        ),
    };
    std::fs::write(dir.join("v1.sql"), v1).expect("write");
    std::fs::write(dir.join("v2.sql"), v2).expect("write");
    std::fs::write(
        dir.join("v0.sql"),
        "CREATE TABLE other (id int NOT NULL PRIMARY KEY);\n",
    )
    .expect("write");
    let schema = if dialect == Dialect::Postgres {
        "  schema = schema.public\n"
    } else {
        ""
    };
    let header = if dialect == Dialect::Postgres {
        "schema \"public\" {}\n"
    } else {
        ""
    };
    let rows = format!(
        "{header}table \"codes\" {{\n{schema}  column \"id\" {{\n    type = int\n  }}\n  column \"label\" {{\n    type = varchar(40)\n  }}\n  primary_key {{\n    columns = [column.id]\n  }}\n  data {{\n    key = [column.id]\n    rows = [{{ id = 1, label = \"{SECRET_VALUE}\" }}]\n  }}\n}}\n"
    );
    std::fs::write(dir.join("rows.hcl"), rows).expect("write");
}

fn schema(db: &Fresh, dir: &Path, args: &[&str]) -> Run {
    let mut all = vec!["schema"];
    all.extend_from_slice(args);
    ptah(&db.url_text, &db.password, dir, &all)
}

async fn end_to_end(dialect: Dialect) {
    let db = Fresh::new(dialect, "schema_cli").await;
    let tmp = scratch();
    let dir = tmp.0.as_path();
    documents(dir, dialect);

    // Plan: exit 1 when changes are pending, byte-identical files on two runs.
    let first = schema(
        &db,
        dir,
        &[
            "plan", "--from", "v1.sql", "--output", "a.json", "--format", "json",
        ],
    );
    assert_eq!(first.code, 1, "{}{}", first.stdout, first.stderr);
    assert_eq!(first.json["format_version"], 1);
    assert_eq!(first.json["command"], "schema plan");
    assert_eq!(first.json["changes_pending"], true);
    assert!(
        first.stderr.is_empty() || !first.stderr.contains("CREATE TABLE"),
        "{}",
        first.stderr
    );
    let again = schema(
        &db,
        dir,
        &[
            "plan", "--from", "v1.sql", "--output", "b.json", "--format", "json",
        ],
    );
    assert_eq!(again.code, 1);
    let a = std::fs::read(dir.join("a.json")).expect("plan a");
    assert_eq!(
        a,
        std::fs::read(dir.join("b.json")).expect("plan b"),
        "plans are byte-identical"
    );
    let plan: serde_json::Value = serde_json::from_slice(&a).expect("plan JSON");
    assert_eq!(plan["format_version"], 1);
    assert_eq!(plan["destructive"], false);

    // Dry run prints the statements and changes nothing.
    let dry = schema(
        &db,
        dir,
        &["apply", "--from", "v1.sql", "--plan", "a.json", "--dry-run"],
    );
    assert_eq!(dry.code, 0, "{}{}", dry.stdout, dry.stderr);
    assert!(dry.stdout.contains("CREATE TABLE"), "{}", dry.stdout);
    let drift = schema(&db, dir, &["drift", "--from", "v1.sql", "--format", "json"]);
    assert_eq!(
        (drift.code, &drift.json["drift"]),
        (1, &serde_json::json!(true)),
        "{}",
        drift.stdout
    );

    // Apply and verify; drift is then gone and a new plan is empty (exit 0).
    let applied = schema(
        &db,
        dir,
        &[
            "apply", "--from", "v1.sql", "--plan", "a.json", "--format", "json",
        ],
    );
    assert_eq!(applied.code, 0, "{}{}", applied.stdout, applied.stderr);
    assert_eq!(applied.json["outcome"], "applied");
    assert_eq!(applied.json["verified"], true);
    assert_eq!(applied.json["applied"], applied.json["total"]);
    let drift = schema(&db, dir, &["drift", "--from", "v1.sql", "--format", "json"]);
    assert_eq!(
        (drift.code, &drift.json["drift"]),
        (0, &serde_json::json!(false)),
        "{}",
        drift.stdout
    );
    let empty = schema(
        &db,
        dir,
        &[
            "plan", "--from", "v1.sql", "--output", "c.json", "--format", "json",
        ],
    );
    assert_eq!(
        (empty.code, &empty.json["statements"]),
        (0, &serde_json::json!(0))
    );

    // A stale plan: computed, then the schema moves, then apply refuses with exit 1.
    let stale = schema(&db, dir, &["plan", "--from", "v2.sql", "--output", "d.json"]);
    assert_eq!(stale.code, 1);
    db.run("CREATE TABLE intruder (id int)")
        .await
        .expect("move the schema");
    let refused = schema(
        &db,
        dir,
        &[
            "apply", "--from", "v2.sql", "--plan", "d.json", "--format", "json",
        ],
    );
    assert_eq!(refused.code, 1, "{}", refused.stdout);
    assert_eq!(refused.json["error"]["code"], "stale_plan");
    assert!(refused.stderr.contains("stale"), "{}", refused.stderr);
    db.run("DROP TABLE intruder").await.expect("drop intruder");

    // Protected table: refused where the plan is computed, exit 2, no SQL and no file.
    let protected = schema(
        &db,
        dir,
        &[
            "plan",
            "--from",
            "v2.sql",
            "--output",
            "e.json",
            "--protected-table",
            "items",
            "--format",
            "json",
        ],
    );
    assert_eq!(protected.code, 2, "{}", protected.stdout);
    assert_eq!(protected.json["error"]["code"], "protected_table");
    for text in [&protected.stdout, &protected.stderr] {
        assert!(!text.contains("ALTER") && !text.contains("ADD COLUMN"), "{text}");
    }
    assert!(!dir.join("e.json").exists(), "no plan file for a refused plan");

    // The destructive gate: dropping a table (the PostgreSQL scope is the document's schemas, so
    // the document keeps one table in `public`) needs --allow-destructive.
    let drop = schema(&db, dir, &["plan", "--from", "v0.sql", "--output", "f.json"]);
    assert_eq!(drop.code, 1, "{}{}", drop.stdout, drop.stderr);
    let gated = schema(
        &db,
        dir,
        &[
            "apply", "--from", "v0.sql", "--plan", "f.json", "--format", "json",
        ],
    );
    assert_eq!(
        (gated.code, &gated.json["error"]["code"]),
        (2, &serde_json::json!("destructive"))
    );
    let allowed = schema(
        &db,
        dir,
        &[
            "apply",
            "--from",
            "v0.sql",
            "--plan",
            "f.json",
            "--allow-destructive",
            "--format",
            "json",
        ],
    );
    assert_eq!(allowed.code, 0, "{}{}", allowed.stdout, allowed.stderr);
    assert_eq!(allowed.json["verified"], true);

    // Reference rows: values reach the plan file, never drift output.
    let rows = schema(&db, dir, &["plan", "--from", "rows.hcl", "--output", "g.json"]);
    assert_eq!(rows.code, 1, "{}{}", rows.stdout, rows.stderr);
    let plan_text = std::fs::read_to_string(dir.join("g.json")).expect("plan g");
    assert!(plan_text.contains(SECRET_VALUE), "the plan carries the row");
    for format in ["json", "text"] {
        let drift = schema(&db, dir, &["drift", "--from", "rows.hcl", "--format", format]);
        assert_eq!(drift.code, 1);
        assert!(!drift.stdout.contains(SECRET_VALUE) && !drift.stderr.contains(SECRET_VALUE));
    }
    let applied = schema(
        &db,
        dir,
        &[
            "apply",
            "--from",
            "rows.hcl",
            "--plan",
            "g.json",
            "--allow-destructive",
        ],
    );
    assert_eq!(applied.code, 0, "{}{}", applied.stdout, applied.stderr);
    db.run("UPDATE codes SET label = 'changed' WHERE id = 1")
        .await
        .expect("change a row");
    for format in ["json", "text"] {
        let drift = schema(&db, dir, &["drift", "--from", "rows.hcl", "--format", format]);
        assert_eq!(drift.code, 1, "{}", drift.stdout);
        assert!(
            !drift.stdout.contains(SECRET_VALUE) && !drift.stdout.contains("changed"),
            "{}",
            drift.stdout
        );
    }

    // Inspect: canonical HCL (text) and the JSON model.
    let hcl = schema(&db, dir, &["inspect"]);
    assert_eq!(hcl.code, 0);
    assert!(hcl.stdout.contains("table \"codes\""), "{}", hcl.stdout);
    let model = schema(&db, dir, &["inspect", "--format", "json"]);
    assert_eq!(
        (model.code, &model.json["format_version"]),
        (0, &serde_json::json!(1))
    );
    assert!(
        model.json["fingerprint"]
            .as_str()
            .is_some_and(|f| f.starts_with("sha256:"))
    );
    drop_db(db).await;
}

async fn drop_db(db: Fresh) {
    db.drop().await;
}

#[tokio::test]
async fn postgres_plan_apply_verify_through_the_binary() {
    end_to_end(Dialect::Postgres).await;
}

#[tokio::test]
async fn mariadb_plan_apply_verify_through_the_binary() {
    end_to_end(Dialect::Mysql).await;
}

#[tokio::test]
async fn bad_input_exits_2_without_credentials() {
    let db = Fresh::new(Dialect::Postgres, "schema_cli_bad").await;
    let tmp = scratch();
    let dir = tmp.0.as_path();
    std::fs::write(dir.join("bad.sql"), "CREATE TABL items (id int);\n").expect("write");
    std::fs::write(
        dir.join("bad.hcl"),
        "table \"t\" {\n  schema = schema.public\n}\nmystery \"x\" {}\n",
    )
    .expect("write");
    std::fs::write(dir.join("ok.sql"), "CREATE TABLE t (id int PRIMARY KEY);\n").expect("write");
    std::fs::write(dir.join("empty.sql"), "-- the schema goes here\n").expect("write");
    let wrong_password = db
        .url_text
        .replacen(&format!(":{}@", db.password), ":not-the-password-91@", 1);
    let unreachable = db.url_text.replacen(
        &format!("@{}:{}", db.url.host(), db.url.port()),
        "@127.0.0.1:1",
        1,
    );
    let cases: Vec<(&str, String, &str, &str)> = vec![
        ("unparsable DDL", db.url_text.clone(), "bad.sql", "bad.sql:1:"),
        ("unknown HCL block", db.url_text.clone(), "bad.hcl", "bad.hcl:4:1"),
        (
            "empty desired schema",
            db.url_text.clone(),
            "empty.sql",
            "declares no schema object",
        ),
        ("wrong password", wrong_password, "ok.sql", "cannot connect"),
        ("unreachable", unreachable, "ok.sql", "cannot connect"),
        (
            "multiStatements",
            format!(
                "mysql://app:{}@127.0.0.1:3306/x?multiStatements=true",
                db.password
            ),
            "ok.sql",
            "multi-statement",
        ),
        (
            "several hosts",
            format!("postgres://app:{}@h1,h2:5432/x", db.password),
            "ok.sql",
            "several hosts",
        ),
    ];
    for (what, url, from, says) in cases {
        for (args, format) in [
            (vec!["schema", "drift", "--from", from], "text"),
            (
                vec![
                    "schema", "plan", "--from", from, "--output", "p.json", "--format", "json",
                ],
                "json",
            ),
        ] {
            let run = ptah(&url, &db.password, dir, &args);
            assert_eq!(run.code, 2, "{what}: {}{}", run.stdout, run.stderr);
            assert!(
                run.stderr.contains("error: ") && run.stderr.contains(says),
                "{what}: {}",
                run.stderr
            );
            assert!(
                !run.stderr.contains("not-the-password-91") && !run.stdout.contains("not-the-password-91")
            );
            if format == "json" {
                assert_eq!(run.json["format_version"], 1, "{what}: {}", run.stdout);
                assert_eq!(run.json["exit_code"], 2);
                if from == "empty.sql" {
                    assert_eq!(run.json["error"]["code"], "empty_schema", "{}", run.stdout);
                }
            }
        }
    }
    db.drop().await;
}
