//! Faults between a client and the real MariaDB (standing in for MySQL), through a Toxiproxy
//! proxy of each test's own. Connections are counted on the server
//! (`information_schema.PROCESSLIST` on the test's own database): Toxiproxy counts none.

mod support;

use std::time::{Duration, Instant};

use mysql_async::{Conn, Opts, OptsBuilder, prelude::Queryable};
use ptah_faultproxy::{Toxic, proxies};
use ptah_testservices::{SecretUrl, unique_name};
use support::{eventually, own_proxy, require};

async fn connect(url: &SecretUrl) -> mysql_async::Result<Conn> {
    let opts = Opts::from_url(url.expose())?;
    // mysql_async moves a loopback TCP connection to the server's Unix socket by default, which
    // would bypass the proxy.
    Conn::new(OptsBuilder::from_opts(opts).prefer_socket(false)).await
}

/// A database of the test's own, which the `app` user may use: its sessions are the test's.
async fn own_database(admin: &mut Conn) -> String {
    let database = unique_name("fp");
    admin
        .query_drop(format!(
            "create database {database}; grant all on {database}.* to 'app'@'%'"
        ))
        .await
        .expect("create database");
    database
}

async fn sessions(admin: &mut Conn, database: &str) -> i64 {
    admin
        .exec_first(
            "select count(*) from information_schema.PROCESSLIST where DB = ?",
            (database,),
        )
        .await
        .expect("processlist")
        .unwrap_or(0)
}

#[tokio::test]
async fn a_disabled_proxy_cuts_a_sleep_mid_statement_and_refuses_until_enabled() {
    let (services, toxiproxy) = require();
    let proxy = own_proxy(&toxiproxy, proxies::MARIADB).await;
    let mut admin = connect(&services.mysql.admin_url).await.expect("admin, direct");
    let database = own_database(&mut admin).await;
    let url = services.mysql.url_for_database(&database).via(proxy.listen());
    let mut conn = connect(&url).await.expect("through the proxy");

    let sleep = conn.query_drop("select sleep(5)");
    let cut = async {
        eventually("the sleep is running", Duration::from_secs(10), async || {
            let running: Option<i64> = admin
                .exec_first(
                    "select count(*) from information_schema.PROCESSLIST where DB = ? \
                     and INFO like 'select sleep%'",
                    (&database,),
                )
                .await
                .expect("processlist");
            running == Some(1)
        })
        .await;
        toxiproxy.cut(proxy.name()).await.expect("disable")
    };
    let (slept, cut) = tokio::join!(sleep, cut);
    assert!(
        slept.is_err(),
        "the sleep must not complete through a cut connection"
    );
    assert!(
        connect(&url).await.is_err(),
        "a disabled proxy must refuse connections"
    );
    eventually(
        "the server-side session ends",
        Duration::from_secs(30),
        async || sessions(&mut admin, &database).await == 0,
    )
    .await;

    cut.restore().await.expect("enable");
    let mut again = connect(&url).await.expect("after the cut");
    let one: Option<i64> = again.query_first("select 1").await.expect("select 1");
    assert_eq!(one, Some(1));
}

#[tokio::test]
async fn reset_peer_resets_a_new_connection_at_the_greeting() {
    let (services, toxiproxy) = require();
    let proxy = own_proxy(&toxiproxy, proxies::MARIADB).await;
    // MariaDB speaks first: its greeting is the first downstream data, which the toxic resets
    // (a connection opened after the toxic was added gets a real TCP reset).
    let toxic = toxiproxy
        .add_toxic(proxy.name(), &Toxic::reset_peer())
        .await
        .expect("reset_peer");
    let err = connect(&services.mysql.url.via(proxy.listen()))
        .await
        .expect_err("the connection must be reset");
    let text = err.to_string();
    assert!(
        matches!(err, mysql_async::Error::Io(_) | mysql_async::Error::Driver(_)),
        "a connection error, not a server error: {text}"
    );
    toxic.remove().await.expect("remove");
    connect(&services.mysql.url.via(proxy.listen()))
        .await
        .expect("without the toxic");
}

#[tokio::test]
async fn latency_is_added_to_each_round_trip() {
    let (services, toxiproxy) = require();
    let proxy = own_proxy(&toxiproxy, proxies::MARIADB).await;
    let mut conn = connect(&services.mysql.url.via(proxy.listen()))
        .await
        .expect("through the proxy");
    let added = Duration::from_millis(400);
    let toxic = toxiproxy
        .add_toxic(proxy.name(), &Toxic::latency(added))
        .await
        .expect("latency");
    let started = Instant::now();
    let one: Option<i64> = conn.query_first("select 1").await.expect("select 1");
    let took = started.elapsed();
    assert_eq!(one, Some(1));
    assert!(
        took >= added,
        "a round trip took {took:?}, less than the {added:?} added"
    );
    toxic.remove().await.expect("remove");
}

#[tokio::test]
async fn connections_through_the_proxy_are_counted_on_the_server() {
    let (services, toxiproxy) = require();
    let proxy = own_proxy(&toxiproxy, proxies::MARIADB).await;
    let mut admin = connect(&services.mysql.admin_url).await.expect("admin, direct");
    let database = own_database(&mut admin).await;
    let url = services.mysql.url_for_database(&database).via(proxy.listen());
    let mut conns = Vec::new();
    for _ in 0..3 {
        conns.push(connect(&url).await.expect("through the proxy"));
    }
    assert_eq!(sessions(&mut admin, &database).await, 3);
    proxy.delete().await.expect("delete the proxy");
    eventually("the sessions end", Duration::from_secs(30), async || {
        sessions(&mut admin, &database).await == 0
    })
    .await;
}
