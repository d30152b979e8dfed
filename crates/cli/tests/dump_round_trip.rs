//! Real dump output read back: every corpus document is converged on a fresh database, dumped
//! with the server's own tool (`pg_dump --schema-only`, `mariadb-dump --no-data`), and the dump,
//! preamble, ownership and serial sequences included, must read into a schema that
//! - plans to nothing against the live database it was dumped from, and
//! - equals the document (a plan from the dump's schema toward the document is empty).
//!
//! The statements the reader skipped must be ones a dump writes for its client or for
//! ownership, never a statement that describes schema.

mod schema_support;

use std::path::{Path, PathBuf};

use ptah_engine::{Dialect, InspectScope, inspect, mysql_flavor};
use ptah_schema::read::{Document, IgnoreReason};
use ptah_schema::{PlanOptions, Schema};
use schema_support::{Fresh, converge, dump};

/// The corpus cases whose documents describe a database a dump can reproduce: not the ones that
/// exclude tables or refuse a plan (their `expect.json` sets `exclude`, `refused` or `setup`).
fn cases(engine: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(engine);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("corpus directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .filter(|p| {
            let expect = std::fs::read_to_string(p.join("expect.json")).unwrap_or_default();
            !["\"exclude\"", "\"refused\"", "\"setup\""]
                .iter()
                .any(|k| expect.contains(k))
        })
        .collect();
    dirs.sort();
    dirs
}

fn document(dialect: Dialect, dir: &Path) -> Option<Schema> {
    let path = ["sql", "hcl"]
        .iter()
        .map(|ext| dir.join(format!("after.{ext}")))
        .find(|p| p.exists())?;
    Some(ptah_schema::read::from_path(dialect, &path).expect("corpus document reads"))
}

/// The document as a dump can say it: no reference rows (a schema-only dump has none), and no
/// `public` schema (every PostgreSQL database has it, so `pg_dump` never creates it, where a
/// `schema.hcl` declares it).
fn as_dumped(mut schema: Schema) -> Schema {
    for table in schema.tables.values_mut() {
        table.rows = None;
    }
    schema.namespaces.remove("public");
    schema
}

async fn case(dialect: Dialect, dir: &Path) -> Result<usize, String> {
    let Some(desired) = document(dialect, dir) else {
        return Ok(0);
    };
    let db = Fresh::new(dialect, "dump").await;
    let result = async {
        let mut session = db.session().await;
        let flavor = mysql_flavor(&mut session).await.map_err(|e| e.to_string())?;
        let opts = PlanOptions {
            mysql_flavor: flavor.unwrap_or_default(),
            ..PlanOptions::default()
        };
        converge(&mut session, &desired, dialect, &opts, "document").await?;
        let text = dump(&db, dialect)?;
        let Document {
            schema: dumped,
            ignored,
        } = ptah_schema::read::sql::parse_document(dialect, "dump.sql", &text)
            .map_err(|e| format!("reading the dump: {e}\n{text}"))?;
        let allowed = [
            IgnoreReason::ClientCommand,
            IgnoreReason::SessionSetting,
            IgnoreReason::Ownership,
            IgnoreReason::DefaultComment,
            IgnoreReason::UndeclaredDrop,
            IgnoreReason::AutoIncrementCounter,
            // A view's, routine's, trigger's or event's DEFINER: the applying user creates them.
            IgnoreReason::DefinerOrDefault,
        ];
        if let Some(odd) = ignored.iter().find(|i| !allowed.contains(&i.reason)) {
            return Err(format!("a schema statement was skipped: {odd}"));
        }
        if !ignored.iter().any(|i| i.reason == IgnoreReason::SessionSetting) {
            return Err("the dump's session settings were not reported as ignored".to_owned());
        }
        let live = inspect(&mut session, &InspectScope::of(&dumped))
            .await
            .map_err(|e| e.to_string())?;
        let against_live = ptah_schema::plan(&dumped, &live, dialect, &opts).map_err(|e| e.to_string())?;
        if !against_live.is_empty() {
            return Err(format!(
                "the dump's schema plans against the database it came from: {:#?}",
                against_live.statements
            ));
        }
        // A hand-written MySQL view reads back in the server's spelling: the document is compared
        // as the server prints it, as every plan does.
        let document = as_dumped(desired.clone());
        let document = ptah_engine::comparable(&mut session, &document, &live)
            .await
            .map_err(|e| e.to_string())?;
        let toward_document =
            ptah_schema::plan(&document, &dumped, dialect, &opts).map_err(|e| e.to_string())?;
        if !toward_document.is_empty() {
            return Err(format!(
                "the dump's schema differs from the document: {:#?}",
                toward_document.statements
            ));
        }
        session.close().await.map_err(|e| e.to_string())?;
        Ok(ignored.len())
    }
    .await;
    db.drop().await;
    result
}

