//! A connection whose answer is lost on the way is abandoned and a fresh one tried, against the
//! real servers through a Toxiproxy proxy of the test's own (`cargo xtask services up`).

use std::time::{Duration, Instant};

use ptah_engine::{DatabaseUrl, Error, Session};
use ptah_faultproxy::{Toxic, Toxiproxy, proxies};
use ptah_testservices::{SecretUrl, TestServices, unique_name};

/// Ten seconds per attempt.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Connects to `url` through a proxy of its own whose first connection's answer is lost: the
/// toxic drops the server's bytes, and two seconds in it is made to spare every connection, so
/// the first stays open and silent (what was dropped never arrives) while new ones pass. Returns
/// whether the session came up and ran a statement, and how long the connect took.
async fn through_a_lost_answer(
    toxiproxy: &Toxiproxy,
    service: &str,
    url: &SecretUrl,
) -> (Result<(), Error>, Duration) {
    let shared = toxiproxy.proxy(service).await.expect("the shared proxy");
    let proxy = toxiproxy
        .create_proxy(&unique_name(service), "127.0.0.1:0", &shared.upstream)
        .await
        .expect("a proxy of the test's own");
    let url = DatabaseUrl::parse(url.via(proxy.listen()).expose()).expect("a URL through the proxy");
    let lost = toxiproxy
        .add_toxic(proxy.name(), &Toxic::hang().downstream())
        .await
        .expect("drop the server's answer");
    let (client, name, toxic) = (
        toxiproxy.clone(),
        proxy.name().to_owned(),
        lost.state().name.clone(),
    );
    let lift = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        client
            .set_toxicity(&name, &toxic, 0.0)
            .await
            .expect("spare new connections");
    });
    let started = Instant::now();
    let connected = Session::connect(&url, TIMEOUT).await;
    let took = started.elapsed();
    let outcome = match connected {
        Ok(mut session) => match session.batch("SELECT 1").await {
            Ok(()) => session.close().await,
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    lift.await.expect("the toxic spares new connections");
    lost.remove().await.expect("remove the toxic");
    proxy.delete().await.expect("delete the proxy");
    (outcome, took)
}

#[tokio::test]
async fn a_connection_whose_answer_is_lost_is_replaced_by_a_fresh_one_on_both_engines() {
    let services = TestServices::require();
    services.require_fault_proxy();
    let toxiproxy = Toxiproxy::require();
    let (postgres, mariadb) = tokio::join!(
        through_a_lost_answer(&toxiproxy, proxies::POSTGRES, &services.postgres.url),
        through_a_lost_answer(&toxiproxy, proxies::MARIADB, &services.mysql.url),
    );
    for (engine, (outcome, took)) in [("PostgreSQL", postgres), ("MariaDB", mariadb)] {
        outcome.unwrap_or_else(|e| panic!("{engine}: the fresh connection failed: {e}"));
        // The first connection's answer never came: only a second one can have succeeded, once
        // the first had spent its share of the timeout.
        assert!(
            took >= TIMEOUT / 3,
            "{engine}: connected after {took:?}, before the first attempt's share ran out"
        );
    }
}
