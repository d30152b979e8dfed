//! The Atlas engine (`ariga.io/atlas`, as a library) as a peer of `bench executor`: a small Go
//! main ([`MAIN`]) built from its module at a pinned version into a cache outside the clone,
//! run as one process per round like `ptah schema plan`.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Instant,
};

use anyhow::{Context, bail};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use ptah_engine::{DatabaseUrl, Dialect};
use ptah_testenv::step::run;
use serde_json::Value;

/// The Atlas release measured (`packages/go-partial.tsv`: it needs Go 1.27).
pub(super) const ATLAS: &str = "v1.4.0";
/// The Go toolchain Atlas v1.4.0 needs; the go command fetches it from the module proxy.
const GOTOOLCHAIN: &str = "go1.27.3";
const MAIN: &str = include_str!("main.go");
const GO_MOD: &str = include_str!("go.mod");
const GO_SUM: &str = include_str!("go.sum");

/// One run of the Atlas main.
pub(super) struct AtlasRun {
    /// Spawn to exit, in seconds.
    pub(super) seconds: f64,
    /// What the Go main reported.
    pub(super) report: AtlasReport,
}

/// The Go main's one line of output.
#[derive(Debug)]
pub(super) struct AtlasReport {
    /// Schema changes Atlas found between the live and the desired schema.
    pub(super) changes: usize,
    /// Statements of the plan it made of them.
    pub(super) statements: usize,
    /// Inspecting the live database.
    pub(super) inspect_seconds: f64,
    /// Loading the desired statements into the dev database and inspecting it.
    pub(super) dev_seconds: f64,
    /// Diffing and planning.
    pub(super) diff_seconds: f64,
}

/// Builds the Go main into `tools` (again only when its sources changed) and returns the program.
pub(super) fn build(tools: &Path) -> anyhow::Result<PathBuf> {
    let dir = tools.join(format!("atlas-{ATLAS}"));
    let binary = dir.join("atlas-bench");
    let sources = [("main.go", MAIN), ("go.mod", GO_MOD), ("go.sum", GO_SUM)];
    let current = sources
        .iter()
        .all(|(name, text)| std::fs::read_to_string(dir.join(name)).ok().as_deref() == Some(*text));
    if current && binary.is_file() {
        return Ok(binary);
    }
    eprintln!("==> building the Atlas {ATLAS} peer into {}", dir.display());
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, text) in sources {
        std::fs::write(dir.join(name), text).with_context(|| format!("cannot write {name}"))?;
    }
    let tmp = dir.join(".atlas-bench.tmp");
    run(Command::new(super::tools::go_program())
        .current_dir(&dir)
        .env("GOTOOLCHAIN", GOTOOLCHAIN)
        .env("CGO_ENABLED", "0")
        .args(["build", "-mod=readonly", "-trimpath", "-o"])
        .arg(&tmp)
        .arg("."))?;
    std::fs::rename(&tmp, &binary)
        .with_context(|| format!("cannot move the build to {}", binary.display()))?;
    Ok(binary)
}

/// The URL Atlas opens for `url`: plaintext like the other peers on the loopback services,
/// bound to the database (the realm) on PostgreSQL.
fn atlas_url(url: &DatabaseUrl) -> String {
    let encode = |s: &str| utf8_percent_encode(s, NON_ALPHANUMERIC).to_string();
    let password = url
        .parsed()
        .password()
        .map(|p| format!(":{}", encode(p.expose())))
        .unwrap_or_default();
    let (scheme, query) = match url.dialect() {
        Dialect::Postgres => ("postgres", "?sslmode=disable"),
        Dialect::Mysql => ("mysql", ""),
    };
    format!(
        "{scheme}://{}{password}@{}:{}/{}{query}",
        encode(url.user()),
        url.host(),
        url.port(),
        url.database()
    )
}

/// Runs the Atlas main once: `live` against the statements of `statements` (files of JSON
/// arrays, in order) loaded into `dev`; `schemas` on PostgreSQL, none on MySQL.
pub(super) fn plan(
    program: &Path,
    live: &DatabaseUrl,
    dev: &DatabaseUrl,
    schemas: &[String],
    statements: &[&Path],
) -> anyhow::Result<AtlasRun> {
    let started = Instant::now();
    let out = Command::new(program)
        .args(statements)
        .env("PTAH_BENCH_URL", atlas_url(live))
        .env("PTAH_BENCH_DEV_URL", atlas_url(dev))
        .env("PTAH_BENCH_SCHEMAS", schemas.join(","))
        .output()
        .with_context(|| format!("cannot start {}", program.display()))?;
    let seconds = started.elapsed().as_secs_f64();
    let scrub = |bytes: &[u8]| dev.scrub(&live.scrub(&String::from_utf8_lossy(bytes)));
    if !out.status.success() {
        bail!(
            "the Atlas peer exited {:?}: {}",
            out.status.code(),
            scrub(&out.stderr).trim()
        );
    }
    let parsed = serde_json::from_slice::<Value>(&out.stdout)
        .ok()
        .and_then(|v| report(&v));
    let Some(report) = parsed else {
        bail!("the Atlas peer printed {:?}", scrub(&out.stdout));
    };
    Ok(AtlasRun { seconds, report })
}

fn report(v: &Value) -> Option<AtlasReport> {
    let count = |key: &str| v[key].as_u64().and_then(|n| usize::try_from(n).ok());
    Some(AtlasReport {
        changes: count("changes")?,
        statements: count("statements")?,
        inspect_seconds: v["inspect_seconds"].as_f64()?,
        dev_seconds: v["dev_seconds"].as_f64()?,
        diff_seconds: v["diff_seconds"].as_f64()?,
    })
}
