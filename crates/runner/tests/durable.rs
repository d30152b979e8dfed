//! The `ptah-runner` binary with durable delivery against the real receiver over loopback TLS
//! (the cluster in memory): it enrols before anything runs, delivers its result instead of a
//! frame, and runs nothing when it cannot enrol or is misconfigured.

mod support;

use std::{
    collections::BTreeMap,
    net::{IpAddr, Ipv4Addr},
    path::Path,
};

use ptah_dataplane::{ErrorCode, Operation, OperationId, summary::Summary};
use ptah_resultdelivery::{RecordType, ResourceKind, wire::EnrolmentTicket};
use ptah_resultreceiver::{
    EnrolmentToken,
    testing::{Memory, POD_NAME, POD_UID, Running, live, start},
};
use support::{Run, run_runner, scratch};

const OPERATION_ID: &str = "op-durable-1";

fn token() -> EnrolmentToken {
    EnrolmentToken::from_bytes([5; 32])
}

/// The environment of an Observe whose database URL is missing (so the child never starts and
/// no database is needed), delivering durably to `running` with `token`.
fn env(running: &Running, dir: &Path, token: &EnrolmentToken) -> BTreeMap<String, String> {
    let ca = dir.join("result-ca.pem");
    std::fs::write(&ca, pem_of(&running.ca_der)).expect("ca file");
    let ticket = EnrolmentTicket {
        namespace: "shop".to_owned(),
        kind: ResourceKind::PtahSchema,
        name: "orders".to_owned(),
        operation_id: OperationId::new(OPERATION_ID).expect("id"),
        token: token.reveal(),
    };
    let ticket_file = dir.join("ticket.json");
    std::fs::write(&ticket_file, serde_json::to_vec(&ticket).expect("json")).expect("ticket");
    BTreeMap::from([
        ("PTAH_RUNNER_PROTOCOL_VERSION".to_owned(), "1".to_owned()),
        ("PTAH_OPERATION_ID".to_owned(), OPERATION_ID.to_owned()),
        ("PTAH_RESULT_DELIVERY".to_owned(), "durable".to_owned()),
        ("PTAH_RESULT_ENDPOINT".to_owned(), running.addr.to_string()),
        ("PTAH_RESULT_SERVER_NAME".to_owned(), "127.0.0.1".to_owned()),
        ("PTAH_RESULT_CA_FILE".to_owned(), ca.display().to_string()),
        (
            "PTAH_RESULT_TICKET_FILE".to_owned(),
            ticket_file.display().to_string(),
        ),
        ("PTAH_POD_NAME".to_owned(), POD_NAME.to_owned()),
        ("PTAH_POD_UID".to_owned(), POD_UID.to_owned()),
    ])
}

fn pem_of(der: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = b64
        .as_bytes()
        .chunks(64)
        .filter_map(|c| std::str::from_utf8(c).ok())
        .collect();
    format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        lines.join("\n")
    )
}

async fn run_observe(env: BTreeMap<String, String>, dir: &Path) -> Run {
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || run_runner("observe", &env, &dir.join("no-such-ptah"), &dir))
        .await
        .expect("runner")
}

fn stderr(run: &Run) -> String {
    String::from_utf8_lossy(&run.output.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_result_is_delivered_and_no_frame_reaches_the_log() {
    let memory = Memory::default();
    *memory.live.lock().expect("lock") = live(
        Operation::Observe,
        OPERATION_ID,
        &token(),
        IpAddr::V4(Ipv4Addr::LOCALHOST),
    );
    let running = start(memory).await;
    let dir = scratch();
    let run = run_observe(env(&running, dir.path(), &token()), dir.path()).await;
    assert!(
        run.output.stdout.is_empty(),
        "a frame was written: {:?}",
        run.frame
    );
    let log = stderr(&run);
    assert!(log.contains("result delivered (sha256:"), "{log}");
    assert!(
        !log.contains("PTAH_RUNNER_RESULT_V1") && !log.contains(&token().reveal()),
        "{log}"
    );
    assert_eq!(
        run.output.status.code(),
        Some(1),
        "the delivered result is a failure"
    );
    let records = running.memory.records.lock().expect("lock");
    assert_eq!(records.len(), 3, "intent, one chunk, complete");
    let (_, _, data) = records
        .iter()
        .find(|(name, _)| name.ends_with("-chunk-0000"))
        .map(|(_, r)| r)
        .expect("chunk");
    let body: ptah_resultdelivery::ResultBody = serde_json::from_slice(data).expect("body");
    let error = body.payload.error.expect("an error result");
    assert_eq!(error.code, ErrorCode::InvalidInput, "{}", error.message);
    let summary = Summary::parse(run.summary.trim()).expect("summary");
    let intent = records
        .values()
        .find_map(|r| (r.0 == RecordType::Intent).then_some(r.1))
        .flatten();
    assert_eq!(
        Some(summary.frame_digest),
        intent.map(|i| i.digest),
        "the summary names the body"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_that_cannot_enrol_or_is_misconfigured_runs_nothing() {
    let memory = Memory::default();
    *memory.live.lock().expect("lock") = live(
        Operation::Observe,
        OPERATION_ID,
        &token(),
        IpAddr::V4(Ipv4Addr::LOCALHOST),
    );
    let running = start(memory).await;
    let dir = scratch();
    let wrong = EnrolmentToken::from_bytes([6; 32]);
    let run = run_observe(env(&running, dir.path(), &wrong), dir.path()).await;
    let log = stderr(&run);
    assert!(
        log.contains("did not enrol this Pod, so nothing ran") && log.contains("WrongToken"),
        "{log}"
    );
    assert!(!log.contains(&wrong.reveal()), "{log}");
    assert!(run.output.stdout.is_empty());
    assert_eq!(run.output.status.code(), Some(1));
    assert!(running.memory.records.lock().expect("lock").is_empty());

    let mut missing_ca = env(&running, dir.path(), &token());
    missing_ca.insert("PTAH_RESULT_CA_FILE".to_owned(), "/nonexistent/ca.pem".to_owned());
    let run = run_observe(missing_ca, dir.path()).await;
    let log = stderr(&run);
    assert!(
        log.contains("durable delivery is misconfigured") && log.contains("PTAH_RESULT_CA_FILE"),
        "{log}"
    );
    assert!(run.output.stdout.is_empty());
    assert_eq!(run.output.status.code(), Some(1));
    let mut other = env(&running, dir.path(), &token());
    other.insert("PTAH_RESULT_DELIVERY".to_owned(), "maybe".to_owned());
    let run = run_observe(other, dir.path()).await;
    assert!(
        stderr(&run).contains("must be `durable` or unset"),
        "{}",
        stderr(&run)
    );
    assert!(
        running.memory.records.lock().expect("lock").is_empty(),
        "nothing was delivered"
    );
}
