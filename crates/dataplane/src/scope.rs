//! The planning scope of a Plan: `spec.policy.exclude` ([`crate::env::EXCLUDE`]) and
//! `spec.policy.protectedTables` ([`crate::env::PROTECTED_TABLES`]).
//!
//! Each travels as one JSON array of strings: unlike a delimited list, it can carry any entry
//! unambiguously, and an absent variable, an empty one and `[]` all mean "no entries". Entries
//! are checked here so the manager can refuse what the runner would refuse, before a Job exists.
//! `ptah` splits its `--exclude` and `--protected-table` values on commas, so an entry with a
//! comma could never reach it as one entry and is refused.

/// The most entries either list may have (the CRD's bound).
pub const MAX_SCOPE_ENTRIES: usize = 128;

/// The longest entry, in characters.
pub const MAX_SCOPE_ENTRY_CHARS: usize = 256;

/// Why a scope list was refused; `index` is the entry's position in the array.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    /// The text is not a JSON array of strings.
    #[error("is not a JSON array of strings")]
    NotAnArray,
    /// More entries than [`MAX_SCOPE_ENTRIES`].
    #[error("has {got} entries, more than {MAX_SCOPE_ENTRIES}")]
    TooMany {
        /// How many were given.
        got: usize,
    },
    /// An entry is empty or longer than [`MAX_SCOPE_ENTRY_CHARS`].
    #[error("entry {index} must have 1..={MAX_SCOPE_ENTRY_CHARS} characters")]
    Length {
        /// The entry's position.
        index: usize,
    },
    /// An entry has a control character.
    #[error("entry {index} has a control character")]
    ControlCharacter {
        /// The entry's position.
        index: usize,
    },
    /// An entry has a comma, which `ptah` would read as two entries.
    #[error("entry {index} has a comma")]
    Comma {
        /// The entry's position.
        index: usize,
    },
    /// A protected table is not `table` or `schema.table` (identifier characters only).
    #[error("entry {index} is not `table` or `schema.table`")]
    NotATableName {
        /// The entry's position.
        index: usize,
    },
}

/// Parses `PTAH_EXCLUDE`: object patterns (globs over `table` or `schema.table`).
pub fn parse_exclude(text: &str) -> Result<Vec<String>, ScopeError> {
    let entries = parse_array(text)?;
    check_exclude(&entries)?;
    Ok(entries)
}

/// Parses `PTAH_PROTECTED_TABLES`: `table` or `schema.table` names.
pub fn parse_protected_tables(text: &str) -> Result<Vec<String>, ScopeError> {
    let entries = parse_array(text)?;
    check_protected_tables(&entries)?;
    Ok(entries)
}

/// Checks exclude patterns as the runner will.
pub fn check_exclude(entries: &[String]) -> Result<(), ScopeError> {
    check_common(entries)
}

/// Checks protected table names as the runner will.
pub fn check_protected_tables(entries: &[String]) -> Result<(), ScopeError> {
    check_common(entries)?;
    match entries.iter().position(|e| !is_table_name(e)) {
        Some(index) => Err(ScopeError::NotATableName { index }),
        None => Ok(()),
    }
}

/// The value of a scope variable for `entries` (a JSON array of strings).
pub fn encode(entries: &[String]) -> String {
    // Serialising a slice of strings cannot fail; the fallback is never taken.
    serde_json::to_string(entries).unwrap_or_else(|_| "[]".to_owned())
}

fn parse_array(text: &str) -> Result<Vec<String>, ScopeError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_str(text).map_err(|_| ScopeError::NotAnArray)
}

fn check_common(entries: &[String]) -> Result<(), ScopeError> {
    if entries.len() > MAX_SCOPE_ENTRIES {
        return Err(ScopeError::TooMany { got: entries.len() });
    }
    for (index, entry) in entries.iter().enumerate() {
        let chars = entry.chars().count();
        if chars == 0 || chars > MAX_SCOPE_ENTRY_CHARS {
            return Err(ScopeError::Length { index });
        }
        if entry.chars().any(char::is_control) {
            return Err(ScopeError::ControlCharacter { index });
        }
        if entry.contains(',') {
            return Err(ScopeError::Comma { index });
        }
    }
    Ok(())
}

/// `^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$`
fn is_table_name(entry: &str) -> bool {
    let identifier = |part: &str| {
        let mut bytes = part.bytes();
        bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
    };
    match entry.split_once('.') {
        Some((schema, table)) => identifier(schema) && identifier(table),
        None => identifier(entry),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn absent_empty_and_an_empty_array_mean_no_entries() {
        for text in ["", "  ", "[]"] {
            assert_eq!(parse_exclude(text), Ok(Vec::new()), "{text:?}");
            assert_eq!(parse_protected_tables(text), Ok(Vec::new()), "{text:?}");
        }
    }

    #[test]
    fn entries_round_trip_through_the_encoding() {
        let exclude = strings(&["audit_*", "public.tmp_?", "weird \"quoted\" name", "ünïcode"]);
        assert_eq!(parse_exclude(&encode(&exclude)), Ok(exclude));
        let protected = strings(&["users", "billing.invoices", "_t$1", "S.T"]);
        assert_eq!(parse_protected_tables(&encode(&protected)), Ok(protected));
    }

    #[test]
    fn malformed_lists_are_refused() {
        for text in ["audit_*", "\"a\"", "[1]", "[\"a\", null]", "{\"a\":1}", "[\"a\""] {
            assert_eq!(parse_exclude(text), Err(ScopeError::NotAnArray), "{text}");
        }
        let long = "x".repeat(MAX_SCOPE_ENTRY_CHARS + 1);
        let cases = [
            (strings(&["ok", ""]), ScopeError::Length { index: 1 }),
            (vec![long], ScopeError::Length { index: 0 }),
            (strings(&["a\u{7}b"]), ScopeError::ControlCharacter { index: 0 }),
            (strings(&["a\nb"]), ScopeError::ControlCharacter { index: 0 }),
            (strings(&["a,b"]), ScopeError::Comma { index: 0 }),
        ];
        for (entries, err) in cases {
            assert_eq!(parse_exclude(&encode(&entries)), Err(err.clone()), "{entries:?}");
            assert_eq!(check_protected_tables(&entries), Err(err), "{entries:?}");
        }
        let full = vec!["t".to_owned(); MAX_SCOPE_ENTRIES];
        assert!(check_exclude(&full).is_ok() && check_protected_tables(&full).is_ok());
        let over = vec!["t".to_owned(); MAX_SCOPE_ENTRIES + 1];
        assert_eq!(check_exclude(&over), Err(ScopeError::TooMany { got: 129 }));
        let exactly = "é".repeat(MAX_SCOPE_ENTRY_CHARS);
        assert!(check_exclude(&[exactly]).is_ok(), "characters, not bytes");
    }

    #[test]
    fn protected_tables_are_table_or_schema_dot_table() {
        for bad in ["1abc", "a.b.c", ".a", "a.", "a-b", "a b", "tab*", "a.$b", "ü"] {
            assert_eq!(
                check_protected_tables(&strings(&["ok", bad])),
                Err(ScopeError::NotATableName { index: 1 }),
                "{bad}"
            );
            assert!(
                check_exclude(&strings(&[bad])).is_ok(),
                "{bad} is a valid pattern"
            );
        }
    }
}
