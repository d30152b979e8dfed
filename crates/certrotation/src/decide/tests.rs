//! The decision table, over certificates generated here with short, explicit validities.

use std::time::Duration;

use jiff::Timestamp;

use super::*;
use crate::{
    CaReason, Field, KeyedCert, RotationConfig, San, ServingReason, Step, execute, issue_ca, issue_serving,
    material::certificates_pem,
};

const DAY: i64 = 24 * 60 * 60;
/// A fixed "now" (2030-03-17), so tests never depend on the wall clock.
const NOW: i64 = 1_900_000_000;

fn at(offset: i64) -> Timestamp {
    Timestamp::from_second(NOW + offset).unwrap()
}

fn config() -> RotationConfig {
    RotationConfig {
        ca_switch_delay: Duration::from_secs(60),
        ..RotationConfig::new("ns")
    }
}

fn ca(from: i64, to: i64) -> KeyedCert {
    issue_ca(at(from), at(to)).unwrap()
}

fn leaf(ca: &KeyedCert, from: i64, to: i64) -> KeyedCert {
    issue_serving(ca, &config().expected_sans(), at(from), at(to)).unwrap()
}

fn files(serving: &KeyedCert, bundle: &[&KeyedCert], signing: Option<&KeyedCert>) -> TlsFiles {
    TlsFiles {
        tls_crt: Some(serving.cert_pem.clone()),
        tls_key: Some(serving.key_pem.clone()),
        ca_crt: Some(bundle.iter().flat_map(|c| c.cert_pem.clone()).collect()),
        ca_key: signing.map(|c| c.key_pem.clone()),
    }
}

/// A CA of a year and a leaf of 90 days, both issued a day ago.
fn healthy() -> (KeyedCert, KeyedCert, TlsFiles) {
    let ca = ca(-DAY, 364 * DAY);
    let serving = leaf(&ca, -DAY, 89 * DAY);
    let files = files(&serving, &[&ca], Some(&ca));
    (ca, serving, files)
}

fn decide_now(files: &TlsFiles) -> Action {
    decide(Some(files), at(0), &config())
}

#[test]
fn absent_creates() {
    assert_eq!(decide(None, at(0), &config()), Action::Create);
}

#[test]
fn healthy_keeps_until_the_earliest_threshold() {
    let (_, _, files) = healthy();
    // Serving: 89 days left, renewed 30 days before; CA: renewed a third of a year before.
    assert_eq!(
        decide_now(&files),
        Action::Keep {
            recheck_at: at(59 * DAY)
        }
    );
}

#[test]
fn serving_near_expiry_is_reissued_under_the_same_ca() {
    let ca = ca(-DAY, 364 * DAY);
    let serving = leaf(&ca, -DAY, 60);
    let files = files(&serving, &[&ca], Some(&ca));
    assert_eq!(
        decide_now(&files),
        Action::ReissueServing(ServingReason::Expiring { not_after: at(60) })
    );
    let next = execute(&decide_now(&files), Some(&files), at(0), &config())
        .unwrap()
        .unwrap();
    assert_eq!(next.ca_crt, files.ca_crt, "bundle kept");
    assert_eq!(next.ca_key, files.ca_key, "CA kept");
    assert_ne!(next.tls_crt, files.tls_crt);
    assert!(matches!(decide_now(&next), Action::Keep { .. }));
}

#[test]
fn expired_serving_starts_over() {
    let ca = ca(-10 * DAY, 364 * DAY);
    let serving = leaf(&ca, -10 * DAY, -1);
    assert_eq!(
        decide_now(&files(&serving, &[&ca], Some(&ca))),
        Action::Recover(Defect::ServingExpired)
    );
}

#[test]
fn not_yet_valid_serving_is_reissued() {
    let ca = ca(-DAY, 364 * DAY);
    let serving = leaf(&ca, DAY, 60 * DAY);
    assert_eq!(
        decide_now(&files(&serving, &[&ca], Some(&ca))),
        Action::ReissueServing(ServingReason::NotYetValid)
    );
}

#[test]
fn ca_near_expiry_is_staged() {
    let ca = ca(-300 * DAY, 10 * DAY);
    let serving = leaf(&ca, -DAY, 10 * DAY);
    assert_eq!(
        decide_now(&files(&serving, &[&ca], Some(&ca))),
        Action::StageCa(CaReason::Expiring {
            not_after: at(10 * DAY)
        })
    );
}

