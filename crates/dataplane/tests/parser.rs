//! The frame parser on hand-made logs: noise, several frames, partial frames, tampering, bounds.

mod common;

use common::{frame, plan_payload};
use ptah_dataplane::{
    ErrorCode, InvariantViolation, MAX_PAYLOAD_BYTES, Operation, ParseError, ResultError, ResultPayload,
    frame::frame_bytes, parse::Malformed, parse_last_frame,
};

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn a_frame_amid_noise_is_found() {
    let p = plan_payload("CREATE TABLE t (id int);\n");
    let log = cat(&[
        b"starting\n{\"level\":\"info\"}\n",
        &frame(&p),
        b"trailing log line\n",
    ]);
    let got = parse_last_frame(&log).expect("frame");
    assert_eq!(got.payload, p);
    assert_eq!(got.offset, b"starting\n{\"level\":\"info\"}\n".len());
}

#[test]
fn interleaved_lines_inside_the_frame_are_tolerated() {
    let p = plan_payload("x");
    let f = frame(&p);
    let text = String::from_utf8(f).expect("utf8");
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    let log = format!(
        "{}\nstderr one\n{}\nstderr two\n{}\n",
        lines[0], lines[1], lines[2]
    );
    assert_eq!(parse_last_frame(log.as_bytes()).expect("frame").payload, p);
}

#[test]
fn the_last_of_two_frames_wins() {
    let first = plan_payload("first");
    let second = plan_payload("second");
    let log = cat(&[&frame(&first), b"noise\n", &frame(&second)]);
    assert_eq!(parse_last_frame(&log).expect("frame").payload, second);
}

#[test]
fn a_broken_later_frame_does_not_hide_an_earlier_valid_one() {
    let good = plan_payload("good");
    let bad = b"PTAH_RUNNER_RESULT_V1 5 0000000000000000000000000000000000000000000000000000000000000000\nhello\nPTAH_RUNNER_RESULT_END_V1\n";
    let log = cat(&[&frame(&good), bad]);
    assert_eq!(parse_last_frame(&log).expect("frame").payload, good);
}

#[test]
fn a_truncated_frame_is_incomplete_at_every_cut() {
    let f = frame(&plan_payload("CREATE TABLE t (id int);"));
    for cut in 1..f.len() {
        let log = cat(&[b"noise\n", &f[..cut]]);
        assert_eq!(
            parse_last_frame(&log),
            Err(ParseError::Incomplete),
            "cut at {cut}"
        );
    }
    assert!(parse_last_frame(&f).is_ok());
}

#[test]
fn a_frame_still_arriving_after_a_valid_one_is_incomplete() {
    let older = frame(&plan_payload("older"));
    let newer = frame(&plan_payload("newer"));
    let log = cat(&[&older, &newer[..newer.len() - 5]]);
    assert_eq!(parse_last_frame(&log), Err(ParseError::Incomplete));
}

#[test]
fn no_header_is_absent() {
    assert_eq!(parse_last_frame(b""), Err(ParseError::Absent));
    assert_eq!(parse_last_frame(b"hello\nworld\n"), Err(ParseError::Absent));
}

#[test]
fn a_wrong_digest_is_malformed() {
    let f = frame(&plan_payload("x"));
    let mut text = String::from_utf8(f).expect("utf8");
    // Flip one hex digit of the declared digest.
    let pos = text.find('\n').expect("header") - 1;
    let flipped = if &text[pos..=pos] == "0" { "1" } else { "0" };
    text.replace_range(pos..=pos, flipped);
    assert_eq!(
        parse_last_frame(text.as_bytes()),
        Err(ParseError::Malformed(Malformed::DigestMismatch))
    );
}

#[test]
fn a_wrong_length_is_malformed() {
    let p = plan_payload("x");
    let line = serde_json::to_vec(&p).expect("json");
    let good = String::from_utf8(frame_bytes(&line)).expect("utf8");
    let len = line.len().to_string();
    let wrong = good.replacen(&format!(" {len} "), &format!(" {} ", line.len() + 1), 1);
    assert_eq!(
        parse_last_frame(wrong.as_bytes()),
        Err(ParseError::Malformed(Malformed::LengthMismatch))
    );
}

#[test]
fn an_oversize_declaration_is_refused_without_reading_on() {
    let header = format!(
        "PTAH_RUNNER_RESULT_V1 {} {}\n",
        MAX_PAYLOAD_BYTES + 1,
        "a".repeat(64)
    );
    let log = cat(&[header.as_bytes(), b"{}\nPTAH_RUNNER_RESULT_END_V1\n"]);
    assert!(matches!(
        parse_last_frame(&log),
        Err(ParseError::Malformed(Malformed::Oversize { declared })) if declared == MAX_PAYLOAD_BYTES as u64 + 1
    ));
}

#[test]
fn garbage_headers_are_malformed() {
    for header in [
        "PTAH_RUNNER_RESULT_V1 \n",
        "PTAH_RUNNER_RESULT_V1 12\n",
        "PTAH_RUNNER_RESULT_V1 012 aaaa\n",
        "PTAH_RUNNER_RESULT_V1 -1 aaaa\n",
        "PTAH_RUNNER_RESULT_V1 2 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
    ] {
        let log = format!("{header}{{}}\nPTAH_RUNNER_RESULT_END_V1\n");
        assert_eq!(
            parse_last_frame(log.as_bytes()),
            Err(ParseError::Malformed(Malformed::BadHeader)),
            "{header:?}"
        );
    }
}

