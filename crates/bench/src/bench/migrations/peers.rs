//! The three tools as processes: ptah built from this workspace, golang-migrate built from its Go
//! module, Flyway fetched from Maven Central and driven by a small Java main compiled here. Each
//! is installed once into a cache outside the clone and reused.

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
    time::Instant,
};

use anyhow::{Context, bail};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use ptah_testenv::step::run;

use super::{
    Tool,
    db::{Engine, Scratch},
};

/// The golang-migrate release measured (`packages/go-partial.tsv` lists it as served).
const GOLANG_MIGRATE: &str = "v4.20.1";
/// Flyway and the JDBC drivers measured (`packages/maven-partial.tsv` lists them as served).
const FLYWAY: &str = "13.12.2";
const PGJDBC: &str = "42.7.14";
const MARIADB_JDBC: &str = "3.5.7";
const FLYWAY_POM: &str = include_str!("flyway-pom.xml");
const FLYWAY_MAIN: &str = include_str!("PtahBenchFlyway.java");
const FLYWAY_CLASS: &str = "PtahBenchFlyway";

/// The installed programs.
pub(super) struct Tools {
    ptah: PathBuf,
    golang_migrate: PathBuf,
    /// The Java class path of Flyway, the drivers and the compiled main.
    flyway_classpath: String,
}

/// One process run: its wall-clock time, and what it printed.
pub(super) struct Ran {
    /// Spawn to exit, in seconds.
    pub(super) seconds: f64,
    /// Flyway's own figure from inside the JVM (main() to the end), in seconds.
    pub(super) inner_seconds: Option<f64>,
    /// How many migrations the tool itself says are applied (from its output).
    pub(super) applied: Option<usize>,
}

/// What the runs need to know besides the database.
pub(super) struct Inputs<'a> {
    /// ptah's migration directory.
    pub(super) ptah_dir: &'a Path,
    /// golang-migrate's.
    pub(super) golang_migrate_dir: &'a Path,
    /// Flyway's.
    pub(super) flyway_dir: &'a Path,
    /// The file holding the sequence `--expect-sequence` approves, per engine.
    pub(super) expect_sequence: &'a Path,
}

impl Tools {
    /// Builds or finds every tool in `wanted`; a tool not wanted is left uninstalled.
    pub(super) fn prepare(wanted: &[Tool]) -> anyhow::Result<Tools> {
        let cache = super::super::tools::cache_root()?;
        let mut tools = Tools {
            ptah: PathBuf::new(),
            golang_migrate: PathBuf::new(),
            flyway_classpath: String::new(),
        };
        if wanted.contains(&Tool::Ptah) {
            tools.ptah = super::super::tools::build_ptah()?;
        }
        if wanted.contains(&Tool::GolangMigrate) {
            tools.golang_migrate = golang_migrate(&cache.join(format!("golang-migrate-{GOLANG_MIGRATE}")))?;
        }
        if wanted.contains(&Tool::Flyway) {
            tools.flyway_classpath = flyway(&cache.join(format!("flyway-{FLYWAY}")))?;
        }
        Ok(tools)
    }

    /// Applies every pending migration to `db` with `tool`, as one process.
    pub(super) fn apply(
        &self,
        tool: Tool,
        engine: Engine,
        db: &Scratch,
        inputs: &Inputs,
    ) -> anyhow::Result<Ran> {
        let mut cmd = self.command(tool, engine, db, inputs);
        match tool {
            Tool::Floor => bail!("the floor is no process"),
            Tool::Ptah => {
                let expect = format!("@{}", inputs.expect_sequence.display());
                cmd.args(["migrations", "up", "--dir"])
                    .arg(inputs.ptah_dir)
                    .args(["--verify-sum", "--expect-sequence", &expect]);
            }
            Tool::GolangMigrate => {
                cmd.arg("up");
            }
            Tool::Flyway => {
                cmd.arg("migrate").arg(inputs.flyway_dir);
            }
        }
        timed(tool, "apply", db, &mut cmd)
    }

