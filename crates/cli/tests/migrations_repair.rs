//! `ptah migrations repair`, `hash`, `push` and `pull` as a person runs them: a directory written for
//! golang-migrate with a `CREATE INDEX CONCURRENTLY` lacking its header is refused by `hash` and
//! `push` before anything else happens; a failed version is recorded absent with who and why,
//! in JSON, and a second repair of it is refused; goose single files go through the registry
//! and apply from the pulled copy.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use ptah_engine::{DatabaseUrl, Session};
use ptah_testservices::{TestServices, unique_name};
use serde_json::Value;

struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        let path = std::env::temp_dir().join(unique_name("ptah-cli-repair"));
        std::fs::create_dir_all(&path).expect("mkdir");
        Scratch(path)
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.0.join(name), text).expect("write");
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("utf-8 path")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `ptah migrations <args>`; returns (exit code, JSON or null, stderr).
fn ptah(url: Option<&str>, args: &[&str]) -> (i32, Value, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ptah"));
    command.arg("migrations").args(args).env("PTAH_LOG", "warn");
    if let Some(url) = url {
        command.env("PTAH_DB_URL", url);
    }
    let out = command.output().expect("run ptah");
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().expect("exit code"), json, stderr)
}

fn golang_migrate_dir(index: &str) -> Scratch {
    let dir = Scratch::new();
    dir.write(
        "000001_create_posts.up.sql",
        "CREATE TABLE posts (id INT, channel INT);\n",
    );
    dir.write("000001_create_posts.down.sql", "DROP TABLE posts;\n");
    dir.write("000002_posts_channel.up.sql", index);
    dir.write("000002_posts_channel.down.sql", "DROP INDEX posts_channel;\n");
    dir
}

