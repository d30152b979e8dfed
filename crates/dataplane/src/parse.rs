//! Finding the result in a log tail: the **last** valid frame, with a bounded amount of work.
//!
//! The parser walks header lines from the end of the log backwards. For each header it looks for
//! the payload among the following complete lines of exactly the declared length (other lines,
//! up to [`MAX_INTERLEAVED_BYTES`], are tolerated: a merged log interleaves stderr), checks the
//! sha256, then looks for the footer the same way. The first header (from the end) whose frame is
//! whole and valid wins. A frame still being written at the end of the log makes the answer
//! [`ParseError::Incomplete`]: it may still arrive and would supersede anything earlier.

use ptah_fingerprint::Digest;
use serde_json::Value;

use crate::{
    InvariantViolation, MAX_PAYLOAD_BYTES, PROTOCOL_VERSION, ResultPayload,
    frame::{FOOTER, HEADER_TAG, MAX_FRAME_BYTES, MAX_HEADER_BYTES, MAX_INTERLEAVED_BYTES},
};

/// How many header lines one parse examines at most.
pub const MAX_HEADERS: usize = 64;
/// How many bytes of interleaved lines one parse scans at most (64 × 64 KiB).
pub const SEARCH_BUDGET_BYTES: usize = 64 * MAX_INTERLEAVED_BYTES;

/// A frame found and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedFrame {
    /// The payload, which satisfies every invariant.
    pub payload: ResultPayload,
    /// The sha256 of the payload line (the termination summary's `frameDigest`).
    pub payload_digest: Digest,
    /// Where the frame's header starts in the log.
    pub offset: usize,
}

/// Why no frame came out of a log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// No header line at all.
    #[error("no result frame in the log")]
    Absent,
    /// The last frame is still being written; read again later.
    #[error("the result frame is incomplete; it may still arrive")]
    Incomplete,
    /// A whole, digest-checked frame from a runner speaking another protocol version.
    #[error("the runner speaks protocol {found}, not {PROTOCOL_VERSION}")]
    ProtocolMismatch {
        /// The runner's version.
        found: u64,
    },
    /// Frames are there but none is valid; this is the reason for the last one.
    #[error("malformed result frame: {0}")]
    Malformed(#[from] Malformed),
}

/// What is wrong with a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// The header line is not `PTAH_RUNNER_RESULT_V1 <len> <hex>`.
    #[error("bad header line")]
    BadHeader,
    /// The declared length exceeds the payload bound.
    #[error("declared payload of {declared} bytes exceeds {MAX_PAYLOAD_BYTES}")]
    Oversize {
        /// The declared length.
        declared: u64,
    },
    /// No line of the declared length follows the header.
    #[error("no line of the declared length follows the header")]
    LengthMismatch,
    /// Lines of the declared length follow, but none has the declared sha256.
    #[error("no line of the declared length has the declared sha256")]
    DigestMismatch,
    /// The footer does not follow the payload.
    #[error("the footer line is missing")]
    MissingFooter,
    /// The payload is not the payload JSON.
    #[error("the payload is not valid: {0}")]
    NotJson(String),
    /// The payload breaks an invariant.
    #[error("the payload breaks an invariant: {0}")]
    Invalid(#[from] InvariantViolation),
    /// The search budget ran out before a valid frame was found.
    #[error("the search budget ran out")]
    BudgetExhausted,
}

struct Budget {
    scanned: usize,
    hashed: usize,
}

impl Budget {
    fn scan(&mut self, n: usize) -> Result<(), ParseError> {
        self.scanned += n;
        if self.scanned > SEARCH_BUDGET_BYTES {
            return Err(Malformed::BudgetExhausted.into());
        }
        Ok(())
    }

    fn hash(&mut self, n: usize) -> Result<(), ParseError> {
        self.hashed += n;
        if self.hashed > MAX_FRAME_BYTES + SEARCH_BUDGET_BYTES {
            return Err(Malformed::BudgetExhausted.into());
        }
        Ok(())
    }
}

/// Finds the last valid frame in a log tail.
pub fn parse_last_frame(log: &[u8]) -> Result<ParsedFrame, ParseError> {
    let tag = format!("{HEADER_TAG} ");
    let tag = tag.as_bytes();
    let mut budget = Budget {
        scanned: 0,
        hashed: 0,
    };
    let mut latest: Option<ParseError> = None;
    // A header still being written at the very end.
    let last_line_start = log.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let tail = &log[last_line_start..];
    if !tail.is_empty() && tag.starts_with(tail) {
        latest = Some(ParseError::Incomplete);
    }
    let mut tried = 0;
    let mut end = log.len();
    loop {
        let start = log[..end].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if log[start..].starts_with(tag) {
            tried += 1;
            if tried > MAX_HEADERS {
                return Err(latest.unwrap_or(Malformed::BudgetExhausted.into()));
            }
            match frame_at(log, start, &mut budget) {
                Ok(frame) => {
                    return match latest {
                        Some(ParseError::Incomplete) => Err(ParseError::Incomplete),
                        _ => Ok(frame),
                    };
                }
                Err(err @ ParseError::Malformed(Malformed::BudgetExhausted)) => {
                    return Err(latest.unwrap_or(err));
                }
                Err(err) => latest = latest.or(Some(err)),
            }
        }
        if start == 0 {
            break;
        }
        end = start - 1;
    }
    Err(latest.unwrap_or(ParseError::Absent))
}

