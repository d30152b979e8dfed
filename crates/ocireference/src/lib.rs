//! `oci://host[:port]/repository[:tag][@sha256:…]` references, parsed once with every refusal rule
//! of the Ptah CLI, so the rest of the system only ever holds a reference that is safe to use.
//!
//! A reference with no tag means `:latest`. With both a tag and a digest, the digest selects the
//! bytes and the tag is only a label; nothing ever falls back from a digest to its tag.

mod parse;

use std::{fmt, str::FromStr};

pub use ptah_fingerprint::Digest;

/// The scheme every reference starts with.
pub const SCHEME: &str = "oci://";
/// The tag a reference without one stands for.
pub const DEFAULT_TAG: &str = "latest";
/// The longest reference accepted, in bytes.
pub const MAX_REFERENCE_LEN: usize = 2048;
/// The longest `host/repository` name accepted, in bytes (the distribution convention).
pub const MAX_NAME_LEN: usize = 255;

/// Why a text is not an acceptable reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Empty input.
    #[error("the reference is empty")]
    Empty,
    /// Longer than [`MAX_REFERENCE_LEN`] or a name longer than [`MAX_NAME_LEN`].
    #[error("the reference is too long ({len} bytes, at most {max})")]
    TooLong {
        /// The offending length.
        len: usize,
        /// The limit that applies.
        max: usize,
    },
    /// Leading or trailing whitespace.
    #[error("the reference has surrounding whitespace")]
    SurroundingWhitespace,
    /// Whitespace, NUL or another control character inside.
    #[error("the reference contains whitespace or a control character")]
    ControlCharacter,
    /// Does not start with `oci://`.
    #[error("the reference must start with oci://")]
    MissingScheme,
    /// User info such as `user:password@host`: credentials never travel in a reference.
    #[error("the reference carries user info; credentials belong in a Secret, not in the reference")]
    Credentials,
    /// A `?` query or `#` fragment.
    #[error("the reference contains a query or fragment (? or #)")]
    QueryOrFragment,
    /// A backslash anywhere.
    #[error("the reference contains a backslash")]
    Backslash,
    /// A percent-encoded path separator (`%2f` or `%5c`, any case).
    #[error("the reference contains an encoded path separator (%2f or %5c)")]
    EncodedSeparator,
    /// The host part is empty or not a host name, IPv4 address or bracketed IPv6 address.
    #[error("invalid registry host {0:?}")]
    InvalidHost(String),
    /// The port is not a number from 1 to 65535.
    #[error("invalid registry port {0:?}")]
    InvalidPort(String),
    /// No repository after the host.
    #[error("the reference names no repository")]
    MissingRepository,
    /// The repository contains uppercase letters.
    #[error("repository {0:?} contains uppercase letters")]
    UppercaseRepository(String),
    /// The repository breaks the distribution grammar.
    #[error("invalid repository {0:?}")]
    InvalidRepository(String),
    /// The tag breaks `[A-Za-z0-9_][A-Za-z0-9._-]{{0,127}}`.
    #[error("invalid tag {0:?}")]
    InvalidTag(String),
    /// The digest is not `sha256:` and 64 lowercase hex digits.
    #[error("invalid digest {0:?}: want sha256:<64 lowercase hex>")]
    InvalidDigest(String),
    /// A push target that names a digest: a digest is a result of pushing, not a destination.
    #[error("cannot push to a reference that contains a digest")]
    DigestNotAllowedForPush,
}

/// A parsed, validated `oci://` reference.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    registry: String,
    repository: String,
    tag: Option<String>,
    digest: Option<Digest>,
}

impl Reference {
    /// The registry, `host` or `host:port`.
    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// The repository path inside the registry.
    pub fn repository(&self) -> &str {
        &self.repository
    }

    /// The tag as written, if any.
    pub fn tag(&self) -> Option<&str> {
        self.tag.as_deref()
    }

    /// The tag to resolve when the reference has no digest: the written tag or `latest`.
    pub fn tag_or_latest(&self) -> &str {
        self.tag.as_deref().unwrap_or(DEFAULT_TAG)
    }

    /// The digest, if the reference is pinned.
    pub fn digest(&self) -> Option<Digest> {
        self.digest
    }

    /// Whether the bytes are fixed by a digest.
    pub fn is_pinned(&self) -> bool {
        self.digest.is_some()
    }

    /// This reference pinned to `digest` (a tag is kept as a label).
    pub fn pinned(&self, digest: Digest) -> Reference {
        Reference {
            digest: Some(digest),
            ..self.clone()
        }
    }

    /// This reference as a push destination; refused when it names a digest.
    pub fn for_push(&self) -> Result<&Reference, Error> {
        if self.is_pinned() {
            Err(Error::DigestNotAllowedForPush)
        } else {
            Ok(self)
        }
    }

    /// The reference without the scheme, as registries and `oras` write it: `host/repo:tag@digest`.
    pub fn to_distribution_string(&self) -> String {
        let mut out = format!("{}/{}", self.registry, self.repository);
        if let Some(tag) = &self.tag {
            out.push(':');
            out.push_str(tag);
        }
        if let Some(digest) = &self.digest {
            out.push('@');
            out.push_str(&digest.to_string());
        }
        out
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}", self.to_distribution_string())
    }
}

impl fmt::Debug for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Reference({self})")
    }
}

impl FromStr for Reference {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        parse::parse(s)
    }
}
