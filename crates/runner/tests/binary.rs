//! The `ptah-runner` binary without a database: `--install-to`, usage errors, the frame of a
//! refusal, the termination summary.

mod support;

use std::{collections::BTreeMap, os::unix::fs::PermissionsExt, process::Command};

use ptah_dataplane::{ErrorCode, summary::Summary};
use support::{db_env, deadlines, run_runner, runner, scratch};

#[test]
fn install_to_copies_the_executable_with_mode_0755_and_refuses_to_overwrite() {
    let dir = scratch();
    let to = dir.path().join("ptah-runner");
    let out = Command::new(runner())
        .arg("--install-to")
        .arg(&to)
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mode = std::fs::metadata(&to).expect("installed").permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    assert_eq!(
        std::fs::read(&to).expect("copy"),
        std::fs::read(runner()).expect("original")
    );
    let again = Command::new(runner())
        .arg("--install-to")
        .arg(&to)
        .output()
        .expect("run");
    assert_eq!(again.status.code(), Some(2), "an existing file is refused");
    let version = Command::new(&to).arg("--version").output().expect("run the copy");
    assert!(version.status.success());
}

#[test]
fn an_unknown_operation_is_a_usage_error_without_frame() {
    let out = Command::new(runner())
        .args(["--operation", "drop-everything"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_missing_input_is_refused_with_a_frame_and_a_summary() {
    let dir = scratch();
    let env = BTreeMap::from([
        ("PTAH_RUNNER_PROTOCOL_VERSION".to_owned(), "1".to_owned()),
        ("PTAH_OPERATION_ID".to_owned(), "op-7".to_owned()),
        (
            "PTAH_REGISTRY_PASSWORD".to_owned(),
            "registry-secret-123".to_owned(),
        ),
    ]);
    let never = dir.path().join("no-such-ptah");
    let run = run_runner("resolve", &env, &never, dir.path());
    run.assert_no_secret(&["registry-secret-123".to_owned()]);
    assert_eq!(run.output.status.code(), Some(1));
    let frame = run.frame();
    let err = frame.payload.error.as_ref().expect("error");
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert!(
        err.message.contains("PTAH_REQUESTED_REFERENCE"),
        "{}",
        err.message
    );
    let summary = Summary::parse(&run.summary).expect("summary");
    assert_eq!(summary.frame_digest, frame.payload_digest);
    assert_eq!(summary.error_code, Some(ErrorCode::InvalidInput));
    assert!(run.summary.len() <= 2048);
}

#[test]
fn a_missing_ptah_binary_is_child_spawn_failed() {
    let dir = scratch();
    let env = BTreeMap::from([
        ("PTAH_RUNNER_PROTOCOL_VERSION".to_owned(), "1".to_owned()),
        ("PTAH_OPERATION_ID".to_owned(), "op-8".to_owned()),
        (
            "PTAH_REQUESTED_REFERENCE".to_owned(),
            "oci://127.0.0.1:1/x:y".to_owned(),
        ),
    ]);
    let run = run_runner("resolve", &env, &dir.path().join("no-such-ptah"), dir.path());
    let p = &run.frame().payload;
    assert_eq!(
        p.error.as_ref().map(|e| e.code),
        Some(ErrorCode::ChildSpawnFailed)
    );
    assert_eq!(p.child_exit_code, -1);
}

/// Without `PTAH_EXPECTED_TARGET_IDENTITY_DIGEST` an Observe passes every check (it gets as far as
/// starting `ptah`, which is missing here) and reports the identity it found; an Apply is refused
/// before the child with `invalid_input` naming the variable.
#[test]
fn the_expected_identity_is_learned_by_observe_and_required_by_apply() {
    let dir = scratch();
    let url = "postgres://app:pw-not-printed@db.example:5432/shop";
    let found = ptah_dataplane::TargetIdentity::from_url(url)
        .expect("identity")
        .digest()
        .expect("digest");
    let mut unbound = db_env(url);
    unbound.remove("PTAH_EXPECTED_TARGET_IDENTITY_DIGEST");
    unbound.insert("PTAH_SCHEMA_FROM".into(), "/schema.sql".into());
    let never = dir.path().join("no-such-ptah");

    let observe = run_runner("observe", &unbound, &never, dir.path());
    observe.assert_no_secret(&["pw-not-printed".to_owned()]);
    let p = &observe.frame().payload;
    assert_eq!(
        p.error.as_ref().map(|e| e.code),
        Some(ErrorCode::ChildSpawnFailed),
        "{p:?}"
    );
    assert_eq!(p.target_identity_digest, Some(found));
    let summary = Summary::parse(&observe.summary).expect("summary");
    assert_eq!(summary.target_identity_digest, Some(found));

    let plan = dir.path().join("p.plan");
    std::fs::write(&plan, b"{}\n").expect("plan");
    let mut apply = unbound.clone();
    apply.insert("PTAH_PLAN_FILE".into(), plan.display().to_string());
    apply.insert(
        "PTAH_EXPECTED_PLAN_CONTENT_DIGEST".into(),
        ptah_fingerprint::Digest::of(b"{}\n").to_string(),
    );
    deadlines(&mut apply, 120, 30);
    let refused = run_runner("apply", &apply, &never, dir.path());
    let p = &refused.frame().payload;
    let err = p.error.as_ref().expect("refused");
    assert_eq!(err.code, ErrorCode::InvalidInput, "{err:?}");
    assert!(
        err.message.contains("PTAH_EXPECTED_TARGET_IDENTITY_DIGEST"),
        "{}",
        err.message
    );
    assert_eq!((p.child_exit_code, p.mutation_started), (-1, None));

    let mut bound = apply.clone();
    bound.insert("PTAH_EXPECTED_TARGET_IDENTITY_DIGEST".into(), found.to_string());
    let run = run_runner("apply", &bound, &never, dir.path());
    assert_eq!(
        run.frame().payload.error.as_ref().map(|e| e.code),
        Some(ErrorCode::ChildSpawnFailed),
        "bound to what Observe reported, the Apply passes its checks"
    );
}
