//! T3: the rotator against the real kube-apiserver — Secret, webhook configurations, every recovery.

#![allow(clippy::unwrap_used)] // test fixtures: a failed unwrap is a failed test

use std::{sync::Arc, time::Duration};

use jiff::Timestamp;
use k8s_openapi::{
    ByteString,
    api::{
        admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
        core::v1::{Namespace, Secret},
    },
};
use kube::{
    Api, Client, Resource as _,
    api::{DeleteParams, PostParams},
};
use ptah_apitests::client::{admin_client, namespace, unique};
use ptah_certrotation::{
    Action, CaReason, Defect, Field, KeyedCert, RotationConfig, SECRET_TYPE, ServingReason, TlsFiles,
    issue_ca, issue_serving, reconcile,
};
use rustls::{
    RootCertStore,
    client::{WebPkiServerVerifier, danger::ServerCertVerifier as _},
};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime, pem::PemObject as _};
use serde_json::json;

struct Fixture {
    client: Client,
    config: RotationConfig,
}

fn webhook_configuration(kind: &str, name: &str) -> serde_json::Value {
    let webhook = |n: &str| {
        json!({
            "name": format!("{n}.certrotation.ptah.run"),
            // Never called: nothing matches the selector, and a call would fail open.
            "clientConfig": {"url": "https://127.0.0.1:1/unused"},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "failurePolicy": "Ignore",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "namespaceSelector": {"matchLabels": {"ptah-certrotation-test": "matches-nothing"}},
        })
    };
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": [webhook("one"), webhook("two")],
    })
}

impl Fixture {
    async fn new() -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = admin_client().await;
        let ns = namespace(&client, "certrot").await;
        let (mutating, validating) = (unique("certrot-m"), unique("certrot-v"));
        let pp = PostParams::default();
        let m: MutatingWebhookConfiguration =
            serde_json::from_value(webhook_configuration("MutatingWebhookConfiguration", &mutating)).unwrap();
        Api::all(client.clone())
            .create(&pp, &m)
            .await
            .expect("create mutating");
        let v: ValidatingWebhookConfiguration = serde_json::from_value(webhook_configuration(
            "ValidatingWebhookConfiguration",
            &validating,
        ))
        .unwrap();
        Api::all(client.clone())
            .create(&pp, &v)
            .await
            .expect("create validating");
        let config = RotationConfig {
            mutating_webhooks: vec![mutating],
            validating_webhooks: vec![validating],
            // Steps of a CA rotation follow each other on the next pass (certificates are still backdated).
            ca_switch_delay: Duration::ZERO,
            ..RotationConfig::new(ns)
        };
        Fixture { client, config }
    }

    async fn cleanup(self) {
        let dp = DeleteParams::default();
        let m: Api<MutatingWebhookConfiguration> = Api::all(self.client.clone());
        m.delete(&self.config.mutating_webhooks[0], &dp)
            .await
            .expect("delete mutating");
        let v: Api<ValidatingWebhookConfiguration> = Api::all(self.client.clone());
        v.delete(&self.config.validating_webhooks[0], &dp)
            .await
            .expect("delete validating");
        let ns: Api<Namespace> = Api::all(self.client.clone());
        ns.delete(&self.config.namespace, &dp)
            .await
            .expect("delete namespace");
    }

    fn secrets(&self) -> Api<Secret> {
        Api::namespaced(self.client.clone(), &self.config.namespace)
    }

    async fn pass(&self) -> Action {
        reconcile(&self.client, &self.config, Timestamp::now())
            .await
            .expect("pass")
            .action
    }

    async fn secret(&self) -> Secret {
        self.secrets()
            .get(&self.config.secret_name)
            .await
            .expect("get Secret")
    }

    async fn files(&self) -> TlsFiles {
        TlsFiles::from_data(self.secret().await.data.as_ref().expect("data"))
    }

    /// Overwrites the Secret's files (creating it when absent), as a person or a bug might.
    async fn put(&self, files: &TlsFiles) {
        match self
            .secrets()
            .get_opt(&self.config.secret_name)
            .await
            .expect("get")
        {
            Some(mut s) => {
                s.data = Some(files.to_data());
                self.secrets()
                    .replace(&self.config.secret_name, &PostParams::default(), &s)
                    .await
                    .expect("replace");
            }
            None => {
                let mut s = Secret {
                    type_: Some(SECRET_TYPE.into()),
                    data: Some(files.to_data()),
                    ..Secret::default()
                };
                s.metadata.name = Some(self.config.secret_name.clone());
                self.secrets()
                    .create(&PostParams::default(), &s)
                    .await
                    .expect("create");
            }
        }
    }

    /// The caBundle of every webhook of both configurations, and both configurations' resourceVersions.
    async fn bundles(&self) -> (Vec<Vec<u8>>, Vec<String>) {
        let m: MutatingWebhookConfiguration = Api::all(self.client.clone())
            .get(&self.config.mutating_webhooks[0])
            .await
            .expect("get mutating");
        let v: ValidatingWebhookConfiguration = Api::all(self.client.clone())
            .get(&self.config.validating_webhooks[0])
            .await
            .expect("get validating");
        let bundle = |b: &Option<ByteString>| b.as_ref().map(|b| b.0.clone()).unwrap_or_default();
        let mut bundles: Vec<Vec<u8>> = m
            .webhooks
            .iter()
            .flatten()
            .map(|w| bundle(&w.client_config.ca_bundle))
            .collect();
        bundles.extend(
            v.webhooks
                .iter()
                .flatten()
                .map(|w| bundle(&w.client_config.ca_bundle)),
        );
        let versions = vec![
            m.meta().resource_version.clone().unwrap(),
            v.meta().resource_version.clone().unwrap(),
        ];
        (bundles, versions)
    }

    /// Every webhook carries exactly the Secret's `ca.crt`, which holds `cas` certificates and
    /// verifies the serving certificate, with rustls, for each Service DNS name.
    async fn assert_published(&self, cas: usize) -> TlsFiles {
        let files = self.files().await;
        let ca_crt = files.ca_crt.clone().expect("ca.crt");
        let (bundles, _) = self.bundles().await;
        assert_eq!(bundles.len(), 4);
        assert!(
            bundles.iter().all(|b| *b == ca_crt),
            "every webhook has the Secret's bundle"
        );
        assert_eq!(CertificateDer::pem_slice_iter(&ca_crt).count(), cas);
        for name in self.config.service_dns_names() {
            verify(&ca_crt, files.tls_crt.as_deref().expect("tls.crt"), &name);
        }
        files
    }
}

