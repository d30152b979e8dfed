//! `ptah schema plan` on a real PostgreSQL names the lock each statement takes on an existing
//! table with the server's row estimate, and a statement that blocks the writers of a large table
//! is a warning (`--lock-warning-rows`); an index built concurrently blocks none and stays safe; a
//! table the plan creates is not named. On MariaDB the algorithm a statement asks for names its
//! cost instead.

mod schema_support;

use ptah_engine::Dialect;
use ptah_testservices::unique_name;
use schema_support::{Fresh, ptah};

#[tokio::test]
async fn a_write_blocking_change_of_a_large_table_names_its_lock_and_rows_and_is_a_warning() {
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
        "CREATE TABLE orders (id int PRIMARY KEY, sku text, note text);\n\
         CREATE INDEX orders_sku ON orders (sku);\n\
         CREATE TABLE items (id int PRIMARY KEY, sku text);\n\
         CREATE INDEX items_sku ON items (sku);\n",
    )
    .expect("write");
    let plan = |threshold: &str| planned(&db, &dir, &["--lock-warning-rows", threshold]);

    let file = plan("100000");
    let locks = file["locks"].as_array().cloned().unwrap_or_default();
    let sql_of = |lock: &serde_json::Value| {
        let index = lock["statement"].as_u64().expect("index") as usize;
        file["statements"][index].clone()
    };
    assert!(
        locks.iter().all(|l| l["table"] == "public.orders"),
        "only the existing table: {locks:?}"
    );
    // The new column takes ACCESS EXCLUSIVE: on 150,000 rows, a warning.
    let column = locks
        .iter()
        .find(|l| {
            sql_of(l)["sql"]
                .as_str()
                .unwrap_or_default()
                .contains("ADD COLUMN")
        })
        .expect("the column's lock");
    assert_eq!(column["lock"], "AccessExclusiveLock");
    assert_eq!(column["blocks_writes"], true);
    let rows = column["estimated_rows"].as_u64().expect("an estimate");
    assert!(
        (140_000..=160_000).contains(&rows),
        "the server's estimate: {rows}"
    );
    let statement = sql_of(column);
    assert_eq!(statement["severity"], "warning", "{statement}");
    assert!(
        statement["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("AccessExclusiveLock")
    );
    // The index is built concurrently: writes go on, and it stays safe.
    let index = locks
        .iter()
        .find(|l| {
            sql_of(l)["sql"]
                .as_str()
                .unwrap_or_default()
                .contains("orders_sku")
        })
        .expect("the index's lock");
    assert_eq!(index["lock"], "ShareUpdateExclusiveLock");
    assert_eq!(index["blocks_writes"], false);
    let built = sql_of(index);
    assert!(
        built["sql"].as_str().unwrap_or_default().contains("CONCURRENTLY"),
        "{built}"
    );
    assert_eq!(built["severity"], "safe", "{built}");

    let column_index = column["statement"].clone();
    let file = plan("1000000");
    let statement = &file["statements"][column_index.as_u64().expect("index") as usize];
    assert_eq!(statement["severity"], "safe", "below the threshold: {statement}");

    std::fs::remove_dir_all(&dir).expect("clean");
    db.drop().await;
}

/// On MariaDB the cost is the algorithm: a column added `INSTANT` and an index built `INPLACE,
/// LOCK=NONE` leave a table of 150,000 rows writable and stay safe; a foreign key, which the
/// server adds by copying the table, blocks its writers and is a warning.
#[tokio::test]
async fn on_mariadb_a_table_copy_of_a_large_table_is_a_warning_and_online_changes_are_not() {
    let db = Fresh::new(Dialect::Mysql, "plan_locks_my").await;
    db.run(
        "CREATE TABLE parent (id int PRIMARY KEY);\n\
         CREATE TABLE orders (id int PRIMARY KEY, parent_id int, sku varchar(20));\n\
         INSERT INTO orders SELECT seq, NULL, concat('sku-', seq) FROM seq_1_to_150000;\n\
         ANALYZE TABLE orders;\n",
    )
    .await
    .expect("a table of 150,000 rows");
    let dir = std::env::temp_dir().join(unique_name("ptah-plan-locks-my"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("desired.sql"),
        "CREATE TABLE parent (id int PRIMARY KEY);\n\
         CREATE TABLE orders (id int PRIMARY KEY, parent_id int, sku varchar(20), note text,\n\
           CONSTRAINT orders_parent FOREIGN KEY (parent_id) REFERENCES parent (id));\n\
         CREATE INDEX orders_sku ON orders (sku);\n",
    )
    .expect("write");
    let file = planned(&db, &dir, &[]);
    let locks = file["locks"].as_array().cloned().unwrap_or_default();
    let lock_of = |needle: &str| {
        let lock = locks
            .iter()
            .find(|l| {
                let index = l["statement"].as_u64().expect("index") as usize;
                file["statements"][index]["sql"]
                    .as_str()
                    .unwrap_or_default()
                    .contains(needle)
            })
            .unwrap_or_else(|| panic!("a lock for {needle}: {locks:?}"));
        let index = lock["statement"].as_u64().expect("index") as usize;
        (lock.clone(), file["statements"][index].clone())
    };
    for (needle, name, blocks, severity) in [
        ("ADD COLUMN", "Instant", false, "safe"),
        ("orders_sku", "InplaceLockNone", false, "safe"),
        ("FOREIGN KEY", "ServerDefault", true, "warning"),
    ] {
        let (lock, statement) = lock_of(needle);
        assert_eq!(lock["lock"], name, "{needle}: {lock}");
        assert_eq!(lock["blocks_writes"], blocks, "{needle}: {lock}");
        assert_eq!(lock["table"], "orders", "{needle}: {lock}");
        let rows = lock["estimated_rows"].as_u64().expect("an estimate");
        assert!(
            (100_000..=200_000).contains(&rows),
            "the server's estimate: {rows}"
        );
        assert_eq!(statement["severity"], severity, "{needle}: {statement}");
    }
    std::fs::remove_dir_all(&dir).expect("clean");
    db.drop().await;
}

/// `ptah schema plan` of `dir/desired.sql` with `extra` arguments, which must find changes; the
/// plan file it wrote.
fn planned(db: &Fresh, dir: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "schema",
        "plan",
        "--from",
        "desired.sql",
        "--output",
        "plan.json",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let run = ptah(&db.url_text, &db.password, dir, &args);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let text = std::fs::read_to_string(dir.join("plan.json")).expect("the plan file");
    serde_json::from_str(&text).expect("JSON")
}
