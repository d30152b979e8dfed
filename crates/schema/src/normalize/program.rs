//! The canonical text of MySQL/MariaDB views and triggers, shared by the dump reader and the
//! inspector so that what `mariadb-dump --no-data` writes and what `information_schema` holds
//! compare equal.
//!
//! - A view's definition is the query `SHOW CREATE VIEW` prints after `AS` (``select `t`.`a` AS
//!   `a` from `t` ``): names in the view's own database unqualified, other databases' qualified.
//!   `information_schema.VIEWS.VIEW_DEFINITION` holds the same text with every name of the own
//!   database qualified (``select `db`.`t`.`a` AS `a` from `db`.`t` ``), so the inspector reads it
//!   in one query and [`mysql_view_definition`] strips exactly that qualifier: a `` `db`. `` quoted
//!   just so, outside string literals, starting a name (not after a `.`). The one text this
//!   misreads is a table alias spelled like the database (`` `db`.`x` `` then loses its alias
//!   qualifier): a perpetual difference, never a wrong statement.
//! - A trigger's definition is rebuilt from its parts: ``CREATE TRIGGER `name` BEFORE INSERT ON `t`
//!   FOR EACH ROW <body>``, the body exactly as written (`ACTION_STATEMENT`), surrounding whitespace
//!   trimmed ([`mysql_trigger_definition`]).

use crate::model::{Trigger, View};

/// A MySQL identifier in backticks.
pub fn mysql_quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// The canonical `CREATE TRIGGER` text of a MySQL trigger from its parts.
pub fn mysql_trigger_definition(name: &str, timing: &str, event: &str, table: &str, body: &str) -> String {
    Trigger::canonical_definition(&format!(
        "CREATE TRIGGER {} {} {} ON {} FOR EACH ROW {}",
        mysql_quote(name),
        timing.to_ascii_uppercase(),
        event.to_ascii_uppercase(),
        mysql_quote(table),
        body.trim()
    ))
}

/// `information_schema.VIEWS.VIEW_DEFINITION` of a view in `database`, as `SHOW CREATE VIEW`
/// prints it: the `` `database`. `` qualifier of names in that database removed.
pub fn mysql_view_definition(definition: &str, database: &str) -> String {
    let needle = format!("{}.", mysql_quote(database));
    let bytes = definition.as_bytes();
    let mut out = String::with_capacity(definition.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            q @ (b'\'' | b'"') => {
                let end = quoted_end(bytes, i, q, true);
                out.push_str(&definition[i..end]);
                i = end;
            }
            b'`' => {
                let starts_name = i == 0 || bytes[i - 1] != b'.';
                if starts_name
                    && definition[i..].starts_with(&needle)
                    && bytes.get(i + needle.len()) == Some(&b'`')
                {
                    i += needle.len();
                    continue;
                }
                let end = quoted_end(bytes, i, b'`', false);
                out.push_str(&definition[i..end]);
                i = end;
            }
            _ => {
                let next = definition[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&definition[i..i + next]);
                i += next;
            }
        }
    }
    View::canonical_definition(&out)
}

/// The end of a quoted run opened at `p`: a doubled quote is an escape, and strings take
/// backslash escapes.
fn quoted_end(bytes: &[u8], p: usize, quote: u8, backslash: bool) -> usize {
    let mut i = p + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if backslash => i += 2,
            b if b == quote && bytes.get(i + 1) == Some(&quote) => i += 2,
            b if b == quote => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_database_qualifier_goes_and_nothing_else() {
        let raw = "select `app`.`t`.`a` AS `a`,'`app`.`t`' AS `s` from `app`.`t` join `other`.`u` \
                   where `x`.`app`.`y` = 1";
        assert_eq!(
            mysql_view_definition(raw, "app"),
            "select `t`.`a` AS `a`,'`app`.`t`' AS `s` from `t` join `other`.`u` where `x`.`app`.`y` = 1"
        );
        assert_eq!(
            mysql_view_definition("select 'it\\'s `app`.`t`'", "app"),
            "select 'it\\'s `app`.`t`'"
        );
    }

    #[test]
    fn a_trigger_is_rebuilt_from_its_parts() {
        assert_eq!(
            mysql_trigger_definition("t`r", "before", "insert", "t", "\n SET NEW.a = 1 \n"),
            "CREATE TRIGGER `t``r` BEFORE INSERT ON `t` FOR EACH ROW SET NEW.a = 1"
        );
    }
}