/// The next line from `from`: `Some((end_of_line, next_start))`, or `None` when the log ends
/// before a newline within `limit` bytes. `Err(())` when no newline appears within `limit`.
fn next_line(log: &[u8], from: usize, limit: usize) -> Result<Option<usize>, ()> {
    let window_end = from.saturating_add(limit).min(log.len());
    match log[from..window_end].iter().position(|&b| b == b'\n') {
        Some(i) => Ok(Some(from + i)),
        None if window_end == log.len() => Ok(None),
        None => Err(()),
    }
}

fn parse_header(line: &[u8]) -> Result<(usize, String), ParseError> {
    let text = std::str::from_utf8(line).map_err(|_| Malformed::BadHeader)?;
    let mut words = text.split(' ');
    let (Some(_tag), Some(len), Some(hex), None) = (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(Malformed::BadHeader.into());
    };
    let digits_ok = !len.is_empty() && len.len() <= 20 && len.bytes().all(|b| b.is_ascii_digit());
    if !digits_ok || (len.len() > 1 && len.starts_with('0')) {
        return Err(Malformed::BadHeader.into());
    }
    let declared: u64 = len.parse().map_err(|_| Malformed::BadHeader)?;
    if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(Malformed::BadHeader.into());
    }
    if declared > MAX_PAYLOAD_BYTES as u64 {
        return Err(Malformed::Oversize { declared }.into());
    }
    let declared = usize::try_from(declared).map_err(|_| Malformed::Oversize { declared })?;
    Ok((declared, hex.to_owned()))
}

fn frame_at(log: &[u8], start: usize, budget: &mut Budget) -> Result<ParsedFrame, ParseError> {
    let header_end = match next_line(log, start, MAX_HEADER_BYTES) {
        Ok(Some(end)) => end,
        Ok(None) => return Err(ParseError::Incomplete),
        Err(()) => return Err(Malformed::BadHeader.into()),
    };
    let (len, hex) = parse_header(&log[start..header_end])?;
    // The payload: a line of exactly `len` bytes with the declared sha256.
    let mut cursor = header_end + 1;
    let mut interleaved = 0usize;
    let mut saw_candidate = false;
    let payload_range = loop {
        let limit = len.max(MAX_INTERLEAVED_BYTES - interleaved) + 1;
        let miss = if saw_candidate {
            Malformed::DigestMismatch
        } else {
            Malformed::LengthMismatch
        };
        let line_end = match next_line(log, cursor, limit) {
            Ok(Some(end)) => end,
            Ok(None) => return Err(ParseError::Incomplete),
            Err(()) => return Err(miss.into()),
        };
        let line = &log[cursor..line_end];
        if line == FOOTER.as_bytes() {
            return Err(miss.into());
        }
        if line.len() == len {
            budget.hash(len)?;
            if Digest::of(line).hex() == hex {
                break cursor..line_end;
            }
            saw_candidate = true;
        }
        interleaved += line.len() + 1;
        budget.scan(line.len() + 1)?;
        if interleaved > MAX_INTERLEAVED_BYTES {
            let miss = if saw_candidate {
                Malformed::DigestMismatch
            } else {
                Malformed::LengthMismatch
            };
            return Err(miss.into());
        }
        cursor = line_end + 1;
    };
    // The footer.
    cursor = payload_range.end + 1;
    let mut interleaved = 0usize;
    loop {
        let limit = MAX_INTERLEAVED_BYTES - interleaved + 1;
        let line_end = match next_line(log, cursor, limit) {
            Ok(Some(end)) => end,
            Ok(None) => return Err(ParseError::Incomplete),
            Err(()) => return Err(Malformed::MissingFooter.into()),
        };
        let line = &log[cursor..line_end];
        if line == FOOTER.as_bytes() {
            break;
        }
        interleaved += line.len() + 1;
        budget.scan(line.len() + 1)?;
        if interleaved > MAX_INTERLEAVED_BYTES {
            return Err(Malformed::MissingFooter.into());
        }
        cursor = line_end + 1;
    }
    let line = &log[payload_range];
    let payload = decode_payload(line)?;
    Ok(ParsedFrame {
        payload,
        payload_digest: Digest::of(line),
        offset: start,
    })
}

/// Decodes and validates a digest-checked payload line.
pub fn decode_payload(line: &[u8]) -> Result<ResultPayload, ParseError> {
    // serde's messages may quote values; only the category and position leave this function.
    let describe = |e: serde_json::Error| {
        Malformed::NotJson(format!("{:?} error at column {}", e.classify(), e.column()))
    };
    let value: Value = serde_json::from_slice(line).map_err(describe)?;
    let version = value.get("protocolVersion").and_then(Value::as_u64);
    match version {
        Some(v) if v == u64::from(PROTOCOL_VERSION) => {}
        Some(found) => return Err(ParseError::ProtocolMismatch { found }),
        None => return Err(Malformed::NotJson("protocolVersion is missing".into()).into()),
    }
    let payload: ResultPayload = serde_json::from_value(value).map_err(describe)?;
    payload.validate().map_err(Malformed::Invalid)?;
    Ok(payload)
}
