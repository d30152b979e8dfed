//! The built `ptah oci` commands against the real TLS registry: JSON documents with
//! `format_version`, exit codes 0/1/2, credentials only from the environment and never printed.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use ptah_testservices::{TestServices, unique_name};
use serde_json::Value;

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(test: &str) -> Scratch {
    let dir = std::env::temp_dir().join(unique_name(test));
    std::fs::create_dir_all(&dir).expect("mkdir");
    Scratch(dir)
}

/// Runs `ptah <args>` with the registry's CA and the given password; returns (exit, JSON, stderr).
fn ptah(services: &TestServices, password: &str, home: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptah"))
        .args(args)
        .env("PTAH_OCI_CA_FILE", &services.registry.ca_path)
        .env("PTAH_REGISTRY_USERNAME", &services.registry.username)
        .env("PTAH_REGISTRY_PASSWORD", password)
        .env("DOCKER_CONFIG", home)
        .env("PTAH_OCI_SOURCE", "https://example.invalid/repo")
        .env("PTAH_OCI_REVISION", "feedbeef")
        .env("PTAH_LOG", "warn")
        .output()
        .expect("run ptah");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stdout.contains(password) && !stderr.contains(password),
        "the password leaked:\n{stdout}\n{stderr}"
    );
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().expect("exit code"), json, stderr)
}

fn migration_dir(root: &Path) -> PathBuf {
    let dir = root.join("migrations");
    std::fs::create_dir_all(dir.join("nested")).expect("mkdir");
    std::fs::write(
        dir.join("0000000001_items.up.sql"),
        "CREATE TABLE items (id INT);\n",
    )
    .expect("write");
    std::fs::write(dir.join("0000000001_items.down.sql"), "DROP TABLE items;\n").expect("write");
    std::fs::write(
        dir.join("nested/0000000002_seed.up.sql"),
        "INSERT INTO items VALUES (1);\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("nested/0000000002_seed.down.sql"),
        "DELETE FROM items;\n",
    )
    .expect("write");
    dir
}

