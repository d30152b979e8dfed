//! MariaDB from `cargo xtask services up` is real: a MariaDB server with password authentication.

use mysql_async::{Conn, Opts, OptsBuilder, prelude::Queryable};
use ptah_testservices::{TestServices, unique_name};

/// MariaDB/MySQL error 1045: access denied.
const ER_ACCESS_DENIED_ERROR: u16 = 1045;

async fn connect(url: &str) -> Conn {
    Conn::from_url(url).await.expect("connect")
}

#[tokio::test]
async fn the_app_user_talks_to_mariadb_on_loopback() {
    let services = TestServices::require();
    let mut conn = connect(services.mysql.url.expose()).await;
    let row: Option<(String, String, String, String)> = conn
        .query_first("select @@version, current_user(), database(), @@bind_address")
        .await
        .expect("query");
    let (version, user, database, bind) = row.expect("one row");
    assert!(version.contains("MariaDB"), "{version}");
    assert_eq!(user, "app@%");
    assert_eq!(database, "app");
    assert_eq!(bind, "127.0.0.1");
    conn.disconnect().await.expect("disconnect");
}

#[tokio::test]
async fn a_wrong_password_is_refused() {
    let services = TestServices::require();
    let opts = Opts::from_url(services.mysql.url.expose()).expect("url");
    let wrong = OptsBuilder::from_opts(opts).pass(Some("not-the-password"));
    let err = Conn::new(wrong)
        .await
        .expect_err("a wrong password must be refused");
    match err {
        mysql_async::Error::Server(server) => {
            assert_eq!(server.code, ER_ACCESS_DENIED_ERROR, "{server}");
        }
        other => panic!("expected access denied, got {other}"),
    }
}

#[tokio::test]
async fn the_admin_url_creates_a_database_per_test_for_the_app_user() {
    let services = TestServices::require();
    let mut admin = connect(services.mysql.admin_url.expose()).await;
    let database = unique_name("my");
    admin
        .query_drop(format!(
            "create database {database}; grant all on {database}.* to 'app'@'%'"
        ))
        .await
        .expect("create database and grant");
    let mut app = connect(services.mysql.url_for_database(&database).expose()).await;
    app.query_drop("create table t (n int); insert into t values (40), (2)")
        .await
        .expect("create and fill a table");
    let sum: Option<i64> = app
        .query_first("select cast(sum(n) as signed) from t")
        .await
        .expect("sum");
    assert_eq!(sum, Some(42));
    app.disconnect().await.expect("disconnect app");
    admin
        .query_drop(format!("drop database {database}"))
        .await
        .expect("drop database");
    admin.disconnect().await.expect("disconnect admin");
}
