//! Shared by the runner's integration tests: the real `ptah` binary, fresh databases, running
//! `ptah-runner` with an environment, and reading its frame.
//!
//! `ptah` belongs to another package, so `env!("CARGO_BIN_EXE_ptah")` is not available here. The
//! tests build it once per test binary with `cargo build --workspace --bin ptah` (same profile,
//! same target directory: `CARGO_TARGET_DIR` or `<workspace>/target`) and run `target/debug/ptah`.
//! `--workspace` keeps cargo's feature unification identical to `cargo nextest run --workspace`,
//! so the binary the test run already built is reused instead of rebuilt with other features.
#![allow(dead_code)]

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::{Command, Output},
    sync::OnceLock,
};

use ptah_dataplane::{ParsedFrame, TargetIdentity, parse_last_frame};
use ptah_testservices::{Database, unique_name};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("workspace root")
        .to_owned()
}

/// The `ptah` binary, built on first use.
pub fn ptah() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            // Without the variables the test runner set: a build script watching them (ring's)
            // would rebuild the workspace for this build and again for the next ordinary one.
            let status = ptah_testenv::step::cargo()
                .args(["build", "--quiet", "--workspace", "--bin", "ptah"])
                .current_dir(workspace())
                .status()
                .expect("run cargo build --workspace --bin ptah");
            assert!(status.success(), "cargo build --workspace --bin ptah failed");
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| workspace().join("target"));
            let bin = target.join("debug").join("ptah");
            assert!(bin.is_file(), "{} is missing after the build", bin.display());
            bin
        })
        .clone()
}

/// The runner binary of this package.
pub fn runner() -> &'static str {
    env!("CARGO_BIN_EXE_ptah-runner")
}

/// A scratch directory removed on drop.
pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ptah-runner-test")
        .tempdir()
        .expect("tempdir")
}

/// A fresh database on `server` the `app` user owns; returns its URL.
pub async fn fresh_database(server: &Database, postgres: bool) -> String {
    let name = unique_name("runner");
    if postgres {
        let (client, conn) = tokio_postgres::connect(server.admin_url.expose(), tokio_postgres::NoTls)
            .await
            .expect("connect as admin");
        tokio::spawn(conn);
        client
            .batch_execute(&format!("CREATE DATABASE {name} OWNER app"))
            .await
            .expect("create database");
    } else {
        use mysql_async::prelude::Queryable;
        let mut conn = mysql_async::Conn::from_url(server.admin_url.expose())
            .await
            .expect("connect as admin");
        conn.query_drop(format!("CREATE DATABASE {name}"))
            .await
            .expect("create");
        conn.query_drop(format!("GRANT ALL ON {name}.* TO 'app'@'%'"))
            .await
            .expect("grant");
        conn.disconnect().await.expect("disconnect");
    }
    server.url_for_database(&name).expose().to_owned()
}

/// The password of a URL, raw and percent-decoded.
pub fn password_forms(url: &str) -> Vec<String> {
    let parsed = url::Url::parse(url).expect("url");
    let raw = parsed.password().expect("password").to_owned();
    let decoded = percent_encoding::percent_decode_str(&raw)
        .decode_utf8()
        .expect("utf8")
        .into_owned();
    vec![raw, decoded]
}

/// The base environment of a database operation on `url`.
pub fn db_env(url: &str) -> BTreeMap<String, String> {
    let identity = TargetIdentity::from_url(url).expect("identity");
    let fp = |n: u8| format!("sha256:{}", format!("{n:02x}").repeat(32));
    BTreeMap::from([
        ("PTAH_RUNNER_PROTOCOL_VERSION".into(), "1".into()),
        ("PTAH_OPERATION_ID".into(), unique_name("op")),
        ("PTAH_DB_URL".into(), url.to_owned()),
        (
            "PTAH_EXPECTED_TARGET_IDENTITY_DIGEST".into(),
            identity.digest().expect("digest").to_string(),
        ),
        ("PTAH_COORDINATION_DIGEST".into(), fp(7)),
        (
            "PTAH_EXPECTED_DATABASE_ENGINE".into(),
            identity.engine().as_str().into(),
        ),
        ("PTAH_LOG".into(), "warn".into()),
    ])
}

/// Deadlines for a mutating operation: dispatch in a minute, execution in `secs`, grace `grace`.
pub fn deadlines(env: &mut BTreeMap<String, String>, secs: i64, grace: u32) {
    let now = jiff::Timestamp::now();
    let at = |s: i64| (now + jiff::SignedDuration::from_secs(s)).to_string();
    env.insert("PTAH_DISPATCH_NOT_AFTER".into(), at(secs.min(60)));
    env.insert("PTAH_EXECUTION_NOT_AFTER".into(), at(secs));
    env.insert("PTAH_TERMINATION_GRACE_PERIOD_SECONDS".into(), grace.to_string());
}

/// What one runner invocation printed.
pub struct Run {
    pub output: Output,
    pub frame: Result<ParsedFrame, ptah_dataplane::ParseError>,
    pub summary: String,
}

impl Run {
    /// The frame, which must be there.
    pub fn frame(&self) -> &ParsedFrame {
        match &self.frame {
            Ok(f) => f,
            Err(e) => panic!(
                "no frame ({e}); stdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&self.output.stdout),
                String::from_utf8_lossy(&self.output.stderr)
            ),
        }
    }

    /// Fails when any of `secrets` appears in stdout, stderr or the summary.
    pub fn assert_no_secret(&self, secrets: &[String]) {
        let all = [
            String::from_utf8_lossy(&self.output.stdout).into_owned(),
            String::from_utf8_lossy(&self.output.stderr).into_owned(),
            self.summary.clone(),
        ]
        .concat();
        for s in secrets.iter().filter(|s| !s.is_empty()) {
            assert!(
                !all.contains(s.as_str()),
                "a credential leaked into the runner's output"
            );
        }
    }
}

/// Starts `ptah-runner --operation op` with exactly `env`; returns the child and its summary path.
pub fn spawn_runner(
    op: &str,
    env: &BTreeMap<String, String>,
    ptah: &Path,
    work: &Path,
) -> (std::process::Child, PathBuf) {
    let log = work.join(format!("termination-{}", unique_name("log")));
    let child = Command::new(runner())
        .args(["--operation", op, "--ptah-binary"])
        .arg(ptah)
        .arg("--work-dir")
        .arg(work)
        .arg("--termination-log")
        .arg(&log)
        .env_clear()
        .envs(env)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start ptah-runner");
    (child, log)
}

/// Waits for a runner started by [`spawn_runner`] and reads its frame and summary.
pub fn finish(child: std::process::Child, log: &Path) -> Run {
    let output = child.wait_with_output().expect("wait for ptah-runner");
    let summary = std::fs::read_to_string(log).unwrap_or_default();
    // The frame must be the last thing on stdout.
    let stdout = &output.stdout;
    assert!(
        stdout.is_empty() || stdout.ends_with(b"PTAH_RUNNER_RESULT_END_V1\n"),
        "stdout does not end with the frame"
    );
    let frame = parse_last_frame(stdout);
    Run {
        output,
        frame,
        summary,
    }
}

/// Runs `ptah-runner --operation op` with exactly `env`.
pub fn run_runner(op: &str, env: &BTreeMap<String, String>, ptah: &Path, work: &Path) -> Run {
    let (child, log) = spawn_runner(op, env, ptah, work);
    finish(child, &log)
}
