//! The seeded corpus: N small migrations of DDL and DML, written once per tool in its own file
//! naming convention, with what the database must hold once all of them ran.
//!
//! Every statement is spelled the same for PostgreSQL and MariaDB, so the three tools and the
//! two engines all run the very same bytes.

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
};

use anyhow::Context;
use ptah_engine::Dialect;
use ptah_migrate::{Directory, Script, SequenceEntry};

use super::super::generate::Rng;

/// One migration: its version (1-based), a description usable in every tool's file name, and
/// its up SQL.
pub(super) struct Migration {
    /// The version, 1 to N.
    pub(super) version: u64,
    /// Lowercase letters, digits and `_`.
    pub(super) name: String,
    /// The statements, each ending in `;` and a newline.
    pub(super) sql: String,
    /// The same statements one by one, without their `;`.
    pub(super) statements: Vec<String>,
}

/// What the database holds after every migration ran, counted over the `t_…` tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Expect {
    /// Tables created.
    pub(super) tables: i64,
    /// Columns of those tables.
    pub(super) columns: i64,
    /// Rows inserted.
    pub(super) rows: i64,
    /// The sum of every row's `qty` after the updates.
    pub(super) qty_sum: i64,
}

/// The generated migrations and their expected end state.
pub(super) struct Corpus {
    /// In version order.
    pub(super) migrations: Vec<Migration>,
    /// The end state.
    pub(super) expect: Expect,
}

/// The three directories of one written corpus.
pub(super) struct Dirs {
    /// ptah's layout: `NNNNNNNNNN_name.up.sql` and `.down.sql`, and `ptah.sum`.
    pub(super) ptah: PathBuf,
    /// golang-migrate's: `NNNN_name.up.sql`.
    pub(super) golang_migrate: PathBuf,
    /// Flyway's: `V{n}__name.sql`.
    pub(super) flyway: PathBuf,
}

/// A table as the generator tracks it.
struct Table {
    name: String,
    /// Columns added after `id`, `name` and `qty`.
    added: Vec<String>,
    /// Columns that have an index (`id` through its primary key).
    indexed: Vec<String>,
    /// `qty` of row `id = i + 1`.
    rows: Vec<i64>,
}

impl Table {
    fn insert(&mut self, rng: &mut Rng, sql: &mut String) {
        let n = 1 + rng.below(5);
        let values: Vec<String> = (0..n)
            .map(|_| {
                let id = self.rows.len() + 1;
                let qty = rng.below(100) as i64;
                self.rows.push(qty);
                format!("({id}, 'row {id}', {qty})")
            })
            .collect();
        let _ = writeln!(
            sql,
            "INSERT INTO {} (id, name, qty) VALUES {};",
            self.name,
            values.join(", ")
        );
    }
}