#[test]
fn a_payload_that_is_not_the_payload_json_is_malformed() {
    for line in [&b"not json"[..], b"{\"protocolVersion\":1}", b"[]"] {
        let log = frame_bytes(line);
        assert!(
            matches!(
                parse_last_frame(&log),
                Err(ParseError::Malformed(Malformed::NotJson(_)))
            ),
            "{}",
            String::from_utf8_lossy(line)
        );
    }
}

#[test]
fn another_protocol_version_is_reported_as_such() {
    let mut p = ResultPayload::new(Operation::Apply, None);
    p.protocol_version = 99;
    p.error = Some(ResultError {
        code: ErrorCode::RunnerProtocolMismatch,
        child_code: None,
        message: "manager speaks 1".into(),
    });
    let line = serde_json::to_vec(&p).expect("json");
    assert_eq!(
        parse_last_frame(&frame_bytes(&line)),
        Err(ParseError::ProtocolMismatch { found: 99 })
    );
}

#[test]
fn a_missing_footer_after_too_much_noise_is_malformed() {
    let f = frame(&plan_payload("x"));
    let text = String::from_utf8(f).expect("utf8");
    let without_footer = text.trim_end().trim_end_matches("PTAH_RUNNER_RESULT_END_V1");
    let noise = "n".repeat(1023) + "\n";
    let log = format!("{without_footer}{}", noise.repeat(65));
    assert_eq!(
        parse_last_frame(log.as_bytes()),
        Err(ParseError::Malformed(Malformed::MissingFooter))
    );
}

#[test]
fn the_search_stops_after_64_headers() {
    let mut log = frame(&plan_payload("valid but early"));
    for _ in 0..70 {
        log.extend_from_slice(b"PTAH_RUNNER_RESULT_V1 x y\n");
    }
    // The valid frame lies beyond the 64 headers one parse examines; the latest failure is reported.
    assert_eq!(
        parse_last_frame(&log),
        Err(ParseError::Malformed(Malformed::BadHeader))
    );
    let mut short = frame(&plan_payload("valid but early"));
    for _ in 0..60 {
        short.extend_from_slice(b"PTAH_RUNNER_RESULT_V1 x y\n");
    }
    assert!(parse_last_frame(&short).is_ok());
}

/// Each invariant the parser enforces, one broken payload each.
#[test]
fn payloads_breaking_invariants_are_refused() {
    use InvariantViolation as V;
    let mut cases: Vec<(&str, InvariantViolation, ResultPayload)> = Vec::new();
    let base = plan_payload("p");

    let mut p = base.clone();
    p.child_exit_code = 2;
    cases.push(("success with exit 2", V::SuccessWithFailedExit(2), p));

    let mut p = ResultPayload::new(Operation::Observe, None);
    p.mutation_started = Some(false);
    p.error = Some(err());
    cases.push(("read-only with mutation flags", V::MutationFlagsOnReadOnly, p));

    let mut p = ResultPayload::new(Operation::Apply, None);
    p.child_exit_code = 1;
    p.mutation_started = Some(false);
    p.uncertain = Some(true);
    p.error = Some(err());
    cases.push(("uncertain without mutation", V::UncertainWithoutMutation, p));

    let mut p = ResultPayload::new(Operation::Apply, None);
    p.child_exit_code = 0;
    p.coordination_digest = base.coordination_digest;
    p.target_identity_digest = base.target_identity_digest;
    p.mutation_started = Some(true);
    p.uncertain = Some(true);
    cases.push(("successful apply that is uncertain", V::ApplySuccessShape, p));

    let mut p = ResultPayload::new(Operation::Apply, None);
    p.child_exit_code = 0;
    p.coordination_digest = base.coordination_digest;
    p.target_identity_digest = base.target_identity_digest;
    p.mutation_started = Some(false);
    p.uncertain = Some(false);
    cases.push(("successful apply without mutation", V::ApplySuccessShape, p));

    let mut p = ResultPayload::new(Operation::Resolve, None);
    p.stdout = Some("x".into());
    p.error = Some(err());
    cases.push(("stdout outside plan", V::UnexpectedStdout, p));

    let mut p = base.clone();
    p.stdout = Some("other bytes".into());
    cases.push(("plan bytes not matching the digest", V::PlanMismatch, p));

    let mut p = base.clone();
    p.coordination_digest = None;
    cases.push((
        "database success without coordination digest",
        V::MissingDigest,
        p,
    ));

    let mut p = base.clone();
    p.truncation = Some(ptah_dataplane::Truncation {
        stdout: true,
        stdout_bytes_dropped: 1,
        ..Default::default()
    });
    cases.push(("success with truncated stdout", V::SuccessWithTruncatedStdout, p));

    for (what, violation, p) in cases {
        assert_eq!(p.validate(), Err(violation.clone()), "{what}");
        let line = serde_json::to_vec(&p).expect("json");
        assert_eq!(
            parse_last_frame(&frame_bytes(&line)),
            Err(ParseError::Malformed(Malformed::Invalid(violation))),
            "{what}"
        );
    }
}

#[test]
fn malformed_digests_in_the_payload_are_refused() {
    let p = plan_payload("p");
    let json = serde_json::to_string(&p).expect("json");
    let good = p.coordination_digest.expect("digest").to_string();
    let bad = json.replace(&good, &good.to_uppercase().replace("SHA256", "sha256"));
    assert_ne!(bad, json);
    assert!(matches!(
        parse_last_frame(&frame_bytes(bad.as_bytes())),
        Err(ParseError::Malformed(Malformed::NotJson(_)))
    ));
}

fn err() -> ResultError {
    ResultError {
        code: ErrorCode::ChildFailed,
        child_code: Some("database".into()),
        message: "failed".into(),
    }
}
