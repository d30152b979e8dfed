//! `cargo xtask bench runner`: the runner's overhead per operation, from process start to the
//! frame written (the runner's last write before it exits, so its exit is the end).
//!
//! The operation is the cheapest one that still runs the child against a database: a
//! MigrationHistory of an empty migrations directory on a fresh PostgreSQL database
//! (`ptah migrations status`). The baseline is the same `ptah` invocation started directly, with
//! the same arguments and environment, in the same rounds; the overhead is runner − direct. A
//! third figure is the runner alone: a refused input writes its frame without starting a child,
//! so it is the runner's own start-up, checks and frame. Both binaries are those of the images
//! (release), built first as `cargo xtask images` builds them.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Instant,
};

use anyhow::{Context, bail};
use ptah_dataplane::{TargetIdentity, parse_last_frame};
use ptah_testenv::{images::Profile, step::workspace_root};
use ptah_testservices::{TestServices, unique_name};
use serde_json::json;

use super::samples::{Samples, round};

/// The goal of `reference/bench-baseline.md`: overhead per operation.
const GOAL_MS: f64 = 20.0;

/// Arguments of `cargo xtask bench runner`.
#[derive(clap::Args)]
pub struct Args {
    /// Timed rounds (after one untimed warm-up round); each runs all three kinds once.
    #[arg(long, default_value_t = 30)]
    rounds: usize,
    /// Use the binaries already in target/release instead of building them first.
    #[arg(long)]
    no_build: bool,
    /// Where to write the JSON report (default: target/bench/runner.json).
    #[arg(long)]
    output: Option<PathBuf>,
}

/// What one round measures, in the order of the table; the first is the baseline.
#[derive(Clone, Copy)]
enum Kind {
    Direct,
    Runner,
    RunnerAlone,
}

const KINDS: [Kind; 3] = [Kind::Direct, Kind::Runner, Kind::RunnerAlone];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Direct => "ptah directly (baseline)",
            Kind::Runner => "ptah-runner supervising ptah",
            Kind::RunnerAlone => "ptah-runner alone (refusal frame, no child)",
        }
    }
}

/// The binaries, the database and the scratch directory of a run.
struct Setup {
    ptah: PathBuf,
    runner: PathBuf,
    url: String,
    work: PathBuf,
    migrations: PathBuf,
}

/// Runs the benchmark, prints the table and writes the JSON report.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let root = workspace_root();
    let build = super::output::build();
    if !args.no_build {
        super::images::build_binaries(&root, Profile::Release)?;
    }
    let bins = root.join("target").join(Profile::Release.dir());
    let services = TestServices::load().map_err(|e| anyhow::anyhow!("{e}"))?;
    let url = fresh_database(&services)?;
    let work = root.join("target/bench/runner");
    let migrations = work.join("migrations");
    std::fs::create_dir_all(&migrations)
        .with_context(|| format!("cannot create {}", migrations.display()))?;
    let setup = Setup {
        ptah: bins.join("ptah"),
        runner: bins.join("ptah-runner"),
        url,
        work,
        migrations,
    };
    eprintln!(
        "bench runner: {build} build of the bench, release binaries of the images, {} rounds",
        args.rounds
    );
    let mut samples: Vec<Samples> = KINDS.iter().map(|_| Samples::default()).collect();
    for round_no in 0..=args.rounds {
        for k in 0..KINDS.len() {
            // The order rotates so no kind always runs right after another's exit.
            let at = (k + round_no) % KINDS.len();
            let secs = once(&setup, KINDS[at])?;
            if round_no > 0 {
                samples[at].0.push(secs);
            }
        }
    }
    let direct = samples[0].median();
    let runner = samples[1].median();
    let paired = Samples(
        samples[1]
            .0
            .iter()
            .zip(&samples[0].0)
            .map(|(r, d)| r - d)
            .collect(),
    );
    print_table(&samples, &paired, build);
    let report = json!({
        "benchmark": "runner",
        "build": build,
        "binaries": "target/release, built as cargo xtask images builds them",
        "operation": "migration-history: ptah migrations status --format json, empty directory, fresh PostgreSQL database",
        "timing": "wall clock from spawn to exit; the frame is the runner's last write",
        "rounds": args.rounds,
        "goal_overhead_ms": GOAL_MS,
        "results": KINDS.iter().zip(&samples).map(|(kind, s)| json!({
            "kind": kind.name(),
            "seconds": s.to_json(),
            "over_baseline": round(s.median() / direct),
        })).collect::<Vec<_>>(),
        "overhead_ms": round((runner - direct) * 1e3),
        "overhead_ms_paired_median": round(paired.median() * 1e3),
        "ratio": round(runner / direct),
    });
    let path = super::output::path(args.output, "runner");
    super::output::write(&path, &report)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// A fresh database the `app` user owns; returns its URL.
