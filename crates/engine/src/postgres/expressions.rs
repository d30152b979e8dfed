//! Hand-written CHECK bodies, column defaults and index expressions and predicates brought to the
//! catalog's text.
//!
//! The reader normalises expressions itself, but only the server knows every form it stores:
//! `status IN ('a', 'b')` becomes `status = ANY (ARRAY['a'::text, 'b'::text])`, `'{}'::jsonb`
//! loses nothing but `x'1F'` becomes a bit string. For each live table whose desired checks,
//! defaults or indexes differ from the live ones by text, a temporary table with the desired
//! columns is created under `pg_temp` in a transaction that is always rolled back, the differing
//! parts are added to it with the planner's own statements, and it is read back exactly as the
//! inspector reads a live table. A part whose read-back equals the live part takes the live value.
//! Each statement runs alone through the extended protocol, so a text cannot smuggle in a
//! `COMMIT` that would outlive the rollback.

use std::borrow::Cow;
use std::collections::HashMap;

use ptah_schema::normalize::without_column_text_casts;
use ptah_schema::{DefaultValue, Dialect, Index, IndexTarget, MysqlFlavor, QualifiedName, Schema, Table};
use tokio_postgres::Client;

use super::cache::{Kind, Verdicts};
use super::savepoints::{release, rollback_to, savepoint, temp_namespace};
use super::{DIALECT, get, pipeline::Pipeline, queries, read_columns, read_constraints, read_indexes};
use crate::Error;

/// The temporary table's name; `pg_temp` is private to the session, so no other run sees it.
const PROBE: &str = "ptah_probe_table";

/// One part of a desired table that differs from its live counterpart by text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Default(String),
    Check(String),
    Index(String),
}

/// A desired table's differing parts.
struct Differing {
    table: QualifiedName,
    parts: Vec<Part>,
}

/// The cache key of a part: its kind, desired and live texts.
fn key(desired: &Table, live: &Table, part: &Part) -> Option<(Kind, String, String)> {
    match part {
        Part::Default(c) => {
            let want = desired.column(c)?.default.as_ref()?;
            let have = live.column(c)?.default.as_ref()?;
            Some((Kind::Default, format!("{want:?}"), format!("{have:?}")))
        }
        Part::Check(n) => Some((
            Kind::Check,
            desired.checks.get(n)?.expression.clone(),
            live.checks.get(n)?.expression.clone(),
        )),
        Part::Index(n) => Some((
            Kind::Index,
            format!("{:?}", desired.indexes.get(n)?),
            format!("{:?}", live.indexes.get(n)?),
        )),
    }
}

/// Texts without the casts of columns to text that the catalog adds over `varchar` columns (see
/// [`without_column_text_casts`]), each parsed once per plan: thousands of tables repeat a few
/// dozen expressions (`lower((email)::text)`), and parsing is most of what comparing them costs.
#[derive(Default)]
struct Loose(HashMap<String, String>);

impl Loose {
    fn of(&mut self, text: &str) -> &str {
        if !self.0.contains_key(text) {
            let loose = without_column_text_casts(DIALECT, text);
            self.0.insert(text.to_owned(), loose);
        }
        // Present: inserted just above when it was not.
        &self.0[text]
    }

    fn same(&mut self, a: &str, b: &str) -> bool {
        self.of(a);
        self.of(b);
        self.0.get(a) == self.0.get(b)
    }

    fn index(&mut self, index: &Index) -> Index {
        let mut index = index.clone();
        for p in &mut index.parts {
            if let IndexTarget::Expression(e) = &mut p.target {
                *e = self.of(e).to_owned();
            }
        }
        index.predicate = index.predicate.as_deref().map(|p| self.of(p).to_owned());
        index
    }
}

/// Whether the part's two texts differ only in casts of columns to text: no need to ask the
/// server.
fn loosely_equal(want: &Table, have: &Table, part: &Part, loose: &mut Loose) -> bool {
    match part {
        Part::Default(c) => match (
            want.column(c).and_then(|col| col.default.as_ref()),
            have.column(c).and_then(|col| col.default.as_ref()),
        ) {
            (Some(DefaultValue::Expression(w)), Some(DefaultValue::Expression(h))) => loose.same(w, h),
            _ => false,
        },
        Part::Check(n) => match (want.checks.get(n), have.checks.get(n)) {
            (Some(w), Some(h)) => loose.same(&w.expression, &h.expression),
            _ => false,
        },
        Part::Index(n) => match (want.indexes.get(n), have.indexes.get(n)) {
            (Some(w), Some(h)) => loose.index(w) == loose.index(h),
            _ => false,
        },
    }
}

