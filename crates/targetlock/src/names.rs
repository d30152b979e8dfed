//! Lease names, holder identities and epochs: the strings the Lease protocol is built from.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::{SystemTime, UNIX_EPOCH},
};

use data_encoding::BASE32_NOPAD;
use ptah_api::shared::{Epoch, Sha256Digest};
use sha2::{Digest as _, Sha256};

/// Prefix of every realm Lease name.
const LEASE_PREFIX: &str = "ptah-t-";
/// Prefix of every realm holder identity.
const HOLDER_PREFIX: &str = "ptah-h-";

/// The realm Lease name: `ptah-t-` + lowercase unpadded base32 of the digest's 32 bytes (59 characters).
pub fn lease_name(coordination_digest: &Sha256Digest) -> String {
    // A Sha256Digest is parsed when built, so this cannot fail; were it ever to, the name would be
    // `ptah-t-`, which the API server refuses (a trailing dash): the lock fails closed.
    let bytes = coordination_digest
        .as_str()
        .parse::<ptah_fingerprint::Sha256>()
        .map(|sha| sha.as_bytes().to_vec())
        .unwrap_or_default();
    format!("{LEASE_PREFIX}{}", base32_lower(&bytes))
}

/// The holder identity of one operation: `ptah-h-` + base32(sha256(uid \0 operationID)).
///
/// Only the resource UID and operation ID enter it, not the kind, so a PtahSchema and a
/// PtahMigration can never forge each other's holdings by naming.
pub fn holder_identity(resource_uid: &str, operation_id: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(resource_uid.as_bytes());
    hasher.update([0u8]);
    hasher.update(operation_id.as_bytes());
    format!("{HOLDER_PREFIX}{}", base32_lower(&hasher.finalize()))
}

/// A new random epoch, `v1-` + 32 lowercase hex digits (128 bits from the OS).
pub fn new_epoch() -> Epoch {
    let mut bytes = [0u8; 16];
    if let Err(err) = getrandom::fill(&mut bytes) {
        // An epoch must only be unique, not secret: fall back to hashing the time, the process
        // and a counter rather than refusing to lock.
        tracing::warn!(error = %err, "OS randomness unavailable; deriving the epoch from time and a counter");
        bytes = fallback_entropy();
    }
    epoch_from(bytes)
}

fn epoch_from(bytes: [u8; 16]) -> Epoch {
    match Epoch::parse(&format!("v1-{}", hex::encode(bytes))) {
        Ok(epoch) => epoch,
        // `v1-` followed by the 32 lowercase hex digits of 16 bytes is exactly the accepted shape.
        Err(err) => unreachable!("{err}"),
    }
}

fn fallback_entropy() -> [u8; 16] {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut hasher = Sha256::new();
    hasher.update(nanos.to_le_bytes());
    hasher.update(std::process::id().to_le_bytes());
    hasher.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    let digest = hasher.finalize();
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

fn base32_lower(bytes: &[u8]) -> String {
    BASE32_NOPAD.encode(bytes).to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    const HEX64: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    #[test]
    fn lease_name_is_lowercase_base32_of_the_raw_digest_bytes() {
        let digest = Sha256Digest::parse(&format!("sha256:{HEX64}")).expect("digest");
        let raw = hex::decode(HEX64).expect("hex");
        let want = format!("ptah-t-{}", BASE32_NOPAD.encode(&raw).to_lowercase());
        let got = lease_name(&digest);
        assert_eq!(got, want);
        assert_eq!(got.len(), 7 + 52);
        assert!(got.len() <= 63, "a DNS label");
        assert!(
            got.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        );
    }

    #[test]
    fn holder_identity_hashes_uid_nul_operation() {
        let raw = Sha256::digest(b"uid-1\0op-7");
        let want = format!("ptah-h-{}", BASE32_NOPAD.encode(&raw).to_lowercase());
        assert_eq!(holder_identity("uid-1", "op-7"), want);
        // The separator keeps ("ab", "c") and ("a", "bc") apart.
        assert_ne!(holder_identity("ab", "c"), holder_identity("a", "bc"));
        assert_eq!(holder_identity("uid-1", "op-7").len(), 7 + 52);
    }

    #[test]
    fn epochs_have_the_shape_and_do_not_repeat() {
        let epochs: HashSet<String> = (0..1000).map(|_| new_epoch().to_string()).collect();
        assert_eq!(epochs.len(), 1000);
        for epoch in &epochs {
            let hex = epoch.strip_prefix("v1-").expect("prefix");
            assert_eq!(hex.len(), 32);
            assert!(hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
        }
        let a = fallback_entropy();
        assert_ne!(a, fallback_entropy(), "the counter alone separates two calls");
        assert!(Epoch::parse(epoch_from(a).as_str()).is_ok());
    }
}