fn fresh_database(services: &TestServices) -> anyhow::Result<String> {
    let name = unique_name("benchrunner");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    runtime.block_on(async {
        let (client, conn) =
            tokio_postgres::connect(services.postgres.admin_url.expose(), tokio_postgres::NoTls)
                .await
                .context("cannot connect to PostgreSQL as admin")?;
        let conn = tokio::spawn(conn);
        client
            .batch_execute(&format!("CREATE DATABASE {name} OWNER app"))
            .await
            .context("cannot create the bench database")?;
        drop(client);
        let _ = conn.await;
        anyhow::Ok(())
    })?;
    Ok(services.postgres.url_for_database(&name).expose().to_owned())
}

/// Runs `kind` once, checks its result and returns the seconds from spawn to exit.
fn once(setup: &Setup, kind: Kind) -> anyhow::Result<f64> {
    let mut cmd = match kind {
        Kind::Direct => {
            let mut cmd = Command::new(&setup.ptah);
            cmd.args(["migrations", "status", "--format", "json"])
                .env_clear()
                .env("PTAH_DB_URL", &setup.url)
                .env("PTAH_MIGRATIONS_DIR", &setup.migrations)
                .env("PTAH_LOG", "warn");
            cmd
        }
        Kind::Runner | Kind::RunnerAlone => {
            let mut env = runner_env(&setup.url, &setup.migrations)?;
            if matches!(kind, Kind::RunnerAlone) {
                // Checked first of all: the frame is written without any child.
                env.insert("PTAH_RUNNER_PROTOCOL_VERSION".into(), "0".into());
            }
            let mut cmd = Command::new(&setup.runner);
            cmd.args(["--operation", "migration-history", "--ptah-binary"])
                .arg(&setup.ptah)
                .arg("--work-dir")
                .arg(&setup.work)
                .arg("--termination-log")
                .arg(setup.work.join("termination-log"))
                .env_clear()
                .envs(&env);
            cmd
        }
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {}", kind.name()))?;
    let secs = start.elapsed().as_secs_f64();
    check(kind, &out)?;
    Ok(secs)
}

/// Fails the run on a result that is not the expected one: a fast failure is no measurement.
fn check(kind: Kind, out: &std::process::Output) -> anyhow::Result<()> {
    let stderr = || String::from_utf8_lossy(&out.stderr).into_owned();
    match kind {
        Kind::Direct if !out.status.success() => bail!("ptah failed: {}", stderr()),
        Kind::Direct => Ok(()),
        Kind::Runner | Kind::RunnerAlone => {
            let frame =
                parse_last_frame(&out.stdout).map_err(|e| anyhow::anyhow!("no frame ({e}): {}", stderr()))?;
            let p = &frame.payload;
            let want_success = matches!(kind, Kind::Runner);
            if want_success != (p.error.is_none() && p.migration_history.is_some()) {
                bail!("{}: unexpected frame {p:?}: {}", kind.name(), stderr());
            }
            Ok(())
        }
    }
}

/// The environment contract of a MigrationHistory, as the Job spec sets it.
fn runner_env(url: &str, migrations: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let identity = TargetIdentity::from_url(url).map_err(|e| anyhow::anyhow!("{e}"))?;
    let digest = identity.digest().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(BTreeMap::from([
        ("PTAH_RUNNER_PROTOCOL_VERSION".into(), "1".into()),
        ("PTAH_OPERATION_ID".into(), unique_name("op")),
        ("PTAH_DB_URL".into(), url.to_owned()),
        ("PTAH_EXPECTED_TARGET_IDENTITY_DIGEST".into(), digest.to_string()),
        (
            "PTAH_COORDINATION_DIGEST".into(),
            format!("sha256:{}", "07".repeat(32)),
        ),
        (
            "PTAH_EXPECTED_DATABASE_ENGINE".into(),
            identity.engine().as_str().into(),
        ),
        ("PTAH_MIGRATIONS_DIR".into(), migrations.display().to_string()),
        ("PTAH_LOG".into(), "warn".into()),
    ]))
}

fn print_table(samples: &[Samples], paired: &Samples, build: &str) {
    let direct = samples[0].median();
    println!(
        "\nrunner overhead ({build} bench, release binaries; median of the rounds; ratio against ptah directly)\n"
    );
    println!("| kind | median ms | min ms | max ms | over baseline |");
    println!("| --- | --- | --- | --- | --- |");
    for (kind, s) in KINDS.iter().zip(samples) {
        println!(
            "| {} | {:.2} | {:.2} | {:.2} | {:.2}× |",
            kind.name(),
            s.median() * 1e3,
            s.min() * 1e3,
            s.max() * 1e3,
            s.median() / direct
        );
    }
    let overhead = (samples[1].median() - direct) * 1e3;
    println!(
        "\noverhead: {overhead:.2} ms (runner − direct, medians; per-round paired median {:.2} ms); goal ≤ {GOAL_MS:.0} ms: {}",
        paired.median() * 1e3,
        if overhead <= GOAL_MS { "met" } else { "MISSED" }
    );
}
