//! Deterministic Job names: the same claim always names the same Job, so a manager that restarts
//! after `dispatchStarted` finds the Job it created instead of creating a second one.

use ptah_dataplane::Operation;
use sha2::{Digest as _, Sha256};

/// The longest Job name: it becomes the `job-name` label value, which Kubernetes caps at 63.
pub const MAX_JOB_NAME_LEN: usize = 63;

/// How many hex digits the name's suffix and the operation-id label carry (8 bytes).
const SHORT_HEX_LEN: usize = 16;

/// The word for `op` in a Job name: what the pod-intent guard's
/// `^ptah-(m-)?(resolve|verify|observe|plan|history|apply)-` matches.
pub fn name_word(op: Operation) -> &'static str {
    match op {
        Operation::Resolve => "resolve",
        Operation::Verify => "verify",
        Operation::Observe => "observe",
        Operation::Plan => "plan",
        Operation::Apply => "apply",
        Operation::MigrationHistory => "m-history",
        Operation::MigrationApply => "m-apply",
    }
}

/// `ptah-<op>-<truncated resource name>-<16 hex>`, at most 63 characters; the suffix is the first
/// 8 bytes of sha256(`uid \0 op \0 operation_id \0 input_fingerprint \0 attempt \0 epoch`).
pub fn job_name(
    resource_name: &str,
    resource_uid: &str,
    operation: Operation,
    operation_id: &str,
    input_fingerprint: &str,
    attempt: i32,
    epoch: &str,
) -> String {
    let mut hasher = Sha256::new();
    let attempt = attempt.to_string();
    let parts = [
        resource_uid,
        operation.as_str(),
        operation_id,
        input_fingerprint,
        attempt.as_str(),
        epoch,
    ];
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            hasher.update([0u8]);
        }
        hasher.update(part.as_bytes());
    }
    let digest = hasher.finalize();
    let suffix = hex::encode(&digest[..SHORT_HEX_LEN / 2]);
    let prefix = format!("ptah-{}-", name_word(operation));
    let room = MAX_JOB_NAME_LEN - prefix.len() - 1 - suffix.len();
    // Resource names are DNS subdomains (ASCII), so byte truncation never splits a character;
    // a cut that ends in `-` or `.` would leave an invalid label, so those are trimmed.
    let name: String = resource_name.chars().take(room).collect();
    let name = name.trim_end_matches(['-', '.']);
    if name.is_empty() {
        format!("{prefix}{suffix}")
    } else {
        format!("{prefix}{name}-{suffix}")
    }
}

/// The 16-hex short form of a `sha256:<hex>` identity, for label values (which cap at 63).
pub(crate) fn short_hash(identity: &str) -> String {
    let hex = identity.strip_prefix("sha256:").unwrap_or(identity);
    hex.chars().take(SHORT_HEX_LEN).collect()
}

/// True when `name` is a DNS-1123 label (what a Job name must be to also be a label value).
pub(crate) fn is_dns_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_JOB_NAME_LEN
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-' || *b == b'.')
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OP_ID: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
    const FP: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";

    fn name(resource: &str, op: Operation, attempt: i32, epoch: &str) -> String {
        job_name(resource, "uid-1", op, OP_ID, FP, attempt, epoch)
    }

    #[test]
    fn names_are_deterministic_and_fit_a_label() {
        for op in Operation::all() {
            for resource in ["s", "orders", &"a".repeat(253), "x.y-z", &"b-".repeat(40)] {
                let n = name(resource, op, 0, "e1");
                assert_eq!(n, name(resource, op, 0, "e1"));
                assert!(n.len() <= MAX_JOB_NAME_LEN, "{n}");
                assert!(is_dns_label(&n), "{n}");
                assert!(n.starts_with(&format!("ptah-{}-", name_word(op))), "{n}");
            }
        }
        assert_eq!(name(&"a".repeat(100), Operation::Resolve, 0, "e").len(), 63);
    }

    #[test]
    fn every_hashed_input_changes_the_suffix() {
        let base = name("orders", Operation::Plan, 0, "e1");
        assert_eq!(base.len(), "ptah-plan-orders-".len() + 16);
        assert_ne!(base, name("orders", Operation::Plan, 1, "e1"));
        assert_ne!(base, name("orders", Operation::Plan, 0, "e2"));
        assert_ne!(
            base,
            job_name("orders", "uid-2", Operation::Plan, OP_ID, FP, 0, "e1")
        );
        assert_ne!(
            base,
            job_name("orders", "uid-1", Operation::Plan, FP, FP, 0, "e1")
        );
        assert_ne!(
            base,
            job_name("orders", "uid-1", Operation::Plan, OP_ID, OP_ID, 0, "e1")
        );
        let observe = name("orders", Operation::Observe, 0, "e1");
        assert_ne!(base[base.len() - 16..], observe[observe.len() - 16..]);
    }

    #[test]
    fn the_separator_keeps_fields_apart() {
        // Without the NUL separators "ab"+"c" and "a"+"bc" would hash the same.
        let a = job_name("r", "ab", Operation::Plan, "c", FP, 0, "e");
        let b = job_name("r", "a", Operation::Plan, "bc", FP, 0, "e");
        assert_ne!(a, b);
    }

    #[test]
    fn short_hash_takes_sixteen_hex_digits() {
        assert_eq!(short_hash(OP_ID), "1111111111111111");
    }
}
