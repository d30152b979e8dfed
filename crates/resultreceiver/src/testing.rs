//! A receiver for tests: an in-memory [`Backend`] and a loopback server whose serving
//! certificate comes from a fresh result CA. The receiver's own tests and the runner's use it; the
//! manager never does.

use std::{
    collections::{BTreeMap, BTreeSet},
    net::{IpAddr, SocketAddr},
    sync::{Arc, Mutex},
};

use ptah_dataplane::{Operation, OperationId};
use ptah_fingerprint::Fingerprint;
use ptah_resultdelivery::{
    ClaimRef, EncodedBody, Intent, ObjectRef, RecordType, ResourceKind, ResourceRef, ResultBinding, split,
};
use rcgen::{
    BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, KeyUsagePurpose, PKCS_ECDSA_P256_SHA256,
};
use rustls::{crypto::CryptoProvider, sign::CertifiedKey};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject as _};
use tokio::sync::watch;

use crate::{
    Backend, EnrolmentToken, Live, LiveClaim, LiveJob, LivePod, ResultCa, Stored,
    backend::{EnrolmentTarget, Unavailable},
    routes::Receiver,
    server::{Limits, router, serve, server_config},
};

/// The Pod [`live`] names.
pub const POD_NAME: &str = "orders-op-pod";
/// Its UID.
pub const POD_UID: &str = "pod-uid";

/// What the uncached reads find for operation `operation_id` of PtahSchema `shop/orders`: a
/// dispatched claim enrolable with `token`, its Job, and its Pod Running at `pod_ip`.
pub fn live(operation: Operation, operation_id: &str, token: &EnrolmentToken, pod_ip: IpAddr) -> Live {
    let object = |name: &str, uid: &str| ObjectRef {
        name: name.to_owned(),
        uid: uid.to_owned(),
    };
    Live {
        claim: Some(LiveClaim {
            resource: ResourceRef {
                namespace: "shop".to_owned(),
                kind: ResourceKind::PtahSchema,
                name: "orders".to_owned(),
                uid: "r-uid".to_owned(),
                generation: 1,
            },
            claim: ClaimRef {
                execution_binding_id: "eb-1".to_owned(),
                input_fingerprint: Fingerprint::of(&"inputs").expect("fingerprint"),
                operation,
                operation_id: OperationId::new(operation_id).expect("id"),
            },
            job_name: "orders-op".to_owned(),
            dispatched: true,
            enrolment_digest: Some(token.digest()),
            not_after: jiff::Timestamp::now() + jiff::SignedDuration::from_secs(600),
        }),
        job: Some(LiveJob {
            id: object("orders-op", "job-uid"),
        }),
        pod: Some(LivePod {
            id: object(POD_NAME, POD_UID),
            controller_uid: Some("job-uid".to_owned()),
            phase: crate::PodPhase::Running,
            pod_ip: Some(pod_ip),
        }),
    }
}

/// A result CA as the rotator makes one: its certificate PEM and key PEM.
pub fn ca_pem() -> (String, String) {
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
    let cert = params.self_signed(&key).expect("ca");
    (cert.pem(), key.serialize_pem())
}

/// A stored record: its type, the intent it announces, its data.
pub type Record = (RecordType, Option<Intent>, Vec<u8>);

/// Records by name, as the API server would hold them.
#[derive(Default)]
pub struct Memory {
    /// What the uncached reads return.
    pub live: Mutex<Live>,
    /// The operations that have enrolled.
    pub credentials: Mutex<BTreeSet<String>>,
    /// `record name -> (type, intent, data)`.
    pub records: Mutex<BTreeMap<String, Record>>,
    /// Stop after this many chunks, as a manager killed mid-delivery would (a fault the API
    /// server cannot produce on its own).
    pub stop_after_chunks: Mutex<Option<usize>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Backend for Memory {
    async fn live_for_enrolment(&self, _target: &EnrolmentTarget) -> Result<Live, Unavailable> {
        Ok(lock(&self.live).clone())
    }

    async fn live_for_binding(&self, _binding: &ResultBinding) -> Result<Live, Unavailable> {
        Ok(lock(&self.live).clone())
    }

    async fn create_credential(&self, binding: &ResultBinding) -> Result<bool, Unavailable> {
        Ok(lock(&self.credentials).insert(binding.record_stem()))
    }

    async fn stored(&self, binding: &ResultBinding) -> Result<Stored, Unavailable> {
        let stem = binding.record_stem();
        let records = lock(&self.records);
        let intent = records
            .get(&RecordType::Intent.record_name(&stem, 0))
            .and_then(|r| r.1);
        Ok(match intent {
            None => Stored::Nothing,
            Some(i) if records.contains_key(&RecordType::Complete.record_name(&stem, 0)) => {
                Stored::Complete(i.digest)
            }
            Some(i) => Stored::Partial(i.digest),
        })
    }

    async fn store(&self, binding: &ResultBinding, body: &EncodedBody) -> Result<(), Unavailable> {
        let stem = binding.record_stem();
        let (intent, chunks) = split(body);
        let mut records = lock(&self.records);
        records.insert(
            RecordType::Intent.record_name(&stem, 0),
            (RecordType::Intent, Some(intent), Vec::new()),
        );
        let stop = lock(&self.stop_after_chunks).take();
        for (i, chunk) in (0u32..).zip(chunks) {
            if stop.is_some_and(|n| i as usize >= n) {
                return Err(Unavailable("the manager was killed".to_owned()));
            }
            records.insert(
                RecordType::Chunk.record_name(&stem, i),
                (RecordType::Chunk, None, chunk.to_vec()),
            );
        }
        records.insert(
            RecordType::Complete.record_name(&stem, 0),
            (RecordType::Complete, None, Vec::new()),
        );
        Ok(())
    }
}

/// A running receiver.
pub struct Running {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its backend.
    pub memory: Arc<Memory>,
    /// The CA clients trust and are issued from.
    pub ca_der: CertificateDer<'static>,
    stop: watch::Sender<bool>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Starts a receiver whose serving certificate (for 127.0.0.1) comes from the result CA.
pub async fn start(memory: Memory) -> Running {
    start_with(memory, Limits::default()).await
}

/// [`start`] within `limits`.
pub async fn start_with(memory: Memory, limits: Limits) -> Running {
    let (ca_pem, ca_key_pem) = ca_pem();
    let ca = ResultCa::from_pem(&ca_pem, &ca_key_pem).expect("ca");
    let ca_der = ca.certificate().clone();
    let issuer =
        Issuer::from_ca_cert_der(&ca_der, KeyPair::from_pem(&ca_key_pem).expect("key")).expect("issuer");
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
    let serving = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .expect("params")
        .signed_by(&key, &issuer)
        .expect("serving");
    let certified = CertifiedKey::from_der(
        vec![serving.der().clone()],
        PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).expect("key"),
        &provider(),
    )
    .expect("certified");
    let resolver = Arc::new(rustls::sign::SingleCertAndKey::from(certified));
    let tls = server_config(std::slice::from_ref(&ca_der), resolver).expect("tls");
    let memory = Arc::new(memory);
    let app = router(Receiver {
        backend: memory.clone(),
        ca: Arc::new(ca),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (stop, stopped) = watch::channel(false);
    tokio::spawn(serve(listener, tls, app, limits, stopped));
    Running {
        addr,
        memory,
        ca_der,
        stop,
    }
}
