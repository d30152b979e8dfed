//! Fixtures of the T3 tests: an admission server on 127.0.0.1 that the real API server calls over
//! TLS, webhook configurations scoped to one namespace, and a schema waiting for an approval.

#![allow(dead_code)]

pub mod migration;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use ptah_admission::{Admission, AdmissionConfig, ReloadingCert};
use ptah_api::{PtahSchema, PtahSchemaApproval, PtahSchemaPlan, PtahSchemaPlanSpec};
use ptah_apitests::ClusterFiles;
use ptah_apitests::client::{admin_client, install_crds, namespace, unique, user_client};
use ptah_planstore::PlanStore;
use serde_json::{Value, json};
use tokio::sync::watch;

/// The label scoping this test's webhooks to its namespace.
pub const SCOPE_LABEL: &str = "admission.test.ptah.run/scope";

/// The decision kinds the approval webhooks see (as the chart routes them).
pub const DECISIONS: [&str; 3] = [
    "ptahschemaapprovals",
    "ptahmigrationapprovals",
    "ptahmigrationrunacknowledgments",
];

/// A CA and a serving certificate for 127.0.0.1, as PEM.
pub struct Pki {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
}

/// Issues a fresh CA and a serving certificate with the SAN 127.0.0.1.
pub fn issue() -> Pki {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    let mut ca = CertificateParams::default();
    ca.distinguished_name
        .push(DnType::CommonName, "ptah admission test CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().expect("key")).expect("CA");
    let mut leaf = CertificateParams::new(vec!["127.0.0.1".to_owned()]).expect("params");
    leaf.distinguished_name.push(DnType::CommonName, "127.0.0.1");
    let key = KeyPair::generate().expect("key");
    let cert = leaf.signed_by(&key, &ca).expect("leaf");
    Pki {
        ca_pem: ca.pem(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    }
}

/// Writes the pair into `dir` the way a rotator would (key last, so a reader may see a mismatch).
pub fn write_pair(dir: &Path, pki: &Pki) {
    std::fs::write(dir.join(ptah_admission::CERT_FILE), &pki.cert_pem).expect("write cert");
    std::fs::write(dir.join(ptah_admission::KEY_FILE), &pki.key_pem).expect("write key");
}

/// The in-process admission server.
pub struct Server {
    pub port: u16,
    pub cert: Arc<ReloadingCert>,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    /// Starts the server on a free loopback port with the certificate in `dir`.
    pub async fn start(client: Client, dir: &Path, config: AdmissionConfig) -> Server {
        let cert = ReloadingCert::load(dir).expect("load certificate");
        let tls = ptah_admission::server_config(cert.clone()).expect("TLS config");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (stop, stop_rx) = watch::channel(false);
        let router = ptah_admission::router(Admission::new(client, config));
        tokio::spawn(cert.clone().watch(Duration::from_millis(250), stop_rx.clone()));
        let task = tokio::spawn(async move {
            ptah_admission::serve(listener, tls, router, stop_rx)
                .await
                .expect("serve");
        });
        Server {
            port,
            cert,
            stop,
            task,
        }
    }

    /// Stops the server and waits until every connection is closed.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// One namespace with a schema waiting for an approval, plus webhooks scoped to it.
pub struct Fixture {
    pub admin: Client,
    pub user: Client,
    pub user_name: String,
    pub ns: String,
    pub config_name: String,
    pub dir: tempfile::TempDir,
    pub ca_pem: String,
}

impl Fixture {
    /// Installs the CRDs, creates a labelled namespace, lets the test user create approvals and
    /// schemas in it, and writes a serving certificate to a temporary directory.
    pub async fn new(prefix: &str) -> Fixture {
        let admin = admin_client().await;
        install_crds(&admin).await;
        let ns = namespace(&admin, prefix).await;
        let namespaces: Api<Namespace> = Api::all(admin.clone());
        namespaces
            .patch(
                &ns,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {SCOPE_LABEL: ns}}})),
            )
            .await
            .expect("label namespace");
        let user_name = ClusterFiles::require().user_name;
        let role: Role = serde_json::from_value(json!({
            "metadata": {"name": "approver"},
            "rules": [{"apiGroups": ["operator.ptah.run"],
                       "resources": ["ptahschemaapprovals", "ptahschemas", "ptahmigrationapprovals",
                                     "ptahmigrationrunacknowledgments", "ptahmigrations"],
                       "verbs": ["get", "list", "create", "update", "patch"]}]
        }))
        .expect("role");
        Api::<Role>::namespaced(admin.clone(), &ns)
            .create(&PostParams::default(), &role)
            .await
            .expect("role");
        let binding: RoleBinding = serde_json::from_value(json!({
            "metadata": {"name": "approver"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "approver"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user_name}]
        }))
        .expect("binding");
        Api::<RoleBinding>::namespaced(admin.clone(), &ns)
            .create(&PostParams::default(), &binding)
            .await
            .expect("binding");
        let dir = tempfile::tempdir().expect("tempdir");
        let pki = issue();
        write_pair(dir.path(), &pki);
        Fixture {
            admin,
            user: user_client().await,
            user_name,
            config_name: unique("ptah-admission-test"),
            ns,
            dir,
            ca_pem: pki.ca_pem,
        }
    }

    fn bundle(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.ca_pem)
    }

    fn hook(&self, name: &str, port: u16, path: &str, resources: &[&str], operations: &[&str]) -> Value {
        json!({
            "name": format!("{name}.test.ptah.run"),
            "clientConfig": {"url": format!("https://127.0.0.1:{port}{path}"), "caBundle": self.bundle()},
            "rules": [{"apiGroups": ["operator.ptah.run"], "apiVersions": ["v1alpha1"],
                       "resources": resources, "operations": operations}],
            "namespaceSelector": {"matchLabels": {SCOPE_LABEL: self.ns}},
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "timeoutSeconds": 10
        })
    }

    /// Registers the approval webhooks (and the spec-writer one) pointing at `port`, routed like
    /// the chart routes them: every decision kind to the approval routes, both reconciled kinds
    /// to the spec writer.
    pub async fn register(&self, port: u16) {
        let mutating = json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": self.config_name},
            "webhooks": [
                self.hook("mapproval", port, ptah_admission::ROUTE_MUTATE_APPROVALS, &DECISIONS, &["CREATE"]),
                self.hook("mspecwriter", port, ptah_admission::ROUTE_SPEC_WRITER, &["ptahschemas", "ptahmigrations"], &["CREATE", "UPDATE"]),
            ]
        });
        let validating = json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": self.config_name},
            "webhooks": [self.hook("vapproval", port, ptah_admission::ROUTE_VALIDATE_APPROVALS, &DECISIONS, &["CREATE", "UPDATE"])]
        });
        let params = PatchParams::apply("ptah-admission-tests").force();
        Api::<MutatingWebhookConfiguration>::all(self.admin.clone())
            .patch(&self.config_name, &params, &Patch::Apply(mutating))
            .await
            .expect("mutating configuration");
        Api::<ValidatingWebhookConfiguration>::all(self.admin.clone())
            .patch(&self.config_name, &params, &Patch::Apply(validating))
            .await
            .expect("validating configuration");
    }

    /// Re-registers with a new CA bundle (after a certificate rotation).
    pub async fn rotate_ca(&mut self, port: u16, ca_pem: String) {
        self.ca_pem = ca_pem;
        self.register(port).await;
    }

    /// A dry-run approval of a plan that does not exist: the webhook refuses it by name, so the
    /// refusal proves the API server reached the webhook. Returns the API server's answer.
    pub async fn probe(&self) -> Result<(), String> {
        let a = approval("probe", "probe-uid", "orders", "schema-uid", &digest('0'));
        let api: Api<PtahSchemaApproval> = Api::namespaced(self.admin.clone(), &self.ns);
        api.create(
            &PostParams {
                dry_run: true,
                ..PostParams::default()
            },
            &a,
        )
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
    }

    /// Waits until the API server calls the webhook (configuration changes propagate asynchronously).
    pub async fn wait_active(&self) -> Duration {
        let start = Instant::now();
        loop {
            match self.probe().await {
                Err(e) if e.contains("plan probe does not exist") => return start.elapsed(),
                other => assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "webhook not active after 60s: {other:?}"
                ),
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Deletes the webhook configurations and the namespace.
    pub async fn cleanup(self) {
        let dp = DeleteParams::default();
        let _ = Api::<MutatingWebhookConfiguration>::all(self.admin.clone())
            .delete(&self.config_name, &dp)
            .await;
        let _ = Api::<ValidatingWebhookConfiguration>::all(self.admin.clone())
            .delete(&self.config_name, &dp)
            .await;
        let _ = Api::<Namespace>::all(self.admin.clone())
            .delete(&self.ns, &dp)
            .await;
    }
}

/// `sha256:ccc…c`.
pub fn digest(c: char) -> String {
    format!("sha256:{}", c.to_string().repeat(64))
}

/// An approval naming a plan and schema.
pub fn approval(
    plan: &str,
    plan_uid: &str,
    schema: &str,
    schema_uid: &str,
    fingerprint: &str,
) -> PtahSchemaApproval {
    serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaApproval",
        "metadata": {"generateName": "approve-"},
        "spec": {
            "schemaRef": {"name": schema, "uid": schema_uid},
            "planRef": {"name": plan, "uid": plan_uid},
            "planFingerprint": fingerprint
        }
    }))
    .expect("approval")
}

