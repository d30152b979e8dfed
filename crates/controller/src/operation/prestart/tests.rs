use super::*;

fn init(message: Option<&str>) -> InitFailure {
    InitFailure {
        container: "fetch-schema".into(),
        exit_code: 1,
        message: message.map(str::to_owned),
    }
}

fn line(code: &str, message: &str) -> String {
    serde_json::json!({ "code": code, "message": message }).to_string() + "\n"
}

#[test]
fn an_artifact_refusal_is_read_with_its_code() {
    for code in ARTIFACT_CODES {
        let p = from_init(&init(Some(&line(
            code,
            "the descriptor declares 10 bytes but 52428803 arrived",
        ))));
        assert_eq!(p.class, Class::Artifact, "{code}");
        assert_eq!(p.reason, Reason::ArtifactRefused, "{code}");
        assert_eq!(p.code.as_deref(), Some(*code));
        assert_eq!(
            p.message,
            format!(
                "fetch-schema refused the artifact: {code}: the descriptor declares 10 bytes but 52428803 arrived"
            )
        );
    }
}

#[test]
fn a_grant_refusal_has_its_own_reason() {
    for (code, reason) in GRANT_CODES {
        let p = from_init(&init(Some(&line(code, "add the key registry to Secret regcred"))));
        assert_eq!((p.class, p.reason), (Class::Grant, *reason), "{code}");
        assert!(
            p.message.contains(code) && p.message.contains("regcred"),
            "{}",
            p.message
        );
    }
}

#[test]
fn registry_access_is_a_failure_to_retry() {
    for code in [
        "connect",
        "timeout",
        "unauthorized",
        "tls",
        "not_found",
        "registry",
        "credentials",
    ] {
        let p = from_init(&init(Some(&line(code, "registry.test: nope"))));
        assert_eq!(
            (p.class, p.reason),
            (Class::Failed, Reason::OperationFailed),
            "{code}"
        );
        assert_eq!(p.code.as_deref(), Some(code));
    }
}

#[test]
fn garbage_falls_back_to_the_exit_code() {
    let truncated = line("unsafe_path", &"x".repeat(5000))[..4096].to_owned();
    for message in [
        None,
        Some(""),
        Some("panic: something"),
        Some("{\"code\": 7, \"message\": \"x\"}"),
        Some("{\"code\": \"Not A Code\", \"message\": \"x\"}"),
        Some(truncated.as_str()),
    ] {
        let p = from_init(&init(message));
        assert_eq!(p.class, Class::Failed, "{message:?}");
        assert_eq!(p.code, None, "{message:?}");
        assert_eq!(
            p.message,
            "init container fetch-schema exited with code 1 without a readable error"
        );
    }
}

#[test]
fn a_long_or_unprintable_message_is_bounded() {
    let p = from_init(&init(Some(&line(
        "unsafe_path",
        &format!("a\u{1b}[31m{}", "é".repeat(3000)),
    ))));
    assert!(p.message.len() <= 1024, "{}", p.message.len());
    assert!(!p.message.chars().any(char::is_control));
}

fn stuck(reason: &str, message: &str) -> Stuck {
    Stuck {
        pod: "orders-plan-1-abcde".into(),
        container: "ptah".into(),
        reason: reason.into(),
        message: message.into(),
    }
}

#[test]
fn a_missing_secret_or_key_is_named() {
    let p = from_stuck(&stuck(
        "CreateContainerConfigError",
        "secret \"does-not-exist\" not found",
    ))
    .expect("a missing Secret");
    assert_eq!((p.class, p.reason), (Class::Secret, Reason::SecretNotFound));
    assert_eq!(
        p.message,
        "Secret \"does-not-exist\" does not exist: container ptah of Pod orders-plan-1-abcde cannot start"
    );
    let p = from_stuck(&stuck(
        "CreateContainerConfigError",
        "couldn't find key url in Secret shop/db",
    ))
    .expect("a missing key");
    assert_eq!(
        p.message,
        "Secret \"db\" has no key \"url\": container ptah of Pod orders-plan-1-abcde cannot start"
    );
}

#[test]
fn only_a_secret_name_reaches_the_status() {
    for (reason, message) in [
        ("ImagePullBackOff", "secret \"db\" not found"),
        ("CreateContainerConfigError", "configmap \"ca\" not found"),
        ("CreateContainerConfigError", "secret \"Not A Name\" not found"),
        ("CreateContainerConfigError", "secret \"db\" is forbidden"),
        (
            "CreateContainerConfigError",
            "couldn't find key p=w in Secret shop/db",
        ),
        (
            "CreateContainerConfigError",
            "object \"shop\"/\"db\" not registered",
        ),
    ] {
        assert_eq!(from_stuck(&stuck(reason, message)), None, "{reason}: {message}");
    }
}

fn epoch(n: u32) -> Epoch {
    Epoch::parse(&format!("v1-{n:032x}")).expect("epoch")
}

fn digest(tag: &str) -> Sha256Digest {
    ptah_fingerprint::Digest::of(tag.as_bytes()).into()
}

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).expect("ts")
}

