//! T4 (`e2e_credentials_…`, phase `credentials` of `cargo xtask e2e --suite schema-approvals`):
//! registry credentials go only where their Secret grants (issue 33). An author who may write
//! PtahSchemas but not read Secrets points `desired.ociRef` at a catcher of their own: a listener
//! on the address Pods reach the host's services at, answering like a registry that asks for
//! basic credentials and counting requests and `Authorization` headers. (It runs in this test
//! process: no image here holds a general-purpose server, and the address is the one Pods use
//! for the real registry.)
//!
//! Each refused case ends in its typed reason and an Event of that name, with zero requests at
//! the catcher; an anonymous control proves Pods do reach it; and `orders`, whose Secret grants
//! the real registry and its CA, resolves and plans end to end.

mod common;
mod lifecycle;

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::{Event, Secret};
use kube::{Api, api::ListParams};
use lifecycle::{
    Diagnose, InCluster,
    app::{App, Engine, phase},
    wait_for,
};
use ptah_api::{PtahSchema, schema::SchemaPhase, shared::TransportSpec};
use ptah_apitests::{
    e2e::{create, pod_endpoints},
    release::{self, Release},
};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const STEP: Duration = Duration::from_secs(300);

/// What the catcher saw.
#[derive(Default)]
struct Seen {
    requests: AtomicUsize,
    authorized: AtomicUsize,
}

/// A listener on `host` that answers every request with a basic-auth challenge and counts it.
async fn catcher(host: &str) -> (String, Arc<Seen>) {
    let listener = tokio::net::TcpListener::bind(format!("{host}:0"))
        .await
        .unwrap_or_else(|e| panic!("bind the catcher on {host}: {e}"));
    let addr = listener.local_addr().expect("addr").to_string();
    let seen = Arc::new(Seen::default());
    let count = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let count = count.clone();
            tokio::spawn(async move {
                let mut head = vec![0u8; 16 * 1024];
                let n = stream.read(&mut head).await.unwrap_or(0);
                if n == 0 {
                    return;
                }
                let text = String::from_utf8_lossy(&head[..n]).to_ascii_lowercase();
                count.requests.fetch_add(1, Ordering::SeqCst);
                if text.contains("\r\nauthorization:") {
                    count.authorized.fetch_add(1, Ordering::SeqCst);
                }
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"catcher\"\r\n\
                          Docker-Distribution-Api-Version: registry/2.0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    )
                    .await;
            });
        }
    });
    (addr, seen)
}

/// One case: a PtahSchema named `name` on a database of its own.
struct Case {
    name: &'static str,
    secret: &'static str,
    reference: String,
    transport: TransportSpec,
    reason: &'static str,
}

async fn create_case(app: &App, case: &Case) {
    app.sibling_schema(case.name, |spec| {
        spec.desired.oci_ref = case.reference.clone();
        spec.desired.transport = Some(case.transport.clone());
        match spec.desired.registry_auth_from.as_mut() {
            Some(auth) if !case.secret.is_empty() => auth.name = case.secret.to_owned(),
            _ => spec.desired.registry_auth_from = None,
        }
    })
    .await;
}

