//! The built `ptah` binary end to end: JSON documents, exit codes, and no password anywhere.

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
    time::Duration,
};

use ptah_engine::{DatabaseUrl, Session};
use ptah_testservices::{Database, TestServices, unique_name};
use serde_json::Value;

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn migration(dir: &Path, version: i64, name: &str, up: &str) {
    std::fs::write(dir.join(format!("{version:010}_{name}.up.sql")), up).expect("write up");
    std::fs::write(dir.join(format!("{version:010}_{name}.down.sql")), "-- none\n").expect("write down");
}

async fn fresh_database(server: &Database, postgres: bool) -> (String, String) {
    let name = unique_name("cli");
    let admin = DatabaseUrl::parse(server.admin_url.expose()).expect("admin url");
    let mut session = Session::connect(&admin, Duration::from_secs(10))
        .await
        .expect("connect");
    if postgres {
        session
            .batch(&format!("CREATE DATABASE {name} OWNER app"))
            .await
            .expect("create");
    } else {
        session
            .batch(&format!("CREATE DATABASE {name}"))
            .await
            .expect("create");
        session
            .batch(&format!("GRANT ALL ON {name}.* TO 'app'@'%'"))
            .await
            .expect("grant");
    }
    session.close().await.expect("close");
    (name.clone(), server.url_for_database(&name).expose().to_owned())
}

/// Runs `ptah migrations <args>` with the URL in `PTAH_DB_URL`; returns (exit code, JSON or null, stderr).
fn ptah(url: &str, args: &[&str]) -> (i32, Value, String) {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_ptah"))
        .arg("migrations")
        .args(args)
        .env("PTAH_DB_URL", url)
        .env("PTAH_LOG", "warn")
        .output()
        .expect("run ptah");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let password = DatabaseUrl::parse(url).ok().and_then(|u| {
        let shown = u.to_string();
        (shown != url).then(|| {
            url.split(':')
                .nth(2)
                .and_then(|p| p.split('@').next())
                .map(str::to_owned)
        })
    });
    if let Some(Some(pw)) = password {
        assert!(
            !stdout.contains(&pw) && !stderr.contains(&pw),
            "the password leaked:\n{stdout}\n{stderr}"
        );
    }
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().expect("exit code"), json, stderr)
}

