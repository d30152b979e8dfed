//! `ptah migrations lint` as a person or a CI job runs it: text and JSON reports, exit 1 at or
//! above `--fail-on`, the directory's `.ptah-lint.yaml`, and a bad config as a usage error.

use std::process::Command;

use serde_json::Value;

fn lint(dir: &std::path::Path, extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptah"))
        .args(["migrations", "lint", "--dir"])
        .arg(dir)
        .args(["--dialect", "postgresql"])
        .args(extra)
        .env("PTAH_LOG", "warn")
        .output()
        .expect("run ptah");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn lint_reports_fails_on_the_threshold_and_reads_the_directorys_config() {
    let dir = tempfile::tempdir().expect("dir");
    for (name, text) in [
        ("000001_t.up.sql", "CREATE TABLE t (a int);\n"),
        ("000001_t.down.sql", "DROP TABLE t;\n"),
        ("000002_i.up.sql", "CREATE INDEX t_a ON t (a);\n"),
        ("000002_i.down.sql", "DROP INDEX CONCURRENTLY t_a;\n"),
    ] {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    // A warning passes the default threshold (errors) and fails --fail-on warning.
    let (code, text, _) = lint(dir.path(), &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("000002_i.up.sql:1: warning PG101"), "{text}");
    let (code, json, _) = lint(dir.path(), &["--fail-on", "warning", "--format", "json"]);
    assert_eq!(code, 1);
    let json: Value = serde_json::from_str(&json).expect("json");
    assert_eq!(json["command"], "migrations lint");
    assert_eq!(json["findings"][0]["code"], "PG101");
    assert_eq!(json["findings"][0]["severity"], "warning");
    // Only the pending migrations: nothing after version 2.
    let (code, text, _) = lint(dir.path(), &["--after", "2", "--fail-on", "notice"]);
    assert_eq!((code, text.trim()), (0, "No findings."));

    std::fs::write(dir.path().join(".ptah-lint.yaml"), "severity: {PG101: error}\n").expect("config");
    let (code, text, _) = lint(dir.path(), &[]);
    assert_eq!(code, 1, "the directory's config raised PG101 to an error: {text}");
    std::fs::write(dir.path().join(".ptah-lint.yaml"), "severity: {XX1: error}\n").expect("config");
    let (code, _, stderr) = lint(dir.path(), &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("XX1 is no rule's code"), "{stderr}");
}

/// `migrations status` (what the operator's History runs) reports the lint of the pending
/// migrations only: the index built on a live table while it is pending, nothing once applied.
#[tokio::test]
async fn status_reports_the_lint_of_the_pending_migrations() {
    use std::time::Duration;

    use ptah_engine::{DatabaseUrl, Session};
    use ptah_testservices::{TestServices, unique_name};

    let services = TestServices::require();
    let name = unique_name("lintstatus");
    let admin = DatabaseUrl::parse(services.postgres.admin_url.expose()).expect("admin url");
    let mut session = Session::connect(&admin, Duration::from_secs(10))
        .await
        .expect("connect");
    session
        .batch(&format!("CREATE DATABASE {name} OWNER app"))
        .await
        .expect("create");
    session.close().await.expect("close");
    let url = services.postgres.url_for_database(&name).expose().to_owned();

    let dir = tempfile::tempdir().expect("dir");
    for (file, text) in [
        (
            "0000000001_items.up.sql",
            "CREATE TABLE items (id int, name text);\n",
        ),
        ("0000000001_items.down.sql", "DROP TABLE items;\n"),
        (
            "0000000002_name_index.up.sql",
            "CREATE INDEX items_name ON items (name);\n",
        ),
        ("0000000002_name_index.down.sql", "DROP INDEX items_name;\n"),
    ] {
        std::fs::write(dir.path().join(file), text).expect("write");
    }
    let migrations = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ptah"))
            .arg("migrations")
            .args(args)
            .arg("--dir")
            .arg(dir.path())
            .args(["--format", "json"])
            .env("PTAH_DB_URL", &url)
            .env("PTAH_LOG", "warn")
            .output()
            .expect("run ptah");
        serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null)
    };
    let status = migrations(&["status"]);
    let lint = &status["lint"];
    assert_eq!(lint["worst"], "warning", "{status}");
    let codes: Vec<&str> = lint["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert_eq!(codes, ["PG101"], "{lint}");
    assert!(
        lint["findings"][0]["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("0000000002_name_index.up.sql"))
    );
    assert_eq!(migrations(&["hash"])["files"], 4);
    assert!(migrations(&["up"]).get("error").is_none());
    let after = migrations(&["status"]);
    assert_eq!(
        after["pending_migrations"].as_array().map(Vec::len),
        Some(0),
        "{after}"
    );
    assert_eq!(
        after["lint"]["findings"],
        serde_json::json!([]),
        "applied migrations are not judged"
    );
    assert!(after["lint"].get("worst").is_none());
}
