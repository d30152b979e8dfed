//! Sessions and the shared advisory lock against the real PostgreSQL and MariaDB from
//! `cargo xtask services up`.

use std::time::Duration;

use ptah_engine::{DatabaseUrl, Dialect, Error, Session};
use ptah_testservices::TestServices;

const TIMEOUT: Duration = Duration::from_secs(10);

fn urls() -> Vec<DatabaseUrl> {
    let services = TestServices::require();
    [services.postgres.url.expose(), services.mysql.url.expose()]
        .into_iter()
        .map(|u| DatabaseUrl::parse(u).expect("services.env holds valid URLs"))
        .collect()
}

#[tokio::test]
async fn connects_and_runs_statements_on_both_engines() {
    for url in urls() {
        let mut session = Session::connect(&url, TIMEOUT).await.expect("connect");
        assert_eq!(session.dialect(), url.dialect());
        session.batch("SELECT 1").await.expect("a trivial statement runs");
        let err = session
            .batch("SELECT * FROM no_such_table_anywhere")
            .await
            .expect_err("missing table");
        assert!(err.to_string().contains("no_such_table_anywhere"), "{err}");
        session.close().await.expect("close");
    }
}

#[tokio::test]
async fn wrong_password_is_refused_without_echoing_it() {
    for url in urls() {
        let text = url.to_string().replace(":***@", ":not-the-password-xyzzy@");
        let bad = DatabaseUrl::parse(&text).expect("valid shape");
        let Err(err) = Session::connect(&bad, TIMEOUT).await else {
            panic!("{:?} accepted a wrong password", url.dialect());
        };
        assert!(matches!(err, Error::Connect { .. }), "{err:?}");
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains("not-the-password-xyzzy"), "{shown}");
        let hint = match url.dialect() {
            Dialect::Postgres => "password authentication failed",
            Dialect::Mysql => "Access denied",
        };
        assert!(shown.contains(hint), "{shown}");
    }
}

#[tokio::test]
async fn unreachable_server_is_a_typed_error() {
    let url = DatabaseUrl::parse("postgres://app:pw@127.0.0.1:1/app").expect("valid");
    let err = Session::connect(&url, Duration::from_secs(2))
        .await
        .err()
        .expect("nothing listens on port 1");
    assert!(
        matches!(err, Error::Connect { .. } | Error::ConnectTimeout { .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn serial_db_the_advisory_lock_admits_exactly_one_session() {
    for url in urls() {
        let mut first = Session::connect(&url, TIMEOUT).await.expect("connect");
        let mut second = Session::connect(&url, TIMEOUT).await.expect("connect");
        first
            .lock(Duration::ZERO)
            .await
            .expect("the first session takes the free lock");
        let busy = second
            .lock(Duration::from_millis(1))
            .await
            .expect_err("held elsewhere");
        assert!(matches!(busy, Error::LockBusy { .. }), "{busy:?}");
        assert!(!second.unlock().await.expect("unlock"), "the loser holds nothing");
        assert!(first.unlock().await.expect("unlock"), "the holder releases");
        second
            .lock(Duration::ZERO)
            .await
            .expect("free again after release");
        assert!(second.unlock().await.expect("unlock"));
        first.close().await.expect("close");
        second.close().await.expect("close");
    }
}

#[tokio::test]
async fn serial_db_a_closed_session_gives_its_lock_back() {
    for url in urls() {
        let mut holder = Session::connect(&url, TIMEOUT).await.expect("connect");
        holder.lock(Duration::ZERO).await.expect("lock");
        holder.close().await.expect("close");
        let mut next = Session::connect(&url, TIMEOUT).await.expect("connect");
        next.lock(Duration::from_secs(3))
            .await
            .expect("the server released the dead session's lock");
        assert!(next.unlock().await.expect("unlock"));
        next.close().await.expect("close");
    }
}