fn differing_parts(want: &Table, have: &Table) -> Vec<Part> {
    let mut parts = Vec::new();
    for (position, column) in want.columns.iter().enumerate() {
        let Some(live) = have.column_near(position, &column.name) else {
            continue;
        };
        if let (Some(w), Some(h)) = (&column.default, &live.default)
            && w != h
            && column.data_type == live.data_type
        {
            parts.push(Part::Default(column.name.clone()));
        }
    }
    for (name, check) in &want.checks {
        if have.checks.get(name).is_some_and(|h| h != check) {
            parts.push(Part::Check(name.clone()));
        }
    }
    for (name, index) in &want.indexes {
        if have.indexes.get(name).is_some_and(|h| h != index) {
            parts.push(Part::Index(name.clone()));
        }
    }
    parts
}

/// Rewrites the parts of `desired`'s tables that the server stores exactly as their live
/// counterparts to the live values. Parts already judged (by text) are not probed again, and a
/// borrowed schema is copied only when a part changes.
pub(crate) async fn canonicalise(
    client: &Client,
    desired: &mut Cow<'_, Schema>,
    live: &Schema,
    verdicts: Verdicts,
) -> Result<(), Error> {
    let mut loose = Loose::default();
    let mut pending = Vec::new();
    for (name, want) in &desired.tables {
        let Some(have) = live.tables.get(name) else {
            continue;
        };
        let parts = differing_parts(want, have);
        if parts.is_empty() {
            continue;
        }
        let mut unknown = Vec::new();
        for part in parts {
            if loosely_equal(want, have, &part, &mut loose) {
                pending.push((name.clone(), part, true));
                continue;
            }
            match key(want, have, &part).and_then(|k| verdicts.get(&k)) {
                Some(true) => pending.push((name.clone(), part, true)),
                Some(false) => {}
                None => unknown.push(part),
            }
        }
        if !unknown.is_empty() {
            pending.extend(unknown.iter().map(|p| (name.clone(), p.clone(), false)));
        }
    }
    let known: Vec<(QualifiedName, Part)> = pending
        .iter()
        .filter(|(_, _, k)| *k)
        .map(|(t, p, _)| (t.clone(), p.clone()))
        .collect();
    let mut probes: Vec<Differing> = Vec::new();
    for (table, part, _) in pending.into_iter().filter(|(_, _, k)| !*k) {
        match probes.last_mut() {
            Some(d) if d.table == table => d.parts.push(part),
            _ => probes.push(Differing {
                table,
                parts: vec![part],
            }),
        }
    }
    let mut equal = known;
    if !probes.is_empty() {
        client
            .batch_execute("BEGIN; SET LOCAL search_path = public")
            .await
            .map_err(Error::postgres)?;
        let result = probe_all(client, desired, live, &probes, verdicts).await;
        client.batch_execute("ROLLBACK").await.map_err(Error::postgres)?;
        equal.extend(result?);
    }
    for (table, part) in equal {
        take_live(desired.to_mut(), live, &table, &part);
    }
    Ok(())
}

fn take_live(desired: &mut Schema, live: &Schema, table: &QualifiedName, part: &Part) {
    let (Some(want), Some(have)) = (desired.tables.get_mut(table), live.tables.get(table)) else {
        return;
    };
    match part {
        Part::Default(c) => {
            let had = have.column(c).and_then(|col| col.default.clone());
            if let Some(col) = want.columns.iter_mut().find(|col| col.name == *c) {
                col.default = had;
            }
        }
        Part::Check(n) => {
            if let Some(check) = have.checks.get(n) {
                want.checks.insert(n.clone(), check.clone());
            }
        }
        Part::Index(n) => {
            if let Some(index) = have.indexes.get(n) {
                want.indexes.insert(n.clone(), index.clone());
            }
        }
    }
}