fn failed_with(reason: &'static str) -> impl Fn(&PtahSchema) -> bool {
    move |s| {
        s.status.as_ref().is_some_and(|st| {
            st.conditions
                .iter()
                .any(|c| c.type_ == "ReconciliationFailed" && c.status == "True" && c.reason == reason)
        })
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_credentials_go_only_where_the_registry_secret_grants() {
    let app = App::setup(Engine::Postgres, "e2e-credentials").await;
    let client = app.client.clone();
    let endpoints = pod_endpoints();
    let gateway = endpoints
        .get("PTAH_POD_GATEWAY")
        .expect("PTAH_POD_GATEWAY")
        .clone();
    let (catcher, seen) = catcher(&gateway).await;

    // Secrets a platform team might keep: one granting a third registry, one granting the
    // catcher's authority but neither plain HTTP nor the CA the author names.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &app.ns);
    let password = app.services.registry.password.expose().to_owned();
    let user = app.services.registry.username.clone();
    create(
        &secrets,
        json!({"metadata": {"name": "registry-elsewhere"}, "stringData": {
        "username": user, "password": password, "registry": "registry.example.com:5000"}}),
    )
    .await;
    create(
        &secrets,
        json!({"metadata": {"name": "registry-catcher"}, "stringData": {
        "username": user, "password": password, "registry": catcher,
        "caSHA256": "sha256:0000000000000000000000000000000000000000000000000000000000000000"}}),
    )
    .await;

    let release_ns = release::install(&client, &app.ns, &app.services, &app.image, &[]).await;
    let _release = Release(release_ns.clone());
    let manager = InCluster {
        client: client.clone(),
        namespace: release_ns.clone(),
    };

    let plain = TransportSpec {
        plain_http: true,
        ..TransportSpec::default()
    };
    let tls = app
        .schemas
        .get("orders")
        .await
        .expect("orders")
        .spec
        .desired
        .transport
        .expect("orders names the registry CA");
    let at_catcher = format!("oci://{catcher}/shop/orders:v1");
    let cases = [
        Case {
            name: "catcher-plain",
            secret: "registry",
            reference: at_catcher.clone(),
            transport: plain.clone(),
            reason: "RegistryAuthorityMismatch",
        },
        Case {
            name: "catcher-tls",
            secret: "registry",
            reference: at_catcher.clone(),
            transport: tls.clone(),
            reason: "RegistryAuthorityMismatch",
        },
        Case {
            name: "grants-elsewhere",
            secret: "registry-elsewhere",
            reference: at_catcher.clone(),
            transport: tls.clone(),
            reason: "RegistryAuthorityMismatch",
        },
        Case {
            name: "plain-not-granted",
            secret: "registry-catcher",
            reference: at_catcher.clone(),
            transport: plain.clone(),
            reason: "PlainHTTPNotGranted",
        },
        Case {
            name: "ca-not-granted",
            secret: "registry-catcher",
            reference: at_catcher.clone(),
            transport: tls.clone(),
            reason: "CANotGranted",
        },
    ];
    for case in &cases {
        create_case(&app, case).await;
    }

    let mut report = Vec::new();
    for case in &cases {
        let started = Instant::now();
        let s = wait_for(
            &app.schemas,
            case.name,
            case.reason,
            STEP,
            &manager,
            failed_with(case.reason),
        )
        .await;
        let message = s
            .status
            .as_ref()
            .and_then(|st| st.conditions.iter().find(|c| c.type_ == "ReconciliationFailed"))
            .map(|c| c.message.clone())
            .unwrap_or_default();
        assert!(
            !message.contains(&password),
            "{}: the password is in status",
            case.name
        );
        report.push(format!(
            "{}: {} after {:?}; catcher requests {}, with Authorization {}",
            case.name,
            case.reason,
            started.elapsed(),
            seen.requests.load(Ordering::SeqCst),
            seen.authorized.load(Ordering::SeqCst)
        ));
    }
    assert_eq!(
        seen.requests.load(Ordering::SeqCst),
        0,
        "a refused case reached the catcher:\n{}",
        report.join("\n")
    );
    // The control: anonymous access to the catcher reaches it, so the zero above means refused.
    let control = Case {
        name: "anonymous",
        secret: "",
        reference: at_catcher.clone(),
        transport: plain,
        reason: "",
    };
    create_case(&app, &control).await;
    let deadline = Instant::now() + STEP;
    while seen.requests.load(Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "the anonymous control never reached the catcher at {catcher}: Pods cannot reach it, so the zero counts prove nothing\n{}",
            manager.diagnose()
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let events: Api<Event> = Api::namespaced(client.clone(), &app.ns);
    let events = events.list(&ListParams::default()).await.expect("events").items;
    for case in &cases {
        assert!(
            events
                .iter()
                .any(|e| e.involved_object.name.as_deref() == Some(case.name)
                    && e.reason.as_deref() == Some(case.reason)),
            "{}: no Event {}",
            case.name,
            case.reason
        );
    }
    for e in &events {
        assert!(
            !e.message.as_deref().unwrap_or_default().contains(&password),
            "the password is in an Event"
        );
    }

    // The real registry, named in the grant with its CA, still works: orders resolves and plans.
    wait_for(
        &app.schemas,
        "orders",
        "a plan awaiting approval",
        STEP,
        &manager,
        |s| phase(s) == Some(SchemaPhase::AwaitingApproval),
    )
    .await;
    let authorized = seen.authorized.load(Ordering::SeqCst);
    report.push(format!(
        "anonymous control: catcher requests {}, with Authorization {authorized}",
        seen.requests.load(Ordering::SeqCst)
    ));
    let text = report.join("\n");
    eprintln!("credentials:\n{text}");
    let _ = std::fs::write(ptah_apitests::e2e_log_file("credentials.txt"), &text);
    assert_eq!(authorized, 0, "credentials reached the catcher:\n{text}");
}
