//! A child that prints a forged result frame (on stderr and on stdout) cannot make the parser of
//! the Pod log return it: not next to the runner's frame, and not when the runner's frame is
//! damaged or cut.

mod support;

use std::{collections::BTreeMap, os::unix::fs::PermissionsExt};

use ptah_dataplane::{
    ErrorCode, Operation, OperationId, ResultError, ResultPayload, frame::frame_bytes, parse_last_frame,
};
use support::{run_runner, scratch};

const FORGED_ID: &str = "op-forged";

/// A stand-in for `ptah` (shell builtins only: the child's environment is cleared) that prints
/// `$HOME/forged` on stdout and on stderr, then the same lines indented on stderr.
const FORGER: &str = r#"#!/bin/sh
while IFS= read -r line; do printf '%s\n' "$line"; done < "$HOME/forged"
while IFS= read -r line; do printf '%s\n' "$line" >&2; done < "$HOME/forged"
while IFS= read -r line; do printf '  %s\n' "$line" >&2; done < "$HOME/forged"
exit 0
"#;

/// A valid frame claiming a successful Resolve of another operation id.
fn forged_frame() -> Vec<u8> {
    let mut forged = ResultPayload::new(Operation::Resolve, Some(OperationId::new(FORGED_ID).expect("id")));
    forged.error = Some(ResultError {
        code: ErrorCode::InvalidInput,
        child_code: None,
        message: "forged".into(),
    });
    frame_bytes(&serde_json::to_vec(&forged).expect("json"))
}

fn forged_won(log: &[u8]) -> bool {
    parse_last_frame(log)
        .is_ok_and(|f| f.payload.operation_id.as_ref().map(OperationId::as_str) == Some(FORGED_ID))
}

#[test]
fn a_forged_frame_from_the_child_never_wins() {
    let work = scratch();
    let home = work.path().join("home");
    std::fs::create_dir(&home).expect("home");
    let forged = forged_frame();
    assert!(forged_won(&forged), "the forged frame is valid on its own");
    std::fs::write(home.join("forged"), &forged).expect("forged");
    let bin = work.path().join("ptah");
    std::fs::write(&bin, FORGER).expect("stand-in");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let env = BTreeMap::from([
        ("PTAH_RUNNER_PROTOCOL_VERSION".to_owned(), "1".to_owned()),
        ("PTAH_OPERATION_ID".to_owned(), "op-real".to_owned()),
        (
            "PTAH_REQUESTED_REFERENCE".to_owned(),
            "oci://127.0.0.1:1/x:y".to_owned(),
        ),
        ("HOME".to_owned(), home.display().to_string()),
    ]);
    let run = run_runner("resolve", &env, &bin, work.path());
    let payload = &run.frame().payload;
    assert_eq!(
        payload.operation_id.as_ref().map(OperationId::as_str),
        Some("op-real")
    );
    assert_eq!(
        payload.error.as_ref().map(|e| e.code),
        Some(ErrorCode::InvalidChildOutput),
        "a frame is no JSON report"
    );
    let stderr = &run.output.stderr;
    assert!(
        String::from_utf8_lossy(stderr).contains(FORGED_ID),
        "the child's lines are in the diagnostics"
    );

    // The Pod log: the runner's stderr, then its stdout (the order it writes them in).
    let log = [stderr.as_slice(), &run.output.stdout].concat();
    let real = parse_last_frame(&log).expect("the real frame");
    assert_eq!(real.payload, *payload);

    // The real frame damaged: each byte of its header and payload line flipped in turn.
    let frame_at = stderr.len();
    let payload_end = frame_at
        + run
            .output
            .stdout
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(1)
            .map(|(i, _)| i)
            .expect("payload line");
    for at in frame_at..payload_end {
        let mut damaged = log.clone();
        damaged[at] ^= 0x01;
        assert!(
            !forged_won(&damaged),
            "byte {} of the frame flipped",
            at - frame_at
        );
    }
    // The real frame cut anywhere, with or without a newline and a later line after the cut.
    for cut in frame_at..log.len() {
        for tail in [&b""[..], b"\n", b"\nptah-runner: a later line\n"] {
            let cut_log = [&log[..cut], tail].concat();
            assert!(
                !forged_won(&cut_log),
                "the frame cut after {} bytes",
                cut - frame_at
            );
        }
    }
    assert!(!forged_won(stderr), "the diagnostics alone hold no frame");
}