fn verify(bundle: &[u8], tls_crt: &[u8], dns: &str) {
    let mut roots = RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(bundle) {
        roots.add(ca.expect("bundle PEM")).expect("root");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .expect("verifier");
    let leaf = CertificateDer::from_pem_slice(tls_crt).expect("leaf PEM");
    let name = ServerName::try_from(dns.to_owned()).expect("server name");
    verifier
        .verify_server_cert(&leaf, &[], &name, &[], UnixTime::now())
        .unwrap_or_else(|e| panic!("serving certificate does not verify for {dns}: {e}"));
}

fn serial(tls_crt: &[u8]) -> Vec<u8> {
    let der = CertificateDer::from_pem_slice(tls_crt).expect("PEM");
    let (_, cert) = x509_parser::parse_x509_certificate(&der).expect("certificate");
    cert.raw_serial().to_vec()
}

fn at(offset_secs: i64) -> Timestamp {
    Timestamp::from_second(Timestamp::now().as_second() + offset_secs).unwrap()
}

const DAY: i64 = 24 * 60 * 60;

#[tokio::test]
async fn first_pass_creates_and_injects_and_the_second_changes_nothing() {
    let fx = Fixture::new().await;
    assert_eq!(fx.pass().await, Action::Create);
    let secret = fx.secret().await;
    assert_eq!(secret.type_.as_deref(), Some(SECRET_TYPE));
    let keys: Vec<&String> = secret.data.as_ref().unwrap().keys().collect();
    assert_eq!(keys, ["ca.crt", "ca.key", "tls.crt", "tls.key"]);
    fx.assert_published(1).await;

    let secret_version = secret.metadata.resource_version.clone();
    let (_, versions) = fx.bundles().await;
    assert!(matches!(fx.pass().await, Action::Keep { .. }));
    ptah_certrotation::run(fx.client.clone(), fx.config.clone(), true, std::future::pending())
        .await
        .expect("--once");
    assert_eq!(
        fx.secret().await.metadata.resource_version,
        secret_version,
        "Secret untouched"
    );
    assert_eq!(fx.bundles().await.1, versions, "webhook configurations untouched");
    fx.cleanup().await;
}

#[tokio::test]
async fn serving_certificate_about_to_expire_is_reissued_under_the_same_ca() {
    let fx = Fixture::new().await;
    fx.pass().await;
    let mut files = fx.files().await;
    let ca = KeyedCert {
        cert_pem: files.ca_crt.clone().unwrap(),
        key_pem: files.ca_key.clone().unwrap(),
    };
    let short = issue_serving(&ca, &fx.config.expected_sans(), at(-3600), at(60)).unwrap();
    files.tls_crt = Some(short.cert_pem.clone());
    files.tls_key = Some(short.key_pem);
    fx.put(&files).await;
    let (_, versions) = fx.bundles().await;

    assert!(matches!(
        fx.pass().await,
        Action::ReissueServing(ServingReason::Expiring { .. })
    ));
    let after = fx.assert_published(1).await;
    assert_ne!(
        serial(after.tls_crt.as_ref().unwrap()),
        serial(&short.cert_pem),
        "new serial"
    );
    assert_eq!(after.ca_crt, files.ca_crt, "CA kept");
    assert_eq!(after.ca_key, files.ca_key, "CA key kept");
    assert_eq!(
        fx.bundles().await.1,
        versions,
        "bundles unchanged, so not rewritten"
    );
    fx.cleanup().await;
}

#[tokio::test]
async fn ca_about_to_expire_is_rotated_through_a_two_ca_bundle() {
    let fx = Fixture::new().await;
    let old = issue_ca(at(-300 * DAY), at(10 * DAY)).unwrap();
    let serving = issue_serving(&old, &fx.config.expected_sans(), at(-DAY), at(9 * DAY)).unwrap();
    fx.put(&TlsFiles {
        tls_crt: Some(serving.cert_pem.clone()),
        tls_key: Some(serving.key_pem.clone()),
        ca_crt: Some(old.cert_pem.clone()),
        ca_key: Some(old.key_pem.clone()),
    })
    .await;

    // Stage: the new CA joins the bundle; the served certificate (old CA) stays and stays trusted.
    assert!(matches!(
        fx.pass().await,
        Action::StageCa(CaReason::Expiring { .. })
    ));
    let staged = fx.assert_published(2).await;
    assert_eq!(staged.tls_crt.as_ref(), Some(&serving.cert_pem));
    assert_ne!(staged.ca_key.as_ref(), Some(&old.key_pem));

    // Switch: the serving certificate moves to the new CA; both CAs are still trusted.
    assert!(matches!(fx.pass().await, Action::ReissueServing(_)));
    let switched = fx.assert_published(2).await;
    assert_ne!(switched.tls_crt, staged.tls_crt);
    let only_new = KeyedCert {
        cert_pem: CertificateDer::pem_slice_iter(switched.ca_crt.as_ref().unwrap())
            .next()
            .map(|c| ptah_certrotation::certificates_pem([c.unwrap().as_ref()]))
            .unwrap(),
        key_pem: Vec::new(),
    };
    for name in fx.config.service_dns_names() {
        verify(&only_new.cert_pem, switched.tls_crt.as_ref().unwrap(), &name);
    }

    // Withdraw: only the new CA remains.
    assert_eq!(fx.pass().await, Action::WithdrawOldCa);
    let done = fx.assert_published(1).await;
    assert_eq!(done.ca_crt.as_ref(), Some(&only_new.cert_pem));
    assert!(matches!(fx.pass().await, Action::Keep { .. }));
    fx.cleanup().await;
}

#[tokio::test]
async fn corrupt_secret_is_recovered_with_a_fresh_ca() {
    let fx = Fixture::new().await;
    fx.pass().await;
    let before = fx.files().await;
    let garbage = Some(b"-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n".to_vec());
    fx.put(&TlsFiles {
        tls_crt: garbage.clone(),
        tls_key: garbage.clone(),
        ca_crt: garbage.clone(),
        ca_key: garbage,
    })
    .await;
    assert_eq!(
        fx.pass().await,
        Action::Recover(Defect::Unparseable(Field::CaCrt))
    );
    let after = fx.assert_published(1).await;
    assert_ne!(after.ca_crt, before.ca_crt, "a fresh CA");
    assert!(matches!(fx.pass().await, Action::Keep { .. }));
    fx.cleanup().await;
}

#[tokio::test]
async fn deleted_secret_is_recreated() {
    let fx = Fixture::new().await;
    fx.pass().await;
    fx.secrets()
        .delete(&fx.config.secret_name, &DeleteParams::default())
        .await
        .expect("delete Secret");
    assert_eq!(fx.pass().await, Action::Create);
    fx.assert_published(1).await;
    fx.cleanup().await;
}

#[tokio::test]
async fn running_rotator_recreates_a_deleted_secret_on_the_watch_event() {
    let fx = Fixture::new().await;
    let config = RotationConfig {
        interval: Duration::from_secs(3600),
        ..fx.config.clone()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(ptah_certrotation::run(fx.client.clone(), config, false, async {
        let _ = stopped.await;
    }));
    let wait_for_secret = || async {
        for _ in 0..200 {
            if let Some(s) = fx.secrets().get_opt(&fx.config.secret_name).await.expect("get") {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the Secret was not (re)created within 10s");
    };
    let first = wait_for_secret().await;
    fx.secrets()
        .delete(&fx.config.secret_name, &DeleteParams::default())
        .await
        .expect("delete Secret");
    let second = wait_for_secret().await;
    assert_ne!(
        first.metadata.uid, second.metadata.uid,
        "recreated long before the 1h interval"
    );
    // The pass that recreated it may still be injecting; give it a moment before checking.
    tokio::time::sleep(Duration::from_secs(2)).await;
    fx.assert_published(1).await;
    stop.send(()).expect("stop");
    task.await.expect("join").expect("run");
    fx.cleanup().await;
}