    /// Asks `tool` for the state of `db` after the corpus was applied, as one process.
    pub(super) fn status(
        &self,
        tool: Tool,
        engine: Engine,
        db: &Scratch,
        inputs: &Inputs,
    ) -> anyhow::Result<Ran> {
        let mut cmd = self.command(tool, engine, db, inputs);
        match tool {
            Tool::Floor => bail!("the floor is no process"),
            Tool::Ptah => {
                // --exit-code: a pending migration fails the run.
                cmd.args(["migrations", "status", "--format", "json", "--exit-code", "--dir"])
                    .arg(inputs.ptah_dir);
            }
            Tool::GolangMigrate => {
                cmd.arg("version");
            }
            Tool::Flyway => {
                cmd.arg("info").arg(inputs.flyway_dir);
            }
        }
        timed(tool, "status", db, &mut cmd)
    }

    /// The tool's program with the database given the way each documents; every run starts from
    /// its default logging.
    fn command(&self, tool: Tool, engine: Engine, db: &Scratch, inputs: &Inputs) -> Command {
        let encode = |s: &str| utf8_percent_encode(s, NON_ALPHANUMERIC).to_string();
        let mut cmd = match tool {
            Tool::Floor | Tool::Ptah => {
                let mut cmd = Command::new(&self.ptah);
                cmd.env("PTAH_DB_URL", db.url.expose());
                cmd
            }
            Tool::GolangMigrate => {
                let mut cmd = Command::new(&self.golang_migrate);
                cmd.arg("-path").arg(inputs.golang_migrate_dir).arg("-database");
                match engine {
                    // lib/pq reads the password from PGPASSWORD, which keeps it out of argv.
                    Engine::Postgres => {
                        cmd.arg(format!(
                            "postgres://{}@{}:{}/{}?sslmode=disable",
                            encode(&db.user),
                            db.host,
                            db.port,
                            db.name
                        ))
                        .env("PGPASSWORD", &db.password);
                    }
                    // go-sql-driver/mysql reads no variable: the DSN must carry the password.
                    Engine::Mariadb => {
                        cmd.arg(format!(
                            "mysql://{}:{}@tcp({}:{})/{}",
                            encode(&db.user),
                            encode(&db.password),
                            db.host,
                            db.port,
                            db.name
                        ));
                    }
                }
                cmd
            }
            Tool::Flyway => {
                let jdbc = match engine {
                    // The other tools speak plaintext to the loopback services too.
                    Engine::Postgres => format!(
                        "jdbc:postgresql://{}:{}/{}?sslmode=disable",
                        db.host, db.port, db.name
                    ),
                    Engine::Mariadb => format!("jdbc:mariadb://{}:{}/{}", db.host, db.port, db.name),
                };
                let mut cmd = Command::new("java");
                cmd.arg("-cp")
                    .arg(&self.flyway_classpath)
                    .arg(FLYWAY_CLASS)
                    .env("PTAH_BENCH_JDBC_URL", jdbc)
                    .env("PTAH_BENCH_DB_USER", &db.user)
                    .env("PTAH_BENCH_DB_PASSWORD", &db.password);
                cmd
            }
        };
        for name in [
            "PTAH_LOG",
            "RUST_LOG",
            "PTAH_MIGRATIONS_DIR",
            "PTAH_ALLOW_UNVERIFIED_MIGRATION_LOCK",
            "JAVA_TOOL_OPTIONS",
            "_JAVA_OPTIONS",
        ] {
            cmd.env_remove(name);
        }
        cmd
    }
}

