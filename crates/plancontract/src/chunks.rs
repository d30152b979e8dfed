//! The byte-size contract: how a plan document is cut into chunks and what the pieces are called.

use std::fmt::Display;

/// The largest plan document in bytes (8 MiB).
pub const MAX_PLAN_BYTES: usize = 8 * 1024 * 1024;
/// The size of every chunk but the last (512 KiB).
pub const CHUNK_BYTES: usize = 512 * 1024;
/// The most chunks a plan has: `ceil(MAX_PLAN_BYTES / CHUNK_BYTES)`.
pub const MAX_CHUNKS: usize = MAX_PLAN_BYTES.div_ceil(CHUNK_BYTES);
/// The plan contract version this crate implements.
pub const CONTRACT_VERSION: i32 = 3;
/// The key chunk bytes are projected under (ConfigMap `binaryData` key, `PlanChunkRef.key`).
pub const CHUNK_KEY: &str = "chunk";
/// The prefix of every schema plan name.
const PLAN_NAME_PREFIX: &str = "ptah-plan-";
/// How many hex digits of the fingerprint a plan name carries.
const PLAN_NAME_HEX: usize = 24;

/// Why a plan document does not fit the contract.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContractError {
    /// A plan document has at least one byte.
    #[error("the plan document is empty")]
    Empty,
    /// The document is larger than [`MAX_PLAN_BYTES`].
    #[error("the plan document is {size} bytes, more than the {max} a plan may hold")]
    TooLarge {
        /// The document's size in bytes.
        size: usize,
        /// [`MAX_PLAN_BYTES`].
        max: usize,
    },
}

/// Checks that a document of `size` bytes fits the contract.
fn check_size(size: usize) -> Result<(), ContractError> {
    match size {
        0 => Err(ContractError::Empty),
        s if s > MAX_PLAN_BYTES => Err(ContractError::TooLarge {
            size,
            max: MAX_PLAN_BYTES,
        }),
        _ => Ok(()),
    }
}

/// Cuts a plan document into chunks of [`CHUNK_BYTES`] (the last one shorter), 1 to [`MAX_CHUNKS`].
///
/// Boundaries fall on byte offsets, mid-statement or mid-UTF-8: the document is only ever
/// reassembled as bytes.
pub fn split(bytes: &[u8]) -> Result<Vec<&[u8]>, ContractError> {
    check_size(bytes.len())?;
    Ok(bytes.chunks(CHUNK_BYTES).collect())
}

/// The chunk sizes [`split`] produces for a document of `size` bytes.
pub fn chunk_sizes(size: usize) -> Result<Vec<usize>, ContractError> {
    check_size(size)?;
    let full = size / CHUNK_BYTES;
    let rest = size % CHUNK_BYTES;
    let mut sizes = vec![CHUNK_BYTES; full];
    if rest > 0 {
        sizes.push(rest);
    }
    Ok(sizes)
}

/// The deterministic plan name: `ptah-plan-` + the first 24 hex digits of the fingerprint.
///
/// Takes anything printing as `sha256:<hex>` (the API's `Sha256Digest`, a `Fingerprint`).
pub fn plan_name<D: Display + ?Sized>(fingerprint: &D) -> String {
    let digest = fingerprint.to_string();
    let hex = digest.strip_prefix("sha256:").unwrap_or(&digest);
    let prefix: String = hex.chars().take(PLAN_NAME_HEX).collect();
    format!("{PLAN_NAME_PREFIX}{prefix}")
}

