//! Suppression by comment: `-- ptah:nolint DS102` (several codes by commas or spaces; none: every
//! rule), also spelled `-- atlas:nolint`, in the comments directly above a statement.

use std::collections::BTreeSet;

/// The codes a statement's leading comments suppress; `Some(empty)` suppresses every rule.
pub fn suppressed(leading: &str) -> Option<BTreeSet<String>> {
    let mut out: Option<BTreeSet<String>> = None;
    for line in leading.lines() {
        let line = line.trim();
        let Some(comment) = line.strip_prefix("--").or_else(|| line.strip_prefix('#')) else {
            continue;
        };
        let comment = comment.trim();
        let Some(rest) = comment
            .strip_prefix("ptah:nolint")
            .or_else(|| comment.strip_prefix("atlas:nolint"))
        else {
            continue;
        };
        let codes = out.get_or_insert_with(BTreeSet::new);
        codes.extend(
            rest.split([',', ' '])
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_uppercase),
        );
    }
    out
}

/// Whether `code` is suppressed by what [`suppressed`] found.
pub fn covers(found: Option<&BTreeSet<String>>, code: &str) -> bool {
    found.is_some_and(|codes| codes.is_empty() || codes.contains(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nolint_comment_names_codes_or_every_rule() {
        let named = suppressed("-- a note\n-- ptah:nolint DS102, pg101\n");
        assert!(covers(named.as_ref(), "DS102") && covers(named.as_ref(), "PG101"));
        assert!(!covers(named.as_ref(), "DS101"));
        let every = suppressed("-- atlas:nolint\n");
        assert!(covers(every.as_ref(), "DS101"));
        assert_eq!(suppressed("-- nothing here\n"), None);
        assert!(!covers(None, "DS101"));
    }
}