async fn probe_all(
    client: &Client,
    desired: &Schema,
    live: &Schema,
    probes: &[Differing],
    verdicts: Verdicts,
) -> Result<Vec<(QualifiedName, Part)>, Error> {
    let temp = temp_namespace(client).await?;
    let mut equal = Vec::new();
    for d in probes {
        let (Some(want), Some(have)) = (desired.tables.get(&d.table), live.tables.get(&d.table)) else {
            continue;
        };
        savepoint(client, "ptah_probe_expressions").await?;
        let read = probe(client, &temp, want, &d.parts).await;
        rollback_to(client, "ptah_probe_expressions").await?;
        let Some(read) = read? else {
            continue;
        };
        for part in &d.parts {
            let same = match part {
                Part::Default(c) => {
                    let got = read.column(c).map(|col| &col.default);
                    got.is_some_and(|g| *g == have.column(c).and_then(|col| col.default.clone()))
                }
                Part::Check(n) => {
                    read.checks.get(n).map(|c| &c.expression) == have.checks.get(n).map(|c| &c.expression)
                }
                Part::Index(n) => {
                    let got = read.indexes.get(n).map(|i| Index {
                        name: n.clone(),
                        ..i.clone()
                    });
                    got.is_some() && got.as_ref() == have.indexes.get(n)
                }
            };
            if let Some(k) = key(want, have, part) {
                verdicts.put(k, same);
            }
            if same {
                equal.push((d.table.clone(), part.clone()));
            }
        }
    }
    Ok(equal)
}

/// The probe table as the inspector reads it, or `None` when the server refuses its columns (a
/// type the plan has yet to create). A part the server refuses is left out of it.
async fn probe(client: &Client, temp: &str, want: &Table, parts: &[Part]) -> Result<Option<Table>, Error> {
    let name = QualifiedName::new("pg_temp", PROBE);
    let mut bare = Table::new(name.clone());
    bare.columns = want
        .columns
        .iter()
        .map(|c| ptah_schema::Column {
            default: None,
            identity: None,
            generated: None,
            comment: None,
            ..c.clone()
        })
        .collect();
    let mut full = bare.clone();
    for part in parts {
        match part {
            Part::Default(c) => {
                let default = want.column(c).and_then(|col| col.default.clone());
                if let Some(col) = full.columns.iter_mut().find(|col| col.name == *c) {
                    col.default = default;
                }
            }
            Part::Check(n) => {
                if let Some(check) = want.checks.get(n) {
                    full.checks.insert(n.clone(), check.clone());
                }
            }
            Part::Index(n) => {
                if let Some(index) = want.indexes.get(n) {
                    full.indexes.insert(n.clone(), index.clone());
                }
            }
        }
    }
    for statement in statements(&Table::new(name.clone()), &bare, true) {
        if let Err(err) = client.execute(statement.as_str(), &[]).await {
            tracing::debug!(table = %want.name, error = %err, "the table's expressions are kept as written");
            return Ok(None);
        }
    }
    for statement in statements(&bare, &full, false) {
        savepoint(client, "ptah_probe_part").await?;
        match client.execute(statement.as_str(), &[]).await {
            Ok(_) => release(client, "ptah_probe_part").await?,
            Err(err) => {
                tracing::debug!(table = %want.name, error = %err, "a part is kept as written");
                rollback_to(client, "ptah_probe_part").await?;
            }
        }
    }
    read_back(client, temp).await
}

/// The planner's statements from `from` to `to` (`create`: `from` does not exist yet).
fn statements(from: &Table, to: &Table, create: bool) -> Vec<String> {
    let mut actual = Schema::default();
    if !create {
        actual.tables.insert(from.name.clone(), from.clone());
    }
    let mut desired = Schema::default();
    desired.tables.insert(to.name.clone(), to.clone());
    let diff = ptah_schema::diff::diff(&desired, &actual);
    ptah_schema::render::render_in_transaction(&diff, Dialect::Postgres, MysqlFlavor::default())
        .into_iter()
        .map(|s| s.sql)
        .collect()
}

/// Reads the probe table back with the inspector's own queries.
async fn read_back(client: &Client, temp: &str) -> Result<Option<Table>, Error> {
    let rows = client
        .query("SELECT format('pg_temp.%I', $1::text)::regclass::oid", &[&PROBE])
        .await
        .map_err(Error::postgres)?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let oid: u32 = get(row, 0)?;
    let mut tables = HashMap::new();
    tables.insert(oid, Table::new(QualifiedName::new(temp, PROBE)));
    let namespaces = vec![temp.to_owned()];
    let mut rows = Pipeline::new(
        client,
        &namespaces,
        &[queries::COLUMNS, queries::CONSTRAINTS, queries::INDEXES],
    );
    let attnames = read_columns(&mut rows, &mut tables).await?;
    read_constraints(&mut rows, &mut tables).await?;
    read_indexes(&mut rows, &mut tables, &attnames).await?;
    Ok(tables.remove(&oid))
}
