//! `ptah schema` over TLS through the built binary, against the TLS-enabled PostgreSQL and
//! MariaDB of `cargo xtask services up` (certificates for `localhost` only): the CA bundle from
//! `--db-ca-file` and from `PTAH_DB_CA_FILE`, the TLS the server reports in every report, and
//! typed refusals with exit 2.

mod schema_support;

use std::path::PathBuf;

use ptah_engine::Dialect;
use ptah_testservices::{TestServices, unique_name};
use schema_support::{Fresh, ptah};

fn tls_url(db: &Fresh, host: &str, mode: &str) -> String {
    let text = db.url_text.replace("@127.0.0.1:", &format!("@{host}:"));
    format!("{text}?sslmode={mode}")
}

fn ca(dialect: Dialect) -> PathBuf {
    let services = TestServices::require();
    match dialect {
        Dialect::Postgres => services.postgres.require_tls_ca().to_owned(),
        Dialect::Mysql => services.mysql.require_tls_ca().to_owned(),
    }
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(unique_name("ptah-schema-tls"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    dir
}

fn plan_args(ca: &str) -> Vec<&str> {
    let mut args = vec![
        "schema", "plan", "--from", "v1.sql", "--output", "p.json", "--format", "json",
    ];
    if !ca.is_empty() {
        args.extend(["--db-ca-file", ca]);
    }
    args
}

async fn check(dialect: Dialect) {
    let db = Fresh::new(dialect, "schema_tls").await;
    let dir = scratch();
    std::fs::write(
        dir.join("v1.sql"),
        "CREATE TABLE items (id bigint NOT NULL PRIMARY KEY, name varchar(40) NOT NULL);\n",
    )
    .expect("write");
    let ca_path = ca(dialect);
    let ca_text = ca_path.to_string_lossy().into_owned();

    let ok = ptah(
        &tls_url(&db, "localhost", "verify-full"),
        &db.password,
        &dir,
        &plan_args(&ca_text),
    );
    assert_eq!(ok.code, 1, "changes pending\n{}{}", ok.stdout, ok.stderr);
    assert_eq!(ok.json["tls"]["mode"], "verify-full", "{}", ok.stdout);
    let protocol = ok.json["tls"]["protocol"].as_str().unwrap_or_default();
    assert!(protocol.starts_with("TLSv1."), "{}", ok.stdout);

    // The same through the environment variable, and a plaintext URL reports no protocol.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ptah"))
        .args(["schema", "inspect", "--format", "json"])
        .current_dir(&dir)
        .env("PTAH_DB_URL", tls_url(&db, "127.0.0.1", "verify-ca"))
        .env("PTAH_DB_CA_FILE", &ca_path)
        .output()
        .expect("run ptah");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(out.status.code(), Some(0), "{json}");
    assert_eq!(json["tls"]["mode"], "verify-ca");
    let plain = ptah(
        &db.url_text,
        &db.password,
        &dir,
        &["schema", "inspect", "--format", "json"],
    );
    assert_eq!(plain.json["tls"]["mode"], "disable");
    assert!(plain.json["tls"]["protocol"].is_null(), "{}", plain.stdout);

    let missing = dir.join("missing.pem").to_string_lossy().into_owned();
    let refusals = [
        (
            tls_url(&db, "127.0.0.1", "verify-full"),
            ca_text.as_str(),
            "tls_hostname_mismatch",
        ),
        (tls_url(&db, "localhost", "verify-full"), "", "tls_untrusted"),
        (
            tls_url(&db, "localhost", "verify-full"),
            missing.as_str(),
            "tls_ca_file",
        ),
        (
            tls_url(&db, "localhost", "prefer"),
            ca_text.as_str(),
            "invalid_url",
        ),
    ];
    for (url, ca, code) in refusals {
        let run = ptah(&url, &db.password, &dir, &plan_args(ca));
        assert_eq!(run.code, 2, "{code}: {}{}", run.stdout, run.stderr);
        assert_eq!(run.json["error"]["code"], code, "{}", run.stdout);
    }
    let _ = std::fs::remove_dir_all(&dir);
    db.drop().await;
}

#[tokio::test]
async fn schema_commands_run_over_verified_tls_on_postgres() {
    check(Dialect::Postgres).await;
}

#[tokio::test]
async fn schema_commands_run_over_verified_tls_on_mariadb() {
    check(Dialect::Mysql).await;
}