async fn end_to_end(server: &Database, postgres: bool) {
    let (_name, url) = fresh_database(server, postgres).await;
    let scratch = Scratch(std::env::temp_dir().join(unique_name("ptah-cli")));
    let dir = scratch.0.clone();
    std::fs::create_dir_all(&dir).expect("mkdir");
    migration(&dir, 1, "items", "CREATE TABLE items (id INT PRIMARY KEY);\n");
    migration(
        &dir,
        2,
        "seed",
        "INSERT INTO items VALUES (1);\nINSERT INTO items VALUES (2);\n",
    );
    let d = dir.to_str().expect("utf-8 path");

    let (code, hash, _) = ptah(&url, &["hash", "--dir", d, "--format", "json"]);
    assert_eq!(code, 0);
    assert_eq!(hash["files"], 4);
    assert!(hash["dir_hash"].as_str().is_some_and(|h| h.starts_with("h1:")));

    let (code, status, _) = ptah(&url, &["status", "--dir", d, "--json"]);
    assert_eq!(code, 0, "{status}");
    assert_eq!(status["format_version"], 1);
    assert_eq!(status["command"], "migrations status");
    assert_eq!(status["sum"], "verified");
    assert_eq!(status["pending_migrations"].as_array().map(Vec::len), Some(2));
    assert_eq!(status["current_version"], Value::Null);
    assert!(
        status["database_url"]
            .as_str()
            .is_some_and(|u| u.contains(":***@")),
        "{status}"
    );
    let (code, _, _) = ptah(&url, &["status", "--dir", d, "--json", "--exit-code"]);
    assert_eq!(code, 1, "--exit-code reports pending migrations");

    // Approve exactly what status showed, by passing the status document itself.
    let approval = dir.join("approved.json");
    std::fs::write(&approval, status.to_string()).expect("write approval");
    let expect = format!("@{}", approval.display());
    let (code, up, _) = ptah(
        &url,
        &["up", "--dir", d, "--format", "json", "--expect-sequence", &expect],
    );
    assert_eq!(code, 0, "{up}");
    assert_eq!(up["outcome"], "Applied");
    assert_eq!(up["applied_versions"], serde_json::json!([1, 2]));
    assert_eq!(up["sequence_fingerprint"], status["pending_sequence_fingerprint"]);

    let (code, after, _) = ptah(&url, &["status", "--dir", d, "--format", "json", "--exit-code"]);
    assert_eq!(code, 0);
    assert_eq!(after["current_version"], 2);
    assert_eq!(after["has_pending_changes"], false);

    // A file added without rehashing is drift (exit 1); once sealed, the approval is stale (exit 1).
    migration(&dir, 3, "more", "INSERT INTO items VALUES (3);\n");
    let (code, drift, _) = ptah(&url, &["up", "--dir", d, "--format", "json"]);
    assert_eq!(
        (code, drift["error"]["code"].as_str()),
        (1, Some("sum_drift")),
        "{drift}"
    );
    assert_eq!(ptah(&url, &["hash", "--dir", d]).0, 0);
    let (code, stale, _) = ptah(
        &url,
        &["up", "--dir", d, "--format", "json", "--expect-sequence", &expect],
    );
    assert_eq!(
        (code, stale["error"]["code"].as_str()),
        (1, Some("sequence_mismatch")),
        "{stale}"
    );

    // A malformed sum is a usage error (exit 2).
    std::fs::write(dir.join("ptah.sum"), "not a sum\n").expect("corrupt");
    let (code, bad, stderr) = ptah(&url, &["up", "--dir", d, "--format", "json"]);
    assert_eq!(
        (code, bad["error"]["code"].as_str()),
        (2, Some("sum_malformed")),
        "{bad}"
    );
    assert!(stderr.contains("error: ptah.sum is malformed"), "{stderr}");

    // A failing migration: exit 1 with the outcome; the next run refuses the dirty row with exit 2.
    std::fs::remove_file(dir.join("ptah.sum")).expect("rm sum");
    migration(
        &dir,
        3,
        "more",
        "INSERT INTO items VALUES (3);\nINSERT INTO items VALUES (1);\n",
    );
    let (code, failed, _) = ptah(&url, &["up", "--dir", d, "--format", "json"]);
    assert_eq!(code, 1, "{failed}");
    let expected = if postgres { "Failed" } else { "Partial" };
    assert_eq!(failed["outcome"], expected);
    assert_eq!(failed["failure"]["statement"], 2);
    let (code, dirty, _) = ptah(&url, &["up", "--dir", d, "--format", "json"]);
    assert_eq!(
        (code, dirty["error"]["code"].as_str()),
        (2, Some("dirty")),
        "{dirty}"
    );

    // Usage errors: a bad flag value and a refused URL.
    let (code, _, stderr) = ptah(&url, &["up", "--dir", d, "--lock-timeout", "soon"]);
    assert_eq!(code, 2, "{stderr}");
    let (code, refused, _) = ptah(
        "postgres://app:pw@127.0.0.1/app?multiStatements=true",
        &["status", "--dir", d, "--json"],
    );
    assert_eq!(
        (code, refused["error"]["code"].as_str()),
        (2, Some("database")),
        "{refused}"
    );
}

#[tokio::test]
async fn ptah_binary_end_to_end_on_postgres() {
    let services = TestServices::require();
    end_to_end(&services.postgres, true).await;
}

#[tokio::test]
async fn serial_db_ptah_binary_end_to_end_on_mariadb() {
    let services = TestServices::require();
    end_to_end(&services.mysql, false).await;
}

#[test]
fn text_output_and_help_work_without_a_database() {
    let out = Command::new(env!("CARGO_BIN_EXE_ptah"))
        .args(["migrations", "up", "--help"])
        .output()
        .expect("run ptah");
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--expect-sequence",
        "--limit",
        "--dry-run",
        "--url",
        "PTAH_DB_URL",
        "--format",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_ptah"))
        .args(["migrations", "status", "--dir", "/nonexistent"])
        .env_remove("PTAH_DB_URL")
        .output()
        .expect("run ptah");
    assert_eq!(out.status.code(), Some(2), "a missing --url is a usage error");
}
