//! Bounded capture of a child's output stream: keep the head or the tail, count what is dropped.

/// Which end of the stream to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The first bytes (a report document).
    Head,
    /// The last bytes (diagnostics).
    Tail,
}

/// A stream captured up to a limit.
#[derive(Clone)]
pub struct Bounded {
    keep: Keep,
    limit: usize,
    buf: Vec<u8>,
    dropped: u64,
}

/// Shows the sizes only: the bytes are the child's output before redaction.
impl std::fmt::Debug for Bounded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bounded")
            .field("keep", &self.keep)
            .field("limit", &self.limit)
            .field("kept_bytes", &self.buf.len())
            .field("dropped", &self.dropped)
            .field("buf", &format_args!("{}", crate::redact::MARKER))
            .finish()
    }
}

impl Bounded {
    /// An empty capture.
    pub fn new(keep: Keep, limit: usize) -> Self {
        Bounded {
            keep,
            limit,
            buf: Vec::new(),
            dropped: 0,
        }
    }

    /// Appends bytes, dropping what exceeds the limit.
    pub fn push(&mut self, bytes: &[u8]) {
        match self.keep {
            Keep::Head => {
                let room = self.limit.saturating_sub(self.buf.len());
                let take = room.min(bytes.len());
                self.buf.extend_from_slice(&bytes[..take]);
                self.dropped += (bytes.len() - take) as u64;
            }
            Keep::Tail => {
                self.buf.extend_from_slice(bytes);
                if self.buf.len() > self.limit {
                    let excess = self.buf.len() - self.limit;
                    self.buf.drain(..excess);
                    self.dropped += excess as u64;
                }
            }
        }
    }

    /// Whether anything was dropped.
    pub fn truncated(&self) -> bool {
        self.dropped > 0
    }

    /// How many bytes were dropped.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The kept bytes as captured (not redacted).
    pub fn raw(&self) -> &[u8] {
        &self.buf
    }

    /// The kept bytes with every known secret redacted, including one cut at the boundary.
    pub fn redacted(&self, redactor: &crate::redact::Redactor) -> Vec<u8> {
        match (self.truncated(), self.keep) {
            (false, _) => redactor.redact(&self.buf),
            (true, Keep::Head) => redactor.redact_cut_end(&self.buf),
            (true, Keep::Tail) => redactor.redact_cut_start(&self.buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_keep_their_end_and_count_the_rest() {
        let mut head = Bounded::new(Keep::Head, 4);
        let mut tail = Bounded::new(Keep::Tail, 4);
        for chunk in [&b"abc"[..], b"defg", b"h"] {
            head.push(chunk);
            tail.push(chunk);
        }
        assert_eq!((head.raw(), head.dropped()), (&b"abcd"[..], 4));
        assert_eq!((tail.raw(), tail.dropped()), (&b"efgh"[..], 4));
        assert!(head.truncated() && tail.truncated());
    }
}
