//! PostgreSQL declarative partitioning: a partitioned table's key and a partition's parent and
//! bound, both held as the catalog prints them (`pg_get_partkeydef`, `pg_get_expr(relpartbound)`),
//! which is also how `pg_dump` writes them.
//!
//! A partition is a [`super::Table`] of its own (its name, comment, local indexes and
//! constraints), but its columns are always its parent's: PostgreSQL gives a partition its
//! parent's columns and propagates every column change to them. The model stores them as a copy
//! of the parent's, without comments (which PostgreSQL does not carry over), made by every reader
//! through [`inherit_partition_columns`], so a partition reads like any table and two readers agree
//! whatever a dump or the catalog say about a partition's own defaults. What a partition inherits
//! (the parent's indexes, primary key, unique, check and foreign-key constraints) is not held on
//! the partition either: the server makes it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Table;
use super::name::QualifiedName;

/// A partition's place under its parent.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PartitionOf {
    /// The partitioned table it belongs to.
    pub parent: QualifiedName,
    /// `FOR VALUES …` or `DEFAULT`, canonical ([`partition_bound`]).
    pub bound: String,
}

/// Words of a bound in the case the catalog prints them.
const BOUND_UPPER: &[&str] = &[
    "FOR", "VALUES", "FROM", "TO", "IN", "WITH", "DEFAULT", "MINVALUE", "MAXVALUE", "NULL", "TRUE", "FALSE",
];

/// A partition bound spelled as `pg_get_expr(relpartbound)` prints it where the spelling alone
/// differs: keywords uppercase except `modulus` and `remainder`, one space between words, none
/// inside parentheses, `, ` between values. Literals are kept as written (the catalog prints a
/// timestamp bound in full, `'2024-01-01 00:00:00+00'`; the engine learns that spelling from the
/// server before comparing).
pub fn partition_bound(text: &str) -> String {
    canonical_words(text, |w| {
        let upper = w.to_ascii_uppercase();
        if BOUND_UPPER.contains(&upper.as_str()) {
            Some(upper)
        } else if matches!(upper.as_str(), "MODULUS" | "REMAINDER") {
            Some(upper.to_ascii_lowercase())
        } else {
            None
        }
    })
}

/// A partition key spelled as `pg_get_partkeydef` prints it where the spelling alone differs: the
/// strategy uppercase and one space before the parenthesised key, which is kept as written apart
/// from spaces.
pub fn partition_key(text: &str) -> String {
    let text = text.trim();
    let split = text
        .find(|c: char| c == '(' || c.is_whitespace())
        .unwrap_or(text.len());
    let (strategy, rest) = text.split_at(split);
    let rest = canonical_words(rest, |_| None);
    format!("{} {}", strategy.to_ascii_uppercase(), rest)
        .trim()
        .to_owned()
}

/// Whether a canonical bound ([`partition_bound`]) is one whole bound and nothing after it:
/// `DEFAULT`, `FOR VALUES IN (…)`, `FOR VALUES FROM (…) TO (…)` or `FOR VALUES WITH (…)` (a
/// `WITH (storage options)`, `USING` or `TABLESPACE` after it is not modelled).
pub fn is_partition_bound(bound: &str) -> bool {
    if bound == "DEFAULT" {
        return true;
    }
    let Some(rest) = bound.strip_prefix("FOR VALUES ") else {
        return false;
    };
    let groups = |rest: &str, words: &[&str]| {
        let mut rest = rest;
        for w in words {
            let Some(after) = rest.strip_prefix(w).and_then(|r| r.strip_prefix(" ")) else {
                return false;
            };
            match parenthesised(after) {
                Some(end) => rest = after[end..].trim_start(),
                None => return false,
            }
        }
        rest.is_empty()
    };
    groups(rest, &["IN"]) || groups(rest, &["FROM", "TO"]) || groups(rest, &["WITH"])
}

/// Whether a canonical key ([`partition_key`]) is `RANGE|LIST|HASH (…)` and nothing after it.
pub fn is_partition_key(key: &str) -> bool {
    ["RANGE ", "LIST ", "HASH "].iter().any(|s| {
        key.strip_prefix(s)
            .is_some_and(|rest| parenthesised(rest) == Some(rest.len()))
    })
}

