//! Identity strings with a fixed shape: content digests, execution-binding epochs, pinned images.
//!
//! Each is parsed when read, so code holding one never re-checks it; on the wire each stays a
//! plain string with the same pattern in the CRD schema.

use std::{borrow::Cow, fmt, str::FromStr};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// Why an identity string was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{value:?} is not a valid {kind} (want {shape})")]
pub struct IdentityError {
    /// The kind of identity that was expected.
    pub kind: &'static str,
    /// The shape it must have.
    pub shape: &'static str,
    /// The refused value.
    pub value: String,
}

fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn sha256_ok(s: &str) -> bool {
    s.parse::<ptah_fingerprint::Sha256>().is_ok()
}

fn epoch_ok(s: &str) -> bool {
    s.strip_prefix("v1-").is_some_and(|hex| is_lower_hex(hex, 32))
}

fn pinned_image_ok(s: &str) -> bool {
    match s.split_once('@') {
        Some((name, digest)) => {
            s.len() <= 512
                && !name.is_empty()
                && !name.bytes().any(|b| b" \t\n\x0b\x0c\r".contains(&b))
                && sha256_ok(digest)
        }
        None => false,
    }
}

macro_rules! identity_string {
    ($(#[$doc:meta])* $name:ident, $kind:literal, $shape:literal, $check:ident, $schema:tt) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Parses the value, refusing anything of another shape.
            pub fn parse(value: &str) -> Result<Self, IdentityError> {
                if $check(value) {
                    Ok($name(value.to_owned()))
                } else {
                    Err(IdentityError { kind: $kind, shape: $shape, value: value.to_owned() })
                }
            }

            /// The value as a string.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = IdentityError;

            fn try_from(value: String) -> Result<Self, Self::Error> {
                $name::parse(&value)
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> String {
                value.0
            }
        }

        impl FromStr for $name {
            type Err = IdentityError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::parse(s)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!($schema)
            }
        }
    };
}

identity_string!(
    /// A sha256 content identity, `sha256:<64 lowercase hex>`.
    Sha256Digest,
    "sha256 digest",
    "sha256:<64 lowercase hex>",
    sha256_ok,
    { "type": "string", "maxLength": 71, "pattern": "^sha256:[0-9a-f]{64}$" }
);

identity_string!(
    /// An epoch, `v1-<32 lowercase hex>`: random per execution-binding transition or per Lease
    /// acquisition, so a rollback to identical values still yields a new one.
    Epoch,
    "epoch",
    "v1-<32 lowercase hex>",
    epoch_ok,
    { "type": "string", "maxLength": 35, "pattern": "^v1-[0-9a-f]{32}$" }
);

identity_string!(
    /// A container image pinned by digest, `<name>@sha256:<64 hex>` (at most 512 characters).
    PinnedImage,
    "digest-pinned image",
    "<image>@sha256:<64 lowercase hex>",
    pinned_image_ok,
    {
        "type": "string",
        "minLength": 1,
        "maxLength": 512,
        "pattern": "^[^\\t\\n\\v\\f\\r @]+@sha256:[0-9a-f]{64}$"
    }
);

impl From<ptah_fingerprint::Sha256> for Sha256Digest {
    fn from(value: ptah_fingerprint::Sha256) -> Self {
        Sha256Digest(value.to_string())
    }
}

impl From<ptah_fingerprint::Digest> for Sha256Digest {
    fn from(value: ptah_fingerprint::Digest) -> Self {
        Sha256Digest(value.to_string())
    }
}

impl From<ptah_fingerprint::Fingerprint> for Sha256Digest {
    fn from(value: ptah_fingerprint::Fingerprint) -> Self {
        Sha256Digest(value.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX64: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn refused<T: fmt::Debug>(r: Result<T, IdentityError>, want_kind: &str, want_value: &str) {
        assert!(
            matches!(&r, Err(IdentityError { kind, value, .. })
                if *kind == want_kind && value == want_value),
            "{r:?}"
        );
    }

    #[test]
    fn digests_parse_only_in_canonical_form() {
        assert!(Sha256Digest::parse(&format!("sha256:{HEX64}")).is_ok());
        for bad in [
            format!("sha256:{}", HEX64.to_uppercase()),
            format!("sha512:{HEX64}"),
            "sha256:abc".to_owned(),
        ] {
            refused(Sha256Digest::parse(&bad), "sha256 digest", &bad);
        }
    }

    #[test]
    fn epochs_and_images() {
        assert!(Epoch::parse("v1-0123456789abcdef0123456789abcdef").is_ok());
        let v2 = "v2-0123456789abcdef0123456789abcdef";
        refused(Epoch::parse(v2), "epoch", v2);
        assert!(PinnedImage::parse(&format!("ghcr.io/x/ptah@sha256:{HEX64}")).is_ok());
        let tagged = "ghcr.io/x/ptah:1.0";
        refused(PinnedImage::parse(tagged), "digest-pinned image", tagged);
        let spaced = format!("ghcr io/x@sha256:{HEX64}");
        refused(PinnedImage::parse(&spaced), "digest-pinned image", &spaced);
    }

    #[test]
    fn deserialization_refuses_bad_shapes() {
        let err = serde_json::from_str::<Sha256Digest>("\"md5:00\"").expect_err("refused");
        assert!(err.to_string().contains("sha256 digest"), "{err}");
        let fp = ptah_fingerprint::Fingerprint::of(&serde_json::json!({"a": 1})).expect("fingerprint");
        assert!(Sha256Digest::parse(&fp.to_string()).is_ok());
    }
}