/// Generates `n` migrations from `seed`; the same arguments give the same corpus.
pub(super) fn generate(n: usize, seed: u64) -> Corpus {
    let mut rng = Rng::new(seed);
    let mut tables: Vec<Table> = Vec::new();
    let mut column_no = 0;
    let mut index_no = 0;
    let mut migrations = Vec::with_capacity(n);
    for version in 1..=n as u64 {
        let mut sql = String::new();
        // The weights of the mix: creates, added columns, indexes, inserts, updates.
        let roll = if tables.is_empty() { 0 } else { rng.below(100) };
        let name = if roll < 20 {
            let name = format!("t_{}", tables.len() + 1);
            let _ = writeln!(
                sql,
                "CREATE TABLE {name} (id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(64) NOT NULL, \
                 qty INTEGER NOT NULL DEFAULT 0);"
            );
            let mut table = Table {
                name: name.clone(),
                added: Vec::new(),
                indexed: vec!["id".to_owned()],
                rows: Vec::new(),
            };
            if rng.chance(0.5) {
                table.insert(&mut rng, &mut sql);
            }
            tables.push(table);
            format!("create_{name}")
        } else if roll < 40 {
            let at = rng.below(tables.len());
            let table = &mut tables[at];
            column_no += 1;
            let column = format!("c_{column_no}");
            let _ = writeln!(
                sql,
                "ALTER TABLE {} ADD COLUMN {column} INTEGER NOT NULL DEFAULT {};",
                table.name,
                rng.below(10)
            );
            table.added.push(column.clone());
            format!("add_{column}_to_{}", table.name)
        } else if roll < 55
            && let Some((at, column)) = unindexed(&mut rng, &tables)
        {
            let table = &mut tables[at];
            index_no += 1;
            let _ = writeln!(sql, "CREATE INDEX ix_{index_no} ON {} ({column});", table.name);
            table.indexed.push(column.clone());
            format!("index_{}_{column}", table.name)
        } else if roll < 85 || tables.iter().all(|t| t.rows.is_empty()) {
            let at = rng.below(tables.len());
            let table = &mut tables[at];
            table.insert(&mut rng, &mut sql);
            if rng.chance(0.25) {
                table.insert(&mut rng, &mut sql);
            }
            format!("insert_into_{}", table.name)
        } else {
            let with_rows: Vec<usize> = (0..tables.len())
                .filter(|&i| !tables[i].rows.is_empty())
                .collect();
            let table = &mut tables[rng.pick(&with_rows)];
            let upto = 1 + rng.below(table.rows.len());
            let delta = 1 + rng.below(9) as i64;
            let _ = writeln!(
                sql,
                "UPDATE {} SET qty = qty + {delta} WHERE id <= {upto};",
                table.name
            );
            for qty in &mut table.rows[..upto] {
                *qty += delta;
            }
            format!("update_{}", table.name)
        };
        let statements = sql.lines().map(|l| l.trim_end_matches(';').to_owned()).collect();
        migrations.push(Migration {
            version,
            name,
            statements,
            sql,
        });
    }
    let expect = Expect {
        tables: tables.len() as i64,
        columns: tables.iter().map(|t| 3 + t.added.len() as i64).sum(),
        rows: tables.iter().map(|t| t.rows.len() as i64).sum(),
        qty_sum: tables.iter().flat_map(|t| &t.rows).sum(),
    };
    Corpus { migrations, expect }
}

/// A column of some table that has no index yet, picked at random; `None` when all have one.
fn unindexed(rng: &mut Rng, tables: &[Table]) -> Option<(usize, String)> {
    let candidates: Vec<(usize, &String)> = tables
        .iter()
        .enumerate()
        .flat_map(|(i, t)| {
            t.added
                .iter()
                .filter(|c| !t.indexed.contains(c))
                .map(move |c| (i, c))
        })
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let (at, column) = candidates[rng.below(candidates.len())];
    Some((at, column.clone()))
}

impl Corpus {
    /// The names of the corpus's tables, for counting their rows.
    pub(super) fn table_names(&self) -> Vec<String> {
        (1..=self.expect.tables).map(|i| format!("t_{i}")).collect()
    }

    /// Statements over all migrations.
    pub(super) fn statements(&self) -> usize {
        self.migrations.iter().map(|m| m.statements.len()).sum()
    }