/// The name of chunk `index` of `plan_name`: `<plan>-000` … `<plan>-015`.
pub fn chunk_name(plan_name: &str, index: usize) -> String {
    format!("{plan_name}-{index:03}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: usize = 1024;

    fn doc(size: usize) -> Vec<u8> {
        (0..size).map(|i| (i % 251) as u8).collect()
    }

    fn sizes(chunks: &[&[u8]]) -> Vec<usize> {
        chunks.iter().map(|c| c.len()).collect()
    }

    #[test]
    fn constants_match_the_reference_and_the_api() {
        assert_eq!(MAX_PLAN_BYTES, 8_388_608);
        assert_eq!(CHUNK_BYTES, 524_288);
        assert_eq!(MAX_CHUNKS, 16);
        assert_eq!(CONTRACT_VERSION, 3);
        // The CRD schema states the same contract; a drift would let the publisher write what
        // the API server refuses.
        use ptah_api::schemaplan as api;
        assert_eq!(MAX_PLAN_BYTES as i64, api::MAX_PLAN_BYTES);
        assert_eq!(CHUNK_BYTES as i64, api::MAX_CHUNK_BYTES);
        assert_eq!(MAX_CHUNKS, api::MAX_CHUNKS);
        assert_eq!(CONTRACT_VERSION, api::SCHEMA_PLAN_CONTRACT_VERSION);
    }

    #[test]
    fn one_byte_is_one_chunk() {
        let bytes = doc(1);
        assert_eq!(sizes(&split(&bytes).expect("fits")), vec![1]);
    }

    #[test]
    fn exactly_one_chunk_size_is_one_chunk() {
        let bytes = doc(512 * KIB);
        let chunks = split(&bytes).expect("fits");
        assert_eq!(sizes(&chunks), vec![512 * KIB]);
        assert_eq!(chunks[0], &bytes[..]);
    }

    #[test]
    fn one_byte_over_a_chunk_is_two_chunks() {
        let bytes = doc(512 * KIB + 1);
        let chunks = split(&bytes).expect("fits");
        assert_eq!(sizes(&chunks), vec![512 * KIB, 1]);
        assert_eq!(chunks.concat(), bytes);
    }

    #[test]
    fn exactly_eight_mib_is_sixteen_full_chunks() {
        let bytes = doc(MAX_PLAN_BYTES);
        let chunks = split(&bytes).expect("fits");
        assert_eq!(chunks.len(), MAX_CHUNKS);
        assert!(chunks.iter().all(|c| c.len() == CHUNK_BYTES));
        assert_eq!(chunks.concat(), bytes);
    }

    #[test]
    fn one_byte_over_eight_mib_is_refused() {
        let bytes = doc(MAX_PLAN_BYTES + 1);
        assert_eq!(
            split(&bytes),
            Err(ContractError::TooLarge {
                size: MAX_PLAN_BYTES + 1,
                max: MAX_PLAN_BYTES
            })
        );
        assert_eq!(
            chunk_sizes(MAX_PLAN_BYTES + 1),
            Err(ContractError::TooLarge {
                size: MAX_PLAN_BYTES + 1,
                max: MAX_PLAN_BYTES
            })
        );
    }

    #[test]
    fn empty_is_refused() {
        assert_eq!(split(&[]), Err(ContractError::Empty));
        assert_eq!(chunk_sizes(0), Err(ContractError::Empty));
    }

    #[test]
    fn boundaries_fall_mid_utf8() {
        // 'é' is two bytes; an odd offset puts the chunk boundary inside one.
        let mut bytes = vec![b'x'];
        while bytes.len() < CHUNK_BYTES + 10 {
            bytes.extend_from_slice("é".as_bytes());
        }
        let chunks = split(&bytes).expect("fits");
        let cut = std::str::from_utf8(chunks[0]).expect_err("the boundary splits a character");
        // Valid up to the last byte, which starts a character the chunk does not finish.
        assert_eq!(
            (cut.valid_up_to(), cut.error_len()),
            (CHUNK_BYTES - 1, None),
            "{cut}"
        );
        assert_eq!(chunks.concat(), bytes);
    }

    #[test]
    fn chunk_sizes_agree_with_split() {
        for size in [
            1,
            7,
            CHUNK_BYTES - 1,
            CHUNK_BYTES,
            CHUNK_BYTES + 1,
            3 * CHUNK_BYTES + 5,
            MAX_PLAN_BYTES,
        ] {
            let bytes = doc(size);
            assert_eq!(
                chunk_sizes(size).expect("fits"),
                sizes(&split(&bytes).expect("fits")),
                "{size}"
            );
        }
    }

    #[test]
    fn names() {
        let fp = ptah_api::shared::Sha256Digest::parse(
            "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        )
        .expect("digest");
        let plan = plan_name(&fp);
        assert_eq!(plan, "ptah-plan-0123456789abcdef01234567");
        assert_eq!(plan.len(), "ptah-plan-".len() + 24);
        assert_eq!(chunk_name(&plan, 0), "ptah-plan-0123456789abcdef01234567-000");
        assert_eq!(chunk_name(&plan, 15), "ptah-plan-0123456789abcdef01234567-015");
        let fingerprint: ptah_fingerprint::Fingerprint = fp.as_str().parse().expect("fingerprint");
        assert_eq!(
            plan_name(&fingerprint),
            plan,
            "any sha256 identity names the same plan"
        );
    }
}