/// A schema, its immutable policy ConfigMap and a published Ready plan.
pub struct Waiting {
    pub schema: PtahSchema,
    pub plan: PtahSchemaPlan,
}

pub fn schema_object(ns: &str, name: &str) -> PtahSchema {
    serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "target": {"engine": "PostgreSQL", "coordinationKey": "orders-primary", "urlFrom": {"name": "orders-db", "key": "url"}},
            "desired": {
                "ociRef": "oci://registry.example.com/shop/orders-schema:v42",
                "verificationPolicyFrom": {"name": "orders-verification-policy", "key": "policy.yaml"}
            }
        }
    }))
    .expect("a PtahSchema")
}

/// Plan spec bound to the policy `(uid, digest)`; `seed` makes distinct plans.
pub fn plan_spec(policy_uid: &str, policy_digest: &str) -> PtahSchemaPlanSpec {
    serde_json::from_value(json!({
        "contractVersion": 3, "schemaRef": {"name": "placeholder", "uid": "placeholder"},
        "fingerprint": digest('0'), "contentDigest": digest('0'), "size": 1,
        "actualStateFingerprint": digest('c'), "desiredStateFingerprint": digest('d'),
        "artifactDigest": digest('a'), "coordinationDigest": digest('b'), "targetIdentityDigest": digest('3'),
        "policyFingerprint": digest('4'),
        "verificationPolicyUID": policy_uid, "verificationPolicyDigest": policy_digest,
        "executionBindingID": "v1-0123456789abcdef0123456789abcdef",
        "controllerImage": "registry.local/ptah-operator:0.1.0", "controllerRevision": "0.1.0",
        "controllerStateVersion": 1, "ptahVersion": "1.4.2",
        "executorImage": format!("registry.local/ptah@{}", digest('f')),
        "runnerImage": format!("registry.local/ptah-runner@{}", digest('5')),
        "runnerProtocolVersion": 5, "dialect": "postgresql", "destructive": false,
        "statementCount": 1,
        "chunks": [{"name": "placeholder", "key": "chunk", "index": 0, "digest": digest('0'), "size": 1}]
    }))
    .expect("a plan spec")
}

