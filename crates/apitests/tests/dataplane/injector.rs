//! A third party's mutating webhook, as a cluster may run one (a sidecar or environment
//! injector): served over TLS from the test process at `127.0.0.1`, where the API server (a host
//! process on the local provider) reaches it, with a self-signed certificate for that address as
//! its CA bundle. It adds an environment variable to the first container of every operation Pod
//! of one operation in one namespace. The chart's pod-intent webhook runs after every mutating
//! webhook, so it judges the changed Pod. Dropping the injector deletes its configuration and
//! stops the server.

use std::sync::Arc;

use axum::{Router, body::Bytes, http::header::CONTENT_TYPE, response::IntoResponse, routing::post};
use k8s_openapi::{ByteString, api::admissionregistration::v1::MutatingWebhookConfiguration};
use kube::{
    Api, Client,
    api::{Patch, PatchParams},
};
use ptah_workload::labels::{MANAGED_BY_LABEL, MANAGED_BY_VALUE, OPERATION_LABEL};
use serde_json::{Value, json};
use tokio::{net::TcpListener, sync::watch};

/// The variable the injector adds.
pub const INJECTED: &str = "PTAH_E2E_INJECTED";

/// The running injector and its configuration.
pub struct Injector {
    name: String,
    stop: watch::Sender<bool>,
    _dir: TempDir,
}

/// A directory deleted when dropped.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Answers every review by allowing the Pod with an added environment variable.
async fn review(body: Bytes) -> impl IntoResponse {
    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
    let request = &body["request"];
    let env = &request["object"]["spec"]["containers"][0]["env"];
    let var = json!({"name": INJECTED, "value": "1"});
    let patch = if env.is_array() {
        json!([{"op": "add", "path": "/spec/containers/0/env/-", "value": var}])
    } else {
        json!([{"op": "add", "path": "/spec/containers/0/env", "value": [var]}])
    };
    let encoded = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, patch.to_string());
    let answer = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "response": {"uid": request["uid"], "allowed": true, "patchType": "JSONPatch", "patch": encoded}
    });
    ([(CONTENT_TYPE, "application/json")], answer.to_string())
}

impl Injector {
    /// Serves the injector and registers it for the `operation` Pods of `ns`.
    pub async fn start(client: &Client, ns: &str, operation: &str) -> Injector {
        let dir = TempDir(std::env::temp_dir().join(ptah_apitests::client::unique("injector")));
        std::fs::create_dir_all(&dir.0).expect("the injector's directory");
        let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).expect("a certificate");
        let pem = cert.cert.pem();
        std::fs::write(dir.0.join(ptah_admission::CERT_FILE), &pem).expect("tls.crt");
        std::fs::write(
            dir.0.join(ptah_admission::KEY_FILE),
            cert.signing_key.serialize_pem(),
        )
        .expect("tls.key");
        let tls =
            ptah_admission::server_config(ptah_admission::ReloadingCert::load(&dir.0).expect("the pair"))
                .expect("a TLS configuration");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let port = listener.local_addr().expect("the address").port();
        let (stop, stopped) = watch::channel(false);
        let router = Router::new().route("/inject", post(review));
        tokio::spawn(ptah_admission::serve(listener, Arc::clone(&tls), router, stopped));

        let name = format!("e2e-injector-{ns}");
        let config = json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [{
                "name": "inject.e2e.ptah.run",
                "clientConfig": {
                    "url": format!("https://127.0.0.1:{port}/inject"),
                    "caBundle": ByteString(pem.into_bytes()),
                },
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                "objectSelector": {"matchLabels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE, OPERATION_LABEL: operation}},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "failurePolicy": "Fail",
                "timeoutSeconds": 10
            }]
        });
        let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
        api.patch(
            &name,
            &PatchParams::apply("ptah-e2e").force(),
            &Patch::Apply(&config),
        )
        .await
        .expect("register the injector");
        Injector {
            name,
            stop,
            _dir: dir,
        }
    }
}

impl Drop for Injector {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        // Synchronous: drop runs in panics too, and a cluster-scoped webhook must not outlive us.
        let cluster = ptah_apitests::ClusterFiles::require();
        let _ = std::process::Command::new(ptah_apitests::e2e::kubectl())
            .env("KUBECONFIG", &cluster.admin_kubeconfig)
            .args([
                "delete",
                "mutatingwebhookconfiguration",
                &self.name,
                "--ignore-not-found",
            ])
            .output();
    }
}
