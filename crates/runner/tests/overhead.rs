//! The runner's overhead: `ptah migrations status` on an empty directory against the real
//! PostgreSQL, 20 times directly and 20 times through `ptah-runner` (interleaved), from start to
//! exit (the frame is the runner's last write before it exits). Prints the medians; run with
//! `cargo test -p ptah-runner --test overhead -- --nocapture` to see them. Debug builds.

mod support;

use std::{
    process::Command,
    time::{Duration, Instant},
};

use ptah_testservices::TestServices;
use support::{db_env, fresh_database, ptah, run_runner, scratch};

const RUNS: usize = 20;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::test]
async fn runner_overhead_against_ptah_directly() {
    let services = TestServices::require();
    let url = fresh_database(&services.postgres, true).await;
    let work = scratch();
    let dir = work.path().join("migrations");
    std::fs::create_dir(&dir).expect("dir");
    let bin = ptah();
    let mut env = db_env(&url);
    env.insert("PTAH_MIGRATIONS_DIR".into(), dir.display().to_string());
    let (mut direct, mut through) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let t = Instant::now();
        let out = Command::new(&bin)
            .args(["migrations", "status", "--format", "json"])
            .env_clear()
            .env("PTAH_DB_URL", &url)
            .env("PTAH_MIGRATIONS_DIR", &dir)
            .env("PTAH_LOG", "warn")
            .output()
            .expect("ptah");
        direct.push(t.elapsed());
        assert!(out.status.success());

        let t = Instant::now();
        let run = run_runner("migration-history", &env, &bin, work.path());
        through.push(t.elapsed());
        let p = &run.frame().payload;
        assert!(p.error.is_none() && p.migration_history.is_some(), "{p:?}");
    }
    let (d, r) = (median(direct), median(through));
    println!(
        "runner overhead over {RUNS} runs (median): ptah directly {:.1} ms, through ptah-runner {:.1} ms, overhead {:.1} ms",
        d.as_secs_f64() * 1e3,
        r.as_secs_f64() * 1e3,
        (r.as_secs_f64() - d.as_secs_f64()) * 1e3
    );
    assert!(r > Duration::ZERO && d > Duration::ZERO);
}
