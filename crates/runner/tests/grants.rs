//! The runner enforces the registry grant before any child starts: credentials go only to the
//! registry, transport and CA the Secret names. The refused cases point at a catcher on loopback
//! that counts connections (a stub: the real registry does not pretend to be another host); the
//! granted case runs against the real TLS registry with basic auth.

mod support;

use std::{
    collections::BTreeMap,
    net::TcpListener,
    os::unix::fs::PermissionsExt as _,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use ptah_dataplane::ErrorCode;
use ptah_fingerprint::Digest;
use ptah_testservices::{TestServices, unique_name};
use support::{ptah, run_runner, scratch};

/// A listener that counts the connections it accepts and closes each at once.
fn catcher() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (addr, count)
}

fn base_env(services: &TestServices, reference: &str) -> BTreeMap<String, String> {
    let r = &services.registry;
    BTreeMap::from([
        ("PTAH_RUNNER_PROTOCOL_VERSION".into(), "1".into()),
        ("PTAH_OPERATION_ID".into(), unique_name("op")),
        ("PTAH_REQUESTED_REFERENCE".into(), reference.to_owned()),
        ("PTAH_REGISTRY_USERNAME".into(), r.username.clone()),
        ("PTAH_REGISTRY_PASSWORD".into(), r.password.expose().to_owned()),
        ("PTAH_REGISTRY_GRANT_MODE".into(), "environment".into()),
        ("PTAH_LOG".into(), "warn".into()),
    ])
}

/// A refused case: its name, the grant variables it sets, the code it ends in.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, ErrorCode);

#[test]
fn a_request_the_secret_does_not_grant_never_starts_the_child() {
    let services = TestServices::require();
    let (catcher, connections) = catcher();
    let ca = services.registry.ca_pem().expect("CA");
    let reference = format!("oci://{catcher}/orders:v1");
    let cases: Vec<Case<'_>> = vec![
        (
            "a Secret without the registry key",
            vec![],
            ErrorCode::RegistryAuthorityMismatch,
        ),
        (
            "a Secret that grants another registry",
            vec![("PTAH_REGISTRY_GRANT", services.registry.host.as_str())],
            ErrorCode::RegistryAuthorityMismatch,
        ),
        (
            "plain HTTP to the catcher without allowPlainHTTP",
            vec![
                ("PTAH_REGISTRY_GRANT", catcher.as_str()),
                ("PTAH_PLAIN_HTTP", "true"),
            ],
            ErrorCode::PlainHttpNotGranted,
        ),
        (
            "a CA whose digest is not granted",
            vec![
                ("PTAH_REGISTRY_GRANT", catcher.as_str()),
                (
                    "PTAH_REGISTRY_CA_SHA256_GRANT",
                    "sha256:0000000000000000000000000000000000000000000000000000000000000000",
                ),
            ],
            ErrorCode::CaNotGranted,
        ),
    ];
    let dir = scratch();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, &ca).expect("write the CA");
    for (case, extra, code) in cases {
        let mut env = base_env(&services, &reference);
        env.insert("PTAH_OCI_CA_FILE".into(), ca_file.display().to_string());
        env.extend(extra.into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())));
        let run = run_runner("resolve", &env, &ptah(), dir.path());
        run.assert_no_secret(&[services.registry.password.expose().to_owned()]);
        let p = &run.frame().payload;
        let err = p.error.as_ref().unwrap_or_else(|| panic!("{case}: not refused"));
        assert_eq!(err.code, code, "{case}: {}", err.message);
        assert_eq!(p.child_exit_code, -1, "{case}: the child ran");
        assert_eq!(
            connections.load(Ordering::SeqCst),
            0,
            "{case}: the catcher was reached"
        );
    }
}

#[test]
fn the_granted_registry_resolves_and_a_docker_config_reaches_the_child_reduced() {
    let services = TestServices::require();
    let dir = scratch();
    let reference = format!(
        "oci://{}/ptah-tests/{}:v1",
        services.registry.host,
        unique_name("granted")
    );
    let ca = services.registry.ca_pem().expect("CA");
    let mut env = base_env(&services, &reference);
    env.insert(
        "PTAH_OCI_CA_FILE".into(),
        services.registry.ca_path.display().to_string(),
    );
    env.insert("PTAH_REGISTRY_GRANT".into(), services.registry.host.clone());
    env.insert(
        "PTAH_REGISTRY_CA_SHA256_GRANT".into(),
        Digest::of(&ca).to_string(),
    );
    let run = run_runner("resolve", &env, &ptah(), dir.path());
    let err = run
        .frame()
        .payload
        .error
        .as_ref()
        .expect("nothing was pushed there");
    assert_eq!(err.code, ErrorCode::ChildFailed, "the child ran: {}", err.message);
    assert_eq!(err.child_code.as_deref(), Some("not_found"), "{}", err.message);

    // A fake ptah that keeps the Docker config it was handed.
    let seen = dir.path().join("seen-config.json");
    let fake = dir.path().join("fake-ptah");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\ncat \"$DOCKER_CONFIG/config.json\" > {}\nexit 2\n",
            seen.display()
        ),
    )
    .expect("write");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let config_dir = dir.path().join("docker");
    std::fs::create_dir(&config_dir).expect("mkdir");
    std::fs::write(
        config_dir.join("config.json"),
        format!(
            r#"{{"auths":{{"{}":{{"auth":"dXNlcjpwYXNz"}},"catcher.example:5000":{{"auth":"b3RoZXI6czNjcmV0"}}}},"credsStore":"desktop"}}"#,
            services.registry.host
        ),
    )
    .expect("write");
    let mut env = base_env(&services, &reference);
    env.retain(|k, _| !k.starts_with("PTAH_REGISTRY_"));
    env.insert("PTAH_REGISTRY_GRANT_MODE".into(), "docker-config".into());
    env.insert("DOCKER_CONFIG".into(), config_dir.display().to_string());
    let _ = run_runner("resolve", &env, &fake, dir.path());
    let handed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&seen).expect("the child read a config")).expect("json");
    assert_eq!(
        handed,
        serde_json::json!({"auths": {services.registry.host.clone(): {"auth": "dXNlcjpwYXNz"}}}),
        "the child got more than the entry for its registry"
    );
}
