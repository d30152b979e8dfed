//! Differential, against the real servers: DDL generated the way people write it ([`ddl_gen`]) is
//! read twice, once by the server (the script loaded as it is) and once by ptah's reader, and the
//! two readings must agree.
//!
//! The reader's model goes through `schema.hcl` as well: it must render to the document an
//! artifact carries and read back the same.
//!
//! - (a) Loaded by the server, a generated schema is in sync with itself: `inspect` reads the
//!   reader's model of the same text (after [`ptah_engine::comparable`], which asks the server how
//!   it prints hand-written expressions), and a plan is empty.
//! - (b) From one generated schema to another: plan, apply, and a fresh plan is empty, and the
//!   catalog equals that of a database where the server loaded the second schema itself.
//!
//! Each case gets its own databases, dropped whatever the outcome. 12 cases per engine and check
//! by default; `PTAH_DIFFERENTIAL_CASES` changes the count (the fuzz campaign runs more) and
//! `PTAH_DIFFERENTIAL_SEED` (a u64) fixes the seed. Shrunk failures are kept in
//! `differential.proptest-regressions` and re-run first.

mod ddl_gen;
mod inspect_support;

use ddl_gen::{SchemaSpec, schema_spec};
use inspect_support::Fresh;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use ptah_engine::{ApplyOptions, Dialect, InspectScope, Session, apply, comparable, inspect, mysql_flavor};
use ptah_schema::{PlanOptions, Schema};

/// The reader's model of generated text, which must also survive the `schema.hcl` an artifact
/// carries (`ptah schema push` publishes that document, and the operator plans from it).
fn read(dialect: Dialect, sql: &str) -> Result<Schema, String> {
    let schema = ptah_schema::read::sql::parse(dialect, "generated.sql", sql)
        .map_err(|e| format!("the reader refused: {e}"))?;
    let hcl = ptah_schema::write::hcl::to_hcl(dialect, &schema);
    let reread = ptah_schema::read::hcl::parse(dialect, "schema.hcl", &hcl)
        .map_err(|e| format!("the schema.hcl rendering does not read back: {e}\n{hcl}"))?;
    if reread != schema {
        return Err(format!(
            "the schema.hcl rendering reads back differently:\n{}\n--- schema.hcl ---\n{hcl}",
            difference(&schema, &reread)
        ));
    }
    Ok(schema)
}

/// A fresh database with `sql` loaded by the server as written: PostgreSQL takes the whole
/// script in one simple-protocol batch (dollar-quoted bodies stay whole), MySQL one statement at a
/// time as the mysql client sends them.
async fn loaded(dialect: Dialect, prefix: &str, sql: &str) -> Fresh {
    let db = Fresh::new(dialect, prefix).await;
    let mut session = db.session().await;
    let statements = match dialect {
        Dialect::Postgres => vec![sql.to_owned()],
        Dialect::Mysql => client_statements(sql),
    };
    for statement in statements {
        if let Err(err) = session.batch(&statement).await {
            let _ = session.close().await;
            db.drop().await;
            // The generator writes only what the server accepts; a refusal is a generator bug.
            panic!("the server refused generated DDL: {err}\n{statement}");
        }
    }
    let _ = session.close().await;
    db
}