#[test]
fn push_resolve_inspect_pull_and_verify_a_migration_artifact() {
    let services = TestServices::require();
    let password = services.registry.password.expose().to_owned();
    let work = scratch("cli-oci");
    let dir = migration_dir(&work.0);
    let d = dir.to_str().expect("utf-8");
    let target = format!(
        "oci://{}/ptah-tests/{}:v1",
        services.registry.host,
        unique_name("cli")
    );
    let run = |args: &[&str]| ptah(&services, &password, &work.0, args);

    // No ptah.sum yet: refused before anything is uploaded.
    let (code, doc, _) = run(&[
        "oci",
        "push",
        &target,
        "--kind",
        "migrations",
        "--dir",
        d,
        "--format",
        "json",
    ]);
    assert_eq!(code, 2, "{doc}");
    assert_eq!(doc["format_version"], 1);
    assert_eq!(doc["command"], "oci push");
    let (code, doc, _) = run(&["oci", "resolve", &target, "--format", "json"]);
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (2, Some("not_found")),
        "{doc}"
    );

    let (code, _, stderr) = run(&["migrations", "hash", "--dir", d]);
    assert_eq!(code, 0, "{stderr}");
    let (code, pushed, stderr) = run(&[
        "oci",
        "push",
        &target,
        "--kind",
        "migrations",
        "--dir",
        d,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{pushed} {stderr}");
    let digest = pushed["digest"].as_str().expect("digest").to_owned();
    assert_eq!(
        pushed["annotations"]["org.opencontainers.image.revision"],
        "feedbeef"
    );
    assert_eq!(pushed["files"].as_array().map(Vec::len), Some(5));

    let (code, resolved, _) = run(&["oci", "resolve", &target, "--format", "json"]);
    assert_eq!(code, 0);
    assert_eq!(resolved["digest"], digest.as_str());
    let pinned = resolved["pinned_reference"].as_str().expect("pinned").to_owned();

    let (code, inspected, _) = run(&["oci", "inspect", &pinned, "--format", "json"]);
    assert_eq!(code, 0);
    assert_eq!(
        inspected["artifact_type"],
        "application/vnd.stokaro.ptah.migrations.v1"
    );
    assert_eq!(inspected["conforms"], true);

    let out = work.0.join("pulled");
    let o = out.to_str().expect("utf-8");
    let (code, pulled, stderr) = run(&[
        "oci",
        "pull",
        &pinned,
        "--kind",
        "migrations",
        "--out",
        o,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pulled["digest"], digest.as_str());
    assert_eq!(
        std::fs::read(out.join("nested/0000000002_seed.up.sql")).expect("read"),
        b"INSERT INTO items VALUES (1);\n"
    );
    let (code, again, _) = run(&["oci", "pull", &pinned, "--out", o, "--format", "json"]);
    assert_eq!((code, again["error"]["code"].as_str()), (2, Some("destination")));
    let (code, wrong, _) = run(&["oci", "pull", &pinned, "--kind", "schema", "--format", "json"]);
    assert_eq!(
        (code, wrong["error"]["code"].as_str()),
        (1, Some("wrong_artifact_type"))
    );
    // An operation Job's limits (below its volume) refuse an artifact that does not fit, typed,
    // before any file is written.
    let small = work.0.join("small");
    let s = small.to_str().expect("utf-8");
    for (flag, bytes) in [
        ("--max-total-bytes", "40"),
        ("--max-file-bytes", "20"),
        ("--max-manifest-bytes", "64"),
    ] {
        let (code, refused, _) = run(&[
            "oci", "pull", &pinned, "--out", s, flag, bytes, "--format", "json",
        ]);
        assert_eq!(code, 1, "{flag}: {refused}");
        assert_eq!(
            refused["error"]["code"].as_str(),
            Some("limit_exceeded"),
            "{flag}: {refused}"
        );
        assert!(!small.exists(), "{flag}: nothing is written");
    }

    let policy = work.0.join("policy.yaml");
    std::fs::write(
        &policy,
        "version: 1\nrequire_digest_pin: true\nrequire_annotations: [org.opencontainers.image.source]\n",
    )
    .expect("write");
    let p = policy.to_str().expect("utf-8");
    let (code, report, _) = run(&["oci", "verify", &pinned, "--policy", p, "--format", "json"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["Satisfied"].as_array().map(Vec::len), Some(2));
    let (code, report, _) = run(&["oci", "verify", &target, "--policy", p, "--format", "json"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["Findings"][0]["Requirement"], "require_digest_pin");

    std::fs::write(&policy, "version: 1\n").expect("write");
    let (code, report, _) = run(&["oci", "verify", &target, "--policy", p, "--format", "json"]);
    assert_eq!(
        (code, report["error"]["code"].as_str()),
        (2, Some("policy_invalid"))
    );
}

#[test]
fn a_stale_sum_a_wrong_password_and_a_bad_reference_exit_2() {
    let services = TestServices::require();
    let password = services.registry.password.expose().to_owned();
    let work = scratch("cli-oci-bad");
    let dir = migration_dir(&work.0);
    let d = dir.to_str().expect("utf-8");
    let target = format!(
        "oci://{}/ptah-tests/{}:v1",
        services.registry.host,
        unique_name("cli")
    );

    let (code, _, _) = ptah(&services, &password, &work.0, &["migrations", "hash", "--dir", d]);
    assert_eq!(code, 0);
    std::fs::write(
        dir.join("0000000001_items.up.sql"),
        "CREATE TABLE changed (id INT);\n",
    )
    .expect("write");
    let (code, doc, _) = ptah(
        &services,
        &password,
        &work.0,
        &[
            "oci",
            "push",
            &target,
            "--kind",
            "migrations",
            "--dir",
            d,
            "--format",
            "json",
        ],
    );
    assert_eq!((code, doc["error"]["code"].as_str()), (2, Some("sum")), "{doc}");

    let wrong = "N0t-The-Passw0rd-42";
    let (code, doc, _) = ptah(
        &services,
        wrong,
        &work.0,
        &["oci", "resolve", &target, "--format", "json"],
    );
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (2, Some("unauthorized")),
        "{doc}"
    );
    assert!(
        doc["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&services.registry.host))
    );

    let with_credentials = format!("oci://user:{password}@{}/x:v1", services.registry.host);
    let (code, doc, _) = ptah(
        &services,
        &password,
        &work.0,
        &["oci", "resolve", &with_credentials, "--format", "json"],
    );
    assert_eq!(
        (code, doc["error"]["code"].as_str()),
        (2, Some("invalid_reference")),
        "{doc}"
    );
}

#[test]
fn migrations_push_and_pull_round_trip_and_refuse_a_stale_sum() {
    let services = TestServices::require();
    let password = services.registry.password.expose().to_owned();
    let work = scratch("cli-mig-push");
    let dir = migration_dir(&work.0);
    let d = dir.to_str().expect("utf-8");
    let target = format!(
        "oci://{}/ptah-tests/{}:v1",
        services.registry.host,
        unique_name("migpush")
    );

    let (exit, json, stderr) = ptah(
        &services,
        &password,
        &work.0,
        &["migrations", "push", &target, "--dir", d, "--format", "json"],
    );
    assert_eq!(exit, 2, "no ptah.sum yet must be refused: {json} {stderr}");
    assert_eq!(json["command"], "migrations push", "{json}");

    let (exit, _, stderr) = ptah(&services, &password, &work.0, &["migrations", "hash", "--dir", d]);
    assert_eq!(exit, 0, "{stderr}");
    let (exit, json, stderr) = ptah(
        &services,
        &password,
        &work.0,
        &["migrations", "push", &target, "--dir", d, "--format", "json"],
    );
    assert_eq!(exit, 0, "{json} {stderr}");
    let digest = json["digest"].as_str().expect("digest").to_owned();
    assert!(digest.starts_with("sha256:"), "{json}");

    let out = work.0.join("pulled");
    let pinned = format!("{}@{digest}", target);
    let o = out.to_str().expect("utf-8");
    let (exit, json, stderr) = ptah(
        &services,
        &password,
        &work.0,
        &["migrations", "pull", &pinned, "--out", o, "--format", "json"],
    );
    assert_eq!(exit, 0, "{json} {stderr}");
    for file in [
        "0000000001_items.up.sql",
        "nested/0000000002_seed.down.sql",
        "ptah.sum",
    ] {
        assert_eq!(
            std::fs::read(out.join(file)).expect("pulled file"),
            std::fs::read(dir.join(file)).expect("source file"),
            "{file}"
        );
    }
    let (exit, _, stderr) = ptah(
        &services,
        &password,
        &work.0,
        &["migrations", "pull", &pinned, "--out", o],
    );
    assert_eq!(exit, 2, "an existing destination is refused: {stderr}");

    std::fs::write(
        dir.join("0000000001_items.up.sql"),
        "CREATE TABLE items (id BIGINT);\n",
    )
    .expect("edit");
    let (exit, json, stderr) = ptah(
        &services,
        &password,
        &work.0,
        &["migrations", "push", &target, "--dir", d, "--format", "json"],
    );
    assert_eq!(exit, 2, "a stale ptah.sum must be refused: {json} {stderr}");
    assert_eq!(json["error"]["code"], "sum", "{json}");
}

#[test]
fn schema_push_publishes_one_canonical_schema_hcl() {
    let services = TestServices::require();
    let password = services.registry.password.expose().to_owned();
    let work = scratch("cli-schema-push");
    let sql = work.0.join("schema.sql");
    std::fs::write(
        &sql,
        "CREATE TABLE customers (id bigint PRIMARY KEY, email text NOT NULL UNIQUE);\n\
         CREATE TABLE invoices (id bigint PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers (id));\n",
    )
    .expect("write");
    let target = format!(
        "oci://{}/ptah-tests/{}:v1",
        services.registry.host,
        unique_name("schemapush")
    );
    let s = sql.to_str().expect("utf-8");
    let push = [
        "schema",
        "push",
        &target,
        "--from",
        s,
        "--dialect",
        "postgres",
        "--format",
        "json",
    ];
    let (exit, first, stderr) = ptah(&services, &password, &work.0, &push);
    assert_eq!(exit, 0, "{first} {stderr}");
    let (exit, second, stderr) = ptah(&services, &password, &work.0, &push);
    assert_eq!(exit, 0, "{second} {stderr}");
    assert_eq!(
        first["digest"], second["digest"],
        "equal schemas give equal digests"
    );

    let out = work.0.join("pulled");
    let o = out.to_str().expect("utf-8");
    let (exit, json, stderr) = ptah(
        &services,
        &password,
        &work.0,
        &[
            "oci", "pull", &target, "--kind", "schema", "--out", o, "--format", "json",
        ],
    );
    assert_eq!(exit, 0, "{json} {stderr}");
    let hcl = std::fs::read_to_string(out.join("schema.hcl")).expect("schema.hcl");
    assert!(hcl.contains("customers") && hcl.contains("invoices"), "{hcl}");
    let listed: Vec<&str> = json["files"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(listed, ["schema.hcl"], "{json}");

    std::fs::write(&sql, "CREATE TABLE t (id int);\nINSERT INTO t VALUES (1);\n").expect("write");
    let (exit, json, _) = ptah(&services, &password, &work.0, &push);
    assert_eq!(exit, 2, "{json}");
    assert_eq!(json["error"]["code"], "invalid_schema", "{json}");
}
