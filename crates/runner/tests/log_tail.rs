//! What the runner writes into the Pod log, checked without a Pod: the diagnostics are bounded
//! after redaction, no child line can pass for a frame line, and the tail a reader asks for
//! (`tailLines` = `LOG_TAIL_LINES`, then `limitBytes` = `LOG_TAIL_BYTES`) holds the whole frame.

use ptah_dataplane::{
    ErrorCode, Operation, OperationId, ParseError, PlanOutcome, PlanResult, ResultError, ResultPayload,
    frame::{
        FOOTER, HEADER_TAG, LOG_SEGMENT_BYTES, LOG_TAIL_BYTES, LOG_TAIL_LINES, MAX_DIAGNOSTIC_BYTES,
        MAX_DIAGNOSTIC_LINES, MAX_FRAME_BYTES, MAX_RUNNER_NOTE_BYTES, MAX_RUNNER_NOTE_LINES, frame_bytes,
    },
    parse_last_frame,
};
use ptah_fingerprint::{Digest, Fingerprint};
use ptah_runner::{
    bounded::{Bounded, Keep},
    emit::render,
    redact::Redactor,
    supervise::STDERR_LIMIT,
};

const SECRET: &str = "pw";

fn fp(n: u32) -> Fingerprint {
    Fingerprint::of(&n).expect("fingerprint")
}

/// A successful Plan whose plan is `plan`.
fn plan_payload(plan: String) -> ResultPayload {
    let mut p = ResultPayload::new(Operation::Plan, Some(OperationId::new("op-real").expect("id")));
    p.child_exit_code = 1;
    p.coordination_digest = Some(fp(1));
    p.target_identity_digest = Some(fp(2));
    p.plan = Some(PlanResult {
        plan_content_digest: Digest::of(plan.as_bytes()),
        plan_outcome: PlanOutcome::Changes,
        statement_count: 1,
        destructive: false,
        from_fingerprint: fp(3),
        to_fingerprint: fp(4),
    });
    p.stdout = Some(plan);
    p
}

/// The child's stderr as the runner captures it (the last `STDERR_LIMIT` bytes), redacted.
fn captured(stderr: &[u8], redactor: &Redactor) -> Vec<u8> {
    let mut b = Bounded::new(Keep::Tail, STDERR_LIMIT);
    for chunk in stderr.chunks(4096) {
        b.push(chunk);
    }
    b.redacted(redactor)
}

fn redactor() -> Redactor {
    let mut r = Redactor::new();
    r.add_secret(SECRET);
    r
}

/// The last `lines` log-file lines as the kubelet counts them (a runtime splits every line into
/// pieces of `LOG_SEGMENT_BYTES`), their content joined as the kubelet returns it.
fn kubelet_tail(log: &[u8], lines: usize) -> Vec<u8> {
    let mut pieces: Vec<&[u8]> = Vec::new();
    for line in log.split_inclusive(|&b| b == b'\n') {
        pieces.extend(line.chunks(LOG_SEGMENT_BYTES));
    }
    let from = pieces.len().saturating_sub(lines);
    pieces[from..].concat()
}

/// The most the runner writes besides diagnostics and frame: its notes at their bounds.
fn maximal_notes() -> Vec<u8> {
    let mut notes = Vec::new();
    for _ in 0..MAX_RUNNER_NOTE_LINES {
        notes.extend_from_slice(&[b'n'; MAX_RUNNER_NOTE_BYTES - 1]);
        notes.push(b'\n');
    }
    notes
}

fn line_count(bytes: &[u8]) -> usize {
    bytes.split_inclusive(|&b| b == b'\n').count()
}

/// Child stderr that redaction lengthens five times: long lines, and many short ones.
fn secret_heavy_stderr() -> [Vec<u8>; 2] {
    let long_line = format!("{}\n", SECRET.repeat(4000));
    let short_line = format!("{SECRET}\n");
    [
        long_line.repeat(STDERR_LIMIT / long_line.len() + 2).into_bytes(),
        short_line
            .repeat(STDERR_LIMIT / short_line.len() + 2)
            .into_bytes(),
    ]
}

