//! What the fault tests share: the services, the Toxiproxy client, and a proxy of the test's own.

// Each test binary compiles this module and uses only a part of it.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use ptah_faultproxy::{ProxyGuard, Toxiproxy};
use ptah_testservices::{TestServices, unique_name};

/// The services and the Toxiproxy client; panics with `cargo xtask services up` when either is
/// missing.
pub fn require() -> (TestServices, Toxiproxy) {
    let services = TestServices::require();
    services.require_fault_proxy();
    (services, Toxiproxy::require())
}

/// A proxy of this test's own, on a port Toxiproxy picks, to the upstream of the shared proxy
/// `service` (`postgres`, `mariadb`): tests run in parallel, and a toxic on the shared proxy
/// would reach every test's connections.
pub async fn own_proxy(toxiproxy: &Toxiproxy, service: &str) -> ProxyGuard {
    let shared = toxiproxy
        .proxy(service)
        .await
        .unwrap_or_else(|e| panic!("the shared proxy {service}: {e}"));
    toxiproxy
        .create_proxy(&unique_name(service), "127.0.0.1:0", &shared.upstream)
        .await
        .unwrap_or_else(|e| panic!("a proxy of the test's own to {}: {e}", shared.upstream))
}

/// Polls `check` every 100 ms until it holds; panics after `limit` naming `what`.
pub async fn eventually(what: &str, limit: Duration, mut check: impl AsyncFnMut() -> bool) {
    let started = Instant::now();
    while !check().await {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