/// The policy ConfigMap (immutable) and its (uid, digest) as the manager reads them.
pub async fn policy(client: &Client, ns: &str) -> (String, String) {
    let cm: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "orders-verification-policy"},
        "immutable": true,
        "data": {"policy.yaml": "version: 1\nrequire: []\n"}
    }))
    .expect("configmap");
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    match api.create(&PostParams::default(), &cm).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.is_already_exists() => {}
        Err(e) => panic!("create policy: {e}"),
    }
    let read = ptah_managercache::read_configmap_key(
        client.clone(),
        ns,
        "orders-verification-policy",
        "policy.yaml",
    )
    .await
    .expect("read policy");
    (read.uid, read.digest.to_string())
}

/// Creates schema `name` as `creator`, publishes a plan for it (`document` bytes) and writes the
/// status of a schema waiting for that plan's approval (`phase`), as admin.
pub async fn waiting_schema(
    admin: &Client,
    creator: &Client,
    ns: &str,
    name: &str,
    document: &[u8],
    phase: &str,
) -> Waiting {
    let (uid, digest_) = policy(admin, ns).await;
    let schemas: Api<PtahSchema> = Api::namespaced(creator.clone(), ns);
    let schema = schemas
        .create(&PostParams::default(), &schema_object(ns, name))
        .await
        .expect("create schema");
    let plan = PlanStore::new(admin.clone())
        .publish(&schema, plan_spec(&uid, &digest_), document)
        .await
        .expect("publish plan");
    set_status(admin, ns, name, &plan, phase).await;
    let schema = Api::<PtahSchema>::namespaced(admin.clone(), ns)
        .get(name)
        .await
        .expect("get schema");
    Waiting { schema, plan }
}

/// Writes the status of a schema whose current plan is `plan`, in `phase`, ApprovalRequired=True.
pub async fn set_status(admin: &Client, ns: &str, name: &str, plan: &PtahSchemaPlan, phase: &str) {
    let mut current = serde_json::to_value(&plan.spec).expect("spec");
    if let Some(o) = current.as_object_mut() {
        for k in ["contractVersion", "schemaRef", "size", "chunks", "dialect"] {
            o.remove(k);
        }
        o.insert("name".into(), json!(plan.metadata.name));
        o.insert("uid".into(), json!(plan.metadata.uid));
    }
    let status = json!({"status": {
        "phase": phase,
        "source": {"digest": plan.spec.binding.artifact_digest},
        "target": {"identityDigest": plan.spec.binding.target_identity_digest,
                   "coordinationDigest": plan.spec.binding.coordination_digest},
        "plan": current,
        "conditions": [{"type": "ApprovalRequired", "status": "True", "reason": "AwaitingApproval",
                        "message": "the plan waits for an approval", "lastTransitionTime": "2025-01-01T00:00:00Z"}]
    }});
    Api::<PtahSchema>::namespaced(admin.clone(), ns)
        .patch_status(name, &PatchParams::default(), &Patch::Merge(status))
        .await
        .expect("write schema status");
}
