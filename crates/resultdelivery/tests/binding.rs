//! The binding a client certificate names: its URI SAN form and what is refused.

mod common;

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use common::binding;
use ptah_fingerprint::canonical_json;
use ptah_resultdelivery::{
    BindingError, ResultBinding,
    binding::{MAX_URI_BYTES, URI_PREFIX},
};

#[test]
fn a_binding_round_trips_through_its_uri() {
    let b = binding();
    let uri = b.to_uri().expect("uri");
    assert!(uri.starts_with(URI_PREFIX), "{uri}");
    assert!(uri.len() < MAX_URI_BYTES);
    assert_eq!(ResultBinding::from_uri(&uri).expect("back"), b);
}

#[test]
fn a_uri_that_is_not_a_canonical_binding_is_refused() {
    let b = binding();
    let canonical = String::from_utf8(canonical_json(&b).expect("json")).expect("utf8");
    let uri = |json: &str| format!("{URI_PREFIX}{}", URL_SAFE_NO_PAD.encode(json));
    let spaced = canonical.replacen(',', ", ", 1);
    assert_eq!(
        ResultBinding::from_uri(&uri(&spaced)),
        Err(BindingError::NotCanonical)
    );
    let unknown = canonical.replacen('{', r#"{"extra":1,"#, 1);
    assert!(matches!(
        ResultBinding::from_uri(&uri(&unknown)),
        Err(BindingError::Malformed(_))
    ));
    let duplicate = canonical.replacen('{', r#"{"name":"other","#, 1);
    assert!(matches!(
        ResultBinding::from_uri(&uri(&duplicate)),
        Err(BindingError::Malformed(_))
    ));
    let other_host = b
        .to_uri()
        .expect("uri")
        .replace("operator.ptah.run", "example.com");
    assert!(matches!(
        ResultBinding::from_uri(&other_host),
        Err(BindingError::NotABindingUri(_))
    ));
    let padded = format!("{}=", b.to_uri().expect("uri"));
    assert!(matches!(
        ResultBinding::from_uri(&padded),
        Err(BindingError::NotABindingUri(_))
    ));
    let long = format!("{URI_PREFIX}{}", "A".repeat(MAX_URI_BYTES));
    assert_eq!(
        ResultBinding::from_uri(&long),
        Err(BindingError::NotABindingUri("too long"))
    );
}

#[test]
fn a_malformed_binding_names_its_field_and_never_its_value() {
    let mut b = binding();
    b.pod.uid = "uid\nsecret".to_owned();
    let err = b.to_uri().expect_err("refused");
    assert_eq!(
        err.to_string(),
        "binding field pod.uid is holding a control character"
    );
    let mut b = binding();
    b.resource.generation = 0;
    assert_eq!(b.to_uri(), Err(BindingError::Generation(0)));
    let mut b = binding();
    b.job.name = "j".repeat(254);
    assert!(matches!(
        b.validate(),
        Err(BindingError::Field {
            field: "job.name",
            ..
        })
    ));
    let json = String::from_utf8(canonical_json(&binding()).expect("json")).expect("utf8");
    let typed_wrong = json.replacen(r#""generation":3"#, r#""generation":"s3cr3t""#, 1);
    let uri = format!("{URI_PREFIX}{}", URL_SAFE_NO_PAD.encode(typed_wrong));
    let err = ResultBinding::from_uri(&uri).expect_err("refused").to_string();
    assert!(!err.contains("s3cr3t"), "{err}");
}

#[test]
fn the_record_stem_is_one_per_operation_and_job() {
    let a = binding();
    let mut b = binding();
    b.pod.name = "orders-plan-1-other".to_owned();
    assert_eq!(a.record_stem(), b.record_stem());
    b.job.name = "orders-plan-2".to_owned();
    assert_ne!(a.record_stem(), b.record_stem());
    assert_eq!(a.record_stem().len(), "ptah-result-".len() + 64);
}
