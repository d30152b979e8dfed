//! `oci://` references come from user-written specs. Invariants:
//! - parsing is deterministic, and a refusal is a typed error with a bounded message;
//! - an accepted reference obeys the documented rules (length bounds, no whitespace, control
//!   character, backslash, user info, query or fragment; a lowercase repository with no `..` or
//!   empty segment; a pinned one's digest is `sha256:` + 64 lowercase hex);
//! - it renders (`Display`) to text that parses back equal and renders to the same text, and
//!   pinning it keeps everything but the digest.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_fuzz::assert_refusal_message;
use ptah_ocireference::{MAX_NAME_LEN, MAX_REFERENCE_LEN, Reference};

fuzz_target!(|data: &[u8]| {
    let Some(text) = ptah_fuzz::text(data) else { return };
    let parsed = text.parse::<Reference>();
    assert_eq!(parsed, text.parse::<Reference>(), "parsing is deterministic");
    let reference = match parsed {
        Ok(reference) => reference,
        Err(err) => return assert_refusal_message(&err.to_string(), text.len()),
    };
    assert!(text.len() <= MAX_REFERENCE_LEN);
    assert!(reference.registry().len() + 1 + reference.repository().len() <= MAX_NAME_LEN);
    assert!(!text.contains(['?', '#', '\\']) && !text.chars().any(|c| c.is_whitespace() || c.is_control()));
    assert!(!reference.registry().contains('@'), "no user info");
    let repository = reference.repository();
    assert!(!repository.is_empty() && !repository.chars().any(|c| c.is_ascii_uppercase()));
    assert!(
        repository
            .split('/')
            .all(|segment| !segment.is_empty() && segment != "." && segment != ".."),
        "repository {repository:?} has an empty, . or .. segment"
    );
    if let Some(tag) = reference.tag() {
        assert!(!tag.is_empty() && tag.len() <= 128);
    }
    if let Some(digest) = reference.digest() {
        let shown = digest.to_string();
        let hex = shown.strip_prefix("sha256:").expect("a sha256 digest");
        assert!(hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
        assert!(reference.is_pinned() && reference.for_push().is_err());
    }
    let rendered = reference.to_string();
    let again: Reference = rendered.parse().expect("a rendered reference parses");
    assert_eq!(again, reference, "render → parse is the identity");
    assert_eq!(again.to_string(), rendered, "rendering is stable");
    let pinned = reference.pinned(ptah_ocireference::Digest::of(data));
    assert_eq!(
        (pinned.registry(), pinned.repository(), pinned.tag()),
        (reference.registry(), reference.repository(), reference.tag())
    );
    assert_eq!(pinned.to_string().parse::<Reference>().as_ref(), Ok(&pinned));
});
