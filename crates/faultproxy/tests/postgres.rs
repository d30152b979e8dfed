//! Faults between a client and the real PostgreSQL, through a Toxiproxy proxy of each test's own.
//! Connections are counted on the server (`pg_stat_activity`): Toxiproxy counts none.

mod support;

use std::time::{Duration, Instant};

use ptah_faultproxy::{Toxic, proxies};
use ptah_testservices::{SecretUrl, unique_name};
use support::{eventually, own_proxy, require};
use tokio_postgres::{Client, Config, NoTls};

async fn connect(url: &SecretUrl, application_name: &str) -> Result<Client, tokio_postgres::Error> {
    let mut config: Config = url.expose().parse()?;
    config
        .application_name(application_name)
        .connect_timeout(Duration::from_secs(10));
    let (client, connection) = config.connect(NoTls).await?;
    tokio::spawn(async move {
        // Its error, if any, surfaces in the queries.
        let _ = connection.await;
    });
    Ok(client)
}

/// The backends with `application_name`, as the server sees them.
async fn sessions(admin: &Client, application_name: &str) -> i64 {
    admin
        .query_one(
            "select count(*) from pg_stat_activity where application_name = $1",
            &[&application_name],
        )
        .await
        .expect("pg_stat_activity")
        .get(0)
}

#[tokio::test]
async fn reset_peer_cuts_a_pg_sleep_mid_statement_and_the_server_session_ends() {
    let (services, toxiproxy) = require();
    let proxy = own_proxy(&toxiproxy, proxies::POSTGRES).await;
    let admin = connect(&services.postgres.admin_url, "faultproxy-admin")
        .await
        .expect("admin, direct");
    let name = unique_name("reset");
    let client = connect(&services.postgres.url.via(proxy.listen()), &name)
        .await
        .expect("app, through the proxy");
    // The backend checks its socket during the sleep, so a cut client ends the statement there
    // and then rather than when the sleep would return.
    client
        .batch_execute("set client_connection_check_interval = '100ms'")
        .await
        .expect("set");
    let pid: i32 = client
        .query_one("select pg_backend_pid()", &[])
        .await
        .expect("pid")
        .get(0);

    let sleep = client.simple_query("select pg_sleep(5)");
    let cut = async {
        eventually("the pg_sleep is running", Duration::from_secs(10), async || {
            let row = admin
                .query_opt(
                    "select 1 from pg_stat_activity where pid = $1 and state = 'active' \
                     and query like '%pg_sleep%'",
                    &[&pid],
                )
                .await
                .expect("pg_stat_activity");
            row.is_some()
        })
        .await;
        let toxic = toxiproxy
            .add_toxic(proxy.name(), &Toxic::reset_peer().upstream())
            .await
            .expect("reset_peer");
        // The toxic acts when data flows: a second request on the same connection (tokio-postgres
        // pipelines it while the sleep runs) is what it resets.
        let poke = client.simple_query("select 1").await;
        (toxic, poke)
    };
    let (slept, (toxic, poke)) = tokio::join!(sleep, cut);
    let err = slept.expect_err("the pg_sleep must not complete through a reset connection");
    assert!(poke.is_err(), "the request after the reset must fail too");
    assert!(
        client.is_closed(),
        "the client must see its connection gone: {err}"
    );

    eventually(
        "the server-side session ends",
        Duration::from_secs(30),
        async || {
            admin
                .query_opt("select 1 from pg_stat_activity where pid = $1", &[&pid])
                .await
                .expect("pg_stat_activity")
                .is_none()
        },
    )
    .await;
    toxic.remove().await.expect("remove the toxic");
    proxy.delete().await.expect("delete the proxy");
}

