//! `ptah schema plan --dev-url` through the built binary on real PostgreSQL and MariaDB: a plan
//! that runs and converges passes with per-statement timings (exit 1, changes pending); a dev
//! database that is not empty is left alone (exit 2, the plan file still written); no password
//! shows anywhere. A failing statement is the engine's `tests/rehearse.rs`.

mod schema_support;

use ptah_engine::Dialect;
use ptah_testservices::unique_name;
use schema_support::{Fresh, ptah};

async fn rehearsed(dialect: Dialect) {
    let prod = Fresh::new(dialect, "rehearse_cli").await;
    let dev = Fresh::new(dialect, "rehearse_cli_dev").await;
    prod.run("CREATE TABLE items (id int NOT NULL PRIMARY KEY, name varchar(40))")
        .await
        .expect("the live table");
    let dir = std::env::temp_dir().join(unique_name("ptah-rehearse-cli"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("desired.sql"),
        "CREATE TABLE items (id int NOT NULL PRIMARY KEY, name varchar(40), sku varchar(20) NOT NULL);\n\
         CREATE INDEX items_sku ON items (sku);\n",
    )
    .expect("write");
    let args = |output: &str| {
        vec![
            "schema".to_owned(),
            "plan".to_owned(),
            "--from".to_owned(),
            "desired.sql".to_owned(),
            "--output".to_owned(),
            output.to_owned(),
            "--format".to_owned(),
            "json".to_owned(),
            "--dev-url".to_owned(),
            dev.url_text.clone(),
        ]
    };
    let run = |output: &str| {
        let owned = args(output);
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        let run = ptah(&prod.url_text, &prod.password, &dir, &refs);
        assert!(
            !run.stdout.contains(&dev.password) && !run.stderr.contains(&dev.password),
            "the dev password leaked:\n{}\n{}",
            run.stdout,
            run.stderr
        );
        run
    };

    let passed = run("plan.json");
    assert_eq!(
        passed.code, 1,
        "changes pending: {}{}",
        passed.stdout, passed.stderr
    );
    let r = &passed.json["rehearsal"];
    assert_eq!(r["outcome"], "passed", "{}", passed.stdout);
    assert_eq!(r["restored"], true);
    let timed = r["statements"].as_array().map_or(0, Vec::len);
    assert_eq!(timed, passed.json["statements"].as_u64().unwrap_or(0) as usize);
    assert!(timed >= 2, "{}", passed.stdout);

    // A dev database holding other objects is not touched, nothing is rehearsed, and the plan file
    // is still written for people to read.
    dev.run("CREATE TABLE other (id int NOT NULL PRIMARY KEY, sku varchar(20))")
        .await
        .expect("other");
    let busy = run("busy.json");
    assert_eq!(busy.code, 2, "{}{}", busy.stdout, busy.stderr);
    assert_eq!(
        busy.json["rehearsal"]["outcome"], "inconclusive",
        "{}",
        busy.stdout
    );
    assert!(dir.join("busy.json").exists());

    std::fs::remove_dir_all(&dir).expect("clean");
    dev.drop().await;
    prod.drop().await;
}

#[tokio::test]
async fn a_plan_is_rehearsed_on_the_dev_database_on_postgresql() {
    rehearsed(Dialect::Postgres).await;
}

#[tokio::test]
async fn a_plan_is_rehearsed_on_the_dev_database_on_mariadb() {
    rehearsed(Dialect::Mysql).await;
}
