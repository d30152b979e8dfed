//! The peers of `bench executor`, each one process per round as a person runs it on the same
//! database: `ptah schema plan` of the unchanged schema (canonical `schema.hcl`) against the
//! Atlas engine given the same schema as SQL statements and an empty dev database; and, with one
//! column added to the desired schema, `ptah schema plan --dev-url` (the plan rehearsed on the
//! dev database: the observed schema recreated there, the plan run, a fresh plan empty) against
//! Atlas planning the same change. Issue 37's goal: ptah at or below 0.1× Atlas. Atlas gets the
//! tables only ([`Documents::write`]), ptah the views, triggers and routines as well.

use std::{path::PathBuf, process::Command, time::Instant};

use anyhow::{Context, bail};
use ptah_engine::{DatabaseUrl, Dialect};
use ptah_schema::{Plan, PlanOptions, Schema};
use ptah_testservices::SecretUrl;
use serde_json::{Value, json};

use super::super::{atlas, samples::Samples, tools};

/// The programs measured, built once per run.
pub(super) struct Tools {
    ptah: PathBuf,
    atlas: PathBuf,
}

impl Tools {
    /// Builds `ptah` in this bench's profile and the Atlas main.
    pub(super) fn prepare() -> anyhow::Result<Tools> {
        Ok(Tools {
            ptah: tools::build_ptah()?,
            atlas: atlas::build(&tools::cache_root()?)?,
        })
    }
}

/// The desired schema in each tool's form, written once per engine and size.
pub(super) struct Documents {
    dir: PathBuf,
    hcl: PathBuf,
    statements: PathBuf,
    /// The desired schema with [`ADDED_COLUMN`], for ptah.
    hcl_changed: PathBuf,
    /// The statement that adds it, for Atlas (after [`Documents::statements`]).
    change: PathBuf,
}

/// The column the changed desired schema adds to one table.
const ADDED_COLUMN: &str = "bench_note";