/// The statements the mysql client sends for a script: each ends at the current delimiter at a
/// line's end, and `DELIMITER x` lines change it.
fn client_statements(sql: &str) -> Vec<String> {
    let (mut delimiter, mut current, mut out) = (";".to_owned(), String::new(), Vec::new());
    for line in sql.lines() {
        if let Some(d) = line.strip_prefix("DELIMITER ") {
            delimiter = d.trim().to_owned();
            continue;
        }
        current.push_str(line);
        current.push('\n');
        if let Some(done) = current.trim_end().strip_suffix(delimiter.as_str()) {
            out.push(done.trim().to_owned());
            current.clear();
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// The first lines where two models' JSON differ, with the path of objects leading to them.
fn difference(want: &Schema, have: &Schema) -> String {
    let text = |s: &Schema| serde_json::to_string_pretty(s).unwrap_or_else(|e| e.to_string());
    let (want, have) = (text(want), text(have));
    let (w, h): (Vec<&str>, Vec<&str>) = (want.lines().collect(), have.lines().collect());
    let Some(first) = (0..w.len().max(h.len())).find(|&i| w.get(i) != h.get(i)) else {
        return "the models are equal as JSON".to_owned();
    };
    let from = first.saturating_sub(8);
    let window = |lines: &[&str]| {
        lines
            .iter()
            .skip(from)
            .take(16)
            .copied()
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "--- reader (from line {from}) ---\n{}\n--- inspect ---\n{}",
        window(&w),
        window(&h)
    )
}

async fn options(session: &mut Session) -> Result<PlanOptions, String> {
    Ok(PlanOptions {
        mysql_flavor: mysql_flavor(session)
            .await
            .map_err(|e| e.to_string())?
            .unwrap_or_default(),
        ..PlanOptions::default()
    })
}

/// The live schema in `desired`'s scope.
async fn live(session: &mut Session, desired: &Schema) -> Result<Schema, String> {
    inspect(session, &InspectScope::of(desired))
        .await
        .map_err(|e| e.to_string())
}

/// `schema` without MySQL's table character set and collation, which a document leaves to the
/// database's defaults and the differ compares only when declared.
fn without_table_defaults(mut schema: Schema) -> Schema {
    for table in schema.tables.values_mut() {
        table.charset = None;
        table.collation = None;
    }
    schema
}

/// `schema` with each table's columns in name order: a column added to an existing table comes
/// last, where the server's own load puts it among the others, and neither engine reorders
/// columns without rebuilding the table (the differ compares columns by name).
fn columns_by_name(mut schema: Schema) -> Schema {
    for table in schema.tables.values_mut() {
        table.columns.sort_by(|a, b| a.name.cmp(&b.name));
    }
    schema
}

/// The plan from what `session` holds to `desired`, with the live schema it was computed on.
async fn plan_to(
    session: &mut Session,
    dialect: Dialect,
    desired: &Schema,
) -> Result<(Schema, ptah_schema::Plan), String> {
    let live = live(session, desired).await?;
    let options = options(session).await?;
    let want = comparable(session, desired, &live)
        .await
        .map_err(|e| e.to_string())?;
    let plan = ptah_schema::plan(&want, &live, dialect, &options).map_err(|e| e.to_string())?;
    Ok((live, plan))
}

/// The SQL of a plan's statements, one per line.
fn listing(plan: &ptah_schema::Plan) -> String {
    let statements: Vec<&str> = plan.statements.iter().map(|s| s.sql.as_str()).collect();
    statements.join("\n  ")
}

/// (a): the server's reading and the reader's agree.
async fn self_sync(dialect: Dialect, spec: &SchemaSpec) -> Result<(), String> {
    let sql = ddl_gen::sql(dialect, spec);
    let desired = read(dialect, &sql)?;
    let db = loaded(dialect, "diff_a", &sql).await;
    let mut session = db.session().await;
    let outcome = async {
        let (live, plan) = plan_to(&mut session, dialect, &desired).await?;
        if !plan.is_empty() {
            return Err(format!(
                "loaded by the server, it still plans:\n  {}",
                listing(&plan)
            ));
        }
        let want = comparable(&mut session, &desired, &live)
            .await
            .map_err(|e| e.to_string())?;
        let mut live = without_table_defaults(live);
        // The scope names `public` whether or not the text declares it; the differ never drops a
        // schema, so only the declared ones are compared.
        live.namespaces.retain(|n| want.namespaces.contains(n));
        if *want != live {
            return Err(format!(
                "inspect differs from the reader's model:\n{}",
                difference(&want, &live)
            ));
        }
        Ok(())
    }
    .await;
    let _ = session.close().await;
    db.drop().await;
    outcome.map_err(|e| format!("{e}\n--- generated ---\n{sql}"))
}

/// (b): planning from one generated schema to another converges on the server's own reading.
async fn transition(dialect: Dialect, from: &SchemaSpec, to: &SchemaSpec) -> Result<(), String> {
    let before = ddl_gen::sql(dialect, from);
    let after = ddl_gen::sql(dialect, to);
    let desired = read(dialect, &after)?;
    let db = loaded(dialect, "diff_b", &before).await;
    let reference = loaded(dialect, "diff_c", &after).await;
    let outcome = async {
        let mut session = db.session().await;
        let (_, plan) = plan_to(&mut session, dialect, &desired).await?;
        let apply_options = ApplyOptions {
            scope: InspectScope::of(&desired),
            ..ApplyOptions::default()
        };
        apply(&mut session, &plan, &apply_options)
            .await
            .map_err(|e| format!("apply failed: {e}\n--- plan ---\n  {}", listing(&plan)))?;
        let (applied, again) = plan_to(&mut session, dialect, &desired).await?;
        let _ = session.close().await;
        if !again.is_empty() {
            return Err(format!(
                "a fresh plan after apply is not empty:\n  {}\n--- applied plan ---\n  {}",
                listing(&again),
                listing(&plan)
            ));
        }
        let mut other = reference.session().await;
        let expected = live(&mut other, &desired).await;
        let _ = other.close().await;
        let expected = columns_by_name(without_table_defaults(expected?));
        let applied = columns_by_name(without_table_defaults(applied));
        if applied != expected {
            return Err(format!(
                "the catalog differs from the server's own load of the schema:\n{}\n--- applied plan ---\n  {}",
                difference(&expected, &applied),
                listing(&plan)
            ));
        }
        Ok(())
    }
    .await;
    db.drop().await;
    reference.drop().await;
    outcome.map_err(|e| format!("{e}\n--- from ---\n{before}\n--- to ---\n{after}"))
}

fn config() -> Config {
    Config {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/differential.proptest-regressions",
        ))),
        ..inspect_support::property_config("PTAH_DIFFERENTIAL", 12, 48)
    }
}

fn block_on(work: impl Future<Output = Result<(), String>>) -> Result<(), TestCaseError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    runtime.block_on(work).map_err(TestCaseError::fail)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn postgres_reader_and_server_agree(spec in schema_spec()) {
        block_on(self_sync(Dialect::Postgres, &spec))?;
    }

    #[test]
    fn mariadb_reader_and_server_agree(spec in schema_spec()) {
        block_on(self_sync(Dialect::Mysql, &spec))?;
    }

    #[test]
    fn postgres_transitions_converge(from in schema_spec(), to in schema_spec()) {
        block_on(transition(Dialect::Postgres, &from, &to))?;
    }

    #[test]
    fn mariadb_transitions_converge(from in schema_spec(), to in schema_spec()) {
        block_on(transition(Dialect::Mysql, &from, &to))?;
    }
}
