//! The one-time enrolment token: 256 random bits the manager draws for a claim. The claim keeps
//! only its sha256; the token itself reaches only the operation's runner, through the projection
//! ConfigMap.

use std::fmt;

use ptah_fingerprint::Sha256;

/// The token's length in bytes.
pub const TOKEN_BYTES: usize = 32;

/// An enrolment token. Its `Debug` shows only its digest.
#[derive(Clone, PartialEq, Eq)]
pub struct EnrolmentToken([u8; TOKEN_BYTES]);

/// Why a text is not a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an enrolment token is {TOKEN_BYTES} bytes in 64 lowercase hex digits")]
pub struct MalformedToken;

impl EnrolmentToken {
    /// A fresh token from the operating system's generator.
    pub fn generate() -> Result<Self, getrandom::Error> {
        let mut bytes = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut bytes)?;
        Ok(EnrolmentToken(bytes))
    }

    /// A token from 32 random bytes (the caller draws them from the system's generator).
    pub fn from_bytes(bytes: [u8; TOKEN_BYTES]) -> Self {
        EnrolmentToken(bytes)
    }

    /// Reads the 64 lowercase hex digits the ConfigMap holds.
    pub fn parse(text: &str) -> Result<Self, MalformedToken> {
        let text = text.trim();
        if text.len() != 2 * TOKEN_BYTES || !text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(MalformedToken);
        }
        let mut out = [0u8; TOKEN_BYTES];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| MalformedToken)?;
        }
        Ok(EnrolmentToken(out))
    }

    /// The 64 lowercase hex digits, for the ConfigMap.
    pub fn reveal(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// What the claim keeps.
    pub fn digest(&self) -> Sha256 {
        Sha256::of(&self.0)
    }

    /// Whether this token is the one whose digest the claim keeps. Both sides are hashes, so
    /// comparing them leaks nothing about the token; the comparison still takes the same time
    /// whatever differs.
    pub fn matches(&self, digest: &Sha256) -> bool {
        let ours = self.digest();
        ours.as_bytes()
            .iter()
            .zip(digest.as_bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

impl fmt::Debug for EnrolmentToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EnrolmentToken(digest {})", self.digest())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_reads_back_matches_its_digest_and_never_shows_itself() {
        let token = EnrolmentToken::from_bytes([0xab; TOKEN_BYTES]);
        let text = token.reveal();
        assert_eq!(EnrolmentToken::parse(&text), Ok(token.clone()));
        assert!(token.matches(&token.digest()));
        assert!(!EnrolmentToken::from_bytes([0xac; TOKEN_BYTES]).matches(&token.digest()));
        let debug = format!("{token:?}");
        assert!(!debug.contains(&text) && !debug.contains("abab"), "{debug}");
        assert_eq!(EnrolmentToken::parse(&text.to_uppercase()), Err(MalformedToken));
        assert_eq!(EnrolmentToken::parse(&text[1..]), Err(MalformedToken));
        assert_eq!(EnrolmentToken::parse(""), Err(MalformedToken));
    }

    #[test]
    fn generated_tokens_differ() {
        let a = EnrolmentToken::generate().expect("the system generator");
        let b = EnrolmentToken::generate().expect("the system generator");
        assert_ne!(a, b);
    }
}