#[test]
fn san_change_reissues() {
    let (_, _, files) = healthy();
    let mut config = config();
    config.extra_sans.push("10.1.2.3".parse::<San>().unwrap());
    assert_eq!(
        decide(Some(&files), at(0), &config),
        Action::ReissueServing(ServingReason::SansChanged)
    );
    config.extra_sans.clear();
    config.service_name = "renamed".into();
    assert_eq!(
        decide(Some(&files), at(0), &config),
        Action::ReissueServing(ServingReason::SansChanged)
    );
}

#[test]
fn corrupt_pem_recovers() {
    let (_, _, good) = healthy();
    let garbage = b"-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n".to_vec();
    type Slot = fn(&mut TlsFiles) -> &mut Option<Vec<u8>>;
    let cases: [(Slot, Field); 4] = [
        (|f| &mut f.tls_crt, Field::TlsCrt),
        (|f| &mut f.tls_key, Field::TlsKey),
        (|f| &mut f.ca_crt, Field::CaCrt),
        (|f| &mut f.ca_key, Field::CaKey),
    ];
    for (slot, field) in cases {
        for (bytes, defect) in [
            (garbage.clone(), Defect::Unparseable(field)),
            (b"hello".to_vec(), Defect::Unparseable(field)),
            (vec![0xff, 0x00, 0xfe], Defect::Unparseable(field)),
            (Vec::new(), Defect::Missing(field)),
        ] {
            let mut files = good.clone();
            *slot(&mut files) = Some(bytes);
            let expected = if field == Field::CaKey {
                // The served pair is intact: only the signing ability is lost.
                Action::StageCa(CaReason::KeyUnusable(defect))
            } else {
                Action::Recover(defect)
            };
            assert_eq!(decide_now(&files), expected, "{field}");
        }
    }
}

#[test]
fn mismatched_key_recovers() {
    let (ca, _, good) = healthy();
    let other = leaf(&ca, -DAY, 89 * DAY);
    let files = TlsFiles {
        tls_key: Some(other.key_pem),
        ..good
    };
    assert_eq!(decide_now(&files), Action::Recover(Defect::ServingKeyMismatch));
}

#[test]
fn serving_not_signed_by_the_bundle_recovers() {
    let (ca, _, _) = healthy();
    let stranger = issue_ca(at(-DAY), at(364 * DAY)).unwrap();
    let serving = leaf(&stranger, -DAY, 89 * DAY);
    assert_eq!(
        decide_now(&files(&serving, &[&ca], Some(&ca))),
        Action::Recover(Defect::ServingNotSignedByBundle)
    );
}

#[test]
fn deleted_ca_key_stages_a_new_ca() {
    let (ca, serving, _) = healthy();
    assert_eq!(
        decide_now(&files(&serving, &[&ca], None)),
        Action::StageCa(CaReason::KeyUnusable(Defect::Missing(Field::CaKey)))
    );
    let stranger = issue_ca(at(-DAY), at(364 * DAY)).unwrap();
    assert_eq!(
        decide_now(&files(&serving, &[&ca], Some(&stranger))),
        Action::StageCa(CaReason::KeyUnusable(Defect::CaKeyMatchesNoCa))
    );
}

#[test]
fn deleted_ca_certificate_recovers() {
    let (_, _, good) = healthy();
    let files = TlsFiles { ca_crt: None, ..good };
    assert_eq!(decide_now(&files), Action::Recover(Defect::Missing(Field::CaCrt)));
}