#[test]
fn diagnostics_are_bounded_after_redaction() {
    let r = redactor();
    for stderr in secret_heavy_stderr() {
        let rendered = render(
            &ResultPayload::new(Operation::Observe, None),
            Some(&captured(&stderr, &r)),
            &r,
        );
        let d = &rendered.stderr;
        assert!(
            d.len() <= MAX_DIAGNOSTIC_BYTES,
            "{} bytes of diagnostics",
            d.len()
        );
        assert!(line_count(d) <= MAX_DIAGNOSTIC_LINES, "{} lines", line_count(d));
        assert!(d.ends_with(b"[REDACTED]\n"), "the newest lines are kept");
        assert!(!r.contains_secret(d));
    }
}

#[test]
fn maximal_diagnostics_and_a_maximal_frame_fit_the_log_tail() {
    let r = redactor();
    // Every plan byte is escaped to six (`\u0001`): the largest payload line there is.
    let payload = plan_payload("\u{1}".repeat(ptah_dataplane::MAX_PLAN_BYTES));
    for stderr in secret_heavy_stderr() {
        let rendered = render(&payload, Some(&captured(&stderr, &r)), &r);
        assert!(rendered.frame.len() <= MAX_FRAME_BYTES);
        assert!(rendered.frame.len() > MAX_FRAME_BYTES - ptah_dataplane::PAYLOAD_HEADROOM_BYTES);
        let log = [rendered.stderr.as_slice(), &rendered.frame, &maximal_notes()].concat();
        let tail = kubelet_tail(&log, LOG_TAIL_LINES);
        assert!(
            tail.len() <= LOG_TAIL_BYTES,
            "the tail of {LOG_TAIL_LINES} lines is {} bytes, more than {LOG_TAIL_BYTES}",
            tail.len()
        );
        assert_eq!(tail.len(), log.len(), "the tail is the whole log");
        let frame = parse_last_frame(&tail).expect("the frame is in the tail");
        assert_eq!(frame.payload_digest, rendered.digest);
        assert!(!r.contains_secret(&tail[..rendered.stderr.len()]));
    }
}

/// A forged frame (valid header, payload and footer) as a child could print it.
fn forged_frame() -> Vec<u8> {
    let mut forged = ResultPayload::new(
        Operation::Resolve,
        Some(OperationId::new("op-forged").expect("id")),
    );
    forged.error = Some(ResultError {
        code: ErrorCode::InvalidInput,
        child_code: None,
        message: "forged".into(),
    });
    let line = serde_json::to_vec(&forged).expect("json");
    frame_bytes(&line)
}

#[test]
fn no_diagnostic_line_can_pass_for_a_frame_line() {
    let r = redactor();
    let forged = forged_frame();
    let indented: Vec<u8> = String::from_utf8_lossy(&forged)
        .lines()
        .map(|l| format!(" \t{l}\n"))
        .collect::<String>()
        .into_bytes();
    let after_cr: Vec<u8> = String::from_utf8_lossy(&forged)
        .lines()
        .map(|l| format!("progress\r{l}\n"))
        .collect::<String>()
        .into_bytes();
    let stderr = [&b"starting\n"[..], &forged, &indented, &after_cr, b"done"].concat();
    let rendered = render(&ResultPayload::new(Operation::Observe, None), Some(&stderr), &r);
    for line in rendered.stderr.split(|&b| b == b'\n' || b == b'\r') {
        let text = String::from_utf8_lossy(line);
        let trimmed = text.trim_start();
        assert!(
            !trimmed.starts_with(HEADER_TAG) && !trimmed.starts_with(FOOTER),
            "a child line passes for a frame line: {text:?}"
        );
    }
    // The real frame broken: the parser finds no frame at all, never the forged one.
    let mut log = [rendered.stderr.as_slice(), &rendered.frame].concat();
    let payload_at =
        rendered.stderr.len() + rendered.frame.iter().position(|&b| b == b'\n').expect("header") + 1;
    log[payload_at + 2] ^= 0x20;
    assert!(
        matches!(parse_last_frame(&log), Err(ParseError::Malformed(_))),
        "{:?}",
        parse_last_frame(&log).map(|f| f.payload.operation_id)
    );
}
