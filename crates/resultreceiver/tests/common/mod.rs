//! A result CA, bindings and client keys for the tests.
#![allow(dead_code)]

pub mod server;

use jiff::Timestamp;
use ptah_dataplane::{Operation, OperationId};
use ptah_fingerprint::Fingerprint;
use ptah_resultdelivery::{ClaimRef, ObjectRef, ResourceKind, ResourceRef, ResultBinding};
use ptah_resultreceiver::ResultCa;
use rcgen::{CertificateParams, KeyPair, PKCS_ECDSA_P256_SHA256};

/// A result CA as the rotator makes one, its certificate PEM and key PEM.
pub use ptah_resultreceiver::testing::ca_pem;

/// A loaded result CA.
pub fn ca() -> ResultCa {
    let (cert, key) = ca_pem();
    ResultCa::from_pem(&cert, &key).expect("ca")
}

/// A binding of an Observe.
pub fn binding() -> ResultBinding {
    ResultBinding {
        resource: ResourceRef {
            namespace: "shop".to_owned(),
            kind: ResourceKind::PtahMigration,
            name: "orders".to_owned(),
            uid: "r-uid".to_owned(),
            generation: 4,
        },
        claim: ClaimRef {
            execution_binding_id: "eb-1".to_owned(),
            input_fingerprint: Fingerprint::of(&"inputs").expect("fingerprint"),
            operation: Operation::MigrationHistory,
            operation_id: OperationId::new("op-3").expect("id"),
        },
        job: ObjectRef {
            name: "orders-history-3".to_owned(),
            uid: "job-uid".to_owned(),
        },
        pod: ObjectRef {
            name: "orders-history-3-q2w3e".to_owned(),
            uid: "pod-uid".to_owned(),
        },
    }
}

/// A fixed issuance time.
pub fn now() -> Timestamp {
    Timestamp::from_second(1_800_000_000).expect("time")
}

/// A runner's key and the CSR for it (DER), asking for `sans`.
pub fn csr(sans: Vec<String>) -> (KeyPair, Vec<u8>) {
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
    let params = CertificateParams::new(sans).expect("params");
    let csr = params.serialize_request(&key).expect("csr");
    (key, csr.der().to_vec())
}
