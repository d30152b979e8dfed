//! Properties of the parser and the identity: never panic, always find a written frame.

mod common;

use common::{frame, plan_payload};
use proptest::prelude::*;
use ptah_dataplane::{ParseError, TargetIdentity, parse_last_frame};

/// Noise: lines of arbitrary bytes (no header can start inside them unless at a line start).
fn noise() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..200),
        0..20,
    )
    .prop_map(|lines| {
        let mut out = Vec::new();
        for l in lines {
            out.extend_from_slice(&l);
            out.push(b'\n');
        }
        out
    })
}

// Case counts follow `PROPTEST_CASES` (default 256), so a long run is a poor man's fuzzer:
// `PROPTEST_CASES=200000 cargo test -p ptah-dataplane --test proptests`.
proptest! {
    #[test]
    fn the_parser_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        let _ = parse_last_frame(&bytes);
    }

    #[test]
    fn the_parser_never_panics_on_header_like_input(
        len in 0u64..200,
        hex in "[0-9a-f]{0,70}",
        body in prop::collection::vec(any::<u8>(), 0..300),
        footer in any::<bool>(),
    ) {
        let mut log = format!("PTAH_RUNNER_RESULT_V1 {len} {hex}\n").into_bytes();
        log.extend_from_slice(&body);
        if footer {
            log.extend_from_slice(b"\nPTAH_RUNNER_RESULT_END_V1\n");
        }
        let _ = parse_last_frame(&log);
    }

    #[test]
    fn a_written_frame_is_found_among_any_noise(
        plan in "\\PC{0,300}",
        before in noise(),
        after in noise(),
    ) {
        let p = plan_payload(&plan);
        let log = [before.as_slice(), &frame(&p), after.as_slice()].concat();
        let got = parse_last_frame(&log);
        prop_assert_eq!(got.map(|f| f.payload), Ok(p));
    }

    #[test]
    fn a_cut_frame_is_never_mistaken_for_a_result(
        plan in "\\PC{0,100}",
        before in noise(),
        cut in 0.0f64..1.0,
    ) {
        let f = frame(&plan_payload(&plan));
        let at = ((f.len() - 1) as f64 * cut) as usize;
        let log = [before.as_slice(), &f[..at]].concat();
        // Nothing of the frame is no frame; any part of it is one that may still arrive.
        let want = if at > 0 { ParseError::Incomplete } else { ParseError::Absent };
        prop_assert_eq!(parse_last_frame(&log), Err(want));
    }

    #[test]
    fn the_identity_parser_never_panics(s in "\\PC{0,120}") {
        let _ = TargetIdentity::from_url(&s);
        let _ = TargetIdentity::from_url(&format!("postgres://{s}"));
        let _ = TargetIdentity::from_url(&format!("mysql://u@h:1/d?{s}"));
    }

    #[test]
    fn the_password_never_changes_the_identity(pw in "[!-~]{0,40}") {
        let enc: String = url::form_urlencoded::byte_serialize(pw.as_bytes()).collect();
        let with = format!("postgres://app:{enc}@db.example/app");
        let a = TargetIdentity::from_url(&with).map(|i| i.digest().ok());
        let b = TargetIdentity::from_url("postgres://app@db.example/app").map(|i| i.digest().ok());
        prop_assert_eq!(a, b);
    }
}