#[test]
fn staged_ca_waits_then_switches_then_withdraws() {
    let mut config = config();
    // The old CA is due (100 days left, rotated 120 before) while its serving certificate is not.
    config.ca_renew_before = Some(Duration::from_secs(120 * DAY as u64));
    let delay = secs(BACKDATE) + 60;
    let old = ca(-200 * DAY, 100 * DAY);
    let serving = leaf(&old, -DAY, 80 * DAY);
    let files = files(&serving, &[&old], Some(&old));

    let stage = decide(Some(&files), at(0), &config);
    let staged = execute(&stage, Some(&files), at(0), &config).unwrap().unwrap();
    assert_eq!(
        staged.tls_crt, files.tls_crt,
        "serving pair kept while the new CA propagates"
    );
    let found = crate::inspect::inspect(&staged).unwrap();
    assert_eq!(found.bundle.len(), 2);
    assert_eq!(
        found.signing,
        Ok(0),
        "new CA first, and it is the one ca.key belongs to"
    );
    assert_eq!(found.leaf.issuer, 1);

    let until = at(delay - secs(BACKDATE));
    assert_eq!(
        decide(Some(&staged), at(1), &config),
        Action::Wait {
            step: Step::SwitchServing,
            until
        }
    );
    let switch = decide(Some(&staged), until, &config);
    assert_eq!(switch, Action::ReissueServing(ServingReason::SignedByPreviousCa));
    let switched = execute(&switch, Some(&staged), until, &config).unwrap().unwrap();
    assert_eq!(
        switched.ca_crt, staged.ca_crt,
        "both CAs stay until the switch propagated"
    );
    assert_eq!(crate::inspect::inspect(&switched).unwrap().leaf.issuer, 0);

    let withdraw_at = at(until.as_second() - NOW + delay - secs(BACKDATE));
    assert_eq!(
        decide(Some(&switched), until, &config),
        Action::Wait {
            step: Step::WithdrawOldCa,
            until: withdraw_at
        }
    );
    assert_eq!(
        decide(Some(&switched), withdraw_at, &config),
        Action::WithdrawOldCa
    );
    let done = execute(&Action::WithdrawOldCa, Some(&switched), withdraw_at, &config)
        .unwrap()
        .unwrap();
    assert_eq!(crate::inspect::inspect(&done).unwrap().bundle.len(), 1);
    assert!(matches!(
        decide(Some(&done), withdraw_at, &config),
        Action::Keep { .. }
    ));
}

#[test]
fn serving_never_outlives_its_ca() {
    let mut config = config();
    config.ca_renew_before = Some(Duration::from_secs(DAY as u64));
    let ca = ca(-DAY, 40 * DAY);
    let serving = leaf(&ca, -DAY, 60);
    let files = files(&serving, &[&ca], Some(&ca));
    let next = execute(
        &decide(Some(&files), at(0), &config),
        Some(&files),
        at(0),
        &config,
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        crate::inspect::inspect(&next).unwrap().leaf.not_after,
        NOW + 40 * DAY
    );
}

#[test]
fn created_material_is_healthy_and_redacted_in_debug() {
    let config = config();
    let created = execute(&Action::Create, None, at(0), &config).unwrap().unwrap();
    assert!(matches!(
        decide(Some(&created), at(0), &config),
        Action::Keep { .. }
    ));
    let found = crate::inspect::inspect(&created).unwrap();
    assert_eq!(found.leaf.not_after, NOW + 90 * DAY);
    assert_eq!(found.bundle[0].not_after, NOW + 365 * DAY);
    assert_eq!(found.leaf.sans, config.expected_sans());
    let debug = format!("{created:?}");
    assert!(
        !debug.contains("PRIVATE KEY") && !debug.contains("BEGIN"),
        "{debug}"
    );
}

#[test]
fn any_bytes_give_an_action() {
    let (_, _, good) = healthy();
    let pem = good.tls_crt.clone().unwrap();
    // Truncations and single-byte corruptions of a valid certificate, in each file.
    for cut in (0..pem.len()).step_by(37) {
        let mut flipped = pem.clone();
        flipped[cut] ^= 0x5a;
        for bytes in [pem[..cut].to_vec(), flipped] {
            for files in [
                TlsFiles {
                    tls_crt: Some(bytes.clone()),
                    ..good.clone()
                },
                TlsFiles {
                    ca_crt: Some(bytes.clone()),
                    ..good.clone()
                },
                TlsFiles {
                    ca_key: Some(bytes.clone()),
                    ..good.clone()
                },
            ] {
                let _ = decide_now(&files);
            }
        }
    }
}

#[test]
fn bundle_pem_round_trips() {
    let (ca, _, _) = healthy();
    let found = crate::inspect::inspect(&healthy().2).unwrap();
    let again = certificates_pem([found.bundle[0].der.as_slice()]);
    assert!(
        String::from_utf8(again)
            .unwrap()
            .starts_with("-----BEGIN CERTIFICATE-----\n")
    );
    assert!(!ca.cert_pem.is_empty());
}
