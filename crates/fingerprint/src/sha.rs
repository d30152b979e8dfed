//! sha256 identities: the shared value type and the two kinds built on it.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest as _, Sha256 as Hasher};

use crate::Error;

const PREFIX: &str = "sha256:";

/// A sha256 value, written `sha256:<64 lowercase hex>`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sha256([u8; 32]);

impl Sha256 {
    /// The sha256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Sha256(Hasher::digest(bytes).into())
    }

    /// The 32 raw bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The 64 lowercase hex digits without the `sha256:` prefix.
    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }
}

impl fmt::Display for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}", self.hex())
    }
}

impl fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Sha256 {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let invalid = || Error::InvalidIdentity(s.chars().take(80).collect());
        let hex = s.strip_prefix(PREFIX).ok_or_else(invalid)?;
        // Uppercase hex decodes fine but would give one value two spellings.
        if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(invalid());
        }
        let mut out = [0u8; 32];
        hex::decode_to_slice(hex, &mut out).map_err(|_| invalid())?;
        Ok(Sha256(out))
    }
}

macro_rules! identity {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(Sha256);

        impl $name {
            /// The underlying sha256 value.
            pub fn sha256(&self) -> Sha256 {
                self.0
            }

            /// The 64 lowercase hex digits without the `sha256:` prefix.
            pub fn hex(&self) -> String {
                self.0.hex()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }

        impl FromStr for $name {
            type Err = Error;

            fn from_str(s: &str) -> Result<Self, Error> {
                s.parse().map($name)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

identity!(
    /// The sha256 of raw bytes: an OCI blob or manifest, a plan's content.
    Digest
);

identity!(
    /// The sha256 of a value's canonical JSON: the same document always has the same fingerprint.
    Fingerprint
);

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Digest(Sha256::of(bytes))
    }
}

impl Fingerprint {
    /// The fingerprint of a serializable value, over its canonical JSON.
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Result<Self, Error> {
        let mut hasher = Hasher::new();
        crate::stream::canonical_pieces(value, |piece| hasher.update(piece))?;
        Ok(Fingerprint(Sha256(hasher.finalize().into())))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const EMPTY_JSON_OBJECT: &str = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";

    #[test]
    fn digest_of_empty_object_matches_the_oci_empty_descriptor() {
        assert_eq!(Digest::of(b"{}").to_string(), EMPTY_JSON_OBJECT);
    }

    #[test]
    fn fingerprint_ignores_key_order_and_whitespace() {
        let a = Fingerprint::of(&json!({"b": 1, "a": [true, null]})).expect("fingerprint");
        let b: serde_json::Value =
            serde_json::from_str("{ \"a\" : [ true , null ] ,\n \"b\" : 1.0 }").expect("json");
        assert_eq!(a, Fingerprint::of(&b).expect("fingerprint"));
        assert_ne!(
            a,
            Fingerprint::of(&json!({"b": 2, "a": [true, null]})).expect("fingerprint")
        );
    }

    #[test]
    fn parse_round_trips_and_refuses_other_spellings() {
        let d: Digest = EMPTY_JSON_OBJECT.parse().expect("parse");
        assert_eq!(d.to_string(), EMPTY_JSON_OBJECT);
        for bad in [
            "",
            "sha256:",
            "sha512:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
            "sha256:44136FA355B3678A1146AD16F7E8649E94FB4FC21FE77E8310C060F61CAAFF8A",
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8",
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
            " sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
        ] {
            assert_eq!(
                bad.parse::<Digest>(),
                Err(Error::InvalidIdentity(bad.to_owned())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn serde_uses_the_text_form() {
        let d = Digest::of(b"{}");
        let text = serde_json::to_string(&d).expect("serialize");
        assert_eq!(text, format!("\"{EMPTY_JSON_OBJECT}\""));
        assert_eq!(serde_json::from_str::<Digest>(&text).expect("deserialize"), d);
        let err = serde_json::from_str::<Digest>("\"sha256:zz\"").expect_err("not an identity");
        assert!(
            err.to_string().contains("\"sha256:zz\" is not a sha256 identity"),
            "{err}"
        );
    }
}
