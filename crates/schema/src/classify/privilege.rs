//! Privilege-changing statements and credential-bearing principal DDL.

use super::{PrivilegeKind, Tok};

fn word(s: &[Tok], i: usize) -> Option<&str> {
    match s.get(i) {
        Some(Tok::Word(w)) => Some(w),
        _ => None,
    }
}

/// Whether the words `seq` appear consecutively anywhere in `s`.
pub(super) fn has_seq(s: &[Tok], seq: &[&str]) -> bool {
    s.windows(seq.len())
        .any(|w| w.iter().zip(seq).all(|(t, x)| t.is(x)))
}

/// Whether the statement creates, alters or drops a principal (`ROLE`, `USER`, `GROUP`).
fn is_principal_ddl(s: &[Tok]) -> bool {
    matches!(word(s, 0), Some("CREATE" | "ALTER" | "DROP"))
        && matches!(word(s, 1), Some("ROLE" | "USER" | "GROUP"))
}

/// The statement's privilege kind, if it changes privileges.
pub(super) fn kind(s: &[Tok]) -> Option<PrivilegeKind> {
    let first = word(s, 0)?;
    let second = word(s, 1);
    if first == "GRANT" {
        return Some(PrivilegeKind::Grant);
    }
    if first == "REVOKE" {
        return Some(PrivilegeKind::Revoke);
    }
    if is_principal_ddl(s)
        || (first == "SET" && matches!(second, Some("ROLE" | "PASSWORD")))
        || (first == "RESET" && second == Some("ROLE"))
        || has_seq(s, &["SESSION", "AUTHORIZATION"])
    {
        return Some(PrivilegeKind::Role);
    }
    if has_seq(s, &["DEFAULT", "PRIVILEGES"]) {
        return Some(PrivilegeKind::DefaultPrivileges);
    }
    if (first == "REASSIGN" || first == "DROP") && second == Some("OWNED") || has_seq(s, &["OWNER", "TO"]) {
        return Some(PrivilegeKind::Ownership);
    }
    if has_seq(s, &["SECURITY", "DEFINER"]) || definer_clause(s) {
        return Some(PrivilegeKind::SecurityDefiner);
    }
    if has_seq(s, &["ROW", "LEVEL", "SECURITY"]) || matches!(second, Some("POLICY")) && is_ddl(first) {
        return Some(PrivilegeKind::RowSecurity);
    }
    None
}

fn is_ddl(first: &str) -> bool {
    matches!(first, "CREATE" | "ALTER" | "DROP")
}

/// MySQL's `DEFINER = user` on views, routines, triggers and events.
fn definer_clause(s: &[Tok]) -> bool {
    s.windows(2)
        .any(|w| w[0].is("DEFINER") && matches!(&w[1], Tok::Sym(x) if x == "="))
}

/// Whether the statement sets a principal's password or authentication secret.
pub(super) fn is_credential_bearing(s: &[Tok]) -> bool {
    let first = word(s, 0);
    let secret = s.iter().any(|t| t.is("PASSWORD") || t.is("IDENTIFIED"));
    (is_principal_ddl(s) && first != Some("DROP") && secret)
        || (first == Some("SET") && word(s, 1) == Some("PASSWORD"))
        || (first == Some("GRANT") && has_seq(s, &["IDENTIFIED", "BY"]))
}