#[test]
fn hash_and_push_refuse_concurrently_in_a_transactional_file() {
    let dir = golang_migrate_dir("CREATE INDEX CONCURRENTLY posts_channel ON posts (channel);\n");
    let (code, json, stderr) = ptah(None, &["hash", "--dir", dir.path(), "--format", "json"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(json["error"]["code"], "needs_no_transaction", "{json}");
    let message = json["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("000002_posts_channel.up.sql:1") && message.contains("-- +ptah no_transaction"),
        "{message}"
    );
    assert!(
        !Path::new(dir.path()).join("ptah.sum").exists(),
        "nothing written"
    );
    // The registry is never contacted: nothing listens on port 9.
    let (code, json, _) = ptah(
        None,
        &["push", "127.0.0.1:9/m:1", "--dir", dir.path(), "--format", "json"],
    );
    assert_eq!(
        (code, &json["error"]["code"]),
        (2, &Value::from("needs_no_transaction")),
        "{json}"
    );

    let fixed = golang_migrate_dir(
        "-- morph:nontransactional\nCREATE INDEX CONCURRENTLY posts_channel ON posts (channel);\n",
    );
    let (code, json, stderr) = ptah(None, &["hash", "--dir", fixed.path(), "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json["files"], 4);
    // With the dialect named, MySQL rules apply: there is no transaction rule to break.
    let mysql = golang_migrate_dir("CREATE DATABASE other;\n");
    let (code, _, stderr) = ptah(None, &["hash", "--dir", mysql.path(), "--dialect", "mysql"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, _) = ptah(None, &["hash", "--dir", mysql.path(), "--dialect", "postgresql"]);
    assert_eq!(code, 2, "CREATE DATABASE cannot run in a PostgreSQL transaction");
}

#[tokio::test]
async fn repair_records_a_failed_version_absent_on_postgres() {
    let services = TestServices::require();
    let name = unique_name("clirepair");
    let admin = DatabaseUrl::parse(services.postgres.admin_url.expose()).expect("admin url");
    let mut session = Session::connect(&admin, Duration::from_secs(10))
        .await
        .expect("connect");
    session
        .batch(&format!("CREATE DATABASE {name} OWNER app"))
        .await
        .expect("create");
    let url = services.postgres.url_for_database(&name).expose().to_owned();
    let dir = golang_migrate_dir("INSERT INTO nowhere VALUES (1);\n");
    let db = Some(url.as_str());

    let (code, json, _) = ptah(db, &["up", "--dir", dir.path(), "--format", "json"]);
    assert_eq!(code, 1, "{json}");
    assert_eq!(json["failure"]["file_version"], "000002", "{json}");
    let (code, json, _) = ptah(db, &["up", "--dir", dir.path(), "--format", "json"]);
    assert_eq!(
        (code, &json["error"]["code"]),
        (2, &Value::from("dirty")),
        "{json}"
    );

    let repair = [
        "repair",
        "--dir",
        dir.path(),
        "--version",
        "2",
        "--as",
        "absent",
        "--reason",
        "the table it needs comes later",
        "--by",
        "bob",
        "--format",
        "json",
    ];
    let (code, json, stderr) = ptah(db, &repair);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json["command"], "migrations repair");
    assert_eq!(json["file_version"], "000002");
    assert_eq!(json["previous_state"], "failed");
    assert_eq!(json["recorded_as"], "absent");
    assert_eq!(json["state"], "absent");
    assert_eq!(json["repaired_by"], "bob");
    assert_eq!(json["repair_reason"], "the table it needs comes later");
    let (code, json, _) = ptah(db, &repair);
    assert_eq!(
        (code, &json["error"]["code"]),
        (2, &Value::from("not_repairable")),
        "{json}"
    );

    let (code, json, _) = ptah(db, &["status", "--dir", dir.path(), "--format", "json"]);
    assert_eq!(code, 0);
    assert_eq!(json["dirty_revision"], Value::Null, "{json}");
    assert_eq!(json["pending_migrations"][0]["file_version"], "000002", "{json}");
    let out = Command::new(env!("CARGO_BIN_EXE_ptah"))
        .args(["migrations", "status", "--dir", dir.path()])
        .env("PTAH_DB_URL", &url)
        .output()
        .expect("run ptah");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("pending   000002 posts_channel"), "{text}");

    session
        .batch(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .await
        .expect("drop");
    session.close().await.expect("close");
}

/// Runs `ptah <args>` against the test registry (its CA, user and password) and a database.
fn ptah_registry(services: &TestServices, home: &Path, url: &str, args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptah"))
        .args(args)
        .env("PTAH_OCI_CA_FILE", &services.registry.ca_path)
        .env("PTAH_REGISTRY_USERNAME", &services.registry.username)
        .env("PTAH_REGISTRY_PASSWORD", services.registry.password.expose())
        .env("DOCKER_CONFIG", home)
        .env("PTAH_DB_URL", url)
        .env("PTAH_LOG", "warn")
        .output()
        .expect("run ptah");
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().expect("exit code"), json, stderr)
}

#[tokio::test]
async fn goose_single_files_round_trip_through_the_registry_and_apply() {
    let services = TestServices::require();
    let work = Scratch::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrate/tests/fixtures/goose/postgres");
    let dir = work.0.join("goose");
    std::fs::create_dir_all(&dir).expect("mkdir");
    for entry in std::fs::read_dir(&fixture).expect("fixture") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), dir.join(entry.file_name())).expect("copy");
    }
    let d = dir.to_str().expect("utf-8");
    let name = unique_name("cligoose");
    let admin = DatabaseUrl::parse(services.postgres.admin_url.expose()).expect("admin url");
    let mut session = Session::connect(&admin, Duration::from_secs(10))
        .await
        .expect("connect");
    session
        .batch(&format!("CREATE DATABASE {name} OWNER app"))
        .await
        .expect("create");
    let url = services.postgres.url_for_database(&name).expose().to_owned();
    let target = format!(
        "oci://{}/ptah-tests/{}:v1",
        services.registry.host,
        unique_name("goose")
    );

    let run = |args: &[&str]| ptah_registry(&services, &work.0, &url, args);
    let (code, _, stderr) = run(&["migrations", "hash", "--dir", d, "--dialect", "postgresql"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, json, stderr) = run(&["migrations", "push", &target, "--dir", d, "--format", "json"]);
    assert_eq!(code, 0, "{json} {stderr}");
    let pulled = work.0.join("pulled");
    let p = pulled.to_str().expect("utf-8");
    let (code, json, stderr) = run(&["migrations", "pull", &target, "--out", p, "--format", "json"]);
    assert_eq!(code, 0, "{json} {stderr}");
    assert_eq!(
        std::fs::read(pulled.join("20230102093000_touch_accounts.sql")).expect("pulled"),
        std::fs::read(dir.join("20230102093000_touch_accounts.sql")).expect("source")
    );
    let (code, json, stderr) = run(&["migrations", "up", "--dir", p, "--verify-sum", "--format", "json"]);
    assert_eq!(code, 0, "{json} {stderr}");
    assert_eq!(
        json["applied_versions"].as_array().map(Vec::len),
        Some(3),
        "{json}"
    );
    let (code, json, _) = run(&[
        "migrations",
        "status",
        "--dir",
        p,
        "--exit-code",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "nothing pending: {json}");

    session
        .batch(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .await
        .expect("drop");
    session.close().await.expect("close");
}