impl Documents {
    /// Writes the statements that create `desired`'s tables on the `empty` database as a JSON
    /// array for Atlas's dev database; the `schema.hcl` follow once the live spelling is known
    /// ([`Self::write_hcl`]). Views, triggers and routines are left out: the open-source Atlas
    /// engine neither inspects nor restores them (Atlas Pro does), so it is given less work than
    /// ptah, which plans them too.
    pub(super) fn write(
        dialect: Dialect,
        desired: &Schema,
        empty: &Schema,
        options: &PlanOptions,
    ) -> anyhow::Result<Documents> {
        let mut tables = desired.clone();
        tables.views.clear();
        tables.view_options.clear();
        tables.routines.clear();
        tables.triggers.clear();
        tables.stored_routines.clear();
        tables.events.clear();
        let create = ptah_schema::plan(&tables, empty, dialect, options)?;
        let dir = std::env::temp_dir().join(format!("ptah-bench-executor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let docs = Documents {
            hcl: dir.join("schema.hcl"),
            statements: dir.join("statements.json"),
            hcl_changed: dir.join("schema-changed.hcl"),
            change: dir.join("change.json"),
            dir,
        };
        write_statements(&docs.statements, &create)?;
        Ok(docs)
    }

    /// Writes `desired` as canonical `schema.hcl` (what `ptah schema inspect` prints), the same
    /// with one column added, and the statement that adds it.
    pub(super) fn write_hcl(
        &self,
        dialect: Dialect,
        desired: &Schema,
        options: &PlanOptions,
    ) -> anyhow::Result<()> {
        let write = |path: &PathBuf, schema: &Schema| {
            std::fs::write(path, ptah_schema::write::hcl::to_hcl(dialect, schema))
                .with_context(|| format!("cannot write {}", path.display()))
        };
        write(&self.hcl, desired)?;
        let changed = with_added_column(desired).context("no table has a nullable column to copy")?;
        write(&self.hcl_changed, &changed)?;
        let change = ptah_schema::plan(&changed, desired, dialect, options)?;
        if change.statements.len() != 1 {
            bail!("adding one column planned {} statements", change.statements.len());
        }
        write_statements(&self.change, &change)
    }
}

fn write_statements(path: &PathBuf, plan: &Plan) -> anyhow::Result<()> {
    let list: Vec<&str> = plan.statements.iter().map(|s| s.sql.as_str()).collect();
    std::fs::write(path, serde_json::to_vec(&list)?)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// `desired` with [`ADDED_COLUMN`] appended to the first table that has a plain nullable
/// column, as a copy of that column.
fn with_added_column(desired: &Schema) -> Option<Schema> {
    let mut changed = desired.clone();
    let table = changed.tables.values_mut().find_map(|t| {
        let plain = t.columns.iter().find(|c| {
            c.nullable
                && c.default.is_none()
                && c.generated.is_none()
                && c.identity.is_none()
                && !c.auto_increment
        })?;
        let mut column = plain.clone();
        column.name = ADDED_COLUMN.to_owned();
        column.comment = None;
        Some((t, column))
    });
    let (table, column) = table?;
    table.columns.push(column);
    Some(changed)
}

impl Drop for Documents {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What the peers measured for one engine and size.
#[derive(Default)]
pub(super) struct Measured {
    ptah_plan: Samples,
    atlas: Samples,
    atlas_inspect: Samples,
    atlas_dev: Samples,
    atlas_diff: Samples,
    ptah_rehearsed: Samples,
    atlas_changed: Samples,
    /// A run that found the database out of sync, or the change not planned, described.
    pub(super) problem: Option<String>,
}

/// Runs each peer `rounds` times on `live`, in an order that rotates from round to round, with
/// an empty dev database from `fresh_dev` before each run (untimed): Atlas's own restore of the
/// dev database drops a PostgreSQL schema of 1,000 tables in one statement, which exceeds the
/// server's default lock table, so the bench does it instead, and Atlas is timed without it.
/// `schemas` are the PostgreSQL schemas in scope (none on MySQL, where the database is one).
pub(super) async fn measure(
    tools: &Tools,
    docs: &Documents,
    live: &SecretUrl,
    schemas: &[String],
    rounds: usize,
    mut fresh_dev: impl AsyncFnMut() -> anyhow::Result<SecretUrl>,
) -> anyhow::Result<Measured> {
    let live_url = DatabaseUrl::parse(live.expose())?;
    let mut m = Measured::default();
    let problem = |what: String| {
        eprintln!("    PROBLEM: {what}");
        what
    };
    for round in 0..rounds {
        for k in 0..4 {
            let dev = fresh_dev().await?;
            let dev_url = DatabaseUrl::parse(dev.expose())?;
            match (round + k) % 4 {
                0 => m.ptah_plan.0.push(ptah(tools, &docs.hcl, docs, live, None)?),
                1 => m
                    .ptah_rehearsed
                    .0
                    .push(ptah(tools, &docs.hcl_changed, docs, live, Some(&dev))?),
                2 => {
                    let ran = atlas::plan(&tools.atlas, &live_url, &dev_url, schemas, &[&docs.statements])?;
                    m.atlas.0.push(ran.seconds);
                    m.atlas_inspect.0.push(ran.report.inspect_seconds);
                    m.atlas_dev.0.push(ran.report.dev_seconds);
                    m.atlas_diff.0.push(ran.report.diff_seconds);
                    if ran.report.changes > 0 && m.problem.is_none() {
                        m.problem = Some(problem(format!(
                            "Atlas found {} change(s) ({} statement(s)) in the unchanged database",
                            ran.report.changes, ran.report.statements
                        )));
                    }
                }
                _ => {
                    let files = [docs.statements.as_path(), docs.change.as_path()];
                    let ran = atlas::plan(&tools.atlas, &live_url, &dev_url, schemas, &files)?;
                    m.atlas_changed.0.push(ran.seconds);
                    if ran.report.statements != 1 && m.problem.is_none() {
                        m.problem = Some(problem(format!(
                            "Atlas planned {} statement(s) for one added column",
                            ran.report.statements
                        )));
                    }
                }
            }
        }
        eprintln!(
            "    peers round {}: unchanged: ptah plan {:.3}s, Atlas {:.3}s; one column added: ptah plan \
             rehearsed {:.3}s, Atlas {:.3}s",
            round + 1,
            m.ptah_plan.0[round],
            m.atlas.0[round],
            m.ptah_rehearsed.0[round],
            m.atlas_changed.0[round]
        );
    }
    Ok(m)
}

/// One `ptah schema plan` process of `hcl`, timed spawn to exit. Unrehearsed, it must find the
/// database in sync (exit 0); rehearsed, it must plan one statement (exit 1) and the rehearsal
/// must pass.
fn ptah(
    tools: &Tools,
    hcl: &PathBuf,
    docs: &Documents,
    live: &SecretUrl,
    dev: Option<&SecretUrl>,
) -> anyhow::Result<f64> {
    let rehearse = dev.is_some();
    let mut cmd = Command::new(&tools.ptah);
    cmd.args(["schema", "plan", "--format", "json", "--from"])
        .arg(hcl)
        .arg("--output")
        .arg(docs.dir.join("plan.json"))
        .env("PTAH_DB_URL", live.expose())
        .env_remove("PTAH_DEV_URL")
        .env_remove("PTAH_LOG")
        .env_remove("RUST_LOG");
    if let Some(dev) = dev {
        cmd.env("PTAH_DEV_URL", dev.expose());
    }
    let started = Instant::now();
    let out = cmd.output().context("cannot start ptah")?;
    let seconds = started.elapsed().as_secs_f64();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let expected = if rehearse {
        out.status.code() == Some(1)
            && report["rehearsal"]["outcome"] == "passed"
            && report["statements"] == 1
    } else {
        out.status.code() == Some(0)
    };
    if !expected {
        let scrub = |bytes: &[u8]| {
            let text = String::from_utf8_lossy(bytes).replace(live.expose(), "<live>");
            dev.map_or(text.clone(), |d| text.replace(d.expose(), "<dev>"))
        };
        bail!(
            "ptah schema plan{} exited {:?}: {}{}",
            if rehearse { " --dev-url" } else { "" },
            out.status.code(),
            scrub(&out.stdout).trim(),
            scrub(&out.stderr).trim()
        );
    }
    Ok(seconds)
}

impl Measured {
    fn ratio(ptah: &Samples, atlas: &Samples) -> f64 {
        ptah.median() / atlas.median()
    }

    /// The report's `peers` object.
    pub(super) fn to_json(&self) -> Value {
        json!({
            "atlas_version": atlas::ATLAS,
            "unchanged": {
                "ptah_plan": self.ptah_plan.to_json(),
                "atlas": self.atlas.to_json(),
                "atlas_inspect": self.atlas_inspect.to_json(),
                "atlas_dev_load": self.atlas_dev.to_json(),
                "atlas_diff_plan": self.atlas_diff.to_json(),
                "ratio_ptah_to_atlas": Self::ratio(&self.ptah_plan, &self.atlas),
            },
            "one_column_added": {
                "ptah_plan_rehearsed": self.ptah_rehearsed.to_json(),
                "atlas": self.atlas_changed.to_json(),
                "ratio_ptah_to_atlas": Self::ratio(&self.ptah_rehearsed, &self.atlas_changed),
            },
            "goal": "each ratio ≤ 0.1 (issue 37)",
            "problem": self.problem,
        })
    }

    /// One line of the printed table.
    pub(super) fn line(&self, label: &str, tables: usize) -> String {
        format!(
            "{label:<14} {tables:>6} {:>9.3} {:>9.3} {:>8.3}× {:>10.3} {:>9.3} {:>8.3}× {:>6}",
            self.ptah_plan.median(),
            self.atlas.median(),
            Self::ratio(&self.ptah_plan, &self.atlas),
            self.ptah_rehearsed.median(),
            self.atlas_changed.median(),
            Self::ratio(&self.ptah_rehearsed, &self.atlas_changed),
            if self.problem.is_none() { "yes" } else { "NO" },
        )
    }
}

/// The printed table's header.
pub(super) fn header() -> String {
    format!(
        "{:<14} {:>6} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9} {:>6}",
        "engine", "tables", "plan", "Atlas", "ratio", "rehearsed", "Atlas", "ratio", "ok"
    )
}
