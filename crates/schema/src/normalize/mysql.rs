//! MySQL spellings that mean the same thing: foreign-key actions and character-set names.

use crate::model::ReferentialAction;

/// A MySQL foreign-key action: InnoDB checks NO ACTION immediately, exactly like RESTRICT, and
/// MariaDB reports an action left out as RESTRICT (where MySQL says NO ACTION), so both are
/// RESTRICT here.
pub fn mysql_action(action: ReferentialAction) -> ReferentialAction {
    match action {
        ReferentialAction::NoAction => ReferentialAction::Restrict,
        other => other,
    }
}

/// A MySQL character set or collation name as the catalog spells it: lowercase, and the old
/// `utf8` alias (and its `utf8_…` collations) as `utf8mb3`.
pub fn mysql_charset_name(text: &str) -> String {
    let lower = text.trim().to_ascii_lowercase();
    match lower.strip_prefix("utf8") {
        Some("") => "utf8mb3".to_owned(),
        Some(rest) if rest.starts_with('_') => format!("utf8mb3{rest}"),
        _ => lower,
    }
}