#[test]
fn an_artifact_refusal_holds_for_its_digest_spec_and_binding() {
    let p = from_init(&init(Some(&line("size_mismatch", "x"))));
    let r = p
        .record(Some(&digest("a")), 3, &epoch(1), at(10))
        .expect("recorded");
    assert!(r.terminal);
    // Later Resolves of the same digest do not lift it.
    assert!(holds(&r, 3, &epoch(1), Some(&digest("a")), Some(at(600))));
    assert!(
        !holds(&r, 3, &epoch(1), Some(&digest("b")), Some(at(600))),
        "a new digest"
    );
    assert!(
        !holds(&r, 4, &epoch(1), Some(&digest("a")), Some(at(600))),
        "a spec change"
    );
    assert!(
        !holds(&r, 3, &epoch(2), Some(&digest("a")), Some(at(600))),
        "a new binding"
    );
}

#[test]
fn other_refusals_hold_until_the_next_resolve() {
    let p = from_stuck(&stuck("CreateContainerConfigError", "secret \"db\" not found")).expect("secret");
    let r = p
        .record(Some(&digest("a")), 3, &epoch(1), at(10))
        .expect("recorded");
    assert!(!r.terminal);
    assert!(
        holds(&r, 3, &epoch(1), Some(&digest("a")), Some(at(5))),
        "resolved before it"
    );
    assert!(
        !holds(&r, 3, &epoch(1), Some(&digest("a")), Some(at(11))),
        "resolved after it"
    );
    let failed = from_init(&init(Some(&line("connect", "x"))));
    assert_eq!(failed.record(Some(&digest("a")), 3, &epoch(1), at(10)), None);
}

/// The class of each error of the artifact crate: a refused artifact exactly where the crate
/// calls it an integrity failure (or a pulled file invalid for its kind), a grant refusal where
/// the Secret's grant refused it, a failure to retry otherwise. The match is exhaustive, so a new
/// variant does not compile until it is classified here.
fn expected(e: &ptah_artifact::Error) -> Class {
    use ptah_artifact::Error as E;
    match e {
        E::DigestMismatch { .. }
        | E::LimitExceeded { .. }
        | E::SizeMismatch { .. }
        | E::UnsafePath { .. }
        | E::WrongMediaType { .. }
        | E::WrongArtifactType { .. }
        | E::InvalidManifest { .. }
        | E::InvalidContent { .. } => Class::Artifact,
        E::NotGranted(ptah_registrygrant::Refusal::Malformed(_)) => Class::Failed,
        E::NotGranted(_) => Class::Grant,
        E::Reference(_)
        | E::Unauthorized { .. }
        | E::Tls { .. }
        | E::Connect { .. }
        | E::Timeout { .. }
        | E::NotFound { .. }
        | E::PolicyInvalid { .. }
        | E::Credentials { .. }
        | E::CaBundle { .. }
        | E::Destination { .. }
        | E::Io { .. }
        | E::Registry { .. } => Class::Failed,
    }
}

/// The artifact codes are exactly those `ptah_artifact` calls integrity failures (plus a pulled
/// file invalid for its kind): a refusal is never retried forever, and a registry that cannot be
/// reached never blocks a digest for good.
#[test]
fn codes_agree_with_the_artifact_crate() {
    use ptah_artifact::Error as E;
    use ptah_registrygrant::Refusal as R;
    let s = String::new;
    let reference = "oci://".parse::<ptah_artifact::Reference>().expect_err("refused");
    let errors = vec![
        E::from(reference),
        E::NotGranted(R::RegistryAuthorityMismatch(s())),
        E::NotGranted(R::PlainHttpNotGranted(s())),
        E::NotGranted(R::CaNotGranted(s())),
        E::NotGranted(R::Malformed(s())),
        E::Unauthorized { registry: s() },
        E::Tls {
            registry: s(),
            reason: s(),
        },
        E::Connect {
            registry: s(),
            reason: s(),
        },
        E::Timeout { registry: s() },
        E::NotFound { what: s() },
        E::DigestMismatch {
            what: s(),
            expected: s(),
            actual: s(),
        },
        E::LimitExceeded { what: s(), limit: 1 },
        E::SizeMismatch {
            what: s(),
            declared: 1,
            actual: 2,
        },
        E::UnsafePath {
            path: s(),
            reason: "r",
        },
        E::WrongMediaType {
            what: s(),
            expected: s(),
            actual: s(),
        },
        E::WrongArtifactType {
            field: "f",
            expected: s(),
            actual: s(),
        },
        E::InvalidManifest { reason: s() },
        E::InvalidContent { reason: s() },
        E::PolicyInvalid { reason: s() },
        E::Credentials { reason: s() },
        E::CaBundle {
            path: "p".into(),
            reason: s(),
        },
        E::Destination {
            path: "p".into(),
            reason: s(),
        },
        E::Io {
            path: "p".into(),
            source: std::io::Error::other("x"),
        },
        E::Registry {
            registry: s(),
            reason: s(),
        },
    ];
    for e in &errors {
        let p = from_init(&init(Some(&line(e.code(), "m"))));
        assert_eq!(p.class, expected(e), "{}", e.code());
        let refused = e.is_integrity() || matches!(e, E::InvalidContent { .. });
        assert_eq!(p.class == Class::Artifact, refused, "{}", e.code());
    }
    let artifact = errors.iter().filter(|e| expected(e) == Class::Artifact).count();
    assert_eq!(
        ARTIFACT_CODES.len(),
        artifact,
        "every artifact code is one of the crate's"
    );
    let grants = errors.iter().filter(|e| expected(e) == Class::Grant).count();
    assert_eq!(
        GRANT_CODES.len(),
        grants,
        "every grant code is one of the crate's"
    );
}
