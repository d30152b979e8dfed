use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

const CA: &[u8] = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| map.get(name).cloned()
}

fn request(authority: &str) -> Request<'_> {
    Request {
        authority,
        plain_http: false,
        ca_bundle: None,
    }
}

#[test]
fn without_the_mode_variable_no_grant_is_enforced() {
    let none = Grant::from_env(&env(&[(ENV_REGISTRY, "reg.example")])).expect("read");
    assert_eq!(none, None);
    let bad = Grant::from_env(&env(&[(ENV_MODE, "anything")])).expect_err("refused");
    assert_eq!(bad.code(), "registry_grant_malformed");
}

#[test]
fn environment_credentials_need_a_registry_that_matches() {
    let missing = Grant::from_env(&env(&[(ENV_MODE, MODE_ENVIRONMENT)]))
        .expect("read")
        .expect("grant");
    let err = missing.check(&request("reg.example:5000")).expect_err("refused");
    assert_eq!(err.code(), "registry_authority_mismatch");
    assert!(err.to_string().contains("add the key registry"), "{err}");

    let grant = Grant::new(Mode::Environment, Some("Reg.Example:5000"), false, None);
    grant
        .check(&request("reg.example:5000"))
        .expect("the granted registry");
    for other in [
        "catcher.example:5000",
        "reg.example",
        "reg.example:5001",
        "reg.example.:5000",
        "evil.reg.example:5000",
    ] {
        let err = grant.check(&request(other)).expect_err(other);
        assert_eq!(err.code(), "registry_authority_mismatch", "{other}");
        assert!(
            !err.to_string().contains("Reg.Example"),
            "the message shows the Secret's value: {err}"
        );
    }
}

#[test]
fn default_ports_and_docker_hub_names_are_the_same_registry() {
    let tls = Grant::new(Mode::Environment, Some("reg.example"), false, None);
    tls.check(&request("reg.example:443"))
        .expect("443 is the TLS default");
    let err = tls
        .check(&Request {
            plain_http: true,
            ..request("reg.example:443")
        })
        .expect_err("443 over plain HTTP is not the plain default");
    assert_eq!(err.code(), "registry_authority_mismatch");
    let hub = Grant::new(Mode::Environment, Some("index.docker.io"), false, None);
    hub.check(&request("docker.io")).expect("Docker Hub");
    hub.check(&request("registry-1.docker.io")).expect("Docker Hub");
    let v6 = Grant::new(Mode::Environment, Some("[::1]:5000"), false, None);
    v6.check(&request("[::1]:5000")).expect("IPv6");
    assert!(v6.check(&request("[::1]:5001")).is_err());
}

#[test]
fn plain_http_needs_its_own_grant() {
    let request = Request {
        plain_http: true,
        ..request("reg.example:5000")
    };
    let no = Grant::new(Mode::Environment, Some("reg.example:5000"), false, None);
    assert_eq!(
        no.check(&request).expect_err("refused").code(),
        "plain_http_not_granted"
    );
    let yes = Grant::from_env(&env(&[
        (ENV_MODE, MODE_ENVIRONMENT),
        (ENV_REGISTRY, "reg.example:5000"),
        (ENV_ALLOW_PLAIN_HTTP, "true"),
    ]))
    .expect("read")
    .expect("grant");
    yes.check(&request).expect("granted");
    let docker = Grant::new(Mode::DockerConfig, None, false, None);
    assert_eq!(
        docker.check(&request).expect_err("refused").code(),
        "plain_http_not_granted"
    );
    let bad = Grant::from_env(&env(&[
        (ENV_MODE, MODE_ENVIRONMENT),
        (ENV_ALLOW_PLAIN_HTTP, "yes"),
    ]));
    assert_eq!(bad.expect_err("refused").code(), "registry_grant_malformed");
}

#[test]
fn a_ca_bundle_needs_its_digest_granted() {
    let digest = Digest::of(CA).to_string();
    let with_ca = |grant: &Grant| {
        grant.check(&Request {
            ca_bundle: Some(CA),
            ..request("reg.example")
        })
    };
    let none = Grant::new(Mode::Environment, Some("reg.example"), false, None);
    let err = with_ca(&none).expect_err("refused");
    assert_eq!(err.code(), "ca_not_granted");
    assert!(err.to_string().contains("caSHA256"), "{err}");
    let other = Grant::new(
        Mode::Environment,
        Some("reg.example"),
        false,
        Some(&Digest::of(b"other").to_string()),
    );
    assert_eq!(with_ca(&other).expect_err("refused").code(), "ca_not_granted");
    let granted = Grant::new(Mode::Environment, Some("reg.example"), false, Some(&digest));
    with_ca(&granted).expect("granted");
    granted
        .check(&request("reg.example"))
        .expect("no CA needs no CA grant");
}

#[test]
fn docker_config_mode_may_narrow_its_authority() {
    let free = Grant::new(Mode::DockerConfig, None, false, None);
    free.check(&request("any.example"))
        .expect("the entry's key names the authority");
    let narrowed = Grant::new(Mode::DockerConfig, Some("reg.example"), false, None);
    assert!(narrowed.check(&request("any.example")).is_err());
}

#[test]
fn a_docker_config_is_reduced_to_the_requested_entry() {
    let config = br#"{"auths":{"https://reg.example:5000/v1/":{"auth":"YTpi"},"catcher.example":{"auth":"YzpkCg=="}},"credsStore":"desktop"}"#;
    let kept: serde_json::Value =
        serde_json::from_slice(&only_entry_for(config, "REG.example:5000", false).expect("filter"))
            .expect("json");
    assert_eq!(
        kept,
        serde_json::json!({"auths": {"https://reg.example:5000/v1/": {"auth": "YTpi"}}})
    );
    let none: serde_json::Value =
        serde_json::from_slice(&only_entry_for(config, "elsewhere.example", false).expect("filter"))
            .expect("json");
    assert_eq!(none, serde_json::json!({"auths": {}}));
    let err = only_entry_for(b"s3cret-not-json", "reg.example", false).expect_err("refused");
    assert!(!err.to_string().contains("s3cret"), "{err}");
}

proptest! {
    /// Two authorities match exactly when their normalized forms are equal; a host that differs
    /// in anything but case never matches.
    #[test]
    fn only_the_granted_host_matches(
        host in "[a-z][a-z0-9-]{0,12}(\\.[a-z]{2,5}){0,2}",
        other in "[a-z][a-z0-9-]{0,12}(\\.[a-z]{2,5}){0,2}",
        port in proptest::option::of(1u16..=65535),
        plain in any::<bool>(),
    ) {
        let with_port = |h: &str| port.map_or(h.to_owned(), |p| format!("{h}:{p}"));
        let granted = with_port(&host);
        prop_assert!(authorities_match(&granted.to_ascii_uppercase(), &granted, plain));
        let same_hub = DOCKER_HUB_NAMES.contains(&host.as_str()) && DOCKER_HUB_NAMES.contains(&other.as_str());
        if host != other && !same_hub {
            prop_assert!(!authorities_match(&granted, &with_port(&other), plain));
        }
    }
}

const DOCKER_HUB_NAMES: &[&str] = &["docker.io", "index.docker.io", "registry-1.docker.io"];
