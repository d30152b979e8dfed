//! The manager parses result frames out of pod logs it does not control. Two modes (a first byte
//! of 0x01 selects the second):
//! - arbitrary log bytes: parsing is deterministic and a refusal is bounded; an accepted frame's
//!   header (at the reported offset) declares the payload's length and sha256, a line of exactly
//!   that length and digest follows it and decodes to the reported payload, which satisfies every
//!   invariant and re-frames (`encode_frame`) into a log the parser reads back equal;
//! - any prefix (arbitrary bytes, then a line break) followed by a frame built by `encode_frame`
//!   from a valid (failed Observe) payload whose operation id and message come from the input: the parser returns exactly that
//!   payload, its digest, and the frame's offset.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_dataplane::{
    ErrorCode, Operation, OperationId, ParseError, ResultError, ResultPayload, encode_frame,
    frame::HEADER_TAG, parse::decode_payload, parse_last_frame,
};
use ptah_fingerprint::Digest;
use ptah_fuzz::assert_refusal_message;

fn arbitrary_log(log: &[u8]) {
    let parsed = parse_last_frame(log);
    assert_eq!(parsed, parse_last_frame(log), "parsing is deterministic");
    let frame = match parsed {
        Ok(frame) => frame,
        Err(err) => {
            if let ParseError::ProtocolMismatch { found } = err {
                assert_ne!(found, u64::from(ptah_dataplane::PROTOCOL_VERSION));
            }
            return assert_refusal_message(&err.to_string(), log.len());
        }
    };
    assert!(
        frame.offset == 0 || log[frame.offset - 1] == b'\n',
        "a header starts a line"
    );
    let rest = &log[frame.offset..];
    let header_end = rest.iter().position(|&b| b == b'\n').expect("a header line ends");
    let header = std::str::from_utf8(&rest[..header_end]).expect("a header is text");
    let words: Vec<&str> = header.split(' ').collect();
    assert_eq!(words.len(), 3, "header {header:?}");
    assert_eq!(words[0], HEADER_TAG);
    let len: usize = words[1].parse().expect("a decimal length");
    assert_eq!(
        words[2],
        frame.payload_digest.hex(),
        "the header declares the payload's sha256"
    );
    let line = rest[header_end + 1..]
        .split(|&b| b == b'\n')
        .find(|line| line.len() == len && Digest::of(line) == frame.payload_digest)
        .expect("a line of the declared length and digest follows the header");
    assert_eq!(
        decode_payload(line).as_ref(),
        Ok(&frame.payload),
        "the line is the payload"
    );
    assert!(
        frame.payload.validate().is_ok(),
        "an accepted payload breaks an invariant"
    );
    let (reframed, digest) = encode_frame(&frame.payload).expect("an accepted payload re-encodes");
    let again = parse_last_frame(&reframed).expect("a re-encoded frame parses");
    assert_eq!((again.payload, again.offset), (frame.payload, 0));
    assert_eq!(again.payload_digest, digest);
}

fn prefix_then_frame(prefix: &[u8], id: &[u8]) {
    // A failed Observe: valid whatever its id and message (a success would need a drift section).
    let text = String::from_utf8_lossy(id);
    let mut payload = ResultPayload::new(Operation::Observe, OperationId::new(text.as_ref()).ok());
    payload.error = Some(ResultError {
        code: ErrorCode::InvalidInput,
        child_code: None,
        message: text.chars().take(256).collect(),
    });
    let (frame, digest) = encode_frame(&payload).expect("a valid payload encodes");
    let mut log = prefix.to_vec();
    if !log.is_empty() && !log.ends_with(b"\n") {
        log.push(b'\n');
    }
    let offset = log.len();
    log.extend_from_slice(&frame);
    let parsed = parse_last_frame(&log).expect("the appended frame is found");
    assert_eq!(parsed.payload, payload, "the parser returned another payload");
    assert_eq!(parsed.payload_digest, digest);
    assert_eq!(parsed.offset, offset);
}

fuzz_target!(|data: &[u8]| match data.split_first() {
    Some((1, rest)) => {
        // The operation id is the input's last line; the rest is the prefix.
        let cut = rest.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        prefix_then_frame(&rest[..cut], &rest[cut..]);
    }
    _ => arbitrary_log(data),
});
