//! Real-world dumps in `tests/realworld/<engine>/`: `pg_dump --schema-only` and `mariadb-dump
//! --no-data` output of databases of 30 tables or more, preambles, ownership, serial sequences,
//! identities, enums, extensions, comments, collations, generated columns, functions, procedures
//! and triggers included; on PostgreSQL also domains, views, a materialized view, row-level
//! security, policies and table grants, standalone sequences, index comments, a
//! range-partitioned table with a default partition and a partitioned index, an aggregate (pagila's
//! `group_concat`) a view calls, index options (`INCLUDE`, `NULLS NOT DISTINCT`, `WITH`, an
//! operator class, nulls order) and function options (`COST`, `PARALLEL`, `SET`). For each file:
//! (a) loaded with the server's own client into a fresh database, `ptah schema plan --from` the
//!     file against that database is empty;
//! (b) `ptah schema inspect` of it, applied to another fresh database, then planned again, is empty;
//! (c) the two databases dump to the same text, header comments aside.
//!
//! How the MySQL dump was made, and what its source does for (c), is in
//! `tests/realworld/mysql/README.md`. The PostgreSQL dump is regenerated the same way: the previous
//! `shop.sql` loaded as the admin into a fresh database owned by `app`, the new objects created as
//! `app`, then `pg_dump --schema-only` as the admin (the roles its grants name are made by the
//! test).

mod schema_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use ptah_engine::Dialect;
use ptah_testservices::unique_name;
use schema_support::{Fresh, dump, ptah};

fn files(engine: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/realworld")
        .join(engine);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("the realworld directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no dump in {}", root.display());
    files
}

/// Loads `file` with the server's own client, as a person restoring a dump would.
fn load(db: &Fresh, dialect: Dialect, file: &Path) {
    let url = &db.url;
    let port = url.port().to_string();
    let out = match dialect {
        Dialect::Postgres => Command::new("psql")
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", url.host(), "-p", &port])
            .args(["-U", url.user(), "-d", url.database(), "-f"])
            .arg(file)
            .env("PGPASSWORD", &db.password)
            .output(),
        Dialect::Mysql => Command::new("mariadb")
            .args([
                "--no-defaults",
                "--skip-ssl",
                "--protocol=tcp",
                "-h",
                url.host(),
                "-P",
                &port,
            ])
            .arg(format!("--user={}", url.user()))
            .arg(url.database())
            .stdin(std::fs::File::open(file).expect("the dump"))
            .env("MYSQL_PWD", &db.password)
            .output(),
    }
    .expect("the database client runs (installed by `cargo xtask services up`)");
    assert!(
        out.status.success(),
        "{} does not load: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A dump without what names the run (header comments, psql's per-dump `\restrict` key, a
/// MariaDB dump's completion time and its `Database:` header line, which name the run and the
/// database: all `--` lines).
fn comparable(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("--") && !l.starts_with("\\restrict") && !l.starts_with("\\unrestrict"))
        .map(|l| format!("{l}\n"))
        .collect()
}

async fn check(dialect: Dialect, file: &Path) {
    let name = file.display().to_string();
    let dir = std::env::temp_dir().join(unique_name("ptah-realworld"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let from = file.to_string_lossy().into_owned();

    let a = Fresh::new(dialect, "realworld_a").await;
    load(&a, dialect, file);
    let plan_args = |from: &str| {
        vec![
            "schema".to_owned(),
            "plan".to_owned(),
            "--from".to_owned(),
            from.to_owned(),
            "--output".to_owned(),
            "p.json".to_owned(),
            "--format".to_owned(),
            "json".to_owned(),
        ]
    };
    let args = plan_args(&from);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = ptah(&a.url_text, &a.password, &dir, &args);
    assert_eq!(
        run.code, 0,
        "(a) {name}: the loaded dump plans changes\n{}{}",
        run.stdout, run.stderr
    );
    assert!(
        run.json["ignored"].as_array().is_some_and(|i| !i.is_empty()),
        "{name}: a real dump has a preamble"
    );

    let inspected = ptah(&a.url_text, &a.password, &dir, &["schema", "inspect"]);
    assert_eq!(inspected.code, 0, "{name}: {}", inspected.stderr);
    std::fs::write(dir.join("inspected.hcl"), &inspected.stdout).expect("write");
    let b = Fresh::new(dialect, "realworld_b").await;
    let args = plan_args("inspected.hcl");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let first = ptah(&b.url_text, &b.password, &dir, &args);
    assert_eq!(
        first.code, 1,
        "(b) {name}: the empty database needs the schema\n{}",
        first.stderr
    );
    let applied = ptah(
        &b.url_text,
        &b.password,
        &dir,
        &[
            "schema",
            "apply",
            "--from",
            "inspected.hcl",
            "--plan",
            "p.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        applied.code, 0,
        "(b) {name}: {}{}",
        applied.stdout, applied.stderr
    );
    let again = ptah(&b.url_text, &b.password, &dir, &args);
    assert_eq!(
        again.code, 0,
        "(b) {name}: the applied database still plans\n{}",
        again.stdout
    );

    let (dump_a, dump_b) = (
        comparable(&dump(&a, dialect).expect("dump a")),
        comparable(&dump(&b, dialect).expect("dump b")),
    );
    if dump_a != dump_b {
        let first_difference = dump_a
            .lines()
            .zip(dump_b.lines())
            .find(|(x, y)| x != y)
            .map(|(x, y)| format!("original: {x}\napplied:  {y}"));
        panic!("(c) {name}: the catalogs differ; first difference:\n{first_difference:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    a.drop().await;
    b.drop().await;
}

/// The roles the PostgreSQL dumps grant to and name in policies. Roles are cluster-wide and out
/// of the model's scope, as in a real restore (`pg_dump` does not carry them): made here, once
/// per server, by whichever test gets there first.
const PG_ROLES: &str = "DO $$ BEGIN CREATE ROLE shop_reader NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE shop_writer NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$";

#[tokio::test]
async fn postgres_dumps_load_plan_empty_and_round_trip_through_inspect() {
    let mut session = schema_support::admin(Dialect::Postgres).await;
    session.batch(PG_ROLES).await.expect("the dumps' roles");
    session.close().await.expect("close");
    for file in files("postgres") {
        check(Dialect::Postgres, &file).await;
    }
}

#[tokio::test]
async fn mysql_dumps_load_plan_empty_and_round_trip_through_inspect() {
    for file in files("mysql") {
        check(Dialect::Mysql, &file).await;
    }
}
