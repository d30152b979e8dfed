//! Durations written as Go duration strings (`30s`, `10m`, `1h30m`), bounded by CEL.

use std::{borrow::Cow, fmt, str::FromStr, time::Duration};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A non-negative Go duration string, kept as written and parsed once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoDuration {
    text: String,
    value: Duration,
}

/// Why a duration string was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DurationError {
    /// The text is not a Go duration.
    #[error("{0:?} is not a duration (want e.g. 30s, 10m, 1h30m)")]
    Malformed(String),
    /// The duration is negative.
    #[error("{0:?} is negative")]
    Negative(String),
    /// The text is longer than the 32 characters the API allows.
    #[error("{0:?} is longer than 32 characters")]
    TooLong(String),
}

impl GoDuration {
    /// The most characters a duration field accepts.
    pub const MAX_LEN: usize = 32;

    /// Parses a Go duration string.
    pub fn parse(text: &str) -> Result<Self, DurationError> {
        if text.len() > Self::MAX_LEN {
            return Err(DurationError::TooLong(text.to_owned()));
        }
        let parsed =
            kube::core::Duration::from_str(text).map_err(|_| DurationError::Malformed(text.to_owned()))?;
        if parsed.is_negative() {
            return Err(DurationError::Negative(text.to_owned()));
        }
        Ok(GoDuration {
            text: text.to_owned(),
            value: parsed.into(),
        })
    }

    /// The duration as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The parsed value.
    pub fn as_duration(&self) -> Duration {
        self.value
    }

    /// A duration from a compile-time literal that is known to parse; used for defaults.
    pub(crate) fn literal(text: &'static str, seconds: u64) -> Self {
        GoDuration {
            text: text.to_owned(),
            value: Duration::from_secs(seconds),
        }
    }
}

impl fmt::Display for GoDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for GoDuration {
    type Err = DurationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GoDuration::parse(s)
    }
}

impl Serialize for GoDuration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for GoDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        GoDuration::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for GoDuration {
    fn schema_name() -> Cow<'static, str> {
        "GoDuration".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "maxLength": 32 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_spellings() {
        let d = GoDuration::parse("1h30m").expect("parses");
        assert_eq!(d.as_duration(), Duration::from_secs(5400));
        assert_eq!(d.to_string(), "1h30m");
        assert_eq!(
            GoDuration::parse("300ms").expect("parses").as_duration(),
            Duration::from_millis(300)
        );
    }

    #[test]
    fn refuses_bad_values() {
        assert!(matches!(
            GoDuration::parse("ten minutes"),
            Err(DurationError::Malformed(_))
        ));
        assert!(matches!(
            GoDuration::parse("-5s"),
            Err(DurationError::Negative(_))
        ));
        assert!(matches!(
            GoDuration::parse(&"1".repeat(40)),
            Err(DurationError::TooLong(_))
        ));
    }

    #[test]
    fn literal_matches_parse() {
        assert_eq!(
            GoDuration::literal("10m", 600),
            GoDuration::parse("10m").expect("parses")
        );
    }
}