/// Runs `cmd` to its end, timing spawn to exit; a non-zero exit fails with what it printed (the
/// password scrubbed).
fn timed(tool: Tool, what: &str, db: &Scratch, cmd: &mut Command) -> anyhow::Result<Ran> {
    let started = Instant::now();
    let out = cmd.output().with_context(|| {
        format!(
            "cannot start {} ({})",
            tool.label(),
            cmd.get_program().to_string_lossy()
        )
    })?;
    let seconds = started.elapsed().as_secs_f64();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace(db.password.as_str(), "***");
    if !out.status.success() {
        bail!(
            "{} {what} exited {:?}\n--- stdout (end) ---\n{}\n--- stderr (end) ---\n{}",
            tool.label(),
            out.status.code(),
            tail(&text(&out.stdout)),
            tail(&text(&out.stderr))
        );
    }
    let (applied, inner_seconds) = parse_output(tool, &out)?;
    Ok(Ran {
        seconds,
        inner_seconds,
        applied,
    })
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// What each tool prints about how many migrations it applied or sees applied.
fn parse_output(tool: Tool, out: &Output) -> anyhow::Result<(Option<usize>, Option<f64>)> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    match tool {
        Tool::Floor => Ok((None, None)),
        Tool::Ptah => {
            // `up` prints text; `status --format json` a document with the applied list.
            let applied = serde_json::from_str::<serde_json::Value>(&stdout)
                .ok()
                .and_then(|doc| doc.get("applied_migrations")?.as_array().map(Vec::len));
            Ok((applied, None))
        }
        // `up` prints nothing; `version` prints the version on stderr.
        Tool::GolangMigrate => Ok((
            stderr.trim().lines().last().and_then(|l| l.trim().parse().ok()),
            None,
        )),
        Tool::Flyway => {
            let value = |key: &str| {
                stdout
                    .lines()
                    .find_map(|l| l.strip_prefix(key))
                    .map(str::trim)
                    .map(str::to_owned)
            };
            let applied = value("applied=").and_then(|v| v.parse().ok());
            let inner = value("inner_seconds=").and_then(|v| v.parse().ok());
            if applied.is_none() || inner.is_none() {
                bail!(
                    "Flyway's main printed no applied=/inner_seconds= lines:\n{}",
                    tail(&stdout)
                );
            }
            Ok((applied, inner))
        }
    }
}

/// `go install` of golang-migrate's CLI with its PostgreSQL and MySQL drivers, into `dir`.
fn golang_migrate(dir: &Path) -> anyhow::Result<PathBuf> {
    let binary = dir.join("migrate");
    if binary.is_file() {
        return Ok(binary);
    }
    eprintln!(
        "==> building golang-migrate {GOLANG_MIGRATE} into {}",
        dir.display()
    );
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    run(Command::new(super::super::tools::go_program())
        .env("GOBIN", dir)
        .args(["install", "-tags", "postgres mysql"])
        .arg(format!(
            "github.com/golang-migrate/migrate/v4/cmd/migrate@{GOLANG_MIGRATE}"
        )))?;
    if !binary.is_file() {
        bail!("go install left no {}", binary.display());
    }
    Ok(binary)
}

/// Flyway and the drivers fetched into `dir/lib`, the main compiled into `dir/classes`; returns
/// the class path.
fn flyway(dir: &Path) -> anyhow::Result<String> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let pom = FLYWAY_POM
        .replace("@FLYWAY@", FLYWAY)
        .replace("@PGJDBC@", PGJDBC)
        .replace("@MARIADB_JDBC@", MARIADB_JDBC);
    let lib = dir.join("lib");
    let pom_path = dir.join("pom.xml");
    let jar = lib.join(format!("flyway-core-{FLYWAY}.jar"));
    if std::fs::read_to_string(&pom_path).ok().as_deref() != Some(pom.as_str()) || !jar.is_file() {
        eprintln!(
            "==> fetching Flyway {FLYWAY} and the JDBC drivers into {}",
            lib.display()
        );
        if lib.exists() {
            std::fs::remove_dir_all(&lib).with_context(|| format!("cannot clear {}", lib.display()))?;
        }
        std::fs::write(&pom_path, &pom).with_context(|| format!("cannot write {}", pom_path.display()))?;
        run(Command::new("mvn")
            .current_dir(dir)
            .args(["-q", "-B", "-f", "pom.xml", "dependency:copy-dependencies"])
            .arg(format!("-DoutputDirectory={}", lib.display())))?;
    }
    let source = dir.join(format!("{FLYWAY_CLASS}.java"));
    let classes = dir.join("classes");
    let class = classes.join(format!("{FLYWAY_CLASS}.class"));
    if std::fs::read_to_string(&source).ok().as_deref() != Some(FLYWAY_MAIN) || !class.is_file() {
        eprintln!("==> compiling {FLYWAY_CLASS}.java");
        std::fs::write(&source, FLYWAY_MAIN).with_context(|| format!("cannot write {}", source.display()))?;
        std::fs::create_dir_all(&classes)?;
        run(Command::new("javac")
            .arg("-d")
            .arg(&classes)
            .arg("-cp")
            .arg(format!("{}/*", lib.display()))
            .arg(&source))?;
    }
    Ok(format!("{}:{}/*", classes.display(), lib.display()))
}