    /// Writes the three directories under `root` (which must not hold older ones) and ptah's
    /// `ptah.sum`, as `ptah migrations hash` would.
    pub(super) fn write(&self, root: &Path) -> anyhow::Result<Dirs> {
        let dirs = Dirs {
            ptah: root.join("ptah"),
            golang_migrate: root.join("golang-migrate"),
            flyway: root.join("flyway"),
        };
        for dir in [&dirs.ptah, &dirs.golang_migrate, &dirs.flyway] {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        for m in &self.migrations {
            let files = [
                (dirs.ptah.join(ptah_name(m, "up")), m.sql.as_str()),
                (
                    dirs.ptah.join(ptah_name(m, "down")),
                    // ptah wants both halves; the benchmark never migrates down.
                    "-- not used by the benchmark\n",
                ),
                (dirs.golang_migrate.join(golang_migrate_name(m)), &m.sql),
                (dirs.flyway.join(flyway_name(m)), &m.sql),
            ];
            for (path, text) in files {
                std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
            }
        }
        let dir = Directory::read(&dirs.ptah)?;
        ptah_migrate::hash(&dir)?;
        Ok(dirs)
    }
}

/// The sequence `ptah migrations up --expect-sequence` must find on a fresh database: what an
/// approver would have taken from `ptah migrations status --format json`.
pub(super) fn expected_sequence(ptah_dir: &Path, dialect: Dialect) -> anyhow::Result<Vec<SequenceEntry>> {
    let dir = Directory::read(ptah_dir)?;
    dir.migrations()
        .iter()
        .map(|m| Ok(Script::prepare(m, dialect)?.entry()))
        .collect()
}

fn ptah_name(m: &Migration, half: &str) -> String {
    format!("{:010}_{}.{half}.sql", m.version, m.name)
}

fn golang_migrate_name(m: &Migration) -> String {
    format!("{:04}_{}.up.sql", m.version, m.name)
}

fn flyway_name(m: &Migration) -> String {
    format!("V{}__{}.sql", m.version, m.name)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn read_dir(dir: &Path) -> BTreeMap<String, String> {
        std::fs::read_dir(dir)
            .expect("readable")
            .map(|e| {
                let e = e.expect("entry");
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(e.path()).expect("text"))
            })
            .collect()
    }

    #[test]
    fn three_conventions_hold_the_same_thousand_migrations() {
        let corpus = generate(1000, 7);
        assert_eq!(corpus.migrations.len(), 1000);
        let again = generate(1000, 7);
        assert!(
            corpus
                .migrations
                .iter()
                .zip(&again.migrations)
                .all(|(a, b)| a.sql == b.sql)
        );
        assert_eq!(corpus.expect, again.expect);
        for kind in [
            "CREATE TABLE",
            "ADD COLUMN",
            "CREATE INDEX",
            "INSERT INTO",
            "UPDATE",
        ] {
            let n = corpus.migrations.iter().filter(|m| m.sql.contains(kind)).count();
            assert!(n >= 50, "only {n} migrations with {kind}");
        }

        let root = tempfile::tempdir().expect("temp dir");
        let dirs = corpus.write(root.path()).expect("written");
        let ptah = Directory::read(&dirs.ptah).expect("ptah reads its directory");
        assert_eq!(ptah.migrations().len(), 1000);
        assert!(ptah.sum_bytes().is_some(), "ptah.sum written");
        let golang = read_dir(&dirs.golang_migrate);
        let flyway = read_dir(&dirs.flyway);
        assert_eq!((golang.len(), flyway.len()), (1000, 1000));
        for (m, file) in corpus.migrations.iter().zip(ptah.migrations()) {
            assert_eq!(file.version.0 as u64, m.version);
            assert_eq!(file.up.bytes, m.sql.as_bytes());
            let one_by_one: String = m.statements.iter().map(|s| format!("{s};\n")).collect();
            assert_eq!(
                one_by_one, m.sql,
                "the floor runs the very statements of the files"
            );
            assert_eq!(golang[&golang_migrate_name(m)], m.sql);
            assert_eq!(flyway[&flyway_name(m)], m.sql);
        }
        assert!(
            golang.contains_key("0001_create_t_1.up.sql"),
            "{:?}",
            golang.keys().next()
        );
        assert!(flyway.contains_key("V1__create_t_1.sql"));

        let sequence = expected_sequence(&dirs.ptah, Dialect::Postgres).expect("sequence");
        assert_eq!(sequence.len(), 1000);
        assert!(corpus.statements() >= 1000);
        assert_eq!(corpus.table_names().len() as i64, corpus.expect.tables);
    }
}
