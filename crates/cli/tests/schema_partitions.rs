//! Partitioned tables through the binary on a real PostgreSQL 15: `schema inspect` writes
//! `partition_by`, `partition_of` and `partition_bound` and lists no partitioning as unmodelled;
//! the inspected text plans empty against its database; a partition key change is refused with
//! `error.code` `partition_key_changed` (exit 2) naming the table, and `schema drift` reports it
//! as `partition_keys_modified`.

mod schema_support;

use ptah_engine::Dialect;
use ptah_testservices::unique_name;
use schema_support::{Fresh, ptah};

#[tokio::test]
async fn partitioned_tables_inspect_plan_empty_and_a_key_change_is_refused_by_code() {
    let db = Fresh::new(Dialect::Postgres, "partitions_cli").await;
    db.run(
        "CREATE TABLE events (id bigint NOT NULL, at date NOT NULL, kind text, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);
         CREATE TABLE events_2024 PARTITION OF events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
         CREATE TABLE events_default PARTITION OF events DEFAULT;
         CREATE INDEX events_kind_idx ON events (kind);",
    )
    .await
    .expect("setup");
    let dir = std::env::temp_dir().join(unique_name("ptah-partitions"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let run = |args: &[&str]| ptah(&db.url_text, &db.password, &dir, args);

    let inspected = run(&["schema", "inspect", "--format", "json"]);
    assert_eq!(inspected.code, 0, "{}{}", inspected.stdout, inspected.stderr);
    assert_eq!(inspected.json["unmodelled"]["total"], 0, "{}", inspected.stdout);
    let hcl = run(&["schema", "inspect"]);
    assert_eq!(hcl.code, 0, "{}", hcl.stderr);
    assert!(
        hcl.stdout.contains("partition_by = \"RANGE (at)\""),
        "{}",
        hcl.stdout
    );
    assert!(
        hcl.stdout.contains("partition_of = \"public.events\""),
        "{}",
        hcl.stdout
    );
    assert!(
        hcl.stdout.contains("partition_bound = \"DEFAULT\""),
        "{}",
        hcl.stdout
    );
    std::fs::write(dir.join("schema.hcl"), &hcl.stdout).expect("write");
    let planned = run(&[
        "schema",
        "plan",
        "--from",
        "schema.hcl",
        "--output",
        "plan.json",
        "--format",
        "json",
    ]);
    assert_eq!(planned.code, 0, "{}{}", planned.stdout, planned.stderr);

    let rekeyed = hcl.stdout.replace("RANGE (at)", "LIST (at)");
    assert_ne!(rekeyed, hcl.stdout);
    std::fs::write(dir.join("rekeyed.hcl"), &rekeyed).expect("write");
    let refused = run(&[
        "schema",
        "plan",
        "--from",
        "rekeyed.hcl",
        "--output",
        "plan.json",
        "--format",
        "json",
    ]);
    assert_eq!(refused.code, 2, "{}", refused.stdout);
    assert_eq!(refused.json["error"]["code"], "partition_key_changed");
    let message = refused.json["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("public.events"), "{message}");
    let drift = run(&["schema", "drift", "--from", "rekeyed.hcl", "--format", "json"]);
    assert_eq!(drift.code, 1, "{}", drift.stdout);
    assert_eq!(drift.json["findings"][0]["category"], "partition_keys_modified");
    std::fs::remove_dir_all(&dir).ok();
    db.drop().await;
}
