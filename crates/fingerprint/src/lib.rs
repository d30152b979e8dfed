//! Canonical JSON and sha256 content identities.