#[tokio::test]
async fn latency_is_added_to_each_round_trip() {
    let (services, toxiproxy) = require();
    let proxy = own_proxy(&toxiproxy, proxies::POSTGRES).await;
    let client = connect(
        &services.postgres.url.via(proxy.listen()),
        &unique_name("latency"),
    )
    .await
    .expect("through the proxy");
    let added = Duration::from_millis(400);
    let toxic = toxiproxy
        .add_toxic(proxy.name(), &Toxic::latency(added))
        .await
        .expect("latency");
    assert_eq!(toxic.state().attributes["latency"], 400);
    let started = Instant::now();
    client.simple_query("select 1").await.expect("select 1");
    let took = started.elapsed();
    assert!(
        took >= added,
        "a round trip took {took:?}, less than the {added:?} added"
    );
    toxic.remove().await.expect("remove");
    client
        .simple_query("select 1")
        .await
        .expect("select 1 without the toxic");
}

#[tokio::test]
async fn a_disabled_proxy_refuses_connections_and_an_enabled_one_serves_again() {
    let (services, toxiproxy) = require();
    let proxy = own_proxy(&toxiproxy, proxies::POSTGRES).await;
    let url = services.postgres.url.via(proxy.listen());
    let open = connect(&url, &unique_name("cut")).await.expect("before the cut");

    let cut = toxiproxy.cut(proxy.name()).await.expect("disable");
    assert!(!toxiproxy.proxy(proxy.name()).await.expect("proxy").enabled);
    let refused = connect(&url, &unique_name("cut")).await;
    assert!(refused.is_err(), "a disabled proxy must refuse connections");
    assert!(
        open.simple_query("select 1").await.is_err(),
        "disabling closes the connections through the proxy"
    );

    cut.restore().await.expect("enable");
    let again = connect(&url, &unique_name("cut")).await.expect("after the cut");
    again.simple_query("select 1").await.expect("select 1");
}

#[tokio::test]
async fn limit_data_cuts_a_result_mid_stream() {
    let (services, toxiproxy) = require();
    let proxy = own_proxy(&toxiproxy, proxies::POSTGRES).await;
    let client = connect(&services.postgres.url.via(proxy.listen()), &unique_name("limit"))
        .await
        .expect("through the proxy");
    // Counts from now on this connection: 16 KiB more, then the cut.
    let _toxic = toxiproxy
        .add_toxic(proxy.name(), &Toxic::limit_data(16 * 1024))
        .await
        .expect("limit_data");
    let result = client
        .query("select repeat('x', 100) from generate_series(1, 10000)", &[])
        .await;
    assert!(result.is_err(), "a 1 MB result must not pass a 16 KiB limit");
    assert!(client.is_closed());
}

#[tokio::test]
async fn a_hang_holds_a_query_until_the_toxic_goes() {
    let (services, toxiproxy) = require();
    let proxy = own_proxy(&toxiproxy, proxies::POSTGRES).await;
    let client = connect(&services.postgres.url.via(proxy.listen()), &unique_name("hang"))
        .await
        .expect("through the proxy");
    let toxic = toxiproxy
        .add_toxic(proxy.name(), &Toxic::hang().upstream())
        .await
        .expect("hang");
    let waited = tokio::time::timeout(Duration::from_secs(2), client.simple_query("select 1")).await;
    assert!(waited.is_err(), "a hung connection must not answer");
    toxic.remove().await.expect("remove");
}

#[tokio::test]
async fn connections_through_the_proxy_are_counted_on_the_server() {
    let (services, toxiproxy) = require();
    let proxy = own_proxy(&toxiproxy, proxies::POSTGRES).await;
    let admin = connect(&services.postgres.admin_url, "faultproxy-admin")
        .await
        .expect("admin, direct");
    let name = unique_name("count");
    let url = services.postgres.url.via(proxy.listen());
    let mut clients = Vec::new();
    for _ in 0..3 {
        clients.push(connect(&url, &name).await.expect("through the proxy"));
    }
    assert_eq!(sessions(&admin, &name).await, 3);
    proxy.delete().await.expect("delete the proxy");
    // Deleting the proxy closes its connections; the server notices and ends the sessions.
    eventually("the sessions end", Duration::from_secs(30), async || {
        sessions(&admin, &name).await == 0
    })
    .await;
}
