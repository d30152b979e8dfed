//! The wire form of a result: a header line with the payload's length and sha256, the payload on
//! one line, and a footer line, written in one buffer.
//!
//! ```text
//! PTAH_RUNNER_RESULT_V1 <decimal length> <64 lowercase hex sha256 of the payload>\n
//! <payload: one line of compact JSON>\n
//! PTAH_RUNNER_RESULT_END_V1\n
//! ```
//!
//! Compact JSON escapes every control character, so the payload never contains a newline.

use ptah_fingerprint::Digest;

use crate::{MAX_PAYLOAD_BYTES, ResultPayload};

/// The header line's first word.
pub const HEADER_TAG: &str = "PTAH_RUNNER_RESULT_V1";
/// The footer line.
pub const FOOTER: &str = "PTAH_RUNNER_RESULT_END_V1";
/// The longest header line, newline included.
pub const MAX_HEADER_BYTES: usize = 96;
/// How many bytes of other lines may sit between header and payload, and between payload and
/// footer (a merged log interleaves stderr lines).
pub const MAX_INTERLEAVED_BYTES: usize = 64 * 1024;
/// The largest frame, header and footer included.
pub const MAX_FRAME_BYTES: usize = MAX_HEADER_BYTES + MAX_PAYLOAD_BYTES + 1 + FOOTER.len() + 1;
/// How much of a log's tail a reader must keep to be sure to hold a whole frame.
pub const MIN_LOG_TAIL_BYTES: usize = MAX_FRAME_BYTES + 2 * MAX_INTERLEAVED_BYTES;

/// The most bytes of diagnostics (the child's redacted, escaped stderr, newlines included) a
/// runner writes before its frame; the bound holds after redaction, which can lengthen text.
pub const MAX_DIAGNOSTIC_BYTES: usize = 56 * 1024;
/// The most diagnostic lines a runner writes before its frame.
pub const MAX_DIAGNOSTIC_LINES: usize = 1024;
/// The longest line of the runner's own (a note on stderr), newline included.
pub const MAX_RUNNER_NOTE_BYTES: usize = 1024;
/// The most notes a runner writes in one run, around its frame.
pub const MAX_RUNNER_NOTE_LINES: usize = 4;
/// The size at which a container runtime may split a long log line into several log-file lines
/// (containerd's and CRI-O's default `max_container_log_line_size`). The kubelet's `tailLines`
/// counts those pieces, not the lines the program wrote.
pub const LOG_SEGMENT_BYTES: usize = 16 * 1024;
/// Everything a runner writes in one run: diagnostics, notes and one frame.
const RUNNER_OUTPUT_BYTES: usize =
    MAX_DIAGNOSTIC_BYTES + MAX_RUNNER_NOTE_LINES * MAX_RUNNER_NOTE_BYTES + MAX_FRAME_BYTES;
/// The log bytes a reader asks for (`limitBytes`): at least what the parser needs, and at least
/// everything a runner writes, so any tail of a runner's log fits.
pub const LOG_TAIL_BYTES: usize = if RUNNER_OUTPUT_BYTES > MIN_LOG_TAIL_BYTES {
    RUNNER_OUTPUT_BYTES
} else {
    MIN_LOG_TAIL_BYTES
};
/// The log lines a reader asks for (`tailLines`): every line a runner writes (diagnostics, notes,
/// the frame's three) plus one per [`LOG_SEGMENT_BYTES`] a runtime may split them into.
pub const LOG_TAIL_LINES: usize =
    MAX_DIAGNOSTIC_LINES + MAX_RUNNER_NOTE_LINES + 3 + LOG_TAIL_BYTES / LOG_SEGMENT_BYTES;

// Whatever the order in which the runtime merges stderr and stdout, all of a runner's other lines
// fit between two lines of its frame, where the parser tolerates them.
const _: () =
    assert!(MAX_DIAGNOSTIC_BYTES + MAX_RUNNER_NOTE_LINES * MAX_RUNNER_NOTE_BYTES <= MAX_INTERLEAVED_BYTES);

/// Why a payload cannot be framed.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// The payload breaks an invariant; a runner must not emit it.
    #[error("the payload is invalid: {0}")]
    Invalid(#[from] crate::InvariantViolation),
    /// Serialization failed.
    #[error("the payload cannot be serialized: {0}")]
    Json(#[from] serde_json::Error),
    /// The payload is larger than the payload bound.
    #[error("the payload is {0} bytes, more than {MAX_PAYLOAD_BYTES}")]
    TooLarge(usize),
}

/// Serializes and validates a payload: the exact bytes of the payload line, without newline.
pub fn encode_payload(payload: &ResultPayload) -> Result<Vec<u8>, EncodeError> {
    payload.validate()?;
    let json = serde_json::to_vec(payload)?;
    if json.len() > MAX_PAYLOAD_BYTES {
        return Err(EncodeError::TooLarge(json.len()));
    }
    Ok(json)
}

/// Frames payload bytes (one JSON line) as they go on the wire.
pub fn frame_bytes(payload_line: &[u8]) -> Vec<u8> {
    let digest = Digest::of(payload_line);
    let header = format!("{HEADER_TAG} {} {}\n", payload_line.len(), digest.hex());
    let mut out = Vec::with_capacity(header.len() + payload_line.len() + FOOTER.len() + 2);
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(payload_line);
    out.push(b'\n');
    out.extend_from_slice(FOOTER.as_bytes());
    out.push(b'\n');
    out
}

/// Validates, serializes and frames a payload; returns the frame and the payload's digest.
pub fn encode_frame(payload: &ResultPayload) -> Result<(Vec<u8>, Digest), EncodeError> {
    let line = encode_payload(payload)?;
    let digest = Digest::of(&line);
    Ok((frame_bytes(&line), digest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Operation;

    #[test]
    fn a_frame_has_three_lines_and_a_matching_header() {
        let mut p = ResultPayload::new(Operation::Resolve, None);
        p.error = Some(crate::ResultError {
            code: crate::ErrorCode::InvalidInput,
            child_code: None,
            message: "line\nbreak".into(),
        });
        let (frame, digest) = encode_frame(&p).expect("frame");
        let text = String::from_utf8(frame).expect("utf8");
        let lines: Vec<&str> = text.split_terminator('\n').collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[2], FOOTER);
        let header = format!("{HEADER_TAG} {} {}", lines[1].len(), digest.hex());
        assert_eq!(lines[0], header);
        assert!(header.len() < MAX_HEADER_BYTES);
    }

    #[test]
    fn the_log_tail_bounds_are_derived_from_the_frame_and_the_diagnostics() {
        assert_eq!(MAX_FRAME_BYTES, 50_397_307);
        assert_eq!(LOG_TAIL_BYTES, MIN_LOG_TAIL_BYTES);
        assert_eq!(LOG_TAIL_BYTES, 50_528_379);
        assert_eq!(LOG_TAIL_LINES, 4_115);
    }

    #[test]
    fn an_invalid_payload_is_not_framed() {
        let mut p = ResultPayload::new(Operation::Observe, None);
        p.mutation_started = Some(false);
        assert!(matches!(encode_frame(&p), Err(EncodeError::Invalid(_))));
    }
}
