//! The client certificate of an enrolled operation: what it names, what it may do, how long it
//! lives, and every CSR that gets none.

mod common;

use common::{binding, ca, csr, now};
use jiff::Timestamp;
use ptah_resultreceiver::{
    IdentityError, IssueError, binding_of, issue::MAX_CLIENT_LIFETIME_SECONDS, issue_client,
};
use rcgen::{CertificateParams, KeyPair, PKCS_ECDSA_P384_SHA384, SanType};
use x509_parser::{extensions::GeneralName, prelude::FromDer as _};

fn later(secs: i64) -> Timestamp {
    Timestamp::from_second(now().as_second() + secs).expect("time")
}

#[test]
fn the_certificate_names_only_the_binding_authenticates_only_a_client_and_is_signed_by_the_ca() {
    let ca = ca();
    // A runner asking for a DNS name and a CA certificate gets neither.
    let (_, request) = csr(vec!["evil.example".to_owned()]);
    let issued = issue_client(&ca, &request, &binding(), now(), later(900)).expect("issued");
    let (_, cert) = x509_parser::certificate::X509Certificate::from_der(&issued).expect("parse");
    let san = cert.subject_alternative_name().expect("san").expect("present");
    assert!(matches!(
        san.value.general_names.as_slice(),
        [GeneralName::URI(_)]
    ));
    let eku = cert.extended_key_usage().expect("eku").expect("present").value;
    assert!(eku.client_auth && !eku.server_auth && !eku.any);
    assert!(!cert.is_ca());
    let (_, ca_cert) = x509_parser::certificate::X509Certificate::from_der(ca.certificate()).expect("ca");
    cert.verify_signature(Some(ca_cert.public_key()))
        .expect("signed by the CA");
    assert_eq!(cert.validity().not_before.timestamp(), now().as_second() - 60);
    assert_eq!(cert.validity().not_after.timestamp(), later(900).as_second());
    assert_eq!(binding_of(&issued), Ok(binding()));
}

#[test]
fn a_certificate_never_outlives_two_hours() {
    let (_, request) = csr(Vec::new());
    let issued = issue_client(&ca(), &request, &binding(), now(), later(86_400)).expect("issued");
    let (_, cert) = x509_parser::certificate::X509Certificate::from_der(&issued).expect("parse");
    assert_eq!(
        cert.validity().not_after.timestamp(),
        now().as_second() + MAX_CLIENT_LIFETIME_SECONDS
    );
    let refused = issue_client(&ca(), &request, &binding(), now(), now()).expect_err("refused");
    assert!(matches!(refused, IssueError::Validity { .. }));
}

#[test]
fn a_csr_that_is_tampered_oversized_or_of_another_key_type_gets_nothing() {
    let ca = ca();
    let (_, mut request) = csr(Vec::new());
    let last = request.len() - 1;
    request[last] ^= 0x01;
    assert!(matches!(
        issue_client(&ca, &request, &binding(), now(), later(60)),
        Err(IssueError::Csr)
    ));
    assert!(matches!(
        issue_client(&ca, &vec![0u8; 5000], &binding(), now(), later(60)),
        Err(IssueError::CsrTooLarge(5000))
    ));
    assert!(matches!(
        issue_client(&ca, b"not a csr", &binding(), now(), later(60)),
        Err(IssueError::Csr)
    ));
    let p384 = KeyPair::generate_for(&PKCS_ECDSA_P384_SHA384).expect("key");
    let request = CertificateParams::default()
        .serialize_request(&p384)
        .expect("csr");
    assert!(matches!(
        issue_client(&ca, request.der(), &binding(), now(), later(60)),
        Err(IssueError::KeyType)
    ));
    let mut bad = binding();
    bad.resource.generation = 0;
    let (_, request) = csr(Vec::new());
    assert!(matches!(
        issue_client(&ca, &request, &bad, now(), later(60)),
        Err(IssueError::Binding(_))
    ));
}

#[test]
fn a_certificate_naming_anything_but_one_binding_uri_has_no_identity() {
    let key = KeyPair::generate().expect("key");
    let with = |sans: Vec<SanType>| {
        let mut params = CertificateParams::default();
        params.subject_alt_names = sans;
        params.self_signed(&key).expect("cert").der().to_vec()
    };
    let uri = binding().to_uri().expect("uri");
    assert_eq!(binding_of(&with(Vec::new())), Err(IdentityError::Names));
    let dns = SanType::DnsName("orders.shop".try_into().expect("dns"));
    assert_eq!(binding_of(&with(vec![dns])), Err(IdentityError::Names));
    let two = vec![
        SanType::URI(uri.clone().try_into().expect("uri")),
        SanType::URI(uri.try_into().expect("uri")),
    ];
    assert_eq!(binding_of(&with(two)), Err(IdentityError::Names));
    let other = SanType::URI("https://example.com/".try_into().expect("uri"));
    assert!(matches!(
        binding_of(&with(vec![other])),
        Err(IdentityError::Binding(_))
    ));
    assert_eq!(binding_of(b"junk"), Err(IdentityError::Certificate));
}

#[test]
fn the_ca_never_shows_its_key() {
    let (cert, key) = common::ca_pem();
    let ca = ptah_resultreceiver::ResultCa::from_pem(&cert, &key).expect("ca");
    let debug = format!("{ca:?}");
    assert!(
        debug.contains("<redacted>") && !debug.contains("PRIVATE"),
        "{debug}"
    );
    let err = ptah_resultreceiver::ResultCa::from_pem(&cert, "not a key").expect_err("refused");
    assert!(!err.to_string().contains("PRIVATE"));
}

/// During a rotation `ca.crt` holds the old and the new CA; the one `ca.key` belongs to signs,
/// whichever comes first, and a key of neither is refused.
#[test]
fn the_signing_ca_is_the_bundle_certificate_the_key_belongs_to() {
    let (old_pem, _) = ptah_resultreceiver::testing::ca_pem();
    let (new_pem, new_key) = ptah_resultreceiver::testing::ca_pem();
    for bundle in [format!("{old_pem}{new_pem}"), format!("{new_pem}{old_pem}")] {
        let ca = ptah_resultreceiver::ResultCa::from_bundle(&bundle, &new_key).expect("the new CA");
        let only_new = ptah_resultreceiver::ResultCa::from_pem(&new_pem, &new_key).expect("ca");
        assert_eq!(ca.certificate(), only_new.certificate());
    }
    let (_, stranger) = ptah_resultreceiver::testing::ca_pem();
    let refused = ptah_resultreceiver::ResultCa::from_bundle(&format!("{old_pem}{new_pem}"), &stranger);
    assert!(
        matches!(&refused, Err(IssueError::Ca(why)) if why.contains("belongs to no certificate")),
        "{refused:?}"
    );
}
