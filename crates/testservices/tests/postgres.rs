//! PostgreSQL from `cargo xtask services up` is real: PostgreSQL 15 with password authentication.

use ptah_testservices::{TestServices, unique_name};
use tokio_postgres::{Client, Config, NoTls, error::SqlState};

async fn connect(url: &str) -> Result<Client, tokio_postgres::Error> {
    let config: Config = url.parse()?;
    connect_with(&config).await
}

async fn connect_with(config: &Config) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = config.connect(NoTls).await?;
    tokio::spawn(async move {
        // The connection ends when the client is dropped; its error, if any, surfaces in queries.
        let _ = connection.await;
    });
    Ok(client)
}

#[tokio::test]
async fn the_app_user_talks_to_postgresql_15_on_loopback() {
    let services = TestServices::require();
    let client = connect(services.postgres.url.expose())
        .await
        .expect("connect as app");
    let row = client
        .query_one(
            "select current_user::text, current_database()::text, version(), \
             current_setting('listen_addresses'), current_setting('password_encryption')",
            &[],
        )
        .await
        .expect("query");
    assert_eq!(row.get::<_, String>(0), "app");
    assert_eq!(row.get::<_, String>(1), "app");
    let version: String = row.get(2);
    assert!(version.starts_with("PostgreSQL 15."), "{version}");
    assert_eq!(row.get::<_, String>(3), "127.0.0.1");
    assert_eq!(row.get::<_, String>(4), "scram-sha-256");
}

#[tokio::test]
async fn a_wrong_password_is_refused() {
    let services = TestServices::require();
    let mut config: Config = services.postgres.url.expose().parse().expect("url");
    config.password("not-the-password");
    let err = connect_with(&config)
        .await
        .expect_err("a wrong password must be refused");
    assert_eq!(err.code(), Some(&SqlState::INVALID_PASSWORD), "{err}");
}

#[tokio::test]
async fn the_admin_url_creates_a_database_per_test_for_the_app_user() {
    let services = TestServices::require();
    let admin = connect(services.postgres.admin_url.expose())
        .await
        .expect("connect as admin");
    let is_superuser: bool = admin
        .query_one("select rolsuper from pg_roles where rolname = current_user", &[])
        .await
        .expect("role")
        .get(0);
    assert!(is_superuser);

    let database = unique_name("pg");
    admin
        .batch_execute(&format!("create database {database} owner app"))
        .await
        .expect("create database");
    let app = connect(services.postgres.url_for_database(&database).expose())
        .await
        .expect("connect as app to the new database");
    app.batch_execute("create table t (n int); insert into t values (40), (2);")
        .await
        .expect("create and fill a table");
    let sum: i64 = app
        .query_one("select sum(n) from t", &[])
        .await
        .expect("sum")
        .get(0);
    assert_eq!(sum, 42);
    drop(app);
    admin
        .batch_execute(&format!("drop database {database} with (force)"))
        .await
        .expect("drop database");
}
