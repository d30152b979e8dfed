//! The transition corpus on real PostgreSQL and MariaDB: for every `corpus/<engine>/NN_name`,
//! converge on `before`, plan toward `after`, check each statement's severity (and kind), apply,
//! and require a fresh plan to be empty. Every failing case is reported by name.

mod schema_support;

use std::path::{Path, PathBuf};

use ptah_engine::{Dialect, InspectScope, inspect, mysql_flavor};
use ptah_schema::{Plan, PlanOptions, Schema, Severity};
use schema_support::{Fresh, converge, listing, plan_against};
use serde::Deserialize;

/// `expect.json` of a case.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    /// One entry per planned statement, in order: `"severity"` or `"severity: SQL fragment"`.
    statements: Vec<String>,
    /// Exclusion patterns for the transition (not for setting up `before`).
    #[serde(default)]
    exclude: Vec<String>,
    /// Protected tables for the second plan.
    #[serde(default)]
    protected_tables: Vec<String>,
    /// `"protected_table"` when the second plan must be refused.
    #[serde(default)]
    refused: Option<String>,
    /// SQL run after `before` converged (objects outside the declared schema).
    #[serde(default)]
    setup: Option<String>,
}

fn document(dir: &Path, stem: &str) -> Option<PathBuf> {
    ["sql", "hcl"]
        .iter()
        .map(|ext| dir.join(format!("{stem}.{ext}")))
        .find(|p| p.exists())
}

fn read(dialect: Dialect, dir: &Path, stem: &str) -> Result<Schema, String> {
    match document(dir, stem) {
        Some(path) => ptah_schema::read::from_path(dialect, &path).map_err(|e| format!("{stem}: {e}")),
        None => Ok(Schema::default()),
    }
}

fn severity(text: &str) -> Option<Severity> {
    match text {
        "safe" => Some(Severity::Safe),
        "warning" => Some(Severity::Warning),
        "destructive" => Some(Severity::Destructive),
        _ => None,
    }
}

fn check(plan: &Plan, expect: &Expect) -> Result<(), String> {
    let mismatch = || format!("expected {:?}, planned:{}", expect.statements, listing(plan));
    if plan.statements.len() != expect.statements.len() {
        return Err(mismatch());
    }
    for (st, want) in plan.statements.iter().zip(&expect.statements) {
        let (level, fragment) = match want.split_once(": ") {
            Some((l, f)) => (l, Some(f)),
            None => (want.as_str(), None),
        };
        let level = severity(level).ok_or_else(|| format!("bad expectation {want:?}"))?;
        let kind_ok = fragment.is_none_or(|f| st.sql.to_uppercase().contains(&f.to_uppercase()));
        if st.severity != level || !kind_ok {
            return Err(mismatch());
        }
    }
    let destructive = plan
        .statements
        .iter()
        .any(|s| s.severity == Severity::Destructive);
    if plan.destructive != destructive {
        return Err(format!(
            "plan.destructive is {} for:{}",
            plan.destructive,
            listing(plan)
        ));
    }
    Ok(())
}

async fn case(dialect: Dialect, dir: &Path) -> Result<(), String> {
    let expect_text =
        std::fs::read_to_string(dir.join("expect.json")).map_err(|e| format!("expect.json: {e}"))?;
    let expect: Expect = serde_json::from_str(&expect_text).map_err(|e| format!("expect.json: {e}"))?;
    let before = read(dialect, dir, "before")?;
    let after = read(dialect, dir, "after")?;
    let db = Fresh::new(dialect, "corpus").await;
    let result = async {
        let mut session = db.session().await;
        let flavor = mysql_flavor(&mut session).await.map_err(|e| e.to_string())?;
        let first = PlanOptions {
            mysql_flavor: flavor.unwrap_or_default(),
            ..PlanOptions::default()
        };
        converge(&mut session, &before, dialect, &first, "before").await?;
        // Exclusions and protections govern the transition, not how the case is set up.
        let opts = PlanOptions {
            exclude: expect.exclude.clone(),
            protected_tables: expect.protected_tables.clone(),
            ..first
        };
        if let Some(setup) = &expect.setup {
            db.run(setup).await.map_err(|e| format!("setup: {e}"))?;
        }
        if expect.refused.is_some() {
            let live = inspect(&mut session, &InspectScope::of(&after))
                .await
                .map_err(|e| e.to_string())?;
            return match plan_against(&mut session, &after, &live, dialect, &opts).await {
                Err(e) if e.starts_with("refusing to plan: protected table") => Ok(()),
                other => Err(format!("expected a protected-table refusal, got {other:?}")),
            };
        }
        let live = inspect(&mut session, &InspectScope::of(&after))
            .await
            .map_err(|e| e.to_string())?;
        let planned = plan_against(&mut session, &after, &live, dialect, &opts).await?;
        check(&planned, &expect)?;
        converge(&mut session, &after, dialect, &opts, "after").await?;
        session.close().await.map_err(|e| e.to_string())
    }
    .await;
    db.drop().await;
    result
}

async fn corpus(dialect: Dialect, engine: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(engine);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("corpus directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let only = std::env::var("PTAH_CORPUS_ONLY").unwrap_or_default();
    let mut failures = Vec::new();
    let mut ran = 0;
    for dir in &dirs {
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_owned();
        if !only.is_empty() && !name.contains(&only) {
            continue;
        }
        ran += 1;
        if let Err(why) = case(dialect, dir).await {
            failures.push(format!("{engine}/{name}: {why}"));
        }
    }
    eprintln!("{engine}: {} of {ran} transitions pass", ran - failures.len());
    // A filter that matches nothing must not pass as if the corpus had run.
    assert!(
        ran > 0,
        "{engine}: PTAH_CORPUS_ONLY={only:?} selects no transition"
    );
    if only.is_empty() {
        assert!(dirs.len() >= 40, "{engine}: only {} transitions", dirs.len());
    }
    assert!(
        failures.is_empty(),
        "{} failing:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[tokio::test]
async fn postgres_transitions_converge_with_the_expected_severities() {
    corpus(Dialect::Postgres, "postgres").await;
}

#[tokio::test]
async fn mariadb_transitions_converge_with_the_expected_severities() {
    corpus(Dialect::Mysql, "mysql").await;
}