async fn corpus(dialect: Dialect, engine: &str) {
    let dirs = cases(engine);
    assert!(
        dirs.len() >= 40,
        "{engine}: only {} corpus cases to dump",
        dirs.len()
    );
    let mut failures = Vec::new();
    let mut ignored = 0;
    for dir in &dirs {
        match case(dialect, dir).await {
            Ok(n) => ignored += n,
            Err(why) => failures.push(format!("{}: {why}", dir.display())),
        }
    }
    eprintln!(
        "{engine}: {} of {} dumps read back equal ({ignored} statements ignored by rule)",
        dirs.len() - failures.len(),
        dirs.len()
    );
    assert!(
        failures.is_empty(),
        "{} failing:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[tokio::test]
async fn pg_dump_output_of_every_corpus_document_reads_back_equal() {
    corpus(Dialect::Postgres, "postgres").await;
}

#[tokio::test]
async fn mariadb_dump_output_of_every_corpus_document_reads_back_equal() {
    corpus(Dialect::Mysql, "mysql").await;
}

/// `ptah schema plan --from <dump>`: the dump of a database plans to nothing, and the report lists
/// what it skipped (JSON: `ignored`; text: one `-- … ignored (…)` line each).
#[tokio::test]
async fn ptah_schema_plan_on_a_dump_reports_what_it_ignored() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/postgres/20_serial_columns");
    let desired = document(Dialect::Postgres, &dir).expect("corpus document");
    let db = Fresh::new(Dialect::Postgres, "dump_cli").await;
    let mut session = db.session().await;
    converge(
        &mut session,
        &desired,
        Dialect::Postgres,
        &PlanOptions::default(),
        "document",
    )
    .await
    .expect("converges");
    session.close().await.expect("close");
    let scratch = std::env::temp_dir().join(ptah_testservices::unique_name("ptah-dump-cli"));
    std::fs::create_dir_all(&scratch).expect("mkdir");
    std::fs::write(
        scratch.join("dump.sql"),
        dump(&db, Dialect::Postgres).expect("pg_dump"),
    )
    .expect("write");

    let args = ["schema", "plan", "--from", "dump.sql", "--output", "plan.json"];
    let json = schema_support::ptah(
        &db.url_text,
        &db.password,
        &scratch,
        &[&args[..], &["--format", "json"]].concat(),
    );
    assert_eq!(
        json.code, 0,
        "a dump of the database is in sync with it: {}{}",
        json.stdout, json.stderr
    );
    let ignored = json.json["ignored"].as_array().expect("ignored is listed");
    let reasons: Vec<&str> = ignored.iter().filter_map(|i| i["reason"].as_str()).collect();
    assert!(
        reasons.contains(&"session_setting") && reasons.contains(&"ownership"),
        "{reasons:?}"
    );
    let first = &ignored[0];
    assert_eq!(first["at"]["file"], "dump.sql");
    assert!(first["at"]["line"].as_u64().is_some_and(|l| l > 1), "{first}");

    let text = schema_support::ptah(&db.url_text, &db.password, &scratch, &args);
    assert_eq!(text.code, 0, "{}{}", text.stdout, text.stderr);
    let lines = text
        .stdout
        .lines()
        .filter(|l| l.starts_with("-- dump.sql:") && l.contains(": ignored ("))
        .count();
    assert_eq!(lines, ignored.len(), "{}", text.stdout);
    assert!(
        text.stdout.contains("ignored (ownership): ALTER TABLE public."),
        "{}",
        text.stdout
    );
    let _ = std::fs::remove_dir_all(&scratch);
    db.drop().await;
}
