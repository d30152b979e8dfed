//! How a body is stored: an `intent` record naming its size, chunk count and digest, the
//! `chunk` records holding at most [`MAX_RECORD_DATA_BYTES`] each, then a `complete` record.
//! A reader takes a body only when `complete` exists and the chunks put back together match the
//! intent exactly.

use ptah_fingerprint::Digest;
use serde::{Deserialize, Serialize};

use crate::{EncodedBody, MAX_BODY_BYTES, MAX_RECORD_DATA_BYTES};

/// What a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordType {
    /// The operation's one enrolment, created when its client certificate is issued.
    Credential,
    /// Announces a body: its size, chunk count and digest. Written first.
    Intent,
    /// One piece of the body.
    Chunk,
    /// Written last, once every chunk is stored: the body may be read.
    Complete,
    /// The manager consumed the result; the records await deletion.
    Retired,
}

impl RecordType {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordType::Credential => "credential",
            RecordType::Intent => "intent",
            RecordType::Chunk => "chunk",
            RecordType::Complete => "complete",
            RecordType::Retired => "retired",
        }
    }

    /// The record's object name under `stem` ([`crate::ResultBinding::record_stem`]); chunks are
    /// numbered from 0.
    pub fn record_name(self, stem: &str, chunk: u32) -> String {
        match self {
            RecordType::Chunk => format!("{stem}-chunk-{chunk:04}"),
            other => format!("{stem}-{}", other.as_str()),
        }
    }
}

/// What an `intent` record announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Intent {
    /// The body's size in bytes.
    pub size: u64,
    /// How many chunk records hold it.
    pub chunks: u32,
    /// The body's sha256.
    pub digest: Digest,
}

/// The intent and the chunks of a body, in order.
pub fn split(body: &EncodedBody) -> (Intent, Vec<&[u8]>) {
    let chunks: Vec<&[u8]> = body.bytes.chunks(MAX_RECORD_DATA_BYTES).collect();
    let intent = Intent {
        size: body.bytes.len() as u64,
        chunks: u32::try_from(chunks.len()).unwrap_or(u32::MAX),
        digest: body.digest,
    };
    (intent, chunks)
}

/// Why stored records do not make up the body their intent announced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReassemblyError {
    /// The intent announces a body no delivery could have sent.
    #[error("the intent announces {size} bytes in {chunks} chunks, which no body can be")]
    ImpossibleIntent {
        /// The announced size.
        size: u64,
        /// The announced chunk count.
        chunks: u32,
    },
    /// A chunk number is missing, repeated or beyond the count.
    #[error("chunk {0} is missing, repeated or beyond the intent's count")]
    ChunkOrder(u32),
    /// A chunk other than the last is not full, or one is too large.
    #[error("chunk {index} holds {len} bytes")]
    ChunkSize {
        /// The chunk's number.
        index: u32,
        /// Its length.
        len: usize,
    },
    /// The bytes are not the announced size.
    #[error("the chunks hold {actual} bytes, the intent announces {announced}")]
    Size {
        /// The announced size.
        announced: u64,
        /// What the chunks hold.
        actual: u64,
    },
    /// The bytes hash to another digest.
    #[error("the chunks hash to {actual}, the intent announces {announced}")]
    Digest {
        /// The announced digest.
        announced: Digest,
        /// What the chunks hash to.
        actual: Digest,
    },
}

/// Puts a body back together from its intent and its chunks (`(number, data)`, in any order).
pub fn reassemble(intent: &Intent, chunks: &[(u32, &[u8])]) -> Result<Vec<u8>, ReassemblyError> {
    let size = usize::try_from(intent.size).unwrap_or(usize::MAX);
    if size == 0 || size > MAX_BODY_BYTES || intent.chunks as usize != size.div_ceil(MAX_RECORD_DATA_BYTES) {
        return Err(ReassemblyError::ImpossibleIntent {
            size: intent.size,
            chunks: intent.chunks,
        });
    }
    let mut ordered: Vec<Option<&[u8]>> = vec![None; intent.chunks as usize];
    for (index, data) in chunks {
        let slot = ordered
            .get_mut(*index as usize)
            .filter(|s| s.is_none())
            .ok_or(ReassemblyError::ChunkOrder(*index))?;
        *slot = Some(data);
    }
    let mut body = Vec::with_capacity(size);
    let last = intent.chunks - 1;
    for (index, data) in (0..).zip(ordered) {
        let data = data.ok_or(ReassemblyError::ChunkOrder(index))?;
        let full = data.len() == MAX_RECORD_DATA_BYTES;
        if data.is_empty() || data.len() > MAX_RECORD_DATA_BYTES || (index != last && !full) {
            return Err(ReassemblyError::ChunkSize {
                index,
                len: data.len(),
            });
        }
        body.extend_from_slice(data);
    }
    if body.len() as u64 != intent.size {
        return Err(ReassemblyError::Size {
            announced: intent.size,
            actual: body.len() as u64,
        });
    }
    let actual = Digest::of(&body);
    if actual != intent.digest {
        return Err(ReassemblyError::Digest {
            announced: intent.digest,
            actual,
        });
    }
    Ok(body)
}
