//! What the fuzz targets share: the dialect a leading byte selects, and the checks every refusal
//! must pass (a typed error whose message is non-empty and bounded by the input it refuses).

use ptah_schema::Dialect;

/// A message may quote (and escape) the input; beyond that it is bounded by this many bytes.
pub const MESSAGE_OVERHEAD: usize = 1024;
/// How much an escaped quotation may grow a byte of input (`\u{10ffff}` is 10 bytes for 4).
pub const ESCAPE_FACTOR: usize = 10;

/// The first byte chooses the dialect (its low bit), the rest is the input.
pub fn dialect_and_rest(data: &[u8]) -> Option<(Dialect, &[u8])> {
    let (first, rest) = data.split_first()?;
    let dialect = if first & 1 == 0 {
        Dialect::Postgres
    } else {
        Dialect::Mysql
    };
    Some((dialect, rest))
}

/// The input as text, when it is UTF-8.
pub fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// A refusal's message is non-empty, has no control characters other than newlines, and is
/// bounded: at most [`MESSAGE_OVERHEAD`] bytes plus an escaped quotation of the input.
pub fn assert_refusal_message(message: &str, input_len: usize) {
    assert!(!message.trim().is_empty(), "a refusal has an empty message");
    let bound = MESSAGE_OVERHEAD + ESCAPE_FACTOR * input_len;
    assert!(
        message.len() <= bound,
        "a refusal's message is {} bytes for {input_len} bytes of input (bound {bound})",
        message.len()
    );
}
