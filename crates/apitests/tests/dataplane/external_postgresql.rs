//! Scenario 21 [external-postgresql-lifecycle]: the database is outside the cluster, as most
//! production databases are, and the Pods reach it through a selectorless Service whose one
//! EndpointSlice, written by hand, names the database's address (the pod gateway, where the
//! test PostgreSQL listens). The full lifecycle runs to InSync with one Apply. PostgreSQL only.
//!
//! The local cluster has no cluster DNS (no CoreDNS: Pods get `MissingClusterDNS` and the host's
//! resolv.conf, docs/development.md), so `<service>.<ns>.svc` resolves nowhere. The URL names
//! the Service's ClusterIP instead, which only kube-proxy's rules (from the EndpointSlice) lead
//! to the database. Because the server certificate names the pod gateway, not the ClusterIP, the
//! URL asks for `sslmode=verify-ca`: the chain is still checked against `spec.target.caFrom`,
//! the host name cannot be.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Secret, Service};
use kube::{
    Api,
    api::{Patch, PatchParams},
};
use ptah_api::schema::SchemaPhase;
use ptah_apitests::e2e::create;
use serde_json::json;

use crate::{
    dataplane::{
        database::expect_tables,
        setup::{Run, pod_address, with_address},
    },
    lifecycle::app::{Engine, approve, phase},
};

const BOUND: Duration = Duration::from_secs(420);
/// The Service's port: the usual PostgreSQL port, not the one the database listens on, so the
/// connection can only arrive through kube-proxy's translation.
const PORT: u16 = 5432;

async fn external_postgresql(name: &'static str) {
    let run = Run::start(name, Engine::Postgres, json!({"suspend": true})).await;
    run.wait("suspended", |s| phase(s) == Some(SchemaPhase::Suspended))
        .await;
    let (ip, port) = pod_address("PTAH_POD_PG_URL")
        .rsplit_once(':')
        .map(|(h, p)| (h.to_owned(), p.parse::<u16>().expect("a port")))
        .expect("host:port");
    let services: Api<Service> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let service = create(
        &services,
        json!({"metadata": {"name": "external-pg"},
               "spec": {"ports": [{"name": "pg", "port": PORT, "protocol": "TCP"}]}}),
    )
    .await;
    let cluster_ip = service
        .spec
        .and_then(|s| s.cluster_ip)
        .filter(|ip| ip != "None" && !ip.is_empty())
        .expect("a ClusterIP");
    let slices: Api<k8s_openapi::api::discovery::v1::EndpointSlice> =
        Api::namespaced(run.app.client.clone(), &run.app.ns);
    create(
        &slices,
        json!({"metadata": {"name": "external-pg-1",
                            "labels": {"kubernetes.io/service-name": "external-pg",
                                       "endpointslice.kubernetes.io/managed-by": "e2e.ptah.run"}},
               "addressType": "IPv4",
               "endpoints": [{"addresses": [ip], "conditions": {"ready": true}}],
               "ports": [{"name": "pg", "port": port, "protocol": "TCP"}]}),
    )
    .await;
    // The Secret's URL: the ClusterIP at the Service's port, verify-ca (see the module comment).
    let secrets: Api<Secret> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let url = secrets
        .get("db")
        .await
        .expect("the database Secret")
        .data
        .as_ref()
        .and_then(|d| d.get("url"))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        .expect("the database URL");
    let external = with_address(&url, &format!("{cluster_ip}:{PORT}"))
        .replace("sslmode=verify-full", "sslmode=verify-ca");
    assert!(external.contains("sslmode=verify-ca"), "a verified TLS mode");
    secrets
        .patch(
            "db",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"url": external}})),
        )
        .await
        .expect("point the database Secret at the Service");
    run.app
        .schemas
        .patch(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"suspend": false}})),
        )
        .await
        .expect("resume");

    let waiting = run.awaiting(None).await;
    approve(&run.app.client, &run.app.ns, &waiting).await;
    run.wait("InSync", |s| phase(s) == Some(SchemaPhase::InSync))
        .await;
    let database = expect_tables(Engine::Postgres, &run.app.host_url, &["audit", "items"]).await;
    let (client, ns) = (run.app.client.clone(), run.app.ns.clone());
    run.conclude(&[1], database, BOUND).await;
    crate::dataplane::scenario::delete_namespace(&client, &ns).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_external_postgresql_behind_a_selectorless_service_reaches_in_sync_postgresql() {
    external_postgresql(
        "e2e_dataplane_external_postgresql_behind_a_selectorless_service_reaches_in_sync_postgresql",
    )
    .await;
}
