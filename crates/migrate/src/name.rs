//! Migration file names and their versions.
//!
//! Two layouts are read. A *pair* is `<digits>_<desc>[.checkpoint].(up|down).sql`: the reference
//! CLI's layout (ten digits) and golang-migrate's (any width, e.g. Mattermost's `000001_…`). A
//! *single file* is `<digits>_<desc>.sql` with both directions inside, marked by goose's
//! `-- +goose Up`/`Down` or dbmate's `-- migrate:up`/`down` (see `sections`). A version has 1 to 19
//! digits so that it fits the revision table's BIGINT; directories are ordered by its numeric
//! value, and the digits as written are kept for display.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A migration version: the numeric value of the file name's digits, a BIGINT in the revision table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Version(pub i64);

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The most digits a version may have: 19 digits always fit an `i64` up to `i64::MAX`'s width.
pub const MAX_VERSION_DIGITS: usize = 19;

/// The width of the reference CLI's versions, whose reports show the number rather than the digits.
pub const REFERENCE_DIGITS: usize = 10;

/// A parsed file name in the reference's ten-digit pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileName {
    /// The version.
    pub version: Version,
    /// The description.
    pub description: String,
    /// The `.checkpoint` marker.
    pub checkpoint: bool,
    /// True for `up`, false for `down`.
    pub up: bool,
}

/// Parses a base name against `^(\d{10})_(.*)\.(down|up)(\.sql)$`; `None` when it is not one.
///
/// This is the reference's exact pattern; [`parse_name`] reads every layout this executor accepts.
pub fn parse_file_name(name: &str) -> Option<FileName> {
    let parsed = parse_name(name).ok()??;
    let up = match parsed.part {
        Part::Up => true,
        Part::Down => false,
        Part::Both => return None,
    };
    (parsed.digits.len() == REFERENCE_DIGITS).then_some(FileName {
        version: parsed.version,
        description: parsed.description,
        checkpoint: parsed.checkpoint,
        up,
    })
}

/// Which direction(s) a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// `.up.sql`.
    Up,
    /// `.down.sql`.
    Down,
    /// A single `.sql` file with both sections.
    Both,
}

/// A migration file name of either layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationName {
    /// The numeric version.
    pub version: Version,
    /// The digits as written (`000001`, `20230101120000`).
    pub digits: String,
    /// The description.
    pub description: String,
    /// The `.checkpoint` marker (pairs only).
    pub checkpoint: bool,
    /// The direction(s) the file holds.
    pub part: Part,
}

/// Reads a base name: `Ok(None)` when it is no migration at all (`schema.sql`, `README`), an
/// error naming what is wrong when it looks like one but cannot be read (so it is never skipped).
pub fn parse_name(name: &str) -> Result<Option<MigrationName>, String> {
    let (stem, part) = if let Some(stem) = name.strip_suffix(".up.sql") {
        (stem, Part::Up)
    } else if let Some(stem) = name.strip_suffix(".down.sql") {
        (stem, Part::Down)
    } else if let Some(stem) = name.strip_suffix(".sql") {
        // A single file counts only when it starts with a digit: other `.sql` files
        // (`schema.sql`, seeds) were never migrations and stay ignored.
        if !stem.starts_with(|c: char| c.is_ascii_digit()) {
            return Ok(None);
        }
        (stem, Part::Both)
    } else {
        return Ok(None);
    };
    let width = stem.bytes().take_while(u8::is_ascii_digit).count();
    let shape = "expected digits (1 to 19), an underscore, a description and .up.sql, .down.sql or .sql";
    if width == 0 || stem.as_bytes().get(width) != Some(&b'_') {
        return Err(shape.to_owned());
    }
    if width > MAX_VERSION_DIGITS {
        return Err(format!(
            "a version has at most {MAX_VERSION_DIGITS} digits (the revision table's BIGINT), this one {width}"
        ));
    }
    let digits = &stem[..width];
    let version = digits
        .parse::<i64>()
        .map_err(|_| format!("the version {digits} does not fit the revision table's BIGINT"))?;
    let rest = &stem[width + 1..];
    let (description, checkpoint) = match (part, rest.strip_suffix(".checkpoint")) {
        (Part::Up | Part::Down, Some(desc)) => (desc, true),
        _ => (rest, false),
    };
    Ok(Some(MigrationName {
        version: Version(version),
        digits: digits.to_owned(),
        description: description.to_owned(),
        checkpoint,
        part,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_follow_the_reference_pattern() {
        let n = parse_file_name("1785255952_create invoices.up.sql").expect("valid");
        assert_eq!(n.version, Version(1_785_255_952));
        assert_eq!(n.description, "create invoices");
        assert!(n.up && !n.checkpoint);
        let c = parse_file_name("1785300000_squash.checkpoint.down.sql").expect("valid");
        assert!(c.checkpoint && !c.up);
        assert_eq!(c.description, "squash");
        assert_eq!(
            parse_file_name("0000000001_.up.sql")
                .expect("empty desc")
                .description,
            ""
        );
        for bad in [
            "178525595_x.up.sql",
            "17852559521_x.up.sql",
            "1785255952-x.up.sql",
            "1785255952_x.sql",
            "1785255952_x.up.SQL",
            "abcdefghij_x.up.sql",
            "1785255952_x.up.sql.bak",
        ] {
            assert_eq!(parse_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn versions_of_any_width_keep_their_digits() {
        let n = parse_name("000001_create_teams.up.sql")
            .expect("ok")
            .expect("a migration");
        assert_eq!(
            (n.version, n.digits.as_str(), n.part),
            (Version(1), "000001", Part::Up)
        );
        assert_eq!(n.description, "create_teams");
        let g = parse_name("20230101120000_add_users.sql")
            .expect("ok")
            .expect("a migration");
        assert_eq!(g.version, Version(20_230_101_120_000));
        assert_eq!((g.part, g.checkpoint), (Part::Both, false));
        let one = parse_name("1_a.down.sql").expect("ok").expect("a migration");
        assert_eq!((one.version, one.part), (Version(1), Part::Down));
        let max = parse_name("9223372036854775807_max.up.sql")
            .expect("fits")
            .expect("a migration");
        assert_eq!(max.version, Version(i64::MAX));
        // `.checkpoint` belongs to pairs; in a single file it is part of the description.
        let s = parse_name("3_x.checkpoint.sql")
            .expect("ok")
            .expect("a migration");
        assert_eq!((s.description.as_str(), s.checkpoint), ("x.checkpoint", false));
    }

    #[test]
    fn other_files_are_ignored_and_malformed_migrations_refused() {
        for ignored in [
            "schema.sql",
            "README.md",
            "ptah.sum",
            "V1__flyway.sql",
            "seed.up.txt",
        ] {
            assert_eq!(parse_name(ignored), Ok(None), "{ignored}");
        }
        for bad in [
            "x.up.sql",
            "12.up.sql",
            "12-x.down.sql",
            "1x_a.sql",
            "_a.up.sql",
            "9223372036854775808_too_big.up.sql",
            "12345678901234567890_twenty.sql",
        ] {
            assert!(parse_name(bad).is_err(), "{bad}");
        }
    }
}
