//! `ptah schema plan` on a real PostgreSQL names the lock each statement takes on an existing
//! table with the server's row estimate, and a statement that blocks the writers of a large table
//! is a warning (`--lock-warning-rows`); a table the plan creates is not named.

mod schema_support;

use ptah_engine::Dialect;
use ptah_testservices::unique_name;
use schema_support::{Fresh, ptah};

#[tokio::test]
async fn an_index_on_a_large_table_names_its_lock_and_rows_and_is_a_warning() {
    let db = Fresh::new(Dialect::Postgres, "plan_locks").await;
    db.run("CREATE TABLE orders (id int PRIMARY KEY, sku text)")
        .await
        .expect("table");
    db.run("INSERT INTO orders SELECT g, 'sku-' || g FROM generate_series(1, 150000) g")
        .await
        .expect("rows");
    db.run("ANALYZE orders").await.expect("analyze");
    let dir = std::env::temp_dir().join(unique_name("ptah-plan-locks"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("desired.sql"),
        "CREATE TABLE orders (id int PRIMARY KEY, sku text);\n\
         CREATE INDEX orders_sku ON orders (sku);\n\
         CREATE TABLE items (id int PRIMARY KEY, sku text);\n\
         CREATE INDEX items_sku ON items (sku);\n",
    )
    .expect("write");
    let plan = |threshold: &str| {
        let run = ptah(
            &db.url_text,
            &db.password,
            &dir,
            &[
                "schema",
                "plan",
                "--from",
                "desired.sql",
                "--output",
                "plan.json",
                "--format",
                "json",
                "--lock-warning-rows",
                threshold,
            ],
        );
        assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
        let text = std::fs::read_to_string(dir.join("plan.json")).expect("the plan file");
        serde_json::from_str::<serde_json::Value>(&text).expect("JSON")
    };

    let file = plan("100000");
    let locks = file["locks"].as_array().cloned().unwrap_or_default();
    assert_eq!(locks.len(), 1, "only the existing table: {locks:?}");
    let lock = &locks[0];
    assert_eq!(lock["lock"], "ShareLock");
    assert_eq!(lock["blocks_writes"], true);
    assert_eq!(lock["table"], "public.orders");
    let rows = lock["estimated_rows"].as_u64().expect("an estimate");
    assert!(
        (140_000..=160_000).contains(&rows),
        "the server's estimate: {rows}"
    );
    let index = lock["statement"].as_u64().expect("index") as usize;
    let statement = &file["statements"][index];
    assert!(
        statement["sql"]
            .as_str()
            .unwrap_or_default()
            .contains("orders_sku")
    );
    assert_eq!(statement["severity"], "warning", "{statement}");
    assert!(
        statement["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("ShareLock")
    );

    let file = plan("1000000");
    let statement = &file["statements"][index];
    assert_eq!(statement["severity"], "safe", "below the threshold: {statement}");
    assert_eq!(file["locks"][0]["lock"], "ShareLock", "still named");

    std::fs::remove_dir_all(&dir).expect("clean");
    db.drop().await;
}