/// The byte length of the parenthesised group `text` starts with (quotes respected).
fn parenthesised(text: &str) -> Option<usize> {
    if !text.starts_with('(') {
        return None;
    }
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Re-spaces `text` token by token (quoted strings and identifiers kept whole); `word` may
/// respell an unquoted word.
fn canonical_words(text: &str, word: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    let mut previous: Vec<String> = Vec::new();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let token: String = match c {
            '\'' | '"' => {
                let mut t = String::from(c);
                chars.next();
                while let Some(n) = chars.next() {
                    t.push(n);
                    if n == c {
                        if chars.peek() == Some(&c) {
                            t.push(c);
                            chars.next();
                        } else {
                            break;
                        }
                    }
                }
                t
            }
            c if c.is_alphanumeric() || c == '_' || c == '.' || c == '$' => {
                let mut t = String::new();
                while let Some(&n) = chars.peek() {
                    if n.is_alphanumeric() || n == '_' || n == '.' || n == '$' {
                        t.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                word(&t).unwrap_or(t)
            }
            c => {
                chars.next();
                c.to_string()
            }
        };
        let glued = match (previous.last().map(String::as_str), token.as_str()) {
            (None, _) | (Some("(" | ":"), _) | (_, ")" | "," | ":") => true,
            // A parenthesis opens a call after a name, a list after a keyword.
            (Some(p), "(") => !p.chars().all(|c| c.is_ascii_uppercase()),
            // `-` is unary after `(` or `,` (the only places a bound holds one).
            (Some("-"), _) => matches!(previous.iter().rev().nth(1).map(String::as_str), Some("(" | ",")),
            _ => false,
        };
        if !glued {
            out.push(' ');
        }
        out.push_str(&token);
        previous.push(token);
    }
    out
}

/// Gives every partition a copy of its parent's columns, without their comments, parents before
/// their partitions (a partition can itself be partitioned). A partition whose parent is not in
/// `tables` keeps what it has.
pub fn inherit_partition_columns(tables: &mut BTreeMap<QualifiedName, Table>) {
    // Depth-first along the parent chain, bounded by the number of tables (a cycle is refused by
    // the server and is left as it is here).
    for _ in 0..tables.len() {
        let mut changed = false;
        let names: Vec<QualifiedName> = tables.keys().cloned().collect();
        for name in names {
            let Some(parent) = tables
                .get(&name)
                .and_then(|t| t.partition_of.as_ref())
                .map(|p| p.parent.clone())
            else {
                continue;
            };
            let Some(columns) = tables.get(&parent).map(|p| {
                p.columns
                    .iter()
                    .cloned()
                    .map(|mut c| {
                        c.comment = None;
                        c
                    })
                    .collect::<Vec<_>>()
            }) else {
                continue;
            };
            if let Some(t) = tables.get_mut(&name)
                && t.columns != columns
            {
                t.columns = columns;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_take_the_catalog_spelling() {
        assert_eq!(
            partition_bound("for values from ( '2024-01-01' )  to ('2025-01-01')"),
            "FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')"
        );
        assert_eq!(
            partition_bound("FOR VALUES WITH (MODULUS 4,REMAINDER 1)"),
            "FOR VALUES WITH (modulus 4, remainder 1)"
        );
        assert_eq!(partition_bound("default"), "DEFAULT");
        assert_eq!(
            partition_bound("FOR VALUES IN ('de','fr', NULL)"),
            "FOR VALUES IN ('de', 'fr', NULL)"
        );
        assert_eq!(
            partition_bound("FOR VALUES FROM (MINVALUE) TO (-5)"),
            "FOR VALUES FROM (MINVALUE) TO (-5)"
        );
        assert_eq!(
            partition_bound("FOR VALUES IN ('it''s')"),
            "FOR VALUES IN ('it''s')"
        );
    }

    #[test]
    fn whole_bounds_and_keys_are_told_from_ones_with_more_after_them() {
        assert!(is_partition_bound("DEFAULT"));
        assert!(is_partition_bound("FOR VALUES IN ('a)', 'b')"));
        assert!(is_partition_bound("FOR VALUES FROM (MINVALUE) TO (10)"));
        assert!(is_partition_bound("FOR VALUES WITH (modulus 2, remainder 0)"));
        assert!(!is_partition_bound("FOR VALUES IN (1) WITH (fillfactor = 70)"));
        assert!(!is_partition_bound("FOR VALUES FROM (1)"));
        assert!(!is_partition_bound("DEFAULT TABLESPACE x"));
        assert!(is_partition_key("HASH (id, lower(k))"));
        assert!(!is_partition_key("RANGE (a) WITH (fillfactor = 70)"));
        assert!(!is_partition_key("ODD (a)"));
    }

    #[test]
    fn keys_take_the_catalog_spelling() {
        assert_eq!(partition_key("range(created_at)"), "RANGE (created_at)");
        assert_eq!(partition_key("HASH (id, lower(k))"), "HASH (id, lower(k))");
        assert_eq!(partition_key("list ( region )"), "LIST (region)");
        assert_eq!(
            partition_key("LIST (b text_pattern_ops)"),
            "LIST (b text_pattern_ops)"
        );
    }
}
