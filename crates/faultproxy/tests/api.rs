//! The Toxiproxy that `cargo xtask services up` runs: the pinned version, one proxy per service,
//! and guards that undo their fault when dropped.

mod support;

use std::time::Duration;

use ptah_faultproxy::{Toxic, proxies};
use ptah_testservices::workspace_root;
use support::{own_proxy, require};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn the_running_server_is_the_version_the_matrix_pins() {
    let (_, toxiproxy) = require();
    let path = workspace_root()
        .expect("workspace")
        .join("matrix/kubernetes.json");
    let matrix: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("matrix")).expect("json");
    let pinned = matrix["components"]["toxiproxy"]["version"]
        .as_str()
        .expect("components.toxiproxy.version");
    assert_eq!(toxiproxy.version().await.expect("version"), pinned);
}

#[tokio::test]
async fn one_proxy_fronts_each_service_at_the_address_of_the_env_file() {
    let (services, toxiproxy) = require();
    let addresses = services.require_fault_proxy();
    let host_of = |url: &str| -> String {
        let after = url.rsplit_once('@').map_or(url, |(_, rest)| rest);
        after.split('/').next().unwrap_or_default().to_owned()
    };
    let expected = [
        (
            proxies::POSTGRES,
            &addresses.postgres,
            host_of(services.postgres.url.expose()),
        ),
        (
            proxies::MARIADB,
            &addresses.mysql,
            host_of(services.mysql.url.expose()),
        ),
        (
            proxies::REGISTRY,
            &addresses.registry,
            services.registry.host.clone(),
        ),
        (
            proxies::REGISTRY_PLAIN,
            &addresses.plain_registry,
            services.plain_registry.clone(),
        ),
    ];
    let listed = toxiproxy.proxies().await.expect("proxies");
    for (name, listen, upstream) in expected {
        let proxy = listed
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("no proxy {name} in {listed:?}"));
        assert_eq!((&proxy.listen, &proxy.upstream), (listen, &upstream), "{name}");
    }
}

#[tokio::test]
async fn the_plain_registry_answers_through_its_proxy() {
    let (services, _) = require();
    let address = &services.require_fault_proxy().plain_registry;
    let mut stream = tokio::net::TcpStream::connect(address).await.expect("connect");
    stream
        .write_all(b"GET /v2/ HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .await
        .expect("request");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .expect("an answer within 10 s")
        .expect("read");
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200"),
        "{answer}"
    );
}

#[tokio::test]
async fn guards_undo_their_fault_when_dropped() {
    let (_, toxiproxy) = require();
    let proxy = own_proxy(&toxiproxy, proxies::REGISTRY_PLAIN).await;
    let name = proxy.name().to_owned();

    let toxic = toxiproxy
        .add_toxic(&name, &Toxic::bandwidth(1).named("slow"))
        .await
        .expect("bandwidth");
    assert_eq!(toxic.state().attributes["rate"], 1);
    drop(toxic);
    assert!(toxiproxy.proxy(&name).await.expect("proxy").toxics.is_empty());

    let cut = toxiproxy.cut(&name).await.expect("disable");
    drop(cut);
    assert!(toxiproxy.proxy(&name).await.expect("proxy").enabled);

    drop(proxy);
    let gone = toxiproxy.proxy(&name).await.expect_err("deleted");
    assert!(gone.is_not_found(), "{gone}");
}
