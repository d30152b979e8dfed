//! The built `ptah` writes its typed error to `PTAH_TERMINATION_LOG` when a command fails, as
//! the fetch init containers run it: one JSON line with the code, no credential, nothing when the
//! variable is absent. No service is needed: the failures are a refused reference and a registry
//! that does not answer.

use std::{path::PathBuf, process::Command};

use serde_json::Value;

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(test: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("ptah-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    Scratch(dir)
}

const PASSWORD: &str = "pw-that-must-never-be-written";

/// Runs `ptah oci pull` of `reference` as a fetch container does; returns the exit code and the
/// termination file's text (empty when it was not written).
fn pull(dir: &Scratch, reference: &str, termination_log: bool) -> (i32, String) {
    let log = dir.0.join("termination-log");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ptah"));
    cmd.args([
        "oci",
        "pull",
        "--kind",
        "schema",
        "--out",
        &dir.0.join("schema").display().to_string(),
        "--format",
        "json",
        "--plain-http",
        "--timeout",
        "5s",
        "--",
        reference,
    ])
    .env("PTAH_REGISTRY_USERNAME", "reader")
    .env("PTAH_REGISTRY_PASSWORD", PASSWORD)
    .env("PTAH_LOG", "error");
    if termination_log {
        cmd.env("PTAH_TERMINATION_LOG", &log);
    } else {
        cmd.env_remove("PTAH_TERMINATION_LOG");
    }
    let out = cmd.output().expect("run ptah");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    (out.status.code().expect("exit code"), text)
}

fn line(text: &str) -> Value {
    assert_eq!(text.lines().count(), 1, "one line: {text:?}");
    serde_json::from_str(text).expect("a JSON line")
}

#[test]
fn a_refused_reference_writes_its_code() {
    let dir = scratch("termination-reference");
    let (exit, text) = pull(&dir, "oci://registry.test/shop/../orders:v1", true);
    assert_eq!(exit, 2, "{text}");
    let v = line(&text);
    assert_eq!(v["code"], "invalid_reference", "{text}");
    assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()), "{text}");
    let keys: Vec<&String> = v.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["code", "message"], "only the code and the message");
}

#[test]
fn a_registry_that_does_not_answer_writes_its_code_and_no_credential() {
    let dir = scratch("termination-connect");
    // Port 9 (discard) on loopback: nothing listens there in the test environment.
    let reference = format!("oci://127.0.0.1:9/shop/orders@sha256:{}", "ab".repeat(32));
    let (exit, text) = pull(&dir, &reference, true);
    assert_eq!(exit, 2, "{text}");
    let v = line(&text);
    assert!(
        ["connect", "timeout"].contains(&v["code"].as_str().unwrap_or("")),
        "{text}"
    );
    assert!(!text.contains(PASSWORD), "the password was written: {text}");
}

#[test]
fn without_the_variable_nothing_is_written() {
    let dir = scratch("termination-absent");
    let (exit, text) = pull(&dir, "oci://registry.test/shop/../orders:v1", false);
    assert_eq!(exit, 2);
    assert_eq!(text, "", "no termination file without PTAH_TERMINATION_LOG");
}
